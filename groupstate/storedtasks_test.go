package groupstate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStoredTasksReplayLikeTheirRecords: a state that replays records 21 and 22 from the
// lists another state of its version stored for the same records ends equal to a state that
// replayed the records themselves, creating the group and members on demand, and replacing
// a member's assignment with empty lists; lists stored by a state of another version are
// refused without a change; a wrong group type fails as on the general path.
func TestStoredTasksReplayLikeTheirRecords(t *testing.T) {
	target := StreamsTargetAssignmentValue{
		ActiveTasks:  []TaskIDs{{SubtopologyID: "1", Partitions: []int32{3, 1}}, {SubtopologyID: "0", Partitions: []int32{2}}},
		StandbyTasks: []TaskIDs{{SubtopologyID: "0", Partitions: []int32{0}}},
	}
	current := StreamsCurrentAssignmentValue{
		MemberEpoch: 5, PreviousMemberEpoch: 4, State: StreamsMemberUnrevokedTasks,
		ActiveTasks:                  []TaskIDsWithEpochs{{SubtopologyID: "0", Partitions: []int32{2, 1}, AssignmentEpochs: []int32{5, 3}}},
		WarmupTasks:                  []TaskIDsWithEpochs{{SubtopologyID: "1", Partitions: []int32{4}}},
		ActiveTasksPendingRevocation: []TaskIDsWithEpochs{{SubtopologyID: "1", Partitions: []int32{0}, AssignmentEpochs: []int32{2}}},
	}
	for _, v := range []KafkaVersion{Kafka41, Kafka42, Kafka44} {
		general, stored := New(v), New(v)
		require.NoError(t, general.ReplayStreamsGroupTargetAssignmentMember("g", "m", target))
		require.NoError(t, general.ReplayStreamsGroupCurrentMemberAssignment("g", "m", current))
		st, ok := general.View().StreamsStoredTarget("g", "m")
		require.True(t, ok)
		sa, ok := general.View().StreamsStoredAssignment("g", "m")
		require.True(t, ok)
		require.NoError(t, stored.ReplayStreamsGroupTargetAssignmentMemberStored("g", "m", st))
		require.NoError(t, stored.ReplayStreamsGroupCurrentMemberAssignmentStored("g", "m", 5, 4, StreamsMemberUnrevokedTasks, sa))
		require.True(t, Equal(general.View(), stored.View()), "Kafka %s: %v", v, Diff(general.View(), stored.View(), 5))
		require.Equal(t, orderTables(general), orderTables(stored))

		// Empty lists (the zero values) replace what a member had.
		require.NoError(t, general.ReplayStreamsGroupCurrentMemberAssignment("g", "m", StreamsCurrentAssignmentValue{MemberEpoch: 6, PreviousMemberEpoch: 5}))
		require.NoError(t, stored.ReplayStreamsGroupCurrentMemberAssignmentStored("g", "m", 6, 5, 0, StoredStreamsAssignment{}))
		require.NoError(t, general.ReplayStreamsGroupTargetAssignmentMember("g", "m", StreamsTargetAssignmentValue{}))
		require.NoError(t, stored.ReplayStreamsGroupTargetAssignmentMemberStored("g", "m", StoredStreamsTarget{}))
		require.True(t, Equal(general.View(), stored.View()), "Kafka %s: %v", v, Diff(general.View(), stored.View(), 5))

		// A consumer group of the same id: the streams records fail as the general path's do.
		require.NoError(t, general.ReplayConsumerGroupMetadata("c", ConsumerGroupMetadataValue{Epoch: 1}))
		require.NoError(t, stored.ReplayConsumerGroupMetadata("c", ConsumerGroupMetadataValue{Epoch: 1}))
		errGeneral := assertUnchanged(t, general, func() error { return general.ReplayStreamsGroupTargetAssignmentMember("c", "m", target) })
		errStored := assertUnchanged(t, stored, func() error { return stored.ReplayStreamsGroupTargetAssignmentMemberStored("c", "m", st) })
		require.Equal(t, errGeneral.Error(), errStored.Error())
		errGeneral = assertUnchanged(t, general, func() error { return general.ReplayStreamsGroupCurrentMemberAssignment("c", "m", current) })
		errStored = assertUnchanged(t, stored, func() error {
			return stored.ReplayStreamsGroupCurrentMemberAssignmentStored("c", "m", 5, 4, StreamsMemberUnrevokedTasks, sa)
		})
		require.Equal(t, errGeneral.Error(), errStored.Error())
	}

	// 4.1 keeps no epochs: its lists are refused by a 4.4 state, which would keep them.
	s41, s44 := New(Kafka41), New(Kafka44)
	require.NoError(t, s41.ReplayStreamsGroupCurrentMemberAssignment("g", "m", current))
	require.NoError(t, s41.ReplayStreamsGroupTargetAssignmentMember("g", "m", target))
	sa, _ := s41.View().StreamsStoredAssignment("g", "m")
	st, _ := s41.View().StreamsStoredTarget("g", "m")
	require.ErrorIs(t, assertUnchanged(t, s44, func() error {
		return s44.ReplayStreamsGroupCurrentMemberAssignmentStored("g", "m", 5, 4, 1, sa)
	}), errForeignStoredTasks)
	require.ErrorIs(t, assertUnchanged(t, s44, func() error { return s44.ReplayStreamsGroupTargetAssignmentMemberStored("g", "m", st) }), errForeignStoredTasks)
}
