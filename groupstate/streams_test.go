package groupstate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStreamsMemberFieldsNullUntilSet(t *testing.T) {
	s := New(Kafka44)
	require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMember("g", "ghost", StreamsTargetAssignmentValue{StandbyTasks: []TaskIDs{{SubtopologyID: "1", Partitions: []int32{2, 2, 0}}}}))
	require.NoError(t, s.ReplayStreamsGroupMemberMetadata("g", "m", StreamsMemberMetadata{InstanceID: nil, ClientID: "c", ClientTags: []KeyValue{{"b", "1"}, {"a", "2"}}}))
	g, ok := s.View().StreamsGroup("g")
	require.True(t, ok)
	m := g.Members[0]
	require.Nil(t, m.MemberEpoch)
	require.Nil(t, m.PreviousMemberEpoch)
	require.Nil(t, m.State)
	require.Nil(t, m.AssignedTasks)
	require.NotNil(t, m.Metadata)
	require.Nil(t, m.Metadata.InstanceID)
	require.Equal(t, []KeyValue{{"a", "2"}, {"b", "1"}}, m.Metadata.ClientTags)
	require.Equal(t, []StreamsMemberTarget{{MemberID: "ghost", StandbyTasks: []TaskIDs{{SubtopologyID: "1", Partitions: []int32{0, 2}}}}}, g.TargetAssignment)
	roundTrip(t, s)

	// A member created by record 22 has no metadata.
	require.NoError(t, s.ReplayStreamsGroupCurrentMemberAssignment("g", "n", StreamsCurrentAssignmentValue{MemberEpoch: 3, PreviousMemberEpoch: 2, State: 0}))
	g, _ = s.View().StreamsGroup("g")
	n := g.Members[1]
	require.Nil(t, n.Metadata)
	require.Equal(t, StreamsMemberUnknown, *n.State, "0 is not a streams member state")
	require.Equal(t, &StreamsTasks{}, n.AssignedTasks)

	// The record 22 tombstone keeps the state and empties the tasks.
	require.NoError(t, s.ReplayStreamsGroupCurrentMemberAssignmentTombstone("g", "m"))
	g, _ = s.View().StreamsGroup("g")
	m = g.Members[0]
	require.Equal(t, int32(-1), *m.MemberEpoch)
	require.Equal(t, int32(-1), *m.PreviousMemberEpoch)
	require.Nil(t, m.State)
	require.Equal(t, &StreamsTasks{}, m.AssignedTasks)
	require.Equal(t, &StreamsTasks{}, m.TasksPendingRevocation)
	roundTrip(t, s)
}

func TestStreamsTombstoneInvariants(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, s *State)
		bad    func(s *State) error
		kind   error
		member string
	}{
		{"17: group still has members", func(t *testing.T, s *State) {
			require.NoError(t, s.ReplayStreamsGroupMemberMetadata("g", "m", StreamsMemberMetadata{}))
		}, func(s *State) error { return s.ReplayStreamsGroupMetadataTombstone("g") }, ErrTombstoneOrder, ""},
		{"17: assignment epoch not -1", func(t *testing.T, s *State) {
			require.NoError(t, s.ReplayStreamsGroupMetadata("g", StreamsGroupMetadataValue{}))
		}, func(s *State) error { return s.ReplayStreamsGroupMetadataTombstone("g") }, ErrTombstoneOrder, ""},
		{"19: member epoch not -1", func(t *testing.T, s *State) { joinStreams(t, s, "g", "m", 2) },
			func(s *State) error { return s.ReplayStreamsGroupMemberMetadataTombstone("g", "m") }, ErrTombstoneOrder, "m"},
		{"19: member still in target", func(t *testing.T, s *State) {
			joinStreams(t, s, "g", "m", 2)
			require.NoError(t, s.ReplayStreamsGroupCurrentMemberAssignmentTombstone("g", "m"))
		}, func(s *State) error { return s.ReplayStreamsGroupMemberMetadataTombstone("g", "m") }, ErrTombstoneOrder, "m"},
		{"19: member epoch never set (Kafka NPE)", func(t *testing.T, s *State) {
			require.NoError(t, s.ReplayStreamsGroupMemberMetadata("g", "m", StreamsMemberMetadata{}))
		}, func(s *State) error { return s.ReplayStreamsGroupMemberMetadataTombstone("g", "m") }, ErrMissingField, "m"},
		{"20: target not empty", func(t *testing.T, s *State) {
			require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMember("g", "m", StreamsTargetAssignmentValue{}))
		}, func(s *State) error { return s.ReplayStreamsGroupTargetAssignmentMetadataTombstone("g") }, ErrTombstoneOrder, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(Kafka44)
			c.setup(t, s)
			err := assertUnchanged(t, s, func() error { return c.bad(s) })
			assertReplayError(t, err, c.kind, "g", c.member)
		})
	}
	// 17 does not check the target assignment map.
	s := New(Kafka44)
	require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMember("g", "m", StreamsTargetAssignmentValue{}))
	require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMetadata("g", TargetAssignmentMetadataValue{AssignmentEpoch: -1}))
	require.NoError(t, s.ReplayStreamsGroupMetadataTombstone("g"))
	_, ok := s.View().GroupType("g")
	require.False(t, ok)
}

