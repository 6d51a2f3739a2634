package streams

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/recordcodec"
)

func TestNewBatchLimit(t *testing.T) {
	var recs []recordcodec.Record
	for i := range 300 {
		recs = append(recs, targetMemberRecord("g", fmt.Sprint(i), tuple{active: bigTasks(1000)}))
	}
	_, err := coordinator.NewBatch(0, 0, 0, recs)
	require.ErrorIs(t, err, coordinator.ErrBatchTooLarge)
	_, err = coordinator.NewBatch(0, 0, 0, recs[:1])
	require.NoError(t, err)
}

func bigTasks(n int) taskMap {
	m := taskMap{}
	for i := range n {
		m[TaskID{"sub", int32(i)}] = 0
	}
	return m
}

func TestStickyAssignorBalanceAndPlacement(t *testing.T) {
	subs := []configuredSubtopology{{id: "0", numTasks: 7, stateful: true}, {id: "1", numTasks: 5}}
	var members []assignMember
	for i := range 4 {
		members = append(members, assignMember{id: fmt.Sprintf("m%d", i), processID: fmt.Sprintf("p%d", i%3)})
	}
	out, err := stickyAssign(members, subs, 1)
	require.NoError(t, err)
	counts := map[string]int{}
	onProcess := map[string]map[TaskID]bool{}
	active := map[TaskID]int{}
	for _, m := range members {
		tt := out[m.id]
		counts[m.id] = len(tt.active)
		if onProcess[m.processID] == nil {
			onProcess[m.processID] = map[TaskID]bool{}
		}
		for task := range tt.active {
			active[task]++
			require.False(t, onProcess[m.processID][task])
			onProcess[m.processID][task] = true
		}
		for task := range tt.standby {
			require.Equal(t, "0", task.Subtopology, "only stateful tasks get standbys")
			require.False(t, onProcess[m.processID][task], "task %v twice on %s", task, m.processID)
			onProcess[m.processID][task] = true
		}
	}
	require.Len(t, active, 12)
	for _, n := range active {
		require.Equal(t, 1, n)
	}
	// Stickiness: feeding the result back keeps every active task where it is. Standbys may
	// move, as in Kafka: on this very input Kafka 4.4's StickyTaskAssignor moves the standby
	// of task 0:0 from m1 to m2 (m1's quota is met by 0:1 and 0:3 first, walking partitions
	// in descending order).
	for i := range members {
		members[i].active, members[i].standby = out[members[i].id].active, out[members[i].id].standby
	}
	again, err := stickyAssign(members, subs, 1)
	require.NoError(t, err)
	for _, m := range members {
		require.True(t, sameKeys(again[m.id].active, out[m.id].active), "member %s's active tasks moved", m.id)
	}
	require.True(t, again["m1"].standby.has(TaskID{"0", 1}) && !again["m1"].standby.has(TaskID{"0", 0}) && again["m2"].standby.has(TaskID{"0", 0}),
		"the standby of 0:0 moves from m1 to m2, as Kafka's assignor moves it: %v", again)
}

func TestStickyAssignorEvenWithoutHistory(t *testing.T) {
	subs := []configuredSubtopology{{id: "a", numTasks: 10}, {id: "b", numTasks: 3}}
	var members []assignMember
	for i := range 5 {
		members = append(members, assignMember{id: fmt.Sprintf("m%d", i), processID: fmt.Sprintf("p%d", i)})
	}
	out, err := stickyAssign(members, subs, 0)
	require.NoError(t, err)
	lo, hi := 1<<30, 0
	for _, tt := range out {
		lo, hi = min(lo, len(tt.active)), max(hi, len(tt.active))
	}
	require.LessOrEqual(t, hi-lo, 1)
}

// BenchmarkFullAssignment assigns 10,000 tasks (100 stateful subtopologies x 100 partitions)
// over 1,000 members on 1,000 processes with one standby, from scratch.
func BenchmarkFullAssignment(b *testing.B) {
	var subs []configuredSubtopology
	for i := range 100 {
		subs = append(subs, configuredSubtopology{id: fmt.Sprintf("s%03d", i), numTasks: 100, stateful: true})
	}
	members := make([]assignMember, 1000)
	for i := range members {
		members[i] = assignMember{id: fmt.Sprintf("m%04d", i), processID: fmt.Sprintf("p%04d", i)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := stickyAssign(members, subs, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTargetRecords is the whole target computation of the same group as records:
// the assignor plus 1,000 record-21 values and record 20.
func BenchmarkTargetRecords(b *testing.B) {
	g := newGroup("app")
	ct := &configuredTopology{byID: map[string]*configuredSubtopology{}}
	for i := range 100 {
		ct.subtopologies = append(ct.subtopologies, configuredSubtopology{id: fmt.Sprintf("s%03d", i), numTasks: 100, stateful: true})
	}
	for i := range 1000 {
		m := newDefaultMember(fmt.Sprintf("m%04d", i))
		m.processID = fmt.Sprintf("p%04d", i)
		g.members[m.id] = m
	}
	g.epoch = 2
	c := &Coordinator{}
	cfg := DefaultConfig()
	cfg.NumStandbyReplicas = 1
	cfgs := cfg.assignmentConfigs()
	gs := NewSoft().group("app")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var records []recordcodec.Record
		if _, _, _, err := c.maybeUpdateTarget(g, gs, 2, ct, cfgs, cfg, 1000, &records); err != nil {
			b.Fatal(err)
		}
	}
}
