package streams

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
)

// assignMember is one member of the assignor input (GroupSpec): its process and its
// *current* assigned tasks (Kafka feeds the current assignment, not the previous target).
type assignMember struct {
	id        string
	processID string
	active    taskMap
	standby   taskMap
	offsets   map[TaskID]int64
}

type aMember struct {
	id      string
	proc    *aProc
	count   int
	active  []TaskID
	standby []TaskID
}

type aProc struct {
	id        string
	num       int32      // index in stickyState.procList order of creation
	members   []*aMember // sorted by id
	taskCount int
	holders   *[][]int32 // per dense task index: the processes holding it (shared)
	index     func(TaskID) int
	idx       int
	ld        float64 // taskCount / len(members), kept current by add
}

func (p *aProc) load() float64 { return p.ld }

// has reports whether the process holds t (active or standby) in this run.
func (p *aProc) has(t TaskID) bool {
	i := p.index(t)
	return i >= 0 && slices.Contains((*p.holders)[i], p.num)
}

func (p *aProc) add(m *aMember, t TaskID, active bool) int {
	p.taskCount++
	p.ld = float64(p.taskCount) / float64(len(p.members))
	if i := p.index(t); i >= 0 {
		(*p.holders)[i] = append((*p.holders)[i], p.num)
	}
	if active {
		m.active = append(m.active, t)
	} else {
		m.standby = append(m.standby, t)
	}
	m.count++
	return m.count
}

// leastLoaded is the member with the fewest tasks; ties go to the smallest member id (Java's
// heap order is unspecified there).
func (p *aProc) leastLoaded() *aMember {
	var best *aMember
	for _, m := range p.members {
		if best == nil || m.count < best.count {
			best = m
		}
	}
	return best
}

// procHeap orders processes by load, ties by process id (deterministic; Java leaves ties to
// PriorityQueue order).
type procHeap []*aProc

func (h procHeap) Len() int { return len(h) }
func (h procHeap) Less(i, j int) bool {
	li, lj := h[i].load(), h[j].load()
	if li != lj {
		return li < lj
	}
	return h[i].id < h[j].id
}
func (h procHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].idx = i; h[j].idx = j }
func (h *procHeap) Push(x any)   { p := x.(*aProc); p.idx = len(*h); *h = append(*h, p) }
func (h *procHeap) Pop() any     { old := *h; n := len(old); p := old[n-1]; *h = old[:n-1]; return p }
func (h procHeap) peek() *aProc  { return h[0] }
func newProcHeap(ps []*aProc) *procHeap {
	h := procHeap(slices.Clone(ps))
	for i, p := range h {
		p.idx = i
	}
	heap.Init(&h)
	return &h
}

type stickyState struct {
	procs          map[string]*aProc
	procList       []*aProc
	prevActive     map[TaskID]*aMember
	standbyRanked  map[TaskID][]*aMember
	numStandby     int
	totalActive    int
	totalTasks     int
	activeCapacity int
	taskCapacity   int
	activeQuota    int
	totalQuota     int

	subs     []configuredSubtopology // sorted by id
	spans    map[string]taskSpan     // by subtopology id
	taskOf   []TaskID                // by dense task index
	maxTasks int                     // the largest task count of a subtopology
	members  []*aMember              // in input order
}

// taskSpan is a subtopology's range of dense task indexes: base + partition, n tasks.
type taskSpan struct{ base, n int }

// standbyCand is a member that may take a task it held as a standby (prevSB) or reported
// offsets for; order is its position among the task's candidates.
type standbyCand struct {
	m      *aMember
	prevSB bool
	offset int64
	order  int
}

// queuedStandby is a stateful task still needing left standby replicas after the sticky pass.
type queuedStandby struct {
	i    int
	left int
}

func ceilDiv(a, b int) int {
	if b == 0 {
		return 0
	}
	return (a + b - 1) / b
}

func (s *stickyState) afterActive(n int) {
	if n == s.activeQuota {
		s.activeCapacity--
		s.totalActive -= n
		s.activeQuota = ceilDiv(s.totalActive, s.activeCapacity)
	}
}

func (s *stickyState) afterTotal(n int) {
	if n == s.totalQuota {
		s.taskCapacity--
		s.totalTasks -= n
		s.totalQuota = ceilDiv(s.totalTasks, s.taskCapacity)
	}
}

// pickPrev is findPrevMemberWithLeastLoad: the first candidate, replaced by a later one only
// when both its process load and its own count are strictly lower; with skip, candidates
// whose process already holds the task are ignored.
func (s *stickyState) pickPrev(cands []*aMember, skip *TaskID) *aMember {
	var best *aMember
	var bestLoad float64
	var bestCount int
	for _, m := range cands {
		if skip != nil && m.proc.has(*skip) {
			continue
		}
		l := m.proc.load()
		if best == nil || (l < bestLoad && m.count < bestCount) {
			best, bestLoad, bestCount = m, l, m.count
		}
	}
	return best
}