func TestStreamsGroupDeletionInKafkaOrder(t *testing.T) {
	s := New(Kafka44)
	joinStreams(t, s, "g", "m1", 2)
	joinStreams(t, s, "g", "m2", 3)
	// streams: 22, 21, 20, 19, 17, then 23.
	for _, m := range []string{"m1", "m2"} {
		require.NoError(t, s.ReplayStreamsGroupCurrentMemberAssignmentTombstone("g", m))
	}
	for _, m := range []string{"m1", "m2"} {
		require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMemberTombstone("g", m))
	}
	require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMetadataTombstone("g"))
	for _, m := range []string{"m1", "m2"} {
		require.NoError(t, s.ReplayStreamsGroupMemberMetadataTombstone("g", m))
	}
	require.NoError(t, s.ReplayStreamsGroupMetadataTombstone("g"))
	require.NoError(t, s.ReplayStreamsGroupTopologyTombstone("g")) // group already gone: ignored
	require.Equal(t, 0, s.View().NumGroups())
	for _, f := range []func() error{
		func() error { return s.ReplayStreamsGroupMemberMetadataTombstone("g", "m") },
		func() error { return s.ReplayStreamsGroupTargetAssignmentMetadataTombstone("g") },
		func() error { return s.ReplayStreamsGroupTargetAssignmentMemberTombstone("g", "m") },
		func() error { return s.ReplayStreamsGroupCurrentMemberAssignmentTombstone("g", "m") },
		func() error { return s.ReplayStreamsGroupMetadataTombstone("g") },
	} {
		require.NoError(t, f())
	}
	require.Equal(t, 0, s.View().NumGroups())
}

func TestStreamsDerivedStates(t *testing.T) {
	for _, v := range []KafkaVersion{Kafka41, Kafka42, Kafka43, Kafka44} {
		t.Run(v.String(), func(t *testing.T) {
			s := New(v)
			state := func() string { st, _ := s.View().GroupState("g"); return st }
			require.NoError(t, s.ReplayStreamsGroupMetadata("g", StreamsGroupMetadataValue{Epoch: 5, ValidatedTopologyEpoch: -1, StoredDescriptionTopologyEpoch: -1, FailedDescriptionTopologyEpoch: -1}))
			require.Equal(t, StateEmpty, state())
			require.NoError(t, s.ReplayStreamsGroupMemberMetadata("g", "m", StreamsMemberMetadata{}))
			require.Equal(t, StateNotReady, state(), "no topology")
			require.NoError(t, s.ReplayStreamsGroupTopology("g", StreamsTopology{Epoch: 2}))
			if v == Kafka41 {
				// 4.1: topology present; the configured-topology part is not derivable.
				require.Equal(t, StateAssigning, state())
			} else {
				require.Equal(t, StateNotReady, state(), "topology epoch 2 != validated -1")
				require.NoError(t, s.ReplayStreamsGroupMetadata("g", StreamsGroupMetadataValue{Epoch: 5, ValidatedTopologyEpoch: 2}))
				require.Equal(t, StateAssigning, state())
			}
			require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMetadata("g", TargetAssignmentMetadataValue{AssignmentEpoch: 5}))
			require.Equal(t, StateReconciling, state(), "state never set")
			require.NoError(t, s.ReplayStreamsGroupCurrentMemberAssignment("g", "m", StreamsCurrentAssignmentValue{MemberEpoch: 5, State: MemberStable}))
			require.Equal(t, StateReconciling, state(), "consumer STABLE (0) is not streams STABLE (1)")
			require.NoError(t, s.ReplayStreamsGroupCurrentMemberAssignment("g", "m", StreamsCurrentAssignmentValue{MemberEpoch: 5, State: StreamsMemberStable}))
			require.Equal(t, StateStable, state())
			g, _ := s.View().StreamsGroup("g")
			require.Equal(t, "STABLE", g.Members[0].StateName)
			require.NoError(t, s.ReplayStreamsGroupTopologyTombstone("g"))
			require.Equal(t, StateNotReady, state())
		})
	}
	// An implicitly created group with topology epoch 0: ready up to 4.3 (validated epoch
	// starts at 0), NotReady on 4.4 (it starts at -1).
	for _, c := range []struct {
		v    KafkaVersion
		want string
	}{{Kafka42, StateReconciling}, {Kafka43, StateReconciling}, {Kafka44, StateNotReady}} {
		s := New(c.v)
		require.NoError(t, s.ReplayStreamsGroupTopology("g", StreamsTopology{Epoch: 0}))
		require.NoError(t, s.ReplayStreamsGroupMemberMetadata("g", "m", StreamsMemberMetadata{}))
		st, _ := s.View().GroupState("g")
		require.Equal(t, c.want, st, c.v.String())
	}
}

