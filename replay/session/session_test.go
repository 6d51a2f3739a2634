package session_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

// commit is one offset commit of group g in a batch of its own at offset off.
func commit(t *testing.T, g string, off, committed int64) *eventlog.Batch {
	t.Helper()
	v := recordcodec.NewOffsetCommitValue()
	v.Offset = committed
	k, val, err := recordcodec.Encode(recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit, Group: g, Topic: "orders", Partition: 0}, Value: v})
	require.NoError(t, err)
	return &eventlog.Batch{BaseOffset: off, LastOffset: off, Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 1,
		BaseTimestamp: 1000 + off, MaxTimestamp: 1000 + off, Records: []eventlog.Record{{Offset: off, Timestamp: 1000 + off, Key: k, Value: val}}}
}

// memory is a source of n commits of group g, one a batch.
func memory(t *testing.T, g string, n int) *eventlog.Memory {
	t.Helper()
	m, err := eventlog.NewMemory()
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, m.Append(commit(t, g, int64(i), int64(100+i))))
	}
	return m
}

// A request the source cannot satisfy is a *RequestError, whatever the log holds; an input
// that fails while it is read is a *ReplayError.
func TestErrorsSayWhoseFaultTheyAre(t *testing.T) {
	ctx := context.Background()
	src := &session.Source{Source: memory(t, "g", 3), Name: "memory"}
	for name, req := range map[string]session.Request{
		"a partition the input does not have":    {Partitions: []int32{7}},
		"an offset past the end":                 {At: query.AtOffset(99)},
		"snapshots of a log that is no database": {FromSnapshot: true},
	} {
		_, err := session.Replay(ctx, src, req)
		var re *session.RequestError
		require.ErrorAs(t, err, &re, name)
	}
	broken := &session.Source{Source: failing{src.Source}, Name: "broken"}
	_, err := session.Replay(ctx, broken, session.Request{})
	var stopped *session.ReplayError
	require.ErrorAs(t, err, &stopped)
	require.ErrorIs(t, err, errDisk)
}

var errDisk = errors.New("disk on fire")

// failing is a source whose batches cannot be read.
type failing struct{ eventlog.Source }

func (f failing) Batches(int32, int64) (eventlog.Iterator, error) { return nil, errDisk }

// Replay brings each partition to the point asked for and says where it fell; the trace is
// told before the replay and once the source is read.
func TestReplayToAPoint(t *testing.T) {
	src := &session.Source{Source: memory(t, "g", 5), Name: "memory"}
	var told []string
	trace := &session.Trace{
		Resolved: func(at query.Point, pos []query.Position) { told = append(told, "resolved "+pos[0].Label()) },
		Done:     func(*session.Source) { told = append(told, "done") },
	}
	r, err := session.Replay(context.Background(), src, session.Request{At: query.AtOffset(2), Trace: trace})
	require.NoError(t, err)
	require.Equal(t, []string{"resolved offset 2", "done"}, told)
	require.Len(t, r.Partitions, 1)
	p := r.Partitions[0]
	require.Equal(t, int64(3), p.Engine.NextOffset())
	require.Equal(t, int64(3), p.RecordsReplayed())
	require.Nil(t, p.Snapshot())
	o, ok := p.Engine.State().Offset("g", "orders", 0)
	require.True(t, ok)
	require.Equal(t, int64(102), o.CommittedOffset)

	require.NoError(t, r.FindGroup("g"))
	var unknown *query.UnknownGroupError
	require.ErrorAs(t, r.FindGroup("h"), &unknown)
	require.Equal(t, "in the input at offset 2", unknown.Where)
}

// Sequential replays call the observers one partition after the other, in order.
func TestObserversPerPartition(t *testing.T) {
	seen := &session.Observers[*counter]{New: func(int32) *counter { return &counter{} }}
	src := &session.Source{Source: memory(t, "g", 4), Name: "memory"}
	r, err := session.Replay(context.Background(), src, session.Request{Observer: seen.Observer, Sequential: true})
	require.NoError(t, err)
	c, ok := seen.Of(0)
	require.True(t, ok)
	require.Equal(t, 4, c.n)
	require.Len(t, seen.All(), 1)
	_, ok = seen.Of(1)
	require.False(t, ok)
	require.Len(t, r.Partitions, 1)
}

type counter struct{ n int }

func (c *counter) Observe(*replay.Event, groupstate.View) { c.n++ }

// Follow replays what the log appends and says so, until its context ends.
func TestFollow(t *testing.T) {
	mem := memory(t, "g", 2)
	src := &session.Source{Source: mem, Name: "memory"}
	r, err := session.Replay(context.Background(), src, session.Request{})
	require.NoError(t, err)
	require.NoError(t, mem.Append(commit(t, "g", 2, 500)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen []int64
	err = r.Follow(ctx, time.Millisecond, func() error {
		o, _ := r.Partitions[0].Engine.State().Offset("g", "orders", 0)
		seen = append(seen, o.CommittedOffset)
		cancel()
		return nil
	})
	require.NoError(t, err, "an ended context is how a follow stops")
	require.Equal(t, []int64{500}, seen)
	require.Equal(t, int64(3), r.Partitions[0].Engine.NextOffset())
}

// A reader on another goroutine shares the lock Follow replays under (go test -race).
func TestFollowHoldsTheLock(t *testing.T) {
	mem := memory(t, "g", 1)
	var rw sync.RWMutex
	r, err := session.Replay(context.Background(), &session.Source{Source: mem, Name: "memory"}, session.Request{})
	require.NoError(t, err)
	r.Lock = &rw
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Follow(ctx, time.Millisecond, func() error { return nil }) }()
	for i := int64(1); i < 200; i++ {
		rw.Lock()
		require.NoError(t, mem.Append(commit(t, "g", i, 100+i)))
		rw.Unlock()
		rw.RLock()
		o, _ := r.Partitions[0].Engine.State().Offset("g", "orders", 0)
		rw.RUnlock()
		require.LessOrEqual(t, o.CommittedOffset, 100+i)
	}
	cancel()
	require.NoError(t, <-done)
}