// stickyAssign is Kafka 4.4's StickyTaskAssignor (fact sheet 5.2) with deterministic tie
// breaking. subs must be sorted by id; members sorted by id.
func stickyAssign(members []assignMember, subs []configuredSubtopology, numStandby int) (map[string]tuple, error) {
	var s stickyState
	s.init(members, subs, numStandby)
	if err := s.assignActive(); err != nil {
		return nil, err
	}
	if numStandby > 0 {
		s.assignStandby()
	}
	return s.result(), nil
}

// init prepares a run: dense task indexes (subtopology base + partition; tasks outside the
// topology get -1, so that sorting tasks is integer sorting), the quotas, the processes and
// members, and the candidates ranked for each task.
func (s *stickyState) init(members []assignMember, subs []configuredSubtopology, numStandby int) {
	*s = stickyState{procs: map[string]*aProc{}, prevActive: map[TaskID]*aMember{}, standbyRanked: map[TaskID][]*aMember{}, numStandby: numStandby, subs: subs}
	spans := make(map[string]taskSpan, len(subs))
	total := 0
	for _, st := range subs {
		spans[st.id] = taskSpan{total, int(st.numTasks)}
		total += int(st.numTasks)
	}
	s.spans = spans
	holders := make([][]int32, total)
	index := func(t TaskID) int {
		sp, ok := spans[t.Subtopology]
		if !ok || t.Partition < 0 || int(t.Partition) >= sp.n {
			return -1
		}
		return sp.base + int(t.Partition)
	}
	for _, st := range subs {
		n := int(st.numTasks)
		s.totalActive += n
		s.totalTasks += n
		if st.stateful {
			s.totalTasks += n * numStandby
		}
	}
	s.activeCapacity, s.taskCapacity = len(members), len(members)
	s.activeQuota = ceilDiv(s.totalActive, s.activeCapacity)
	s.totalQuota = ceilDiv(s.totalTasks, s.taskCapacity)
	s.addMembers(members, &holders, index)

	// Tasks by dense index: subtopology order, then partition (the (subtopology, partition)
	// sort order, because subs are sorted).
	s.taskOf = make([]TaskID, total)
	for _, st := range subs {
		sp := spans[st.id]
		for p := 0; p < sp.n; p++ {
			s.taskOf[sp.base+p] = TaskID{st.id, int32(p)}
		}
		s.maxTasks = max(s.maxTasks, sp.n)
	}
}

// addMembers creates the processes (procList sorted by id) and the members; records each
// task's previous active owner; and ranks each task's candidates (standbyRanked): its
// previous standby holders first, then by reported offset, descending.
func (s *stickyState) addMembers(members []assignMember, holders *[][]int32, index func(TaskID) int) {
	cands := map[TaskID][]standbyCand{}
	s.members = make([]*aMember, len(members))
	for i, in := range members {
		p := s.procs[in.processID]
		if p == nil {
			p = &aProc{id: in.processID, num: int32(len(s.procList)), holders: holders, index: index}
			s.procs[in.processID] = p
			s.procList = append(s.procList, p)
		}
		m := &aMember{id: in.id, proc: p}
		p.members = append(p.members, m)
		s.members[i] = m
		for t := range in.active {
			s.prevActive[t] = m // last member seen wins, as in Kafka
		}
		for t := range in.standby {
			cands[t] = append(cands[t], standbyCand{m, true, in.offsets[t], len(cands[t])})
		}
		for t, off := range in.offsets {
			if in.standby.has(t) {
				continue
			}
			cands[t] = append(cands[t], standbyCand{m, false, off, len(cands[t])})
		}
	}
	slices.SortFunc(s.procList, func(a, b *aProc) int { return cmp.Compare(a.id, b.id) })
	for t, cs := range cands {
		slices.SortStableFunc(cs, func(a, b standbyCand) int {
			if a.prevSB != b.prevSB {
				if a.prevSB {
					return -1
				}
				return 1
			}
			return cmp.Compare(b.offset, a.offset)
		})
		ms := make([]*aMember, len(cs))
		for i, c := range cs {
			ms[i] = c.m
		}
		s.standbyRanked[t] = ms
	}
}

// addActive assigns active task t to m and updates the quotas.
func (s *stickyState) addActive(m *aMember, t TaskID) {
	n := m.proc.add(m, t, true)
	s.afterActive(n)
	s.afterTotal(n)
}

