package explain

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/internal/testcorpus"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// events replays a recording and returns the timeline of group.
func events(t *testing.T, scenario, group string) []Event {
	t.Helper()
	src, err := segment.Open(filepath.Join(testcorpus.Recordings(), scenario, "__consumer_offsets-0"), segment.Options{})
	require.NoError(t, err)
	var out []Event
	tl := NewTimeline(group, 0, func(ev *Event) { out = append(out, *ev) })
	e := replay.New(0, replay.Options{Mode: eventlog.Strict, Observer: tl})
	require.NoError(t, e.Run(context.Background(), src, math.MaxInt64))
	return out
}

// TestTransactionEvents: the records a transaction wrote for the group are pending events of
// their producer, and its COMMIT or ABORT marker is an event of the group that names what it
// made visible or dropped; a transaction still open at the end has no marker event.
func TestTransactionEvents(t *testing.T) {
	evs := events(t, "transactions", "txn-simple")
	require.Len(t, evs, 7)
	pending := evs[0]
	require.Equal(t, KindRecord, pending.Kind)
	require.Equal(t, recordcodec.OffsetCommit, pending.Type)
	require.Equal(t, int64(4), pending.ProducerID)
	require.Equal(t, [2]int64{19, 19}, [2]int64{pending.Offset, pending.BatchBase})
	require.Equal(t, "s6-in", pending.Topic)
	require.Equal(t, int32(1), pending.TopicPartition)
	require.Equal(t, "[1 OffsetCommit] offset for s6-in-1 written by the transaction of producer 4: 6 (pending until its COMMIT or ABORT marker)", pending.Text())
	commit, abort := evs[2], evs[5]
	require.Equal(t, KindTransactionEnd, commit.Kind)
	require.Equal(t, recordcodec.RecordType(-1), commit.Type)
	require.Equal(t, "txn-simple", commit.Group)
	require.Equal(t, "transaction of producer 4 committed: its offsets for s6-in-1, s6-in-0 are now committed (unless a newer record already set them)", commit.Text())
	require.Equal(t, KindTransactionEnd, abort.Kind)
	require.Equal(t, "transaction of producer 4 aborted: its pending offsets for s6-in-1, s6-in-0 are dropped", abort.Text())
	require.Equal(t, int64(5), evs[6].ProducerID, "producer 5's transaction stays open: no marker follows")
	for i := 1; i < len(evs); i++ {
		require.Greater(t, evs[i].Offset, evs[i-1].Offset, "log order")
	}
}

// TestOtherGroupsAndMembers: a timeline holds its group's records only, and tells a member's
// first metadata record (a join) from its later ones.
func TestOtherGroupsAndMembers(t *testing.T) {
	evs := events(t, "streams", "streams-app")
	require.NotEmpty(t, evs)
	joined := map[string]int{}
	for _, ev := range evs {
		require.Equal(t, "streams-app", ev.Group)
		require.Empty(t, ev.Violation)
		if ev.Type == recordcodec.StreamsGroupMemberMetadata && ev.Kind == KindRecord {
			joined[ev.Member]++
		}
	}
	require.Len(t, joined, 2, "two instances join")
	require.Empty(t, events(t, "streams", "no-such-group"))
}
