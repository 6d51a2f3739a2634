package consumer

import (
	"slices"

	"github.com/coordlog/coordlog/coordinator"
)

// SpecMember is a member as the replayed state holds it: sorted subscribed names, the topics
// of its resolved regex, and its target sorted by topic id with sorted partitions (the order
// of groupstate's views and of the records coordlog writes).
type SpecMember struct {
	ID          string
	InstanceID  *string
	RackID      *string
	TopicNames  []string // sorted
	RegexTopics []string // sorted; the resolved regex's topics (nil: no regex or unresolved)
	Target      []TopicPartitions
}

// KafkaSpec builds the assignor input from members given in the order Kafka's
// TargetAssignmentBuilder puts them into its HashMap (computeTarget), in the iteration orders
// Kafka's coordinator gives its collections (see coordinator/javahash.go):
//
//   - members: the builder's new HashMap iterates them in String.hashCode bucket order, the
//     members of one bucket in the order they were put;
//   - a member's topics: its names are a new HashSet of record 5's list, a resolved regex's
//     topics another (iterated after the names, skipping names already there), resolved to
//     the ids of existing topics in that order (TopicIds);
//   - a member's previous target: Assignment.fromRecord of record 7, a HashMap of topic id to
//     a new HashSet of the record's partitions, filled in record order.
//
// topicID resolves a name to an existing topic's id.
func KafkaSpec(members []SpecMember, homogeneous bool, topicID func(string) (Uuid, int32, bool)) *AssignmentSpec {
	spec := &AssignmentSpec{Homogeneous: homogeneous, Partitions: map[Uuid]int32{}, Members: make([]AssignorMember, len(members))}
	order := make([]int, len(members))
	for i := range order {
		order[i] = i
	}
	coordinator.JavaHashOrder(order, func(i int) int32 { return coordinator.JavaStringHash(members[i].ID) }, coordinator.JavaMapCapacityDefault(len(members)))
	for k, i := range order {
		m := &members[i]
		am := AssignorMember{ID: m.ID, InstanceID: m.InstanceID}
		names := javaStringSet(m.TopicNames)
		if len(m.RegexTopics) > 0 {
			if len(names) == 0 {
				names = javaStringSet(m.RegexTopics)
			} else {
				in := make(map[string]bool, len(names))
				for _, n := range names {
					in[n] = true
				}
				for _, n := range javaStringSet(m.RegexTopics) {
					if !in[n] {
						names = append(names, n)
					}
				}
			}
		}
		for _, n := range names {
			if id, parts, ok := topicID(n); ok {
				am.Topics = append(am.Topics, id)
				spec.Partitions[id] = parts
			}
		}
		am.Target = KafkaTargetOrder(m.Target)
		spec.Members[k] = am
	}
	return spec
}

// javaStringSet is the iteration order of new HashSet<>(names).
func javaStringSet(names []string) []string {
	return coordinator.JavaHashOrder(slices.Clone(names), coordinator.JavaStringHash, coordinator.JavaSetCapacityCopy(len(names)))
}

// KafkaTargetOrder is the iteration order of Assignment.fromRecord over a record-7 value that
// lists target (topics, then each topic's partitions) in order: the topic ids of a default
// HashMap, each topic's partitions a new HashSet of the list. target is not modified.
func KafkaTargetOrder(target []TopicPartitions) []TopicPartitions {
	out := make([]TopicPartitions, len(target))
	for i, tp := range target {
		out[i] = TopicPartitions{Topic: tp.Topic, Partitions: coordinator.JavaIntSetOrder(slices.Clone(tp.Partitions), coordinator.JavaSetCapacityCopy(len(tp.Partitions)))}
	}
	return coordinator.JavaHashOrder(out, func(tp TopicPartitions) int32 { return uuidHash(tp.Topic) }, coordinator.JavaMapCapacityDefault(len(out)))
}