func TestStreamsMetadataFieldsPerVersion(t *testing.T) {
	v := StreamsGroupMetadataValue{Epoch: 3, MetadataHash: 4, ValidatedTopologyEpoch: 5, LastAssignmentConfigs: []KeyValue{{"num.standby.replicas", "1"}, {"acceptable.recovery.lag", "10"}}, StoredDescriptionTopologyEpoch: -2, FailedDescriptionTopologyEpoch: 6}
	for _, c := range []struct {
		ver            KafkaVersion
		validated      int32
		configs        int
		stored, failed int32
	}{
		{Kafka41, 0, 0, -1, -1}, // 4.1 has neither tag: the initial values stay
		{Kafka42, 5, 2, -1, -1},
		{Kafka43, 5, 2, -1, -1},
		{Kafka44, 5, 2, -2, 6},
	} {
		s := New(c.ver)
		require.NoError(t, s.ReplayStreamsGroupMetadata("g", v))
		g, _ := s.View().StreamsGroup("g")
		require.Equal(t, int32(3), g.GroupEpoch)
		require.Equal(t, int64(4), g.MetadataHash)
		require.Equal(t, c.validated, g.ValidatedTopologyEpoch, c.ver.String())
		require.Len(t, g.LastAssignmentConfigs, c.configs)
		require.Equal(t, c.stored, g.StoredDescriptionTopologyEpoch)
		require.Equal(t, c.failed, g.FailedDescriptionTopologyEpoch)
		if c.configs > 0 {
			require.Equal(t, "acceptable.recovery.lag", g.LastAssignmentConfigs[0].Key)
			// A null list means an empty map.
			require.NoError(t, s.ReplayStreamsGroupMetadata("g", StreamsGroupMetadataValue{Epoch: 3}))
			g, _ = s.View().StreamsGroup("g")
			require.Nil(t, g.LastAssignmentConfigs)
			err := assertUnchanged(t, s, func() error {
				return s.ReplayStreamsGroupMetadata("g", StreamsGroupMetadataValue{LastAssignmentConfigs: []KeyValue{{"a", "1"}, {"a", "2"}}})
			})
			assertReplayError(t, err, ErrDuplicateKey, "g", "")
		}
	}
}

