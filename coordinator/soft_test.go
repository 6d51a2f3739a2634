package coordinator

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type testMember struct {
	MemberTimers
	note string
}

type testGroup struct {
	GroupSoft[testMember, *testMember]
}

// TestMemberTimerRules: the rules FireMemberTimer applies to every protocol's member timers,
// and ArmedTimers' firing order.
func TestMemberTimerRules(t *testing.T) {
	groups := map[string]*testGroup{}
	g := SoftGroupOf(groups, "g", func() *testGroup { return &testGroup{NewGroupSoft[testMember]()} })
	require.Same(t, g, SoftGroupOf(groups, "g", nil), "an existing group is not made again")
	g.Member("a").ArmSession(100, 50)
	g.Member("a").ArmRebalance(100, -5, 7) // a negative timeout fires at once
	g.Member("b").ArmSession(100, 50)
	g.Member("b").note = "kept"
	g.InitialDelayDeadline = 120
	require.Equal(t, []Timer{
		{At: 100, Group: "g", Kind: TimerRebalance, Member: "a"},
		{At: 120, Group: "g", Kind: TimerInitialDelay},
		{At: 150, Group: "g", Kind: TimerSession, Member: "a"},
		{At: 150, Group: "g", Kind: TimerSession, Member: "b"},
	}, ArmedTimers(groups))
	require.Equal(t, int64(100), NextDeadline(ArmedTimers(groups)))

	c := g.Clone(func(m *testMember) *testMember { n := *m; return &n })
	// A rebalance timer armed at epoch 7 does not fence a member now at epoch 8; it is
	// disarmed all the same.
	require.False(t, g.FireMemberTimer(Timer{Kind: TimerRebalance, Member: "a"}, true, func() int32 { return 8 }))
	require.Zero(t, g.Members["a"].RebalanceDeadline)
	require.Equal(t, int64(100), c.Members["a"].RebalanceDeadline, "a clone is independent")
	// A session timer fences a member still in the group.
	require.True(t, g.FireMemberTimer(Timer{Kind: TimerSession, Member: "a"}, true, nil))
	// A member gone from the group loses its soft state.
	require.False(t, g.FireMemberTimer(Timer{Kind: TimerSession, Member: "b"}, false, nil))
	require.NotContains(t, g.Members, "b")
	require.Equal(t, []string{"a"}, g.MemberIDs())

	// RestoreMember arms a loaded member's timers, unless it has soft state already.
	g.RestoreMember("c", 1000, 45000, true, 30000, 3)
	require.Equal(t, MemberTimers{SessionDeadline: 46000, RebalanceDeadline: 31000, RebalanceEpoch: 3}, g.Members["c"].MemberTimers)
	g.RestoreMember("c", 2000, 10, false, 0, 0)
	require.Equal(t, int64(46000), g.Members["c"].SessionDeadline)

	// The model cache answers only for the offset it was kept at.
	g.KeepModel("m", 42)
	require.Equal(t, "m", g.CachedModel(42))
	require.Nil(t, g.CachedModel(43))
	require.Nil(t, g.CachedModel(0))
	g.DropModel()
	require.Nil(t, g.CachedModel(42))
}

func TestScenarioClock(t *testing.T) {
	r := NewScenarioRunner(nil, nil, "g")
	require.NoError(t, r.SetClock("+500"))
	require.Equal(t, int64(1500), r.Now)
	require.NoError(t, r.SetClock("=20"))
	require.Equal(t, int64(20), r.Now)
	for _, bad := range []string{"", "+", "5", "+x", "=-"} {
		require.Error(t, r.SetClock(bad), bad)
	}
}
