package groupstate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShareGroupLifecycle(t *testing.T) {
	s := New(Kafka44)
	joinShare(t, s, "g", "m", 2)
	g, ok := s.View().ShareGroup("g")
	require.True(t, ok)
	require.Equal(t, StateStable, g.State)
	require.Equal(t, int64(5), g.MetadataHash)
	require.Equal(t, []TopicPartitions{{TopicID: topicA, Partitions: []int32{0, 1}}}, g.Members[0].AssignedPartitions)
	require.NoError(t, s.ReplayShareGroupStatePartitionMetadata("g", ShareStatePartitionMetadataValue{
		InitializingTopics: []TopicPartitionsInfo{{TopicID: topicB, TopicName: "b", Partitions: []int32{1, 0}}},
		InitializedTopics:  []TopicPartitionsInfo{{TopicID: topicA, TopicName: "a", Partitions: []int32{0}}},
		DeletingTopics:     []TopicInfo{{TopicID: topicB, TopicName: "b"}, {TopicID: topicA, TopicName: "a"}},
	}))
	roundTrip(t, s)
	// share: 14, 13, 12, 10, 15, 11 -- here 11 before 15 to show that 15 lives apart.
	require.NoError(t, s.ReplayShareGroupCurrentMemberAssignmentTombstone("g", "m"))
	require.NoError(t, s.ReplayShareGroupTargetAssignmentMemberTombstone("g", "m"))
	require.NoError(t, s.ReplayShareGroupTargetAssignmentMetadataTombstone("g"))
	require.NoError(t, s.ReplayShareGroupMemberMetadataTombstone("g", "m"))
	g, _ = s.View().ShareGroup("g")
	require.Equal(t, StateEmpty, g.State)
	require.NoError(t, s.ReplayShareGroupMetadataTombstone("g"))
	require.Equal(t, 0, s.View().NumGroups())
	md, ok := s.View().ShareGroupStatePartitionMetadata("g")
	require.True(t, ok, "state-partition metadata survives group removal")
	require.Equal(t, []Uuid{topicA, topicB}, md.DeletingTopicIDs)
	require.Equal(t, []int32{0, 1}, md.InitializingTopics[0].Partitions)
	require.NoError(t, s.ReplayShareGroupStatePartitionMetadataTombstone("g")) // group missing: entry still removed
	_, ok = s.View().ShareGroupStatePartitionMetadata("g")
	require.False(t, ok)
	require.Equal(t, 0, s.View().NumGroups())
}

func TestShareTombstoneInvariants(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, s *State)
		bad    func(s *State) error
		member string
	}{
		{"10: member epoch not -1", func(t *testing.T, s *State) { joinShare(t, s, "g", "m", 1) },
			func(s *State) error { return s.ReplayShareGroupMemberMetadataTombstone("g", "m") }, "m"},
		{"10: member still in target", func(t *testing.T, s *State) {
			joinShare(t, s, "g", "m", 1)
			require.NoError(t, s.ReplayShareGroupCurrentMemberAssignmentTombstone("g", "m"))
		}, func(s *State) error { return s.ReplayShareGroupMemberMetadataTombstone("g", "m") }, "m"},
		{"11: members left", func(t *testing.T, s *State) {
			require.NoError(t, s.ReplayShareGroupMemberMetadata("g", "m", ShareMemberMetadataValue{}))
		}, func(s *State) error { return s.ReplayShareGroupMetadataTombstone("g") }, ""},
		{"11: target not empty", func(t *testing.T, s *State) {
			require.NoError(t, s.ReplayShareGroupTargetAssignmentMember("g", "m", nil))
		}, func(s *State) error { return s.ReplayShareGroupMetadataTombstone("g") }, ""},
		{"11: assignment epoch not -1", func(t *testing.T, s *State) {
			require.NoError(t, s.ReplayShareGroupMetadata("g", ShareGroupMetadataValue{}))
		}, func(s *State) error { return s.ReplayShareGroupMetadataTombstone("g") }, ""},
		{"12: target not empty", func(t *testing.T, s *State) {
			require.NoError(t, s.ReplayShareGroupTargetAssignmentMember("g", "m", nil))
		}, func(s *State) error { return s.ReplayShareGroupTargetAssignmentMetadataTombstone("g") }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(Kafka44)
			c.setup(t, s)
			err := assertUnchanged(t, s, func() error { return c.bad(s) })
			assertReplayError(t, err, ErrTombstoneOrder, "g", c.member)
		})
	}
}

