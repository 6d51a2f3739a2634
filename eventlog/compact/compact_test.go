package compact_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/compact"
	"github.com/coordlog/coordlog/eventlog/compact/compacttest"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/internal/leakcheck"
)

const (
	nowMs      = 10_000_000
	pastHzn    = 5_000_000
	futureHzn  = 50_000_000
	retention  = 1000
	commitType = 1
	abortType  = 0
)

var now = time.UnixMilli(nowMs)

type rec struct {
	key, value string // value "-" is a tombstone
}

func data(base int64, horizon int64, pid int64, recs ...rec) *eventlog.Batch {
	b := &eventlog.Batch{BaseOffset: base, LastOffset: base + int64(len(recs)) - 1, Magic: 2, PartitionLeaderEpoch: 1,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: 1000 + base}
	if pid >= 0 {
		b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, 1, 0
		b.Attributes |= eventlog.AttrTransactional
	}
	if horizon > 0 {
		b.Attributes |= eventlog.AttrDeleteHorizon
		b.BaseTimestamp = horizon
	}
	for i, r := range recs {
		rr := eventlog.Record{Offset: base + int64(i), Timestamp: 1000 + base + int64(i), Key: []byte(r.key)}
		if r.value != "-" {
			rr.Value = []byte(r.value)
		}
		b.Records = append(b.Records, rr)
		b.MaxTimestamp = rr.Timestamp
	}
	b.NumRecords = int32(len(b.Records))
	return b
}

func marker(off, horizon, pid int64, typ int) *eventlog.Batch {
	b := &eventlog.Batch{BaseOffset: off, LastOffset: off, Magic: 2, PartitionLeaderEpoch: 1,
		Attributes: eventlog.AttrTransactional | eventlog.AttrControl, ProducerID: pid, ProducerEpoch: 1, BaseSequence: -1,
		BaseTimestamp: 1000 + off, MaxTimestamp: 1000 + off, NumRecords: 1}
	if horizon > 0 {
		b.Attributes |= eventlog.AttrDeleteHorizon
		b.BaseTimestamp = horizon
	}
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(typ))
	val := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), 3)
	b.Records = []eventlog.Record{{Offset: off, Timestamp: 1000 + off, Key: key, Value: val}}
	return b
}

func writeSegments(t testing.TB, batches ...*eventlog.Batch) (string, *segment.Reader) {
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	w, err := segment.NewWriter(dir, segment.WriterOptions{})
	require.NoError(t, err)
	for _, b := range batches {
		_, err := w.Write(b)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	r, err := segment.Open(dir, segment.Options{})
	require.NoError(t, err)
	return dir, r
}

func render(b *eventlog.Batch) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d-%d", b.BaseOffset, b.LastOffset)
	if b.Attributes.Control() {
		sb.WriteString(" ctrl")
	}
	if h, ok := b.DeleteHorizon(); ok {
		fmt.Fprintf(&sb, " h=%d", h)
	}
	sb.WriteString(" [")
	for i, r := range b.Records {
		if i > 0 {
			sb.WriteString(" ")
		}
		fmt.Fprintf(&sb, "%d", r.Offset)
		if r.Value == nil {
			sb.WriteString("x")
		}
	}
	sb.WriteString("]")
	return sb.String()
}

func compactAll(t testing.TB, src eventlog.Source, opts compact.Options) ([]string, compact.Stats) {
	pl, err := compact.NewPlan(context.Background(), src, 0, opts)
	require.NoError(t, err)
	defer pl.Close()
	var out []string
	st, err := compact.Each(context.Background(), compact.NewCompacted(src, pl), 0, func(b *eventlog.Batch, raw []byte) error {
		out = append(out, render(b))
		return nil
	})
	require.NoError(t, err)
	return out, st
}

