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

// MemberAssignment is one member's new target, topic by topic.
type MemberAssignment map[Uuid][]int32

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

type topicPartition struct {
	topic Uuid
	p     int32
}

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
		for i := range out {
			out[i] = MemberAssignment{}
		}
		return out, nil
	}
	isSubscribed := make(map[Uuid]bool, len(subscribed))
	for _, t := range subscribed {
		isSubscribed[t] = true
	}
	// isPartitionAssigned: owned in the previous target by some member.
	owned := make(map[Uuid][]bool, len(subscribed))
	for _, t := range subscribed {
		n, ok := spec.Partitions[t]
		if !ok || n < 0 {
			return nil, errAssignor{fmt.Sprintf("Members are subscribed to topic %s which doesn't exist in the topic metadata.", t)}
		}
		owned[t] = make([]bool, n)
	}
	for i := range spec.Members {
		for _, tp := range spec.Members[i].Target {
			o := owned[tp.Topic]
			for _, p := range tp.Partitions {
				if p >= 0 && int(p) < len(o) {
					o[p] = true
				}
			}
		}
	}
	var unassigned []topicPartition
	total := 0
	for _, t := range subscribed {
		o := owned[t]
		for p := range o {
			if !o[p] {
				unassigned = append(unassigned, topicPartition{t, int32(p)})
			}
		}
		total += len(o)
	}
	m := len(spec.Members)
	minQuota, extra := total/m, total%m
	type unfilled struct{ idx, quota int }
	var unfilledMembers []unfilled
	for i := range spec.Members {
		mem := &spec.Members[i]
		quota, hasExtra := minQuota, false
		if extra > 0 {
			quota++
			hasExtra = true
		}
		na := make(MemberAssignment, len(mem.Target))
		for _, tp := range mem.Target {
			if !isSubscribed[tp.Topic] {
				continue // the whole topic is dropped
			}
			if len(tp.Partitions) <= quota {
				quota -= len(tp.Partitions)
				na[tp.Topic] = slices.Clone(tp.Partitions)
				continue
			}
			keep := make([]int32, 0, quota)
			for _, p := range tp.Partitions {
				if quota > 0 {
					quota--
					keep = append(keep, p)
				} else {
					unassigned = append(unassigned, topicPartition{tp.Topic, p})
				}
			}
			if len(keep) > 0 {
				na[tp.Topic] = keep
			}
		}
		if quota > 0 && hasExtra && m-i > extra {
			// Give the extra slot up for a later member, unless this one is among the last
			// `extra` members, which must take it.
			quota--
			hasExtra = false
		}
		if quota > 0 {
			unfilledMembers = append(unfilledMembers, unfilled{i, quota})
		}
		if hasExtra {
			extra--
		}
		out[i] = na
	}
	next := 0
	for _, u := range unfilledMembers {
		na := out[u.idx]
		for k := 0; k < u.quota && next < len(unassigned); k++ {
			tp := unassigned[next]
			next++
			na[tp.topic] = append(na[tp.topic], tp.p)
		}
	}
	if next < len(unassigned) {
		return nil, errAssignor{"Partitions were left unassigned"}
	}
	return out, nil
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
		a := make(MemberAssignment, len(ts))
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
				a[t] = ps
			}
		}
		out[i] = a
	}
	return out, nil
}
