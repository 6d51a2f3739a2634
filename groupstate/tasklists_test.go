package groupstate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Equal task lists of different groups and members share their memory (tasklists.go); a list
// that changes later gets memory of its own and leaves the others as they were; the decoder's
// buffers, scribbled over after each record, are never what is shared.
func TestEqualTaskListsAreSharedAndStayImmutable(t *testing.T) {
	s := New(Kafka44)
	in := func() []TaskIDs {
		return []TaskIDs{{SubtopologyID: "0", Partitions: []int32{4, 0, 2}}, {SubtopologyID: "1", Partitions: []int32{1}}}
	}
	for _, g := range []string{"a", "b", "c"} {
		v := StreamsTargetAssignmentValue{ActiveTasks: in(), StandbyTasks: in()}
		require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMember(g, "m", v))
		for i := range v.ActiveTasks { // the record's memory is reused for the next one
			v.ActiveTasks[i].SubtopologyID = "x"
			clear(v.ActiveTasks[i].Partitions)
		}
	}
	target := func(g string) StreamsMemberTarget { return s.groups[g].(*streamsGroup).target["m"] }
	a, b := target("a"), target("b")
	require.Equal(t, []TaskIDs{{"0", []int32{0, 2, 4}}, {"1", []int32{1}}}, a.ActiveTasks)
	require.Same(t, &a.ActiveTasks[0], &b.ActiveTasks[0], "group b's target is group a's list")
	require.Same(t, &a.ActiveTasks[0], &a.StandbyTasks[0], "and so is a's standby list, equal to it")

	// b's target moves: its own memory; a's and c's lists unchanged.
	require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMember("b", "m", StreamsTargetAssignmentValue{ActiveTasks: []TaskIDs{{SubtopologyID: "0", Partitions: []int32{4}}}}))
	require.Equal(t, []TaskIDs{{"0", []int32{4}}}, target("b").ActiveTasks)
	require.Nil(t, target("b").StandbyTasks)
	require.Equal(t, []TaskIDs{{"0", []int32{0, 2, 4}}, {"1", []int32{1}}}, target("a").ActiveTasks)
	require.Equal(t, target("a").ActiveTasks, target("c").ActiveTasks)

	// A member's current assignment with epochs: shared between members with the same epochs,
	// not with a member whose epochs differ.
	cur := func(g string, epoch int32) {
		require.NoError(t, s.ReplayStreamsGroupCurrentMemberAssignment(g, "m", StreamsCurrentAssignmentValue{MemberEpoch: epoch, State: 0,
			ActiveTasks: []TaskIDsWithEpochs{{SubtopologyID: "0", Partitions: []int32{0, 2, 4}}}}))
	}
	cur("a", 3)
	cur("c", 3)
	cur("b", 4)
	active := func(g string) []TaskIDsWithEpochs {
		return s.groups[g].(*streamsGroup).members["m"].AssignedTasks.ActiveTasks
	}
	require.Same(t, &active("a")[0], &active("c")[0])
	require.NotSame(t, &active("a")[0], &active("b")[0])
	require.Equal(t, []int32{3, 3, 3}, active("a")[0].AssignmentEpochs)
	require.Equal(t, []int32{4, 4, 4}, active("b")[0].AssignmentEpochs)
}

// The table of shared lists is a bounded cache: past maxSharedTaskLists lists it starts again,
// and every list stored before keeps its contents.
func TestSharedTaskListsStayBounded(t *testing.T) {
	s := New(Kafka44)
	n := maxSharedTaskLists + 100
	for i := range n {
		p := []int32{int32(i), int32(i + 1)}
		require.NoError(t, s.ReplayStreamsGroupTargetAssignmentMember(fmt.Sprint("g", i), "m", StreamsTargetAssignmentValue{ActiveTasks: []TaskIDs{{SubtopologyID: "0", Partitions: p}}}))
	}
	require.LessOrEqual(t, len(s.sc.shared.plain.byHash), maxSharedTaskLists)
	for i := range n {
		got := s.groups[fmt.Sprint("g", i)].(*streamsGroup).target["m"].ActiveTasks
		require.Equal(t, []TaskIDs{{"0", []int32{int32(i), int32(i + 1)}}}, got)
	}
}