func scenario() []*eventlog.Batch {
	return []*eventlog.Batch{
		data(0, 0, -1, rec{"k1", "a"}, rec{"k2", "a"}),          // both superseded: dropped
		data(2, 0, -1, rec{"k1", "b"}),                          // kept as is
		data(3, 0, -1, rec{"k2", "-"}),                          // tombstone without horizon: kept, stamped
		data(4, pastHzn, -1, rec{"k3", "-"}, rec{"k4", "a"}),    // expired tombstone goes, horizon stays
		data(5+1, 0, 7, rec{"k5", "txn-aborted"}),               // aborted
		marker(7, 0, 7, abortType),                              // its marker: the txn had data, kept
		marker(8, 0, 8, commitType),                             // empty txn, no horizon: kept, stamped
		marker(9, pastHzn, 9, commitType),                       // empty txn past horizon: goes
		data(10, 0, 10, rec{"k6", "txn-committed"}),             // committed txn data: kept
		marker(11, 0, 10, commitType),                           // its marker: kept
		data(12, 0, -1, rec{"k7", "a"}),                         // superseded: dropped
		data(13, futureHzn, -1, rec{"k7", "b"}, rec{"k8", "-"}), // horizon not passed: kept as is
		marker(15, pastHzn, 15, commitType),                     // empty, past horizon, but ends the log: header only
	}
}

// TestDecisions walks one hand-built log through every rule of the cleaner.
func TestDecisions(t *testing.T) {
	_, src := writeSegments(t, scenario()...)
	opts := compact.DefaultOptions(now)
	opts.DeleteRetention = retention * time.Millisecond
	opts.ProducerExpiration = time.Millisecond // every producer expired: no header-only batches for them
	got, st := compactAll(t, src, opts)
	stamp := fmt.Sprint(nowMs + retention)
	assert.Equal(t, []string{
		"2-2 [2]",
		"3-3 h=" + stamp + " [3x]",
		"4-5 h=5000000 [5]",
		"7-7 ctrl [7]",
		"8-8 ctrl h=" + stamp + " [8]",
		"10-10 [10]",
		"11-11 ctrl [11]",
		"13-14 h=50000000 [13 14x]",
		"15-15 ctrl []",
	}, got)
	assert.EqualValues(t, 3, st.Removed[compact.Superseded].Records)
	assert.EqualValues(t, 1, st.Removed[compact.ExpiredTombstone].Records)
	assert.EqualValues(t, 1, st.Removed[compact.Aborted].Records)
	assert.EqualValues(t, 2, st.Removed[compact.EmptyMarker].Records)
	assert.EqualValues(t, 2, st.Stamped)
	assert.EqualValues(t, 1, st.EmptyBatches)

	// Active producers keep their last data batch (and the marker of their epoch) as
	// header-only batches, for producer state.
	opts.ProducerExpiration = compact.DefaultProducerExpiration
	got, _ = compactAll(t, src, opts)
	assert.Contains(t, got, "6-6 []")
	assert.Contains(t, got, "9-9 ctrl []")
}

// TestOpenTransaction: nothing at or after the first open transaction changes, and records
// there do not supersede records below it.
func TestOpenTransaction(t *testing.T) {
	_, src := writeSegments(t,
		data(0, 0, -1, rec{"k1", "a"}, rec{"k2", "a"}),
		data(2, 0, -1, rec{"k2", "b"}),
		data(3, 0, 5, rec{"k3", "open"}), // never ends
		data(4, 0, -1, rec{"k1", "c"}),   // past the last stable offset
		data(5, 0, -1, rec{"k1", "d"}, rec{"k4", "-"}),
	)
	got, st := compactAll(t, src, compact.DefaultOptions(now))
	assert.Equal(t, []string{"0-1 [0]", "2-2 [2]", "3-3 [3]", "4-4 [4]", "5-6 [5 6x]"}, got)
	assert.EqualValues(t, 3, st.Uncleanable)
}

// TestTransactionalRecordsWaitForTheirMarker: an aborted record never supersedes a committed
// one, even when it comes later.
func TestTransactionalRecordsWaitForTheirMarker(t *testing.T) {
	_, src := writeSegments(t,
		data(0, 0, -1, rec{"k1", "a"}),
		data(1, 0, 9, rec{"k1", "aborted"}),
		data(2, 0, 8, rec{"k1", "committed-later"}),
		marker(3, 0, 9, abortType),
		data(4, 0, -1, rec{"k2", "a"}),
		marker(5, 0, 8, commitType),
	)
	opts := compact.DefaultOptions(now)
	opts.ProducerExpiration = time.Millisecond
	got, _ := compactAll(t, src, opts)
	assert.Equal(t, []string{"2-2 [2]", "3-3 ctrl [3]", "4-4 [4]", "5-5 ctrl [5]"}, got)
}

