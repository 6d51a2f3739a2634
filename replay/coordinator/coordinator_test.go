package coordinator

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newTestRunner(t *testing.T, cmds ...string) *Runner {
	t.Helper()
	r, _ := newEngineRunner(nil)
	r.Cfg.InitialRebalanceDelayMs, r.Cfg.AssignmentIntervalMs = 0, 0
	for _, c := range cmds {
		require.NoError(t, r.Exec(c), c)
	}
	return r
}

func appendRecords(t *testing.T, r *Runner, recs ...recordcodec.Record) {
	t.Helper()
	b, err := NewBatch(0, r.NextOff(), r.Now, recs)
	require.NoError(t, err)
	require.NoError(t, r.Apply(b))
}

func TestJoinReplacesEmptyClassicGroup(t *testing.T) {
	r := newTestRunner(t, "topic in 2", "sub 0 source=in")
	v := recordcodec.NewGroupMetadataValue()
	v.ProtocolType = "consumer"
	appendRecords(t, r, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.GroupMetadata, Group: "app"}, Value: v})
	res, err := r.heartbeatRes("join", "a", map[string]string{}, false, false)
	require.NoError(t, err)
	require.Equal(t, ErrNone, res.Response.ErrorCode)
	require.Equal(t, recordcodec.GroupMetadata, res.Records[0].Key.Type)
	require.True(t, res.Records[0].Tombstone(), "the classic group is tombstoned first")
	typ, _ := r.State().GroupType("app")
	require.EqualValues(t, "streams", typ)
}

func TestJoinRejectsOtherGroupTypes(t *testing.T) {
	r := newTestRunner(t, "topic in 2", "sub 0 source=in")
	v := recordcodec.NewGroupMetadataValue()
	v.ProtocolType = "consumer"
	v.Generation = 1
	pr, leader := "range", "m"
	v.Protocol, v.Leader = &pr, &leader
	v.Members = []recordcodec.MemberMetadata{{MemberId: "m", ClientId: "c", ClientHost: "h", SessionTimeout: 10000, RebalanceTimeout: 10000, Subscription: []byte{}, Assignment: []byte{}}}
	appendRecords(t, r, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.GroupMetadata, Group: "app"}, Value: v})
	res, err := r.heartbeatRes("join", "a", map[string]string{}, false, false)
	require.NoError(t, err)
	require.Equal(t, ErrGroupIDNotFound, res.Response.ErrorCode)
	require.Equal(t, "Group app is not a streams group.", *res.Response.ErrorMessage)
	require.Empty(t, res.Records)

	d := r.Coord.Describe(r.State(), r.Soft, &kmsg.StreamsGroupDescribeRequest{Groups: []string{"app", "nope", " "}})
	require.Equal(t, ErrGroupIDNotFound, d.Groups[0].ErrorCode)
	require.Equal(t, "Group app is not a streams group.", *d.Groups[0].ErrorMessage)
	require.Equal(t, "Group nope not found.", *d.Groups[1].ErrorMessage)
	require.Equal(t, ErrInvalidGroupID, d.Groups[2].ErrorCode)
}

func TestUnknownMemberStateIsFenced(t *testing.T) {
	r := newTestRunner(t, "topic in 2", "sub 0 source=in", "join a")
	v := recordcodec.NewStreamsGroupCurrentMemberAssignmentValue()
	v.MemberEpoch, v.PreviousMemberEpoch, v.State = 2, 0, 42 // written by a newer Kafka
	appendRecords(t, r, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupCurrentMemberAssignment, Group: "app", Member: "a"}, Value: v})
	// Bump the group so that a reconciles.
	require.NoError(t, r.Exec("join b"))
	res, err := r.Heartbeat("a")
	require.NoError(t, err)
	require.Equal(t, ErrFencedMemberEpoch, res.Response.ErrorCode)
	require.Contains(t, *res.Response.ErrorMessage, "unknown state")
	// Reporting no owned tasks lets it reconcile from scratch.
	require.NoError(t, r.Exec("hb a epoch=2 active= standby= warmup="))
	require.NoError(t, r.Exec("join a"))
}

