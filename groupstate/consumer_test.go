package groupstate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInitialEpochsPerVersion(t *testing.T) {
	cases := []struct {
		v              KafkaVersion
		epoch          int32
		validatedEpoch int32
	}{
		{Kafka40, 0, 0}, {Kafka41, 0, 0}, {Kafka42, 0, 0}, {Kafka43, 1, 0}, {Kafka44, 1, -1},
	}
	for _, c := range cases {
		t.Run(c.v.String(), func(t *testing.T) {
			s := New(c.v)
			// A member record creates the group implicitly.
			require.NoError(t, s.ReplayConsumerGroupMemberMetadata("cg", "m", ConsumerMemberMetadataValue{}))
			cg, ok := s.View().ConsumerGroup("cg")
			require.True(t, ok)
			require.Equal(t, c.epoch, cg.GroupEpoch)
			require.Equal(t, c.epoch, cg.AssignmentEpoch)
			require.Equal(t, int64(0), cg.AssignmentTimestamp)

			require.NoError(t, s.ReplayShareGroupMemberMetadata("sg", "m", ShareMemberMetadataValue{}))
			sg, _ := s.View().ShareGroup("sg")
			require.Equal(t, c.epoch, sg.GroupEpoch)
			require.Equal(t, c.epoch, sg.AssignmentEpoch)

			if c.v == Kafka40 {
				err := s.ReplayStreamsGroupTopology("st", StreamsTopology{Epoch: 1})
				require.ErrorIs(t, err, ErrNotReplayed)
				return
			}
			require.NoError(t, s.ReplayStreamsGroupTopology("st", StreamsTopology{Epoch: 0}))
			st, _ := s.View().StreamsGroup("st")
			require.Equal(t, c.epoch, st.GroupEpoch)
			require.Equal(t, c.epoch, st.AssignmentEpoch)
			require.Equal(t, c.validatedEpoch, st.ValidatedTopologyEpoch)
			require.Equal(t, int32(-1), st.StoredDescriptionTopologyEpoch)
			require.Equal(t, int32(-1), st.FailedDescriptionTopologyEpoch)
		})
	}
}

func TestConsumerValueCreatesOnDemand(t *testing.T) {
	s := New(Kafka44)
	// Compaction can leave a current assignment without its member record, and a target
	// for a member that does not exist.
	require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment("g", "m1", ConsumerCurrentAssignmentValue{MemberEpoch: 5, PreviousMemberEpoch: 4, State: 1}))
	require.NoError(t, s.ReplayConsumerGroupTargetAssignmentMember("g", "ghost", []TopicPartitions{{TopicID: topicB, Partitions: []int32{3, 1, 3}}, {TopicID: topicA}}))
	g, ok := s.View().ConsumerGroup("g")
	require.True(t, ok)
	require.Len(t, g.Members, 1)
	m := g.Members[0]
	require.Equal(t, int32(5), m.MemberEpoch)
	require.Equal(t, MemberUnrevokedPartitions, m.State)
	require.Equal(t, "UNREVOKED_PARTITIONS", m.StateName)
	require.Equal(t, int32(-1), m.RebalanceTimeoutMs) // builder defaults
	require.Equal(t, sp(""), m.SubscribedTopicRegex)
	require.Nil(t, m.InstanceID)
	require.Equal(t, []MemberTargetAssignment{{MemberID: "ghost", Partitions: []TopicPartitions{{TopicID: topicA}, {TopicID: topicB, Partitions: []int32{1, 3}}}}}, g.TargetAssignment)

	// The member record then fills the metadata and keeps the assignment fields.
	require.NoError(t, s.ReplayConsumerGroupMemberMetadata("g", "m1", ConsumerMemberMetadataValue{
		InstanceID: sp("i1"), RackID: sp("r"), ClientID: "cid", ClientHost: "/1.2.3.4",
		SubscribedTopicNames: []string{"b", "a", "b"}, RebalanceTimeoutMs: 300, ServerAssignor: sp("uniform"),
		ClassicMemberMetadata: &ClassicMemberMetadata{SessionTimeoutMs: 10, SupportedProtocols: []ClassicProtocol{{Name: "range", Metadata: []byte{1}}}},
	}))
	g, _ = s.View().ConsumerGroup("g")
	m = g.Members[0]
	require.Equal(t, int32(5), m.MemberEpoch)
	require.Equal(t, []string{"a", "b"}, m.SubscribedTopicNames)
	require.Nil(t, m.SubscribedTopicRegex)
	require.Equal(t, "uniform", *m.ServerAssignor)
	require.Equal(t, int32(10), m.ClassicMemberMetadata.SessionTimeoutMs)
	roundTrip(t, s)
}