func TestStreamsTaskEpochsAndDuplicates(t *testing.T) {
	in := StreamsCurrentAssignmentValue{
		MemberEpoch: 9, State: StreamsMemberStable,
		ActiveTasks: []TaskIDsWithEpochs{
			{SubtopologyID: "b", Partitions: []int32{1, 0}, AssignmentEpochs: []int32{4, 3}},
			{SubtopologyID: "a", Partitions: []int32{0}},
		},
		StandbyTasks:                 []TaskIDsWithEpochs{{SubtopologyID: "a", Partitions: []int32{1}, AssignmentEpochs: []int32{1}}},
		ActiveTasksPendingRevocation: []TaskIDsWithEpochs{{SubtopologyID: "c", Partitions: []int32{5}, AssignmentEpochs: []int32{1, 2}}},
	}
	s := New(Kafka42)
	require.NoError(t, s.ReplayStreamsGroupCurrentMemberAssignment("g", "m", in))
	g, _ := s.View().StreamsGroup("g")
	m := g.Members[0]
	require.Equal(t, []TaskIDsWithEpochs{{SubtopologyID: "a", Partitions: []int32{0}, AssignmentEpochs: []int32{9}}, {SubtopologyID: "b", Partitions: []int32{0, 1}, AssignmentEpochs: []int32{3, 4}}}, m.AssignedTasks.ActiveTasks)
	require.Equal(t, []TaskIDs{{SubtopologyID: "a", Partitions: []int32{1}}}, m.AssignedTasks.StandbyTasks)
	require.Equal(t, []TaskIDsWithEpochs{{SubtopologyID: "c", Partitions: []int32{5}, AssignmentEpochs: []int32{9}}}, m.TasksPendingRevocation.ActiveTasks)

	s = New(Kafka41)
	require.NoError(t, s.ReplayStreamsGroupCurrentMemberAssignment("g", "m", in))
	g, _ = s.View().StreamsGroup("g")
	require.Equal(t, []TaskIDsWithEpochs{{SubtopologyID: "a", Partitions: []int32{0}}, {SubtopologyID: "b", Partitions: []int32{0, 1}}}, g.Members[0].AssignedTasks.ActiveTasks)

	dup := StreamsCurrentAssignmentValue{WarmupTasks: []TaskIDsWithEpochs{{SubtopologyID: "a"}, {SubtopologyID: "a", Partitions: []int32{1}}}}
	err := assertUnchanged(t, s, func() error { return s.ReplayStreamsGroupCurrentMemberAssignment("g", "m", dup) })
	assertReplayError(t, err, ErrDuplicateKey, "g", "m")
	s = New(Kafka42)
	require.NoError(t, s.ReplayStreamsGroupCurrentMemberAssignment("g", "m", dup))

	for _, bad := range []func(s *State) error{
		func(s *State) error {
			return s.ReplayStreamsGroupTargetAssignmentMember("g", "m", StreamsTargetAssignmentValue{ActiveTasks: []TaskIDs{{SubtopologyID: "x"}, {SubtopologyID: "x"}}})
		},
		func(s *State) error {
			return s.ReplayStreamsGroupMemberMetadata("g", "m", StreamsMemberMetadata{ClientTags: []KeyValue{{"k", "1"}, {"k", "1"}}})
		},
	} {
		err := assertUnchanged(t, s, func() error { return bad(s) })
		assertReplayError(t, err, ErrDuplicateKey, "g", "m")
	}
	err = assertUnchanged(t, s, func() error {
		return s.ReplayStreamsGroupTopology("g", StreamsTopology{Subtopologies: []Subtopology{{SubtopologyID: "0"}, {SubtopologyID: "0"}}})
	})
	assertReplayError(t, err, ErrDuplicateKey, "g", "")
}

func TestStreamsTopologyKeepsListOrder(t *testing.T) {
	s := New(Kafka44)
	topo := StreamsTopology{Epoch: 4, Subtopologies: []Subtopology{
		{SubtopologyID: "1", SourceTopics: []string{"z", "a"}, RepartitionSourceTopics: []StreamsTopicInfo{{Name: "rep", Partitions: 3, ReplicationFactor: -1}},
			CopartitionGroups: []CopartitionGroup{{SourceTopics: []int16{1, 0}, RepartitionSourceTopics: []int16{0}}}},
		{SubtopologyID: "0", SourceTopicRegex: []string{"in-.*"}, StateChangelogTopics: []StreamsTopicInfo{{Name: "app-store-changelog", TopicConfigs: []KeyValue{{"cleanup.policy", "compact"}}}}, RepartitionSinkTopics: []string{"rep"}},
	}}
	require.NoError(t, s.ReplayStreamsGroupTopology("g", topo))
	topo.Subtopologies[0].SourceTopics[0] = "mutated" // the state does not alias the input
	g, _ := s.View().StreamsGroup("g")
	require.Equal(t, "0", g.Topology.Subtopologies[0].SubtopologyID)
	require.Equal(t, []string{"z", "a"}, g.Topology.Subtopologies[1].SourceTopics)
	require.Equal(t, []int16{1, 0}, g.Topology.Subtopologies[1].CopartitionGroups[0].SourceTopics)
	require.Equal(t, []string{"a", "app-store-changelog", "rep", "z"}, g.Topology.RequiredTopics())
	roundTrip(t, s)
}