// TestLegacyBecomesV2: retained legacy messages are rewritten as v2 batches spanning their
// records, and their tombstones get a horizon.
func TestLegacyBecomesV2(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	w, err := segment.NewWriter(dir, segment.WriterOptions{})
	require.NoError(t, err)
	raw, err := segment.AppendLegacy(nil, 1, eventlog.CodecGzip, eventlog.CreateTime, []eventlog.Record{
		{Offset: 0, Timestamp: 5, Key: []byte("a"), Value: []byte("1")},
		{Offset: 1, Timestamp: 6, Key: []byte("b"), Value: nil},
		{Offset: 2, Timestamp: 7, Key: []byte("a"), Value: []byte("2")},
	})
	require.NoError(t, err)
	_, err = w.WriteRaw(0, raw)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	src, err := segment.Open(dir, segment.Options{})
	require.NoError(t, err)
	got, _ := compactAll(t, src, compact.DefaultOptions(now))
	assert.Equal(t, []string{fmt.Sprintf("1-2 h=%d [1x 2]", nowMs+compact.DefaultDeleteRetention.Milliseconds())}, got)
}

func TestOptionsNeedNow(t *testing.T) {
	_, src := writeSegments(t, data(0, 0, -1, rec{"k", "v"}))
	_, err := compact.NewPlan(context.Background(), src, 0, compact.Options{})
	require.ErrorContains(t, err, "Now is required")
}

// TestOutputIsValidKafka: written segments re-read with the segment reader (CRCs checked)
// give exactly the compacted batches, and the file is named after the input's first segment.
func TestOutputIsValidKafka(t *testing.T) {
	cfg := compacttest.Heavy(3, nowMs)
	cfg.Codec = eventlog.CodecLZ4
	dir := t.TempDir()
	_, err := compacttest.WritePartition(dir, cfg, 32<<10)
	require.NoError(t, err)
	src, err := segment.Open(filepath.Join(dir, "__consumer_offsets-0"), segment.Options{})
	require.NoError(t, err)
	want, _ := compactAll(t, src, compact.DefaultOptions(now))

	pl, err := compact.NewPlan(context.Background(), src, 0, compact.DefaultOptions(now))
	require.NoError(t, err)
	defer pl.Close()
	out := t.TempDir()
	st, err := compact.WriteSegments(context.Background(), compact.NewCompacted(src, pl), 0, out, compact.SegmentOptions{SegmentBytes: 4096})
	require.NoError(t, err)
	assert.Positive(t, st.OutBytes)
	back, err := segment.Open(filepath.Join(out, "__consumer_offsets-0"), segment.Options{})
	require.NoError(t, err)
	it, err := back.Batches(0, 0)
	require.NoError(t, err)
	var got []string
	for it.Next() {
		got = append(got, render(it.Batch()))
		if len(it.Batch().Records) > 0 && !it.Batch().Attributes.Control() {
			assert.Equal(t, eventlog.CodecLZ4, it.Batch().Attributes.Codec())
		}
	}
	require.NoError(t, it.Err())
	it.Close()
	assert.Equal(t, want, got)
	assert.Empty(t, back.Report().Problems())
	files := back.Files(0)
	require.Greater(t, len(files), 1, "rolled")
	assert.Equal(t, segment.FileName(0), filepath.Base(files[0]))
	_, next, err := back.Offsets(0)
	require.NoError(t, err)
	assert.Equal(t, pl.End, next, "the log end offset survives")
}

// TestCorruptInputStrict: a damaged batch stops the plan with the reader's Problem naming the
// file and byte position, and a job writes nothing.
func TestCorruptInputStrict(t *testing.T) {
	dir, _ := writeSegments(t, scenario()...)
	path := filepath.Join(dir, segment.FileName(0))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	raw[200] ^= 0xff
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	out := filepath.Join(t.TempDir(), "out")
	job := &compact.Job{Input: dir, Output: out, Options: compact.DefaultOptions(now),
		Verify: func(context.Context, eventlog.Source, eventlog.Source, []int32) error { return nil }}
	_, err = job.Run(context.Background())
	var p *eventlog.Problem
	require.ErrorAs(t, err, &p)
	assert.Equal(t, path, p.File)
	assert.Equal(t, eventlog.KindBadCRC, p.Kind)
	assert.NoDirExists(t, out)
	assert.NoDirExists(t, out+".compact-new")
	// The scan's indexing goroutine ends with the failed read.
	leakcheck.None(t, time.Second, "github.com/coordlog/coordlog/eventlog/compact.(*Plan).scan")

	// Forensic mode skips the damaged batch and publishes the rest.
	job.Mode = eventlog.Forensic
	res, err := job.Run(context.Background())
	require.NoError(t, err)
	assert.NotEmpty(t, res.Report.Problems())
	assert.DirExists(t, out)
}

