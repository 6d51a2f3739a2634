package groupstate

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata golden files")

// mixed replays one group of every type plus offsets and transactions.
func mixed(t *testing.T, v KafkaVersion) *State {
	s := New(v)
	require.NoError(t, s.ReplayGroupMetadata("classic", ClassicGroupValue{ProtocolType: "consumer", Generation: 2, Protocol: sp("range"), Leader: sp("c1"), CurrentStateTimestamp: 1700000000000, Members: []ClassicMember{
		{MemberID: "c1", ClientID: "client", ClientHost: "/10.0.0.9", RebalanceTimeoutMs: 60000, SessionTimeoutMs: 45000, Subscription: []byte{0, 3, 0, 0, 0, 1}, Assignment: []byte{0, 3},
			ProtocolDecoded: true, SubscribedTopics: []string{"orders"}, AssignedPartitions: []NamedTopicPartitions{{Topic: "orders", Partitions: []int32{0, 1}}}},
	}}, nil))
	joinConsumer(t, s, "consumer", "m1", 3)
	require.NoError(t, s.ReplayConsumerGroupRegularExpression("consumer", "ord.*", RegularExpressionValue{Topics: []string{"orders", "ordinals"}, Version: 12, Timestamp: 1700000000001}))
	if v >= Kafka41 {
		joinStreams(t, s, "streams", "s1", 4)
		require.NoError(t, s.ReplayShareGroupStatePartitionMetadata("share", ShareStatePartitionMetadataValue{InitializedTopics: []TopicPartitionsInfo{{TopicID: topicA, TopicName: "a", Partitions: []int32{0, 1}}}}))
	} else {
		require.NoError(t, s.ReplayShareGroupMetadata("share", ShareGroupMetadataValue{}))
	}
	joinShare(t, s, "share", "sh1", 2)
	require.NoError(t, s.ReplayOffsetCommit(100, NoProducerID, "consumer", "orders", 1, ocv(42)))
	require.NoError(t, s.ReplayOffsetCommit(101, NoProducerID, "consumer", "orders", 0, ocv(41)))
	require.NoError(t, s.ReplayOffsetCommit(102, NoProducerID, "simple", "t", 0, ocv(1)))
	require.NoError(t, s.ReplayOffsetCommit(103, 4001, "consumer", "orders", 2, ocv(43)))
	return s
}

