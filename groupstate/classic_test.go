package groupstate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGroupMetadataBuildsClassicGroup(t *testing.T) {
	s := New(Kafka44)
	require.NoError(t, s.ReplayGroupMetadata("g", ClassicGroupValue{ProtocolType: "consumer", Generation: 7, Protocol: sp("range"), CurrentStateTimestamp: 123, Members: []ClassicMember{
		{MemberID: "m2", ClientID: "c", ClientHost: "/h", RebalanceTimeoutMs: -1, SessionTimeoutMs: 10000, Subscription: []byte{0, 1}, ProtocolDecoded: true, SubscribedTopics: []string{"t2", "t1"}},
		{MemberID: "m1", GroupInstanceID: sp("i1"), RebalanceTimeoutMs: 300000, SessionTimeoutMs: 45000, ProtocolDecoded: true, SubscribedTopics: []string{"t1"},
			AssignedPartitions: []NamedTopicPartitions{{Topic: "t2", Partitions: []int32{1, 0}}, {Topic: "t1", Partitions: []int32{2}}}},
	}}, nil))
	g, ok := s.View().ClassicGroup("g")
	require.True(t, ok)
	require.Equal(t, StateStable, g.State)
	require.Equal(t, "m2", *g.Leader) // null leader: first member added
	require.False(t, g.Simple)
	require.Equal(t, []string{"m1", "m2"}, []string{g.Members[0].MemberID, g.Members[1].MemberID})
	require.Equal(t, int32(10000), g.Members[1].RebalanceTimeoutMs) // -1 -> session timeout
	require.Equal(t, int32(300000), g.Members[0].RebalanceTimeoutMs)
	require.Equal(t, []NamedTopicPartitions{{Topic: "t1", Partitions: []int32{2}}, {Topic: "t2", Partitions: []int32{0, 1}}}, g.Members[0].AssignedPartitions)
	require.True(t, g.SubscribedTopicsKnown)
	require.Equal(t, []string{"t1", "t2"}, g.SubscribedTopics)
	roundTrip(t, s)

	// Empty value with protocol type "": a simple group, Empty.
	require.NoError(t, s.ReplayGroupMetadata("e", ClassicGroupValue{CurrentStateTimestamp: -1}, nil))
	g, _ = s.View().ClassicGroup("e")
	require.Equal(t, StateEmpty, g.State)
	require.True(t, g.Simple)
	require.Nil(t, g.Leader)
	require.False(t, g.SubscribedTopicsKnown)
}

func TestClassicGroupAddFailures(t *testing.T) {
	cases := []struct {
		name    string
		members []ClassicMember
		member  string
	}{
		{"duplicate static instance id", []ClassicMember{{MemberID: "a", GroupInstanceID: sp("i")}, {MemberID: "b", GroupInstanceID: sp("i")}}, "b"},
		{"repeated member id then another member", []ClassicMember{{MemberID: "a"}, {MemberID: "a"}, {MemberID: "b"}}, "b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(Kafka44)
			require.NoError(t, s.ReplayGroupMetadata("g", classicValue("consumer", ClassicMember{MemberID: "old"}), nil))
			err := assertUnchanged(t, s, func() error { return s.ReplayGroupMetadata("g", classicValue("consumer", c.members...), nil) })
			assertReplayError(t, err, ErrClassicGroupAdd, "g", c.member)
		})
	}
	// A repeated member id alone is accepted: the later entry wins.
	s := New(Kafka44)
	require.NoError(t, s.ReplayGroupMetadata("g", classicValue("consumer", ClassicMember{MemberID: "a", ClientID: "1"}, ClassicMember{MemberID: "a", ClientID: "2"}), nil))
	g, _ := s.View().ClassicGroup("g")
	require.Len(t, g.Members, 1)
	require.Equal(t, "2", g.Members[0].ClientID)
}

func TestGroupMetadataReplacesAnyType(t *testing.T) {
	setups := map[string]func(t *testing.T, s *State){
		"consumer": func(t *testing.T, s *State) { joinConsumer(t, s, "g", "m", 1) },
		"share":    func(t *testing.T, s *State) { joinShare(t, s, "g", "m", 1) },
		"streams":  func(t *testing.T, s *State) { joinStreams(t, s, "g", "m", 1) },
		"classic": func(t *testing.T, s *State) {
			require.NoError(t, s.ReplayGroupMetadata("g", classicValue("connect", ClassicMember{MemberID: "x"}), nil))
		},
	}
	for name, setup := range setups {
		t.Run(name, func(t *testing.T) {
			s := New(Kafka44)
			setup(t, s)
			require.NoError(t, s.ReplayGroupMetadata("g", classicValue("consumer", ClassicMember{MemberID: "c1"}), nil))
			typ, _ := s.View().GroupType("g")
			require.Equal(t, GroupTypeClassic, typ)
			g, _ := s.View().ClassicGroup("g")
			require.Equal(t, "c1", g.Members[0].MemberID)

			s = New(Kafka44)
			setup(t, s)
			require.NoError(t, s.ReplayGroupMetadataTombstone("g"))
			_, ok := s.View().GroupType("g")
			require.False(t, ok)
		})
	}
}