func TestShareTombstoneForMissingIgnored(t *testing.T) {
	for _, v := range KafkaVersions[1:] {
		s := New(v)
		for _, f := range []func() error{
			func() error { return s.ReplayShareGroupMemberMetadataTombstone("g", "m") },
			func() error { return s.ReplayShareGroupMetadataTombstone("g") },
			func() error { return s.ReplayShareGroupTargetAssignmentMetadataTombstone("g") },
			func() error { return s.ReplayShareGroupTargetAssignmentMemberTombstone("g", "m") },
			func() error { return s.ReplayShareGroupCurrentMemberAssignmentTombstone("g", "m") },
			func() error { return s.ReplayShareGroupStatePartitionMetadataTombstone("g") },
		} {
			require.NoError(t, f())
		}
		require.Equal(t, 0, s.View().NumGroups())
		// Values create on demand, in any order.
		require.NoError(t, s.ReplayShareGroupCurrentMemberAssignment("g", "m", ShareCurrentAssignmentValue{MemberEpoch: 4, State: 1}))
		g, _ := s.View().ShareGroup("g")
		require.Equal(t, "UNREVOKED_PARTITIONS", g.Members[0].StateName)
	}
}

func TestShareKafka40Rules(t *testing.T) {
	s := New(Kafka40)
	// Tombstones and records 12-14 need an existing group on 4.0.
	for _, f := range []func() error{
		func() error { return s.ReplayShareGroupMetadataTombstone("g") },
		func() error { return s.ReplayShareGroupMemberMetadataTombstone("g", "m") },
		func() error { return s.ReplayShareGroupTargetAssignmentMember("g", "m", nil) },
		func() error {
			return s.ReplayShareGroupTargetAssignmentMetadata("g", TargetAssignmentMetadataValue{})
		},
		func() error {
			return s.ReplayShareGroupCurrentMemberAssignment("g", "m", ShareCurrentAssignmentValue{})
		},
		func() error { return s.ReplayShareGroupPartitionMetadata("g", ConsumerGroupPartitionMetadataValue{}) },
	} {
		err := assertUnchanged(t, s, f)
		require.ErrorIs(t, err, ErrGroupNotFound)
	}
	require.NoError(t, s.ReplayShareGroupMetadata("g", ShareGroupMetadataValue{Epoch: 1}))
	err := assertUnchanged(t, s, func() error {
		return s.ReplayShareGroupCurrentMemberAssignment("g", "m", ShareCurrentAssignmentValue{})
	})
	assertReplayError(t, err, ErrMemberNotFound, "g", "m")
	err = assertUnchanged(t, s, func() error { return s.ReplayShareGroupMemberMetadataTombstone("g", "m") })
	assertReplayError(t, err, ErrMemberNotFound, "g", "m")
	// Record 9 stores subscription metadata; record 15 is not replayed by 4.0.
	require.NoError(t, s.ReplayShareGroupPartitionMetadata("g", ConsumerGroupPartitionMetadataValue{Topics: []TopicMetadata{{TopicID: topicA, TopicName: "a", NumPartitions: 2}}}))
	g, _ := s.View().ShareGroup("g")
	require.Len(t, g.SubscriptionMetadata, 1)
	err = assertUnchanged(t, s, func() error {
		return s.ReplayShareGroupStatePartitionMetadata("g", ShareStatePartitionMetadataValue{})
	})
	require.ErrorIs(t, err, ErrNotReplayed)

	s = New(Kafka41)
	err = s.ReplayShareGroupPartitionMetadata("g", ConsumerGroupPartitionMetadataValue{})
	require.ErrorIs(t, err, ErrNotReplayed)
}

func TestShareDuplicateKeys(t *testing.T) {
	s := New(Kafka44)
	dup := []TopicPartitions{{TopicID: topicA}, {TopicID: topicA}}
	for _, f := range []func() error{
		func() error { return s.ReplayShareGroupTargetAssignmentMember("g", "m", dup) },
		func() error {
			return s.ReplayShareGroupCurrentMemberAssignment("g", "m", ShareCurrentAssignmentValue{AssignedPartitions: dup})
		},
	} {
		err := assertUnchanged(t, s, f)
		assertReplayError(t, err, ErrDuplicateKey, "g", "m")
	}
	err := assertUnchanged(t, s, func() error {
		return s.ReplayShareGroupStatePartitionMetadata("g", ShareStatePartitionMetadataValue{InitializedTopics: []TopicPartitionsInfo{{TopicID: topicA}, {TopicID: topicA}}})
	})
	assertReplayError(t, err, ErrDuplicateKey, "g", "")
}

func TestShareDerivedStatesPerVersion(t *testing.T) {
	for _, v := range KafkaVersions {
		s := New(v)
		require.NoError(t, s.ReplayShareGroupMetadata("g", ShareGroupMetadataValue{Epoch: 9}))
		st, _ := s.View().GroupState("g")
		require.Equal(t, StateEmpty, st, v.String())
		require.NoError(t, s.ReplayShareGroupMemberMetadata("g", "m", ShareMemberMetadataValue{}))
		st, _ = s.View().GroupState("g")
		require.Equal(t, StateStable, st, "share groups are Stable with any member, whatever the epochs")
		g, _ := s.View().ShareGroup("g")
		require.Equal(t, int32(0), g.Members[0].MemberEpoch)
		require.Equal(t, int32(-1), g.Members[0].PreviousMemberEpoch)
	}
}
