package groupstate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTopicNames(t *testing.T) {
	s := New(Kafka44)
	a, b, c := Uuid{1}, Uuid{2}, Uuid{3}
	require.NoError(t, s.ReplayOffsetCommit(0, NoProducerID, "g", "orders", 0, OffsetCommitValue{Offset: 1, TopicID: a}))
	require.NoError(t, s.ReplayOffsetCommit(1, NoProducerID, "g", "old-format", 0, OffsetCommitValue{Offset: 1})) // no id: no name
	require.NoError(t, s.ReplayShareGroupStatePartitionMetadata("sg", ShareStatePartitionMetadataValue{
		InitializingTopics: []TopicPartitionsInfo{{TopicID: b, TopicName: "payments", Partitions: []int32{0}}},
		InitializedTopics:  []TopicPartitionsInfo{{TopicID: c, TopicName: "refunds", Partitions: []int32{0}}},
	}))
	require.Equal(t, map[Uuid]string{a: "orders", b: "payments", c: "refunds"}, s.View().TopicNames())
	require.Empty(t, New(Kafka44).View().TopicNames())
}
