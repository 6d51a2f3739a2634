package consumer

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/coordlog/coordlog/coordinator"
)

// maxBalanceIterations is UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT.
const maxBalanceIterations = 16

// hetero is UniformHeterogeneousAssignmentBuilder: members subscribe to different topics.
// Members are numbered in iteration order; a member keeps every previous partition of a
// topic it still subscribes to; the free partitions go, topic by topic (most partitions per
// subscriber first, then fewer subscribers, then topic id), to the least loaded subscribers
// by total partition count; then up to 16 passes move partitions from the most to the least
// loaded subscribers of each shared topic until their totals differ by at most one.
type hetero struct {
	spec       *AssignmentSpec
	topics     []Uuid          // subscribed topics, in no particular order (sorted before use)
	subscribed []map[Uuid]bool // per member
	subs       map[Uuid][]int  // topic -> subscriber indices, ascending
	sizes      []int           // per member: partitions in its new target
	owners     map[Uuid][]int  // topic -> partition -> member index (-1: free)
	out        []map[Uuid][]int32
}

func uniformHeterogeneous(spec *AssignmentSpec) ([]MemberAssignment, error) {
	h := &hetero{spec: spec, subs: map[Uuid][]int{}, owners: map[Uuid][]int{},
		sizes: make([]int, len(spec.Members)), out: make([]map[Uuid][]int32, len(spec.Members)),
		subscribed: make([]map[Uuid]bool, len(spec.Members))}
	for i := range spec.Members {
		h.subscribed[i] = make(map[Uuid]bool, len(spec.Members[i].Topics))
		for _, t := range spec.Members[i].Topics {
			n, ok := spec.Partitions[t]
			if !ok || n < 0 {
				return nil, errAssignor{fmt.Sprintf("Members are subscribed to topic %s which doesn't exist in the topic metadata.", t)}
			}
			if _, seen := h.subs[t]; !seen {
				h.topics = append(h.topics, t)
				o := make([]int, n)
				for p := range o {
					o[p] = -1
				}
				h.owners[t] = o
			}
			if !h.subscribed[i][t] {
				h.subscribed[i][t] = true
				h.subs[t] = append(h.subs[t], i)
			}
		}
	}
	res := make([]MemberAssignment, len(spec.Members))
	if len(h.topics) == 0 {
		return res, nil
	}
	h.keepPrevious()
	h.assignFree()
	h.balance()
	for i, m := range h.out {
		res[i] = fromMap(m)
	}
	return res, nil
}

// topicLess is topicComparator: partitions per subscriber descending, then subscriber count
// ascending, then topic id ascending (Uuid.compareTo).
func (h *hetero) topicCompare(a, b Uuid) int {
	pa, pb := float64(h.spec.Partitions[a]), float64(h.spec.Partitions[b])
	sa, sb := len(h.subs[a]), len(h.subs[b])
	return cmp.Or(cmp.Compare(pb/float64(sb), pa/float64(sa)), cmp.Compare(sa, sb), coordinator.JavaUUIDCompare(a, b))
}

func (h *hetero) sortedTopics(ts []Uuid) []Uuid {
	s := slices.Clone(ts)
	slices.SortFunc(s, h.topicCompare)
	return s
}

func (h *hetero) keepPrevious() {
	for i := range h.spec.Members {
		a := map[Uuid][]int32{}
		for _, tp := range h.spec.Members[i].Target {
			if !h.subscribed[i][tp.Topic] {
				continue
			}
			a[tp.Topic] = slices.Clone(tp.Partitions)
			h.sizes[i] += len(tp.Partitions)
			o := h.owners[tp.Topic]
			for _, p := range tp.Partitions {
				if p >= 0 && int(p) < len(o) {
					o[p] = i
				}
			}
		}
		h.out[i] = a
	}
}

func (h *hetero) assignFree() {
	var withFree []Uuid
	free := map[Uuid][]int32{}
	for _, t := range h.topics {
		for p, o := range h.owners[t] {
			if o == -1 {
				free[t] = append(free[t], int32(p))
			}
		}
		if len(free[t]) > 0 {
			withFree = append(withFree, t)
		}
	}
	b := &balancer{h: h}
	for _, t := range h.sortedTopics(withFree) {
		b.initialize(h.subs[t])
		for _, p := range free[t] {
			h.move(t, p, b.nextLeastLoaded())
		}
	}
}

func (h *hetero) balance() {
	var shared []Uuid
	for _, t := range h.topics {
		if len(h.subs[t]) >= 2 {
			shared = append(shared, t)
		}
	}
	if len(shared) == 0 {
		return
	}
	sorted := h.sortedTopics(shared)
	last := -1
	b := &balancer{h: h}
	for i := 0; i < maxBalanceIterations; i++ {
		for ti, t := range sorted {
			if ti == last {
				return // a whole pass without a move
			}
			if n := h.balanceTopic(t, b); n > 0 || last == -1 {
				last = ti
			}
		}
	}
}