// assignActive assigns every active task, by (partition, subtopology): to its previous owner
// while under the active quota, else to its best-ranked candidate (pickPrev) under the quota,
// else (by (subtopology, partition)) to the least-loaded member of the least-loaded process.
func (s *stickyState) assignActive() error {
	tasks := make([]int, 0, len(s.taskOf))
	for p := 0; p < s.maxTasks; p++ {
		for _, st := range s.subs {
			if sp := s.spans[st.id]; p < sp.n {
				tasks = append(tasks, sp.base+p)
			}
		}
	}
	rest := make([]int, 0, len(tasks))
	for _, i := range tasks {
		t := s.taskOf[i]
		if m := s.prevActive[t]; m != nil && m.count < s.activeQuota {
			s.addActive(m, t)
			continue
		}
		rest = append(rest, i)
	}
	rest2 := make([]int, 0, len(rest))
	for _, i := range rest {
		t := s.taskOf[i]
		if m := s.pickPrev(s.standbyRanked[t], nil); m != nil && m.count < s.activeQuota {
			s.addActive(m, t)
			continue
		}
		rest2 = append(rest2, i)
	}
	slices.Sort(rest2) // (subtopology, partition)
	if len(rest2) == 0 {
		return nil
	}
	if len(s.procList) == 0 {
		return fmt.Errorf("no process available to assign active task %v", s.taskOf[rest2[0]])
	}
	h := newProcHeap(s.procList)
	for _, i := range rest2 {
		p := h.peek()
		s.addActive(p.leastLoaded(), s.taskOf[i])
		heap.Fix(h, 0)
	}
	return nil
}

// assignStandby assigns numStandby standby replicas of every stateful task: sticky first
// (assignStandbySticky), then the rest to the least-loaded processes that do not hold the
// task yet.
func (s *stickyState) assignStandby() {
	queue := s.assignStandbySticky()
	// By subtopology descending, then partition descending.
	slices.SortFunc(queue, func(a, b queuedStandby) int { return cmp.Compare(b.i, a.i) })
	h := newProcHeap(s.procList)
	var popped []*aProc
	for _, q := range queue {
		t := s.taskOf[q.i]
		for r := 0; r < q.left; r++ {
			if root := h.peek(); !root.has(t) {
				// Common case: the least-loaded process does not hold the task yet.
				if m := root.leastLoaded(); m != nil {
					s.afterTotal(root.add(m, t, false))
					heap.Fix(h, 0)
				}
				continue
			}
			popped = popped[:0]
			var target *aProc
			for h.Len() > 0 {
				p := heap.Pop(h).(*aProc)
				popped = append(popped, p)
				if !p.has(t) {
					target = p
					break
				}
			}
			if target != nil {
				if m := target.leastLoaded(); m != nil {
					s.afterTotal(target.add(m, t, false))
				}
			}
			for _, p := range popped {
				heap.Push(h, p)
			}
			if target == nil {
				break // every process holds the task: not enough capacity
			}
		}
	}
}

// assignStandbySticky gives each stateful task (by partition descending, then subtopology
// descending) its standby replicas on its previous active owner, then on its best-ranked
// candidate, while their process does not hold it and they are under the total quota; it
// returns the tasks still needing replicas.
func (s *stickyState) assignStandbySticky() []queuedStandby {
	var stateful []int
	for p := s.maxTasks - 1; p >= 0; p-- {
		for j := len(s.subs) - 1; j >= 0; j-- {
			if sp := s.spans[s.subs[j].id]; s.subs[j].stateful && p < sp.n {
				stateful = append(stateful, sp.base+p)
			}
		}
	}
	var queue []queuedStandby
	for _, i := range stateful {
		t := s.taskOf[i]
		for r := 0; r < s.numStandby; r++ {
			if m := s.prevActive[t]; m != nil && !m.proc.has(t) && m.count < s.totalQuota {
				s.afterTotal(m.proc.add(m, t, false))
				continue
			}
			if m := s.pickPrev(s.standbyRanked[t], &t); m != nil && m.count < s.totalQuota {
				s.afterTotal(m.proc.add(m, t, false))
				continue
			}
			queue = append(queue, queuedStandby{i, s.numStandby - r})
			break
		}
	}
	return queue
}

// result is every member's target, in the assignor's output shape.
func (s *stickyState) result() map[string]tuple {
	out := make(map[string]tuple, len(s.members))
	for _, m := range s.members {
		var tt tuple
		if len(m.active) > 0 {
			tt.active = make(taskMap, len(m.active))
			for _, t := range m.active {
				tt.active[t] = 0
			}
		}
		if len(m.standby) > 0 {
			tt.standby = make(taskMap, len(m.standby))
			for _, t := range m.standby {
				tt.standby[t] = 0
			}
		}
		out[m.id] = tt
	}
	return out
}