func TestConsumerTombstoneForMissingIgnored(t *testing.T) {
	for _, v := range KafkaVersions {
		s := New(v)
		calls := []func() error{
			func() error { return s.ReplayConsumerGroupMetadataTombstone("g") },
			func() error { return s.ReplayConsumerGroupPartitionMetadataTombstone("g") },
			func() error { return s.ReplayConsumerGroupMemberMetadataTombstone("g", "m") },
			func() error { return s.ReplayConsumerGroupTargetAssignmentMetadataTombstone("g") },
			func() error { return s.ReplayConsumerGroupTargetAssignmentMemberTombstone("g", "m") },
			func() error { return s.ReplayConsumerGroupCurrentMemberAssignmentTombstone("g", "m") },
			func() error { return s.ReplayConsumerGroupRegularExpressionTombstone("g", "re") },
			func() error { return s.ReplayGroupMetadataTombstone("g") },
			func() error { return s.ReplayOffsetCommitTombstone("g", "t", 0) },
			func() error { return s.ReplayEndTransactionMarker(7, TxnCommit) },
		}
		for i, c := range calls {
			require.NoError(t, c(), "version %s call %d", v, i)
		}
		require.Equal(t, 0, s.View().NumGroups())
		// Missing members of an existing group too.
		require.NoError(t, s.ReplayConsumerGroupMetadata("g", ConsumerGroupMetadataValue{Epoch: 3}))
		require.NoError(t, s.ReplayConsumerGroupMemberMetadataTombstone("g", "m"))
		require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignmentTombstone("g", "m"))
		cg, _ := s.View().ConsumerGroup("g")
		require.Empty(t, cg.Members)
	}
}

func TestConsumerTombstoneInvariants(t *testing.T) {
	type step func(s *State) error
	cases := []struct {
		name   string
		setup  []step
		bad    step
		member string
	}{
		{
			name: "3: group still has members",
			setup: []step{func(s *State) error {
				return s.ReplayConsumerGroupMemberMetadata("g", "m", ConsumerMemberMetadataValue{})
			}},
			bad: func(s *State) error { return s.ReplayConsumerGroupMetadataTombstone("g") },
		},
		{
			name: "3: target assignment not empty",
			setup: []step{func(s *State) error {
				return s.ReplayConsumerGroupTargetAssignmentMember("g", "m", nil)
			}},
			bad: func(s *State) error { return s.ReplayConsumerGroupMetadataTombstone("g") },
		},
		{
			name:  "3: assignment epoch not -1",
			setup: []step{func(s *State) error { return s.ReplayConsumerGroupMetadata("g", ConsumerGroupMetadataValue{Epoch: 1}) }},
			bad:   func(s *State) error { return s.ReplayConsumerGroupMetadataTombstone("g") },
		},
		{
			name: "5: member epoch not -1 (no id-8 tombstone)",
			setup: []step{func(s *State) error {
				return s.ReplayConsumerGroupMemberMetadata("g", "m", ConsumerMemberMetadataValue{})
			}},
			bad:    func(s *State) error { return s.ReplayConsumerGroupMemberMetadataTombstone("g", "m") },
			member: "m",
		},
		{
			name: "5: member still in target assignment",
			setup: []step{
				func(s *State) error {
					return s.ReplayConsumerGroupMemberMetadata("g", "m", ConsumerMemberMetadataValue{})
				},
				func(s *State) error {
					return s.ReplayConsumerGroupTargetAssignmentMember("g", "m", nil)
				},
				func(s *State) error { return s.ReplayConsumerGroupCurrentMemberAssignmentTombstone("g", "m") },
			},
			bad:    func(s *State) error { return s.ReplayConsumerGroupMemberMetadataTombstone("g", "m") },
			member: "m",
		},
		{
			name: "6: target assignment not empty",
			setup: []step{func(s *State) error {
				return s.ReplayConsumerGroupTargetAssignmentMember("g", "m", nil)
			}},
			bad: func(s *State) error { return s.ReplayConsumerGroupTargetAssignmentMetadataTombstone("g") },
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(Kafka44)
			for _, st := range c.setup {
				require.NoError(t, st(s))
			}
			err := assertUnchanged(t, s, func() error { return c.bad(s) })
			assertReplayError(t, err, ErrTombstoneOrder, "g", c.member)
			require.Contains(t, err.Error(), "IllegalStateException")
		})
	}
}