func TestDumpGoldenAndDeterministic(t *testing.T) {
	for _, v := range []KafkaVersion{Kafka40, Kafka44} {
		a, b := mixed(t, v), mixed(t, v)
		ja, err := json.MarshalIndent(a.View().Dump(), "", "  ")
		require.NoError(t, err)
		for i := 0; i < 20; i++ { // map iteration order must not leak
			jb, err := json.MarshalIndent(b.View().Dump(), "", "  ")
			require.NoError(t, err)
			require.Equal(t, string(ja), string(jb))
		}
		require.True(t, Equal(a.View(), b.View()))
		roundTrip(t, a)
		golden := filepath.Join("testdata", "dump-"+v.String()+".golden.json")
		if *rewrite {
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			require.NoError(t, os.WriteFile(golden, append(ja, '\n'), 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err, "run go test ./groupstate -run TestDumpGolden -rewrite")
		require.Equal(t, string(want), string(ja)+"\n")
	}
}

func TestEqualAndDiff(t *testing.T) {
	a, b := mixed(t, Kafka44), mixed(t, Kafka44)
	require.Empty(t, Diff(a.View(), b.View(), 0))
	require.NoError(t, b.ReplayOffsetCommit(200, NoProducerID, "consumer", "orders", 0, ocv(99)))
	require.NoError(t, b.ReplayGroupMetadataTombstone("classic"))
	require.NoError(t, b.ReplayEndTransactionMarker(4001, TxnAbort))
	require.False(t, Equal(a.View(), b.View()))
	d := Diff(a.View(), b.View(), 0)
	require.Len(t, d, 3)
	require.Contains(t, d[0], "- group classic")
	require.Contains(t, d[1], "~ offset consumer/orders-0")
	require.Contains(t, d[2], "- pending 4001")
	require.Len(t, Diff(a.View(), b.View(), 1), 1)
	// Same content, different versions: not equal.
	require.False(t, Equal(New(Kafka43).View(), New(Kafka44).View()))
}

func TestViewsAreCopies(t *testing.T) {
	s := mixed(t, Kafka44)
	before := s.Clone()
	cg, _ := s.View().ConsumerGroup("consumer")
	cg.Members[0].SubscribedTopicNames[0] = "x"
	cg.Members[0].AssignedPartitions[0].Partitions[0] = 99
	cg.Members[0].ClassicMemberMetadata = &ClassicMemberMetadata{}
	cg.TargetAssignment[0].Partitions[0].Partitions[0] = 99
	cl, _ := s.View().ClassicGroup("classic")
	cl.Members[0].Subscription[0] = 9
	*cl.Leader = "x"
	st, _ := s.View().StreamsGroup("streams")
	*st.Members[0].MemberEpoch = 77
	st.Members[0].Metadata.ClientTags[0].Value = "x"
	st.Members[0].Metadata.UserEndpoint.Port = 1
	st.Topology.Subtopologies[0].SourceTopics[0] = "x"
	st.Members[0].AssignedTasks.ActiveTasks[0].AssignmentEpochs[0] = 5
	sh, _ := s.View().ShareGroup("share")
	sh.Members[0].AssignedPartitions[0].Partitions[0] = 7
	d := s.View().Dump()
	d.Offsets[0].Metadata = "x"
	d.Groups[0].Classic.Members[0].ClientID = "x"
	require.True(t, Equal(before.View(), s.View()), "%v", Diff(before.View(), s.View(), 5))

	// Inputs are not aliased either.
	in := []TopicPartitions{{TopicID: topicA, Partitions: []int32{3}}}
	require.NoError(t, s.ReplayConsumerGroupTargetAssignmentMember("consumer", "m9", in))
	in[0].Partitions[0] = 4
	cg, _ = s.View().ConsumerGroup("consumer")
	require.Equal(t, int32(3), cg.TargetAssignment[1].Partitions[0].Partitions[0])
}

func TestRestoreRejectsMalformedDumps(t *testing.T) {
	_, err := Restore(Dump{})
	require.Error(t, err)
	_, err = Restore(Dump{KafkaVersion: Kafka44, Groups: []Group{{GroupID: "g", Type: GroupTypeConsumer, Classic: &ClassicGroup{}}}})
	require.Error(t, err)
	_, err = Restore(Dump{KafkaVersion: Kafka44, Groups: []Group{{GroupID: "g", Type: GroupTypeClassic, Classic: &ClassicGroup{}}, {GroupID: "g", Type: GroupTypeClassic, Classic: &ClassicGroup{}}}})
	require.Error(t, err)
	_, err = Restore(Dump{KafkaVersion: Kafka44, Offsets: []CommittedOffset{{GroupID: "g"}, {GroupID: "g"}}})
	require.Error(t, err)
}

func TestKafkaVersion(t *testing.T) {
	for _, v := range KafkaVersions {
		p, err := ParseKafkaVersion(v.String())
		require.NoError(t, err)
		require.Equal(t, v, p)
	}
	_, err := ParseKafkaVersion("3.9")
	require.Error(t, err)
	require.Equal(t, Kafka44, New(0).Version())
	require.Equal(t, Kafka44, DefaultKafkaVersion)
	b, err := json.Marshal(Kafka42)
	require.NoError(t, err)
	require.Equal(t, `"4.2"`, string(b))

	require.True(t, Kafka40.ReplaysRecordType(9))
	require.False(t, Kafka41.ReplaysRecordType(9))
	require.False(t, Kafka40.ReplaysRecordType(15))
	require.False(t, Kafka40.ReplaysRecordType(17))
	require.True(t, Kafka41.ReplaysRecordType(23))
	require.False(t, Kafka44.ReplaysRecordType(18))
	require.False(t, Kafka44.ReplaysRecordType(24))
	require.True(t, Kafka44.ReplaysRecordType(0))
}

func TestReplayErrorMessage(t *testing.T) {
	s := New(Kafka44)
	require.NoError(t, s.ReplayConsumerGroupMemberMetadata("orders-app", "m-1", ConsumerMemberMetadataValue{}))
	err := s.ReplayConsumerGroupMemberMetadataTombstone("orders-app", "m-1")
	require.EqualError(t, err, `groupstate: record type 5 (tombstone), group "orders-app", member "m-1": tombstone invariant violated: `+
		`received a tombstone record to delete member m-1 but did not receive ConsumerGroupCurrentMemberAssignmentValue tombstone (member epoch 0) (Kafka: IllegalStateException)`)
	var re *ReplayError
	require.ErrorAs(t, err, &re)
	require.Equal(t, int16(5), re.RecordType)
	require.True(t, re.Tombstone)
}

func TestUuidText(t *testing.T) {
	u := Uuid{0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	b, err := u.MarshalText()
	require.NoError(t, err)
	require.Len(t, b, 22)
	var back Uuid
	require.NoError(t, back.UnmarshalText(b))
	require.Equal(t, u, back)
	require.Error(t, back.UnmarshalText([]byte("short")))
	require.Equal(t, "AAAAAAAAAAAAAAAAAAAAAA", ZeroUuid.String())
}
