package consumer

import (
	"fmt"
	"slices"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
)

// Server-side assignor names (group.consumer.assignors).
const (
	AssignorUniform = "uniform"
	AssignorRange   = "range"
)

// Uuid is a topic id.
type Uuid = groupstate.Uuid

// TopicPartitions is one topic's partitions in a member's assignment, in the order the
// assignor (or Kafka's set) iterates them.
type TopicPartitions struct {
	Topic      Uuid
	Partitions []int32
}

// AssignorMember is one member as an assignor sees it (Kafka's MemberSubscription and
// MemberAssignment): its subscribed existing topics and its previous target assignment, both
// in the iteration order of Kafka's collections (KafkaOrder computes it).
type AssignorMember struct {
	ID         string
	InstanceID *string
	Topics     []Uuid
	Target     []TopicPartitions
}

// AssignmentSpec is Kafka's GroupSpec plus the SubscribedTopicDescriber: the members in the
// iteration order of Kafka's member map, the subscription type and the partition count of
// every subscribed topic.
type AssignmentSpec struct {
	Members     []AssignorMember
	Homogeneous bool
	Partitions  map[Uuid]int32
}

// MemberAssignment is one member's new target, topic by topic, each topic once (in no
// particular order; a topic may be listed with no partitions). Its slices may share memory
// with the spec's previous targets: read only.
type MemberAssignment []TopicPartitions

// fromMap turns a topic map into a MemberAssignment.
func fromMap(m map[Uuid][]int32) MemberAssignment {
	out := make(MemberAssignment, 0, len(m))
	for t, ps := range m {
		out = append(out, TopicPartitions{Topic: t, Partitions: ps})
	}
	return out
}

// errAssignor is a PartitionAssignorException: the coordinator answers UNKNOWN_SERVER_ERROR.
type errAssignor struct{ msg string }

func (e errAssignor) Error() string { return e.msg }

// Assign runs the named assignor; the result is parallel to spec.Members.
func Assign(name string, spec *AssignmentSpec) ([]MemberAssignment, error) {
	if len(spec.Members) == 0 {
		return nil, nil
	}
	switch name {
	case AssignorUniform:
		if spec.Homogeneous {
			return uniformHomogeneous(spec)
		}
		return uniformHeterogeneous(spec)
	case AssignorRange:
		return rangeAssign(spec)
	}
	return nil, fmt.Errorf("consumer: unknown assignor %q", name)
}

// topicPartition is a partition of the topic at index topic in the subscribed set.
type topicPartition struct{ topic, p int32 }

func uuidHash(u Uuid) int32 { return coordinator.JavaUUIDHash(u) }

// uniformHomogeneous is UniformHomogeneousAssignmentBuilder: every member has the first
// member's subscription. Each member gets T/M partitions, T%M of them one more; a member
// keeps its previous partitions up to its quota (in its set's iteration order), the extra
// slots go to the members that already hold more unless the last members must take them,
// and the unassigned partitions (free ones first, per topic in the subscribed set's order,
// then those taken from over-quota members) fill the members below quota in member order.
func uniformHomogeneous(spec *AssignmentSpec) ([]MemberAssignment, error) {
	out := make([]MemberAssignment, len(spec.Members))
	// new HashSet<>(first member's subscribedTopicIds)
	subscribed := coordinator.JavaHashOrder(slices.Clone(spec.Members[0].Topics), uuidHash, coordinator.JavaSetCapacityCopy(len(spec.Members[0].Topics)))
	if len(subscribed) == 0 {
		return out, nil
	}
	index, unassigned, total, err := unassignedPartitions(spec, subscribed)
	if err != nil {
		return nil, err
	}
	unfilled := keepPartitions(spec, index, total, out, &unassigned)
	next := 0
	for _, u := range unfilled {
		end := min(next+u.quota, len(unassigned))
		out[u.idx] = appendRuns(out[u.idx], subscribed, unassigned[next:end])
		next = end
	}
	if next < len(unassigned) {
		return nil, errAssignor{"Partitions were left unassigned"}
	}
	return out, nil
}

// unassignedPartitions is the builder's constructor and computeUnassignedPartitions: the
// topics by index in the subscribed set's order, the partitions no member has in the
// previous target (isPartitionAssigned), per topic in that order, and the number of
// partitions of the subscribed topics.
func unassignedPartitions(spec *AssignmentSpec, subscribed []Uuid) (map[Uuid]int32, []topicPartition, int, error) {
	index := make(map[Uuid]int32, len(subscribed))
	owned := make([][]bool, len(subscribed))
	total := 0
	for i, t := range subscribed {
		n, ok := spec.Partitions[t]
		if !ok || n < 0 {
			return nil, nil, 0, errAssignor{fmt.Sprintf("Members are subscribed to topic %s which doesn't exist in the topic metadata.", t)}
		}
		index[t] = int32(i)
		owned[i] = make([]bool, n)
		total += int(n)
	}
	for i := range spec.Members {
		for _, tp := range spec.Members[i].Target {
			ti, ok := index[tp.Topic]
			if !ok {
				continue
			}
			o := owned[ti]
			for _, p := range tp.Partitions {
				if p >= 0 && int(p) < len(o) {
					o[p] = true
				}
			}
		}
	}
	unassigned := make([]topicPartition, 0, total)
	for ti, o := range owned {
		for p := range o {
			if !o[p] {
				unassigned = append(unassigned, topicPartition{int32(ti), int32(p)})
			}
		}
	}
	return index, unassigned, total, nil
}