func TestConsumerGroupDeletionInKafkaOrder(t *testing.T) {
	s := New(Kafka44)
	joinConsumer(t, s, "g", "m1", 2)
	joinConsumer(t, s, "g", "m2", 3)
	require.NoError(t, s.ReplayConsumerGroupRegularExpression("g", "ord.*", RegularExpressionValue{Topics: []string{"orders"}, Version: 4, Timestamp: 5}))
	require.NoError(t, s.ReplayConsumerGroupPartitionMetadata("g", ConsumerGroupPartitionMetadataValue{}))
	// createGroupTombstoneRecords: 8s, 7s, 6, 5s, 16s, 4, 3.
	for _, m := range []string{"m1", "m2"} {
		require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignmentTombstone("g", m))
	}
	cg, _ := s.View().ConsumerGroup("g")
	require.Equal(t, int32(-1), cg.Members[0].MemberEpoch)
	require.Equal(t, int32(-1), cg.Members[0].PreviousMemberEpoch)
	require.Nil(t, cg.Members[0].AssignedPartitions)
	for _, m := range []string{"m1", "m2"} {
		require.NoError(t, s.ReplayConsumerGroupTargetAssignmentMemberTombstone("g", m))
	}
	require.NoError(t, s.ReplayConsumerGroupTargetAssignmentMetadataTombstone("g"))
	cg, _ = s.View().ConsumerGroup("g")
	require.Equal(t, int32(-1), cg.AssignmentEpoch)
	require.Equal(t, int64(0), cg.AssignmentTimestamp)
	for _, m := range []string{"m1", "m2"} {
		require.NoError(t, s.ReplayConsumerGroupMemberMetadataTombstone("g", m))
	}
	require.NoError(t, s.ReplayConsumerGroupRegularExpressionTombstone("g", "ord.*"))
	require.NoError(t, s.ReplayConsumerGroupPartitionMetadataTombstone("g"))
	require.NoError(t, s.ReplayConsumerGroupMetadataTombstone("g"))
	_, ok := s.View().GroupType("g")
	require.False(t, ok)
}

func TestConsumerDerivedStates(t *testing.T) {
	for _, v := range KafkaVersions {
		t.Run(v.String(), func(t *testing.T) {
			s := New(v)
			state := func() string { st, _ := s.View().GroupState("g"); return st }
			require.NoError(t, s.ReplayConsumerGroupMetadata("g", ConsumerGroupMetadataValue{Epoch: 4}))
			require.Equal(t, StateEmpty, state())
			require.NoError(t, s.ReplayConsumerGroupMemberMetadata("g", "m", ConsumerMemberMetadataValue{}))
			require.Equal(t, StateAssigning, state()) // group epoch 4 > assignment epoch 0/1
			require.NoError(t, s.ReplayConsumerGroupTargetAssignmentMetadata("g", TargetAssignmentMetadataValue{AssignmentEpoch: 4}))
			require.Equal(t, StateReconciling, state()) // member epoch 0 != 4
			require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment("g", "m", ConsumerCurrentAssignmentValue{MemberEpoch: 4, State: MemberUnrevokedPartitions}))
			require.Equal(t, StateReconciling, state()) // not STABLE
			require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment("g", "m", ConsumerCurrentAssignmentValue{MemberEpoch: 4, State: MemberStable}))
			require.Equal(t, StateStable, state())
			require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment("g", "m", ConsumerCurrentAssignmentValue{MemberEpoch: 4, State: 42}))
			cg, _ := s.View().ConsumerGroup("g")
			require.Equal(t, MemberUnknown, cg.Members[0].State) // MemberState.fromValue
			require.Equal(t, StateReconciling, state())
		})
	}
	// Implicit groups differ by version: group and assignment epochs start at 0 up to 4.2
	// and at 1 from 4.3, so a member at epoch 1 is reconciled on 4.3+ only.
	for _, c := range []struct {
		v    KafkaVersion
		want string
	}{{Kafka42, StateReconciling}, {Kafka43, StateStable}} {
		s := New(c.v)
		require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment("g", "m", ConsumerCurrentAssignmentValue{MemberEpoch: 1}))
		st, _ := s.View().GroupState("g")
		require.Equal(t, c.want, st, c.v.String())
	}
}