func TestNewBatchLimit(t *testing.T) {
	var recs []recordcodec.Record
	for i := range 300 {
		recs = append(recs, targetMemberRecord("g", fmt.Sprint(i), tuple{active: bigTasks(1000)}))
	}
	_, err := NewBatch(0, 0, 0, recs)
	require.ErrorIs(t, err, ErrBatchTooLarge)
	_, err = NewBatch(0, 0, 0, recs[:1])
	require.NoError(t, err)
}

func bigTasks(n int) taskMap {
	m := taskMap{}
	for i := range n {
		m[TaskID{"sub", int32(i)}] = 0
	}
	return m
}

func TestRestoreArmsTimersAndStaticMemberExpires(t *testing.T) {
	r := newTestRunner(t, "config session=10000 heartbeat=1000", "topic in 2", "sub 0 source=in", "join a instance=i1", "join b")
	require.NoError(t, r.Exec("leave a static"))
	// A restarted coordinator: new soft state, timers armed from the load time.
	r.Soft = NewSoft()
	r.Soft.Restore(r.State(), func(string) Config { return r.Cfg }, r.Now)
	require.Equal(t, r.Now+10000, r.Soft.NextDeadline())
	r.Now += 9000
	require.NoError(t, r.Exec("hb b"))
	r.Now += 1000
	res, ok := r.Coord.Tick(r.State(), r.Soft, r.Meta, r.Now)
	require.True(t, ok)
	require.Equal(t, TimerSession, res.Kind)
	require.Equal(t, "a", res.Member, "a static member parked at -2 is fenced by its session timer")
	require.Len(t, res.Records, 4)
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
	// Stickiness: feeding the result back changes nothing.
	for i := range members {
		members[i].active, members[i].standby = out[members[i].id].active, out[members[i].id].standby
	}
	again, err := stickyAssign(members, subs, 1)
	require.NoError(t, err)
	for _, m := range members {
		require.True(t, again[m.id].sameTasks(out[m.id]), "member %s moved", m.id)
	}
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

func TestSimulateIntoSegmentsRoundTrip(t *testing.T) {
	// The runner's batches are valid Kafka batches: they encode and replay.
	r, rec := newEngineRunner(nil)
	script := "config delay=0 interval=0\ntopic in 3\nsub 0 source=in\njoin a\njoin b\nconverge\nleave a\nconverge\n"
	require.NoError(t, r.Run(strings.NewReader(script)))
	require.NotEmpty(t, rec.batches)
	for _, b := range rec.batches {
		require.Equal(t, int64(-1), b.ProducerID)
		require.False(t, b.Attributes.Transactional())
		require.Equal(t, eventlog.CodecNone, b.Attributes.Codec())
	}
	checkReplayEquivalence(t, rec)
}

// TestMetadataHashIsKafkas: the group metadata hash equals what a Kafka 4.4.0 broker wrote in
// fixtures/real/consumer (ConsumerGroupMetadataValue of group consumer-848, subscribed to
// s2-in: 6 partitions, topic id KBRHv04FSnKzpnPI8cJpSw, no racks). Consumer and streams groups
// share Kafka's Utils.computeGroupHash.
func TestMetadataHashIsKafkas(t *testing.T) {
	id, err := recordcodec.ParseUUID("KBRHv04FSnKzpnPI8cJpSw")
	require.NoError(t, err)
	md := &Metadata{Topics: map[string]TopicMetadata{"s2-in": {ID: id, Partitions: 6}}}
	require.Equal(t, int64(4388309904112012656), groupHash([]string{"s2-in"}, md))
	require.Equal(t, int64(0), groupHash([]string{"missing"}, md))
	require.Equal(t, int64(0), groupHash(nil, md))
}
