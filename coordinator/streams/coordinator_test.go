package streams_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/coordinator/streams"
	"github.com/coordlog/coordlog/coordinator/streams/streamstest"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/recordcodec"
)

func newTestRunner(t *testing.T, cmds ...string) *streamstest.Runner {
	t.Helper()
	r, _ := newEngineRunner(nil)
	r.Cfg.InitialRebalanceDelayMs, r.Cfg.AssignmentIntervalMs = 0, 0
	for _, c := range cmds {
		require.NoError(t, r.Exec(c), c)
	}
	return r
}

func appendRecords(t *testing.T, r *streamstest.Runner, recs ...recordcodec.Record) {
	t.Helper()
	b, err := coordinator.NewBatch(0, r.Log.NextOffset(), r.Now, recs)
	require.NoError(t, err)
	require.NoError(t, r.Log.Apply(b))
}

func TestJoinReplacesEmptyClassicGroup(t *testing.T) {
	r := newTestRunner(t, "topic in 2", "sub 0 source=in")
	v := recordcodec.NewGroupMetadataValue()
	v.ProtocolType = "consumer"
	appendRecords(t, r, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.GroupMetadata, Group: "app"}, Value: v})
	res, err := r.Join("a")
	require.NoError(t, err)
	require.Equal(t, coordinator.ErrNone, res.Response.ErrorCode)
	require.Equal(t, recordcodec.GroupMetadata, res.Records[0].Key.Type)
	require.True(t, res.Records[0].Tombstone(), "the classic group is tombstoned first")
	typ, _ := r.Log.State().GroupType("app")
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
	res, err := r.Join("a")
	require.NoError(t, err)
	require.Equal(t, coordinator.ErrGroupIDNotFound, res.Response.ErrorCode)
	require.Equal(t, "Group app is not a streams group.", *res.Response.ErrorMessage)
	require.Empty(t, res.Records)

	d := r.Coord.Describe(r.Log.State(), r.Soft, &kmsg.StreamsGroupDescribeRequest{Groups: []string{"app", "nope", " "}})
	require.Equal(t, coordinator.ErrGroupIDNotFound, d.Groups[0].ErrorCode)
	require.Equal(t, "Group app is not a streams group.", *d.Groups[0].ErrorMessage)
	require.Equal(t, "Group nope not found.", *d.Groups[1].ErrorMessage)
	require.Equal(t, coordinator.ErrInvalidGroupID, d.Groups[2].ErrorCode)
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
	require.Equal(t, coordinator.ErrFencedMemberEpoch, res.Response.ErrorCode)
	require.Contains(t, *res.Response.ErrorMessage, "unknown state")
	// Reporting no owned tasks lets it reconcile from scratch.
	require.NoError(t, r.Exec("hb a epoch=2 active= standby= warmup="))
	require.NoError(t, r.Exec("join a"))
}

func TestRestoreArmsTimersAndStaticMemberExpires(t *testing.T) {
	r := newTestRunner(t, "config session=10000 heartbeat=1000", "topic in 2", "sub 0 source=in", "join a instance=i1", "join b")
	require.NoError(t, r.Exec("leave a static"))
	// A restarted coordinator: new soft state, timers armed from the load time.
	r.Soft = streams.NewSoft()
	r.Soft.Restore(r.Log.State(), func(string) streams.Config { return r.Cfg }, r.Now)
	require.Equal(t, r.Now+10000, r.Soft.NextDeadline())
	r.Now += 9000
	require.NoError(t, r.Exec("hb b"))
	r.Now += 1000
	res, ok := r.Coord.Tick(r.Log.State(), r.Soft, r.Meta, r.Now)
	require.True(t, ok)
	require.Equal(t, coordinator.TimerSession, res.Kind)
	require.Equal(t, "a", res.Member, "a static member parked at -2 is fenced by its session timer")
	require.Len(t, res.Records, 4)
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