func TestConsumerAssignmentEpochsPerVersion(t *testing.T) {
	in := ConsumerCurrentAssignmentValue{
		MemberEpoch: -2, PreviousMemberEpoch: 3, State: MemberStable,
		AssignedPartitions: []TopicPartitionsWithEpochs{
			{TopicID: topicB, Partitions: []int32{2, 0}, AssignmentEpochs: []int32{7, 8}},
			{TopicID: topicA, Partitions: []int32{1}},                                   // absent: max(memberEpoch, 0)
			{TopicID: Uuid{3}, Partitions: []int32{4, 5}, AssignmentEpochs: []int32{1}}, // wrong length: default
		},
	}
	s := New(Kafka43)
	require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment("g", "m", in))
	cg, _ := s.View().ConsumerGroup("g")
	require.Equal(t, []TopicPartitionsWithEpochs{
		{TopicID: topicA, Partitions: []int32{1}, AssignmentEpochs: []int32{0}},
		{TopicID: topicB, Partitions: []int32{0, 2}, AssignmentEpochs: []int32{8, 7}},
		{TopicID: Uuid{3}, Partitions: []int32{4, 5}, AssignmentEpochs: []int32{0, 0}},
	}, cg.Members[0].AssignedPartitions)

	s = New(Kafka42)
	require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment("g", "m", in))
	cg, _ = s.View().ConsumerGroup("g")
	require.Equal(t, []TopicPartitionsWithEpochs{
		{TopicID: topicA, Partitions: []int32{1}},
		{TopicID: topicB, Partitions: []int32{0, 2}},
		{TopicID: Uuid{3}, Partitions: []int32{4, 5}},
	}, cg.Members[0].AssignedPartitions)

	// A repeated topic id: Collectors.toMap fails up to 4.2; 4.3+ keeps the last.
	dup := ConsumerCurrentAssignmentValue{AssignedPartitions: []TopicPartitionsWithEpochs{{TopicID: topicA, Partitions: []int32{1}}, {TopicID: topicA, Partitions: []int32{2}}}}
	s = New(Kafka42)
	err := assertUnchanged(t, s, func() error { return s.ReplayConsumerGroupCurrentMemberAssignment("g", "m", dup) })
	assertReplayError(t, err, ErrDuplicateKey, "g", "m")
	s = New(Kafka43)
	require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment("g", "m", dup))
	cg, _ = s.View().ConsumerGroup("g")
	require.Equal(t, []int32{2}, cg.Members[0].AssignedPartitions[0].Partitions)
	// Target assignments always use Collectors.toMap.
	err = assertUnchanged(t, s, func() error {
		return s.ReplayConsumerGroupTargetAssignmentMember("g", "m", []TopicPartitions{{TopicID: topicA}, {TopicID: topicA}})
	})
	assertReplayError(t, err, ErrDuplicateKey, "g", "m")
}

