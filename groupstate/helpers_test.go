package groupstate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	topicA = Uuid{1}
	topicB = Uuid{2}
)

func sp(s string) *string { return &s }

// assertReplayError checks the sentinel, and that the message names group and member.
func assertReplayError(t *testing.T, err error, kind error, group, member string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, kind)
	var re *ReplayError
	require.ErrorAs(t, err, &re)
	require.Equal(t, group, re.GroupID)
	require.Equal(t, member, re.MemberID)
	require.Contains(t, err.Error(), `group "`+group+`"`)
	if member != "" {
		require.Contains(t, err.Error(), `member "`+member+`"`)
	}
	require.NotEmpty(t, re.Reason)
}

// assertUnchanged runs f and checks it failed without changing the state.
func assertUnchanged(t *testing.T, s *State, f func() error) error {
	t.Helper()
	before, tables := s.Clone(), orderTables(s)
	err := f()
	require.Error(t, err)
	require.True(t, Equal(before.View(), s.View()), "state changed by a failing mutator: %v", Diff(before.View(), s.View(), 5))
	require.Equal(t, tables, orderTables(s), "the order of Kafka's maps changed by a failing mutator")
	return err
}

// orderTables is what the state keeps of the orders of Kafka's maps (order.go), by group.
func orderTables(s *State) map[string][3]TimelineTable {
	out := map[string][3]TimelineTable{}
	for _, id := range s.View().GroupIDs() {
		mt, _ := s.View().MemberTable(id)
		rt, _ := s.View().RegexTable(id)
		at, _ := s.View().AssignorTable(id)
		out[id] = [3]TimelineTable{mt, rt, at}
	}
	return out
}

// roundTrip checks that the state survives Dump/Restore and JSON, and returns it.
func roundTrip(t *testing.T, s *State) {
	t.Helper()
	d := s.View().Dump()
	r, err := Restore(d)
	require.NoError(t, err)
	require.True(t, Equal(s.View(), r.View()), "%v", Diff(s.View(), r.View(), 5))
	b1, err := json.Marshal(d)
	require.NoError(t, err)
	var back Dump
	require.NoError(t, json.Unmarshal(b1, &back))
	r2, err := Restore(back)
	require.NoError(t, err)
	b2, err := json.Marshal(r2.View().Dump())
	require.NoError(t, err)
	require.JSONEq(t, string(b1), string(b2))
	require.Equal(t, string(b1), string(b2))
	imageRoundTrip(t, s)
}

// consumerMember builds a stable member of a consumer group at epoch e with its records.
func joinConsumer(t *testing.T, s *State, g, m string, epoch int32) {
	t.Helper()
	require.NoError(t, s.ReplayConsumerGroupMemberMetadata(g, m, ConsumerMemberMetadataValue{ClientID: "c-" + m, ClientHost: "/10.0.0.1", SubscribedTopicNames: []string{"orders"}, RebalanceTimeoutMs: 45000}))
	require.NoError(t, s.ReplayConsumerGroupMetadata(g, ConsumerGroupMetadataValue{Epoch: epoch, MetadataHash: 99}))
	require.NoError(t, s.ReplayConsumerGroupTargetAssignmentMember(g, m, []TopicPartitions{{TopicID: topicA, Partitions: []int32{0}}}))
	require.NoError(t, s.ReplayConsumerGroupTargetAssignmentMetadata(g, TargetAssignmentMetadataValue{AssignmentEpoch: epoch, AssignmentTimestamp: 1000}))
	require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment(g, m, ConsumerCurrentAssignmentValue{MemberEpoch: epoch, PreviousMemberEpoch: epoch - 1, State: MemberStable, AssignedPartitions: []TopicPartitionsWithEpochs{{TopicID: topicA, Partitions: []int32{0}}}}))
}

// removeConsumerMember writes Kafka's member removal order: 8, 7, 5 tombstones.
func removeConsumerMember(t *testing.T, s *State, g, m string) {
	t.Helper()
	require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignmentTombstone(g, m))
	require.NoError(t, s.ReplayConsumerGroupTargetAssignmentMemberTombstone(g, m))
	require.NoError(t, s.ReplayConsumerGroupMemberMetadataTombstone(g, m))
}

func joinStreams(t *testing.T, s *State, g, m string, epoch int32) {
	t.Helper()
	require.NoError(t, s.ReplayStreamsGroupMemberMetadata(g, m, StreamsMemberMetadata{ClientID: "c", ProcessID: "p-" + m, TopologyEpoch: 1, RebalanceTimeoutMs: 1000, UserEndpoint: &StreamsEndpoint{Host: "h", Port: 8080}, ClientTags: []KeyValue{{"z", "1"}, {"a", "2"}}}))
	require.NoError(t, s.ReplayStreamsGroupTopology(g, StreamsTopology{Epoch: 1, Subtopologies: []Subtopology{{SubtopologyID: "1", SourceTopics: []string{"b-in", "a-in"}}, {SubtopologyID: "0", SourceTopics: []string{"in"}}}}))
	require.NoError(t, s.ReplayStreamsGroupMetadata(g, StreamsGroupMetadataValue{Epoch: epoch, MetadataHash: 7, ValidatedTopologyEpoch: 1, StoredDescriptionTopologyEpoch: -1, FailedDescriptionTopologyEpoch: -1}))
	require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMember(g, m, StreamsTargetAssignmentValue{ActiveTasks: []TaskIDs{{SubtopologyID: "0", Partitions: []int32{1, 0}}}}))
	require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMetadata(g, TargetAssignmentMetadataValue{AssignmentEpoch: epoch}))
	require.NoError(t, s.ReplayStreamsGroupCurrentMemberAssignment(g, m, StreamsCurrentAssignmentValue{MemberEpoch: epoch, PreviousMemberEpoch: epoch - 1, State: StreamsMemberStable, ActiveTasks: []TaskIDsWithEpochs{{SubtopologyID: "0", Partitions: []int32{1, 0}}}}))
}

func joinShare(t *testing.T, s *State, g, m string, epoch int32) {
	t.Helper()
	require.NoError(t, s.ReplayShareGroupMemberMetadata(g, m, ShareMemberMetadataValue{ClientID: "c", ClientHost: "h", SubscribedTopicNames: []string{"t"}}))
	require.NoError(t, s.ReplayShareGroupMetadata(g, ShareGroupMetadataValue{Epoch: epoch, MetadataHash: 5}))
	require.NoError(t, s.ReplayShareGroupTargetAssignmentMember(g, m, []TopicPartitions{{TopicID: topicA, Partitions: []int32{0, 1}}}))
	require.NoError(t, s.ReplayShareGroupTargetAssignmentMetadata(g, TargetAssignmentMetadataValue{AssignmentEpoch: epoch}))
	require.NoError(t, s.ReplayShareGroupCurrentMemberAssignment(g, m, ShareCurrentAssignmentValue{MemberEpoch: epoch, PreviousMemberEpoch: epoch - 1, State: MemberStable, AssignedPartitions: []TopicPartitions{{TopicID: topicA, Partitions: []int32{0, 1}}}}))
}

func classicValue(protocolType string, members ...ClassicMember) ClassicGroupValue {
	return ClassicGroupValue{ProtocolType: protocolType, Generation: 3, Protocol: sp("range"), CurrentStateTimestamp: -1, Members: members}
}