func TestSimpleClassicGroupReplacement(t *testing.T) {
	simple := func(v KafkaVersion) *State {
		s := New(v)
		require.NoError(t, s.ReplayOffsetCommit(10, NoProducerID, "g", "t", 0, OffsetCommitValue{Offset: 5, LeaderEpoch: -1, ExpireTimestamp: -1}))
		g, ok := s.View().ClassicGroup("g")
		require.True(t, ok)
		require.True(t, g.Simple)
		require.Equal(t, StateEmpty, g.State)
		require.Equal(t, int64(-1), g.CurrentStateTimestamp)
		return s
	}
	// Consumer records replace a simple group on every version, even tombstones.
	for _, v := range KafkaVersions {
		s := simple(v)
		require.NoError(t, s.ReplayConsumerGroupMemberMetadata("g", "m", ConsumerMemberMetadataValue{}))
		typ, _ := s.View().GroupType("g")
		require.Equal(t, GroupTypeConsumer, typ)
		_, ok := s.View().Offset("g", "t", 0)
		require.True(t, ok, "offsets survive the replacement")

		s = simple(v)
		require.NoError(t, s.ReplayConsumerGroupTargetAssignmentMetadataTombstone("g"))
		typ, _ = s.View().GroupType("g")
		require.Equal(t, GroupTypeConsumer, typ)
		cg, _ := s.View().ConsumerGroup("g")
		require.Equal(t, int32(-1), cg.AssignmentEpoch)

		// The group tombstone on a simple group: Kafka replaces it, then the fresh group's
		// assignment epoch is not -1 and replay fails; the model keeps the simple group.
		s = simple(v)
		err := assertUnchanged(t, s, func() error { return s.ReplayConsumerGroupMetadataTombstone("g") })
		assertReplayError(t, err, ErrTombstoneOrder, "g", "")
	}
	// Streams records replace it on 4.2+; 4.1 fails.
	for _, v := range []KafkaVersion{Kafka42, Kafka43, Kafka44} {
		s := simple(v)
		require.NoError(t, s.ReplayStreamsGroupMemberMetadata("g", "m", StreamsMemberMetadata{}))
		typ, _ := s.View().GroupType("g")
		require.Equal(t, GroupTypeStreams, typ)
	}
	s := simple(Kafka41)
	err := assertUnchanged(t, s, func() error { return s.ReplayStreamsGroupMemberMetadata("g", "m", StreamsMemberMetadata{}) })
	assertReplayError(t, err, ErrWrongGroupType, "g", "m")
	// Share records never replace.
	for _, v := range KafkaVersions {
		s := simple(v)
		err := assertUnchanged(t, s, func() error { return s.ReplayShareGroupMemberMetadata("g", "m", ShareMemberMetadataValue{}) })
		assertReplayError(t, err, ErrWrongGroupType, "g", "m")
	}
}

func TestWrongGroupTypeErrors(t *testing.T) {
	nonSimple := func(s *State) {
		require.NoError(t, s.ReplayGroupMetadata("g", classicValue("consumer", ClassicMember{MemberID: "x"}), nil))
	}
	cases := []struct {
		name   string
		setup  func(t *testing.T, s *State)
		call   func(s *State) error
		member string
	}{
		{"consumer value on non-simple classic", func(t *testing.T, s *State) { nonSimple(s) }, func(s *State) error { return s.ReplayConsumerGroupMetadata("g", ConsumerGroupMetadataValue{}) }, ""},
		{"consumer tombstone on non-simple classic", func(t *testing.T, s *State) { nonSimple(s) }, func(s *State) error { return s.ReplayConsumerGroupMemberMetadataTombstone("g", "m") }, "m"},
		{"consumer on empty classic with protocol type", func(t *testing.T, s *State) {
			require.NoError(t, s.ReplayGroupMetadata("g", ClassicGroupValue{ProtocolType: "consumer"}, nil))
		}, func(s *State) error {
			return s.ReplayConsumerGroupRegularExpression("g", "r", RegularExpressionValue{})
		}, ""},
		{"consumer on share", func(t *testing.T, s *State) { joinShare(t, s, "g", "m", 1) }, func(s *State) error {
			return s.ReplayConsumerGroupCurrentMemberAssignment("g", "m", ConsumerCurrentAssignmentValue{})
		}, "m"},
		{"consumer on streams", func(t *testing.T, s *State) { joinStreams(t, s, "g", "m", 1) }, func(s *State) error { return s.ReplayConsumerGroupTargetAssignmentMember("g", "m", nil) }, "m"},
		{"share on consumer", func(t *testing.T, s *State) { joinConsumer(t, s, "g", "m", 1) }, func(s *State) error { return s.ReplayShareGroupMetadata("g", ShareGroupMetadataValue{}) }, ""},
		{"share tombstone on consumer", func(t *testing.T, s *State) { joinConsumer(t, s, "g", "m", 1) }, func(s *State) error { return s.ReplayShareGroupStatePartitionMetadataTombstone("g") }, ""},
		{"streams on consumer", func(t *testing.T, s *State) { joinConsumer(t, s, "g", "m", 1) }, func(s *State) error { return s.ReplayStreamsGroupTopologyTombstone("g") }, ""},
		{"streams on non-simple classic", func(t *testing.T, s *State) { nonSimple(s) }, func(s *State) error { return s.ReplayStreamsGroupTopology("g", StreamsTopology{}) }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(Kafka44)
			c.setup(t, s)
			err := assertUnchanged(t, s, func() error { return c.call(s) })
			assertReplayError(t, err, ErrWrongGroupType, "g", c.member)
		})
	}
}
