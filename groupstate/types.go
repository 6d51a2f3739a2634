package groupstate

// This file holds the plain types shared by mutator inputs and views. Every list in a view is
// sorted (see each type) and empty lists are nil, so that views compare with
// reflect.DeepEqual and print the same JSON every time.

// GroupType is the type of a group, as Kafka's GroupType.toString prints it.
type GroupType string

// Group types.
const (
	GroupTypeClassic  GroupType = "classic"
	GroupTypeConsumer GroupType = "consumer"
	GroupTypeShare    GroupType = "share"
	GroupTypeStreams  GroupType = "streams"
)

// Derived group states, spelled as Kafka's GroupState / StreamsGroupState print them.
const (
	StateEmpty       = "Empty"
	StateStable      = "Stable"
	StateAssigning   = "Assigning"
	StateReconciling = "Reconciling"
	StateNotReady    = "NotReady"
)

// Member states of consumer and share members (coordinator/group/modern/MemberState).
const (
	MemberStable               int8 = 0
	MemberUnrevokedPartitions  int8 = 1
	MemberUnreleasedPartitions int8 = 2
	MemberUnknown              int8 = 127
)

// Member states of streams members (coordinator/group/streams/MemberState): STABLE is 1.
const (
	StreamsMemberStable          int8 = 1
	StreamsMemberUnrevokedTasks  int8 = 2
	StreamsMemberUnreleasedTasks int8 = 3
	StreamsMemberUnknown         int8 = 127
)

// Member epochs with a meaning.
const (
	LeaveGroupMemberEpoch       int32 = -1
	LeaveGroupStaticMemberEpoch int32 = -2
)

// consumerMemberState maps a record byte as MemberState.fromValue does (unknown -> 127).
func consumerMemberState(b int8) int8 {
	switch b {
	case MemberStable, MemberUnrevokedPartitions, MemberUnreleasedPartitions:
		return b
	}
	return MemberUnknown
}

// ConsumerMemberStateName names a consumer/share member state byte.
func ConsumerMemberStateName(b int8) string {
	switch b {
	case MemberStable:
		return "STABLE"
	case MemberUnrevokedPartitions:
		return "UNREVOKED_PARTITIONS"
	case MemberUnreleasedPartitions:
		return "UNRELEASED_PARTITIONS"
	}
	return "UNKNOWN"
}

func streamsMemberState(b int8) int8 {
	switch b {
	case StreamsMemberStable, StreamsMemberUnrevokedTasks, StreamsMemberUnreleasedTasks:
		return b
	}
	return StreamsMemberUnknown
}

// StreamsMemberStateName names a streams member state byte.
func StreamsMemberStateName(b int8) string {
	switch b {
	case StreamsMemberStable:
		return "STABLE"
	case StreamsMemberUnrevokedTasks:
		return "UNREVOKED_TASKS"
	case StreamsMemberUnreleasedTasks:
		return "UNRELEASED_TASKS"
	}
	return "UNKNOWN"
}

// KeyValue is a string pair (client tags, assignment configs, topic configs).
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// TopicPartitions is a topic id with partitions (target assignments, share assignments).
// In views Partitions is sorted and deduplicated.
type TopicPartitions struct {
	TopicID    Uuid    `json:"topicId"`
	Partitions []int32 `json:"partitions,omitempty"`
}

// TopicPartitionsWithEpochs is a topic id with partitions and, optionally, one assignment
// epoch per partition (record 8 tag 0). As a mutator input, AssignmentEpochs nil means the
// tag was absent. In views, partitions are sorted and deduplicated and AssignmentEpochs is
// parallel to Partitions, or nil on Kafka versions that do not track epochs (before 4.3).
type TopicPartitionsWithEpochs struct {
	TopicID          Uuid    `json:"topicId"`
	Partitions       []int32 `json:"partitions,omitempty"`
	AssignmentEpochs []int32 `json:"assignmentEpochs,omitempty"`
}

// NamedTopicPartitions is a topic name with partitions (decoded classic assignments).
type NamedTopicPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions,omitempty"`
}

// TopicMetadata is one topic of the 4.0-only subscription metadata (records 4 and 9).
type TopicMetadata struct {
	TopicID       Uuid   `json:"topicId"`
	TopicName     string `json:"topicName"`
	NumPartitions int32  `json:"numPartitions"`
}

// MemberTargetAssignment is one member's target assignment in a consumer or share group.
type MemberTargetAssignment struct {
	MemberID   string            `json:"memberId"`
	Partitions []TopicPartitions `json:"partitions,omitempty"` // sorted by topic id
}

func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}

func cloneInt32s(s []int32) []int32 {
	if len(s) == 0 {
		return nil
	}
	return append([]int32(nil), s...)
}

func cloneInt16s(s []int16) []int16 {
	if len(s) == 0 {
		return nil
	}
	return append([]int16(nil), s...)
}

func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

func cloneKVs(s []KeyValue) []KeyValue {
	if len(s) == 0 {
		return nil
	}
	return append([]KeyValue(nil), s...)
}

func cloneStrPtr(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneTopicPartitions(s []TopicPartitions) []TopicPartitions {
	if len(s) == 0 {
		return nil
	}
	out := make([]TopicPartitions, len(s))
	for i, tp := range s {
		out[i] = TopicPartitions{TopicID: tp.TopicID, Partitions: cloneInt32s(tp.Partitions)}
	}
	return out
}

func cloneTopicPartitionsWithEpochs(s []TopicPartitionsWithEpochs) []TopicPartitionsWithEpochs {
	if len(s) == 0 {
		return nil
	}
	out := make([]TopicPartitionsWithEpochs, len(s))
	for i, tp := range s {
		out[i] = TopicPartitionsWithEpochs{TopicID: tp.TopicID, Partitions: cloneInt32s(tp.Partitions), AssignmentEpochs: cloneInt32s(tp.AssignmentEpochs)}
	}
	return out
}