// TestJobRerunIsIdempotent: a second run finds its manifest and does nothing; another
// directory at the output path is never overwritten.
func TestJobRerunIsIdempotent(t *testing.T) {
	dir, _ := writeSegments(t, scenario()...)
	out := filepath.Join(t.TempDir(), "out")
	verified := 0
	job := &compact.Job{Input: dir, Output: out, Options: compact.DefaultOptions(now),
		Verify: func(context.Context, eventlog.Source, eventlog.Source, []int32) error { verified++; return nil }}
	res, err := job.Run(context.Background())
	require.NoError(t, err)
	assert.False(t, res.Already)
	assert.FileExists(t, filepath.Join(out, compact.ManifestName))
	res, err = job.Run(context.Background())
	require.NoError(t, err)
	assert.True(t, res.Already)
	assert.Equal(t, 1, verified)

	job.Options.Now = now.Add(time.Hour)
	_, err = job.Run(context.Background())
	require.ErrorContains(t, err, "refusing to overwrite")

	// A failed proof publishes nothing.
	out2 := filepath.Join(t.TempDir(), "out2")
	job = &compact.Job{Input: dir, Output: out2, Options: compact.DefaultOptions(now),
		Verify: func(context.Context, eventlog.Source, eventlog.Source, []int32) error {
			return errors.New("states differ")
		}}
	_, err = job.Run(context.Background())
	require.ErrorContains(t, err, "proof failed")
	assert.NoDirExists(t, out2)
	assert.NoDirExists(t, out2+".compact-new")
}

// TestPebbleInPlace: a Pebble log compacted in place holds the compacted batches, keeps its
// next offset, and leaves no staging or backup behind.
func TestPebbleInPlace(t *testing.T) {
	_, src := writeSegments(t, scenario()...)
	db := filepath.Join(t.TempDir(), "db")
	l, err := pebblelog.Open(db, nil)
	require.NoError(t, err)
	_, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	want, _ := compactAll(t, src, compact.DefaultOptions(now))

	job := &compact.Job{Input: db, InPlace: true, Options: compact.DefaultOptions(now),
		Verify: func(context.Context, eventlog.Source, eventlog.Source, []int32) error { return nil }}
	_, err = job.Run(context.Background())
	require.NoError(t, err)
	l, err = pebblelog.Open(db, nil)
	require.NoError(t, err)
	defer l.Close()
	it, err := l.Batches(0, 0)
	require.NoError(t, err)
	var got []string
	for it.Next() {
		got = append(got, render(it.Batch()))
	}
	require.NoError(t, it.Err())
	it.Close()
	assert.Equal(t, want, got)
	next, err := l.NextOffset(0)
	require.NoError(t, err)
	assert.EqualValues(t, 16, next)
	for _, p := range []string{db + ".compact-new", db + ".compact-old", compact.MarkerPath(db)} {
		assert.NoFileExists(t, p)
		assert.NoDirExists(t, p)
	}
}

// TestBatchesFromMidBatch: reading the compacted view from an offset inside a batch returns
// that batch whole with the same records as a read from the start.
func TestBatchesFromMidBatch(t *testing.T) {
	_, src := writeSegments(t, scenario()...)
	pl, err := compact.NewPlan(context.Background(), src, 0, compact.DefaultOptions(now))
	require.NoError(t, err)
	defer pl.Close()
	c := compact.NewCompacted(src, pl)
	it, err := c.Batches(0, 14) // inside batch 13-14
	require.NoError(t, err)
	defer it.Close()
	require.True(t, it.Next())
	assert.Equal(t, "13-14 h=50000000 [13 14x]", render(it.Batch()))
}
