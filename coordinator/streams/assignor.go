package streams

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/coordlog/coordlog/coordinator"
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
	id string
	// members is the process's members in the iteration order of Kafka's ProcessState.
	// memberToTaskCounts (a HashMap filled in the assignor's member order).
	members   []*aMember
	num       int32 // index in stickyState.procList, in order of creation
	taskCount int
	holders   *[][]int32 // per dense task index: the processes holding it (shared)
	index     func(TaskID) int
	ld        float64 // taskCount / len(members), kept current by add
	// byLoad is ProcessState.membersByLoad: built from members on the first task given to
	// the least-loaded member, kept while tasks go that way, dropped when a task is given to
	// a chosen member (Kafka cannot reorder its heap then).
	byLoad *javaPQ[*aMember]
}

func (p *aProc) load() float64 { return p.ld }

// has reports whether the process holds t (active or standby) in this run.
func (p *aProc) has(t TaskID) bool {
	i := p.index(t)
	return i >= 0 && slices.Contains((*p.holders)[i], p.num)
}

// add gives t to m (ProcessState.addTask) and returns m's new task count.
func (p *aProc) add(m *aMember, t TaskID, active bool) int {
	p.byLoad = nil
	return p.addInternal(m, t, active)
}

func (p *aProc) addInternal(m *aMember, t TaskID, active bool) int {
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

// addLeastLoaded gives t to the process's least-loaded member
// (ProcessState.addTaskToLeastLoadedMember): the only member directly, else the head of
// byLoad, which goes back in with its new count. Among members with equal counts the heap
// decides, as in Kafka.
func (p *aProc) addLeastLoaded(t TaskID, active bool) int {
	if len(p.members) == 1 {
		return p.addInternal(p.members[0], t, active)
	}
	if p.byLoad == nil {
		p.byLoad = &javaPQ[*aMember]{cmp: func(a, b *aMember) int { return cmp.Compare(a.count, b.count) }}
		for _, m := range p.members {
			p.byLoad.offer(m)
		}
	}
	m, _ := p.byLoad.poll()
	n := p.addInternal(m, t, active)
	p.byLoad.offer(m)
	return n
}

// javaPQ is java.util.PriorityQueue (JDK 17): a binary heap whose sift rules decide the
// order of elements that compare equal, which Kafka's assignor leaves to them.
type javaPQ[T any] struct {
	es  []T
	cmp func(a, b T) int
}

func (q *javaPQ[T]) len() int { return len(q.es) }

// offer is PriorityQueue.offer: append, then siftUp while strictly smaller than the parent.
func (q *javaPQ[T]) offer(x T) {
	k := len(q.es)
	q.es = append(q.es, x)
	for k > 0 {
		parent := (k - 1) >> 1
		e := q.es[parent]
		if q.cmp(x, e) >= 0 {
			break
		}
		q.es[k] = e
		k = parent
	}
	q.es[k] = x
}

// poll is PriorityQueue.poll: take the root, move the last element there and siftDown,
// preferring the left child on ties and stopping at the first child not strictly smaller.
func (q *javaPQ[T]) poll() (T, bool) {
	var zero T
	if len(q.es) == 0 {
		return zero, false
	}
	result := q.es[0]
	n := len(q.es) - 1
	x := q.es[n]
	q.es[n] = zero
	q.es = q.es[:n]
	if n > 0 {
		k, half := 0, n>>1
		for k < half {
			child := 2*k + 1
			c := q.es[child]
			if right := child + 1; right < n && q.cmp(c, q.es[right]) > 0 {
				child = right
				c = q.es[child]
			}
			if q.cmp(x, c) <= 0 {
				break
			}
			q.es[k] = c
			k = child
		}
		q.es[k] = x
	}
	return result, true
}

// procsByLoad is the PriorityQueue of processes by load that Kafka fills from
// processIdToState.values() (Double.compare of the loads, nothing else).
func (s *stickyState) procsByLoad() *javaPQ[*aProc] {
	q := &javaPQ[*aProc]{cmp: func(a, b *aProc) int { return cmp.Compare(a.ld, b.ld) }}
	for _, p := range s.procList {
		q.offer(p)
	}
	return q
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
	members  []*aMember              // in Kafka's member order
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

// javaMemberOrder returns the indexes of members (sorted by id) in the order Kafka's assignor
// iterates GroupSpec.memberIds(): the key set of the new HashMap that TargetAssignmentBuilder
// fills from the group's members. Ids sharing a hash bucket keep their sorted order (Kafka:
// the order of its timeline map, not modelled).
func javaMemberOrder(members []assignMember) []int {
	order := make([]int, len(members))
	for i := range order {
		order[i] = i
	}
	return coordinator.JavaHashOrder(order, func(i int) int32 { return coordinator.JavaStringHash(members[i].id) }, coordinator.JavaMapCapacityDefault(len(members)))
}

// computeIfAbsentCapacity is the table capacity of a `new HashMap<>(initialCapacity)` after
// one computeIfAbsent call per element of calls, true where the key is new. Unlike put, the
// call grows the table before it inserts, whenever the size already exceeds the threshold
// (JDK 17 HashMap.computeIfAbsent), so the capacity can differ from put's
// (coordinator.JavaMapCapacitySized).
func computeIfAbsentCapacity(initialCapacity int, calls []bool) int {
	capacity, threshold, size := 0, 0, 0
	for _, isNew := range calls {
		switch {
		case capacity == 0: // the table is allocated on the first call
			capacity = 1
			for capacity < initialCapacity {
				capacity <<= 1
			}
			threshold = int(float32(capacity) * 0.75)
		case size > threshold:
			capacity <<= 1
			threshold = int(float32(capacity) * 0.75)
		}
		if isNew {
			size++
		}
	}
	return capacity
}

// stickyAssign is Kafka 4.4's StickyTaskAssignor (fact sheet 5.2), giving the assignment
// Kafka gives (TestAssignorEqualsKafka): ties are broken the way Kafka's collections break
// them (javaMemberOrder, addMembers, javaPQ). subs must be sorted by id; members sorted by id.
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

// addMembers creates the processes and the members in Kafka's iteration orders (see
// javaOrders); records each task's previous active owner; and ranks each task's candidates
// (standbyRanked): its previous standby holders first, then by reported offset, descending,
// each group in member order.
func (s *stickyState) addMembers(members []assignMember, holders *[][]int32, index func(TaskID) int) {
	cands := map[TaskID][]standbyCand{}
	s.members = make([]*aMember, 0, len(members))
	newProcess := make([]bool, 0, len(members)) // per member: its process is new
	for _, i := range javaMemberOrder(members) {
		in := members[i]
		p := s.procs[in.processID]
		newProcess = append(newProcess, p == nil)
		if p == nil {
			p = &aProc{id: in.processID, num: int32(len(s.procList)), holders: holders, index: index}
			s.procs[in.processID] = p
			s.procList = append(s.procList, p)
		}
		m := &aMember{id: in.id, proc: p}
		p.members = append(p.members, m)
		s.members = append(s.members, m)
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
	// processIdToState is a new HashMap(number of members) filled by computeIfAbsent, one
	// call per member in member order. computeIfAbsent puts a new key at the head of its
	// bucket (put appends it), so the processes of one bucket iterate in reverse order of
	// first appearance; and it grows the table before looking the key up, once the size
	// exceeds the threshold (put grows it after inserting).
	// Each ProcessState's memberToTaskCounts is a new HashMap() filled by put in member order.
	hash := coordinator.JavaStringHash
	slices.Reverse(s.procList)
	coordinator.JavaHashOrder(s.procList, func(p *aProc) int32 { return hash(p.id) }, computeIfAbsentCapacity(len(members), newProcess))
	for _, p := range s.procList {
		coordinator.JavaHashOrder(p.members, func(m *aMember) int32 { return hash(m.id) }, coordinator.JavaMapCapacityDefault(len(p.members)))
	}
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
	q := s.procsByLoad()
	for _, i := range rest2 {
		p, _ := q.poll()
		t := s.taskOf[i]
		n := p.addLeastLoaded(t, true)
		s.afterActive(n)
		s.afterTotal(n)
		q.offer(p)
	}
	return nil
}

// assignStandby assigns numStandby standby replicas of every stateful task: sticky first
// (assignStandbySticky), then, by subtopology and partition descending, each remaining
// replica to the least-loaded process that does not hold the task yet
// (assignStandbyToMemberWithLeastLoad: processes are polled until one does not hold it, then
// offered back in the reverse order, as its recursion does).
func (s *stickyState) assignStandby() {
	queue := s.assignStandbySticky()
	slices.SortFunc(queue, func(a, b queuedStandby) int { return cmp.Compare(b.i, a.i) })
	q := s.procsByLoad()
	var polled []*aProc
	for _, qs := range queue {
		t := s.taskOf[qs.i]
		for r := 0; r < qs.left; r++ {
			polled = polled[:0]
			found := false
			for {
				p, ok := q.poll()
				if !ok {
					break
				}
				polled = append(polled, p)
				if !p.has(t) {
					s.afterTotal(p.addLeastLoaded(t, false))
					found = true
					break
				}
			}
			for j := len(polled) - 1; j >= 0; j-- {
				q.offer(polled[j])
			}
			if !found {
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