func TestTargetAssignmentMetadataValidation(t *testing.T) {
	for _, v := range KafkaVersions {
		for _, bad := range []TargetAssignmentMetadataValue{{AssignmentEpoch: -2}, {AssignmentEpoch: 3, AssignmentTimestamp: -1}} {
			calls := map[string]func(s *State) error{
				"consumer": func(s *State) error { return s.ReplayConsumerGroupTargetAssignmentMetadata("g", bad) },
				"share":    func(s *State) error { return s.ReplayShareGroupTargetAssignmentMetadata("g", bad) },
				"streams":  func(s *State) error { return s.ReplayStreamsGroupTargetAssignmentMetadata("g", bad) },
			}
			for name, call := range calls {
				s := New(v)
				if name == "streams" && v == Kafka40 {
					continue
				}
				if name == "share" && v == Kafka40 { // 4.0 share needs the group first
					require.NoError(t, s.ReplayShareGroupMetadata("g", ShareGroupMetadataValue{}))
				}
				err := call(s)
				if v >= Kafka43 {
					assertReplayError(t, err, ErrInvalidAssignmentMetadata, "g", "")
					require.Contains(t, err.Error(), "IllegalArgumentException")
				} else {
					require.NoError(t, err, "%s %s", v, name)
				}
			}
		}
	}
	// -1 is valid; the timestamp is kept from 4.3 and ignored before.
	for _, c := range []struct {
		v  KafkaVersion
		ts int64
	}{{Kafka42, 0}, {Kafka43, 77}} {
		s := New(c.v)
		require.NoError(t, s.ReplayConsumerGroupTargetAssignmentMetadata("g", TargetAssignmentMetadataValue{AssignmentEpoch: -1, AssignmentTimestamp: 77}))
		cg, _ := s.View().ConsumerGroup("g")
		require.Equal(t, int32(-1), cg.AssignmentEpoch)
		require.Equal(t, c.ts, cg.AssignmentTimestamp)
	}
}

func TestConsumerPartitionMetadataPerVersion(t *testing.T) {
	topics := ConsumerGroupPartitionMetadataValue{Topics: []TopicMetadata{{TopicID: topicB, TopicName: "b", NumPartitions: 3}, {TopicID: topicA, TopicName: "a", NumPartitions: 1}}}
	s := New(Kafka40)
	require.NoError(t, s.ReplayConsumerGroupPartitionMetadata("g", topics))
	cg, _ := s.View().ConsumerGroup("g")
	require.False(t, cg.HasSubscriptionMetadataRecord)
	require.Equal(t, []TopicMetadata{{TopicID: topicA, TopicName: "a", NumPartitions: 1}, {TopicID: topicB, TopicName: "b", NumPartitions: 3}}, cg.SubscriptionMetadata)
	roundTrip(t, s)
	require.NoError(t, s.ReplayConsumerGroupPartitionMetadataTombstone("g"))
	cg, _ = s.View().ConsumerGroup("g")
	require.Nil(t, cg.SubscriptionMetadata)

	for _, v := range KafkaVersions[1:] {
		s := New(v)
		require.NoError(t, s.ReplayConsumerGroupPartitionMetadata("g", topics))
		cg, _ := s.View().ConsumerGroup("g")
		require.True(t, cg.HasSubscriptionMetadataRecord)
		require.Nil(t, cg.SubscriptionMetadata)
		require.NoError(t, s.ReplayConsumerGroupPartitionMetadataTombstone("g"))
		cg, _ = s.View().ConsumerGroup("g")
		require.False(t, cg.HasSubscriptionMetadataRecord)
	}
}

func TestMetadataHashAndTopicIDPerVersion(t *testing.T) {
	for _, c := range []struct {
		v    KafkaVersion
		hash int64
		id   Uuid
	}{{Kafka40, 0, ZeroUuid}, {Kafka41, 9, topicA}} {
		s := New(c.v)
		require.NoError(t, s.ReplayConsumerGroupMetadata("g", ConsumerGroupMetadataValue{Epoch: 1, MetadataHash: 9}))
		cg, _ := s.View().ConsumerGroup("g")
		require.Equal(t, c.hash, cg.MetadataHash)
		require.NoError(t, s.ReplayShareGroupMetadata("s", ShareGroupMetadataValue{Epoch: 1, MetadataHash: 9}))
		sg, _ := s.View().ShareGroup("s")
		require.Equal(t, c.hash, sg.MetadataHash)
		require.NoError(t, s.ReplayOffsetCommit(1, NoProducerID, "g", "t", 0, OffsetCommitValue{Offset: 1, TopicID: topicA}))
		om, _ := s.View().Offset("g", "t", 0)
		require.Equal(t, c.id, om.TopicID)
	}
}