// balanceTopic moves partitions of t from its most to its least loaded subscribers; the
// partition given up is the highest-numbered one the most loaded member holds.
func (h *hetero) balanceTopic(t Uuid, b *balancer) int {
	moved := 0
	if b.initialize(h.subs[t]) <= 1 {
		return 0
	}
	owners := h.owners[t]
	parts := make([]int32, len(owners))
	for p := range parts {
		parts[p] = int32(p)
	}
	slices.SortFunc(parts, func(a, c int32) int { return cmp.Or(cmp.Compare(owners[a], owners[c]), cmp.Compare(a, c)) })
	start, end := map[int]int{}, map[int]int{}
	for i, p := range parts {
		o := owners[p]
		if _, ok := start[o]; !ok {
			start[o] = i
		}
		end[o] = i + 1
	}
	for !b.isBalanced() {
		most := -1
		for {
			most = b.nextMostLoaded()
			if most == -1 {
				break
			}
			e, ok := end[most]
			if !ok || e-start[most] <= 0 {
				b.excludeMostLoaded()
				continue
			}
			break
		}
		if most == -1 {
			break
		}
		p := parts[end[most]-1]
		end[most]--
		least := b.nextLeastLoaded()
		if b.isBalanced() {
			break
		}
		h.move(t, p, least)
		moved++
	}
	return moved
}

// move is assignPartition: p leaves its owner (if any) for member to.
func (h *hetero) move(t Uuid, p int32, to int) {
	o := h.owners[t]
	if from := o[p]; from != -1 {
		a := h.out[from]
		ps := a[t]
		if i := slices.Index(ps, p); i >= 0 {
			ps = slices.Delete(ps, i, i+1)
		}
		if len(ps) == 0 {
			delete(a, t)
		} else {
			a[t] = ps
		}
		h.sizes[from]--
	}
	h.out[to][t] = append(h.out[to][t], p)
	o[p] = to
	h.sizes[to]++
}

// balancer is MemberAssignmentBalancer: the subscribers of one topic sorted by total size
// (then index), with a least-loaded range growing rightwards and a most-loaded range growing
// leftwards.
type balancer struct {
	h                                       *hetero
	sorted                                  []int
	leastEnd, leastCount, nextLeast         int
	mostStart, mostEnd, mostCount, nextMost int
}

func (b *balancer) initialize(members []int) int {
	sz := b.h.sizes
	b.sorted = append(b.sorted[:0], members...)
	slices.SortFunc(b.sorted, func(x, y int) int { return cmp.Or(cmp.Compare(sz[x], sz[y]), cmp.Compare(x, y)) })
	n := len(b.sorted)
	b.leastEnd, b.leastCount, b.nextLeast = 0, sz[b.sorted[0]]-1, 0
	b.mostStart, b.mostEnd, b.mostCount, b.nextMost = n, n, sz[b.sorted[n-1]]+1, n-1
	return sz[b.sorted[n-1]] - sz[b.sorted[0]]
}

func (b *balancer) nextLeastLoaded() int {
	sz := b.h.sizes
	if b.nextLeast >= b.leastEnd {
		b.leastCount++
		for b.leastEnd < len(b.sorted) && sz[b.sorted[b.leastEnd]] == b.leastCount {
			b.leastEnd++
		}
		b.nextLeast = 0
	}
	m := b.sorted[b.nextLeast]
	b.nextLeast++
	return m
}

func (b *balancer) nextMostLoaded() int {
	sz := b.h.sizes
	if b.nextMost < b.mostStart {
		if b.mostEnd <= b.mostStart && b.mostStart > 0 {
			b.mostCount = sz[b.sorted[b.mostStart-1]]
		} else {
			b.mostCount--
		}
		for b.mostStart > 0 && sz[b.sorted[b.mostStart-1]] == b.mostCount {
			b.mostStart--
		}
		b.nextMost = b.mostEnd - 1
	}
	if b.nextMost < 0 {
		return -1
	}
	m := b.sorted[b.nextMost]
	b.nextMost--
	return m
}

func (b *balancer) excludeMostLoaded() {
	m := b.sorted[b.nextMost+1]
	b.sorted[b.nextMost+1] = b.sorted[b.mostEnd-1]
	b.sorted[b.mostEnd-1] = m
	b.mostEnd--
}

func (b *balancer) isBalanced() bool { return b.mostCount-b.leastCount <= 1 }