// unfilledMember is a member (by index) below its quota after keepPartitions, and how many
// partitions it still takes.
type unfilledMember struct{ idx, quota int }

// keepPartitions is the builder's maybeRevokePartitions: each member keeps its previous
// partitions of subscribed topics up to its quota (T/M of the total, one more while extra
// slots remain), in its set's order, into out; what it must give up is appended to
// unassigned. A member below quota gives its extra slot up for a later one unless it is among
// the last members, which must take it. It returns the members below quota, in order.
func keepPartitions(spec *AssignmentSpec, index map[Uuid]int32, total int, out []MemberAssignment, unassigned *[]topicPartition) []unfilledMember {
	m := len(spec.Members)
	minQuota, extra := total/m, total%m
	var unfilled []unfilledMember
	for i := range spec.Members {
		mem := &spec.Members[i]
		quota, hasExtra := minQuota, false
		if extra > 0 {
			quota++
			hasExtra = true
		}
		na := make(MemberAssignment, 0, len(mem.Target)+1)
		for _, tp := range mem.Target {
			ti, ok := index[tp.Topic]
			if !ok {
				continue // the whole topic is dropped
			}
			if len(tp.Partitions) <= quota {
				quota -= len(tp.Partitions)
				// Shared with the input, capped so that a later append copies.
				na = append(na, TopicPartitions{tp.Topic, tp.Partitions[:len(tp.Partitions):len(tp.Partitions)]})
				continue
			}
			keep := make([]int32, 0, quota)
			for _, p := range tp.Partitions {
				if quota > 0 {
					quota--
					keep = append(keep, p)
				} else {
					*unassigned = append(*unassigned, topicPartition{ti, p})
				}
			}
			if len(keep) > 0 {
				na = append(na, TopicPartitions{tp.Topic, keep})
			}
		}
		if quota > 0 && hasExtra && m-i > extra {
			// Give the extra slot up for a later member, unless this one is among the last
			// `extra` members, which must take it.
			quota--
			hasExtra = false
		}
		if quota > 0 {
			unfilled = append(unfilled, unfilledMember{i, quota})
		}
		if hasExtra {
			extra--
		}
		out[i] = na
	}
	return unfilled
}

// appendRuns is the builder's assignRemainingPartitions for one member below quota: its share
// of the unassigned partitions, handed out in runs of one topic, one update per run.
func appendRuns(na MemberAssignment, subscribed []Uuid, share []topicPartition) MemberAssignment {
	for next := 0; next < len(share); {
		ti := share[next].topic
		t := subscribed[ti]
		run := next
		for run < len(share) && share[run].topic == ti {
			run++
		}
		k := slices.IndexFunc(na, func(x TopicPartitions) bool { return x.Topic == t })
		if k < 0 {
			na = append(na, TopicPartitions{Topic: t, Partitions: make([]int32, 0, run-next)})
			k = len(na) - 1
		}
		ps := na[k].Partitions
		for _, tp := range share[next:run] {
			ps = append(ps, tp.p)
		}
		na[k].Partitions = ps
		next = run
	}
	return na
}

// rangeAssign is RangeAssignor: members sorted (static members by instance id first, then
// dynamic members by member id); per topic, each subscriber in that order takes the next
// contiguous range of P/N partitions, the first P%N subscribers one more. It ignores the
// previous assignment.
func rangeAssign(spec *AssignmentSpec) ([]MemberAssignment, error) {
	order := make([]int, len(spec.Members))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ia, ib := spec.Members[a].InstanceID, spec.Members[b].InstanceID
		switch {
		case ia != nil && ib != nil:
			return coordinator.JavaStringCompare(*ia, *ib)
		case ia != nil:
			return -1
		case ib != nil:
			return 1
		}
		return coordinator.JavaStringCompare(spec.Members[a].ID, spec.Members[b].ID)
	})
	type topicState struct {
		partitions, members, minQuota, extra, next int
	}
	topics := map[Uuid]*topicState{}
	if spec.Homogeneous {
		for _, t := range spec.Members[order[0]].Topics {
			n, ok := spec.Partitions[t]
			if !ok || n < 0 {
				return nil, errAssignor{"Member is subscribed to a non-existent topic"}
			}
			topics[t] = &topicState{partitions: int(n), members: len(spec.Members)}
		}
	} else {
		for _, i := range order {
			for _, t := range spec.Members[i].Topics {
				ts := topics[t]
				if ts == nil {
					n, ok := spec.Partitions[t]
					if !ok || n < 0 {
						return nil, errAssignor{"Member is subscribed to a non-existent topic"}
					}
					ts = &topicState{partitions: int(n)}
					topics[t] = ts
				}
				ts.members++
			}
		}
	}
	for _, ts := range topics {
		ts.minQuota, ts.extra = ts.partitions/ts.members, ts.partitions%ts.members
	}
	out := make([]MemberAssignment, len(spec.Members))
	first := spec.Members[order[0]].Topics
	for _, i := range order {
		ts := first
		if !spec.Homogeneous {
			ts = spec.Members[i].Topics
		}
		a := make(MemberAssignment, 0, len(ts))
		for _, t := range ts {
			st := topics[t]
			start, quota := st.next, st.minQuota
			if st.extra > 0 {
				quota++
				st.extra--
			}
			end := min(start+quota, st.partitions)
			st.next = end
			if start < end {
				ps := make([]int32, 0, end-start)
				for p := start; p < end; p++ {
					ps = append(ps, int32(p))
				}
				a = append(a, TopicPartitions{t, ps})
			}
		}
		out[i] = a
	}
	return out, nil
}
