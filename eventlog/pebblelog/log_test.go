package pebblelog_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/internal/testgen"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func memLog(t *testing.T) *pebblelog.Log {
	l, err := pebblelog.Open("db", &pebblelog.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

func collect(t *testing.T, src eventlog.Source, p int32, from int64) []*eventlog.Batch {
	t.Helper()
	it, err := src.Batches(p, from)
	require.NoError(t, err)
	defer it.Close()
	var out []*eventlog.Batch
	for it.Next() {
		out = append(out, it.Batch().Clone())
	}
	require.NoError(t, it.Err())
	return out
}

func TestAppendIterate(t *testing.T) {
	l := memLog(t)
	txn := testgen.Batch(1, 10, 3, eventlog.AttrTransactional)
	txn.ProducerID, txn.ProducerEpoch, txn.BaseSequence, txn.CRC = 9, 2, 0, 0xdeadbeef
	txn.Origin = eventlog.Origin{File: "x/00000000000000000000.log", Pos: 1234, Size: 99}
	want := []*eventlog.Batch{
		testgen.Batch(1, 0, 10, 0),
		txn,
		{Partition: 1, BaseOffset: 20, LastOffset: 25, Magic: 2, ProducerID: 5, ProducerEpoch: 1, BaseSequence: 7}, // header-only
		testgen.Batch(1, 40, 1, eventlog.AttrDeleteHorizon|eventlog.Attributes(eventlog.CodecZstd)),
		{Partition: 1, BaseOffset: 41, LastOffset: 43, Magic: 1, Attributes: eventlog.Attributes(eventlog.CodecGzip), PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 3,
			Records: []eventlog.Record{{Offset: 41, Timestamp: 5, Key: []byte{}, Value: nil}, {Offset: 42, Timestamp: 4, Key: nil, Value: []byte{}}, {Offset: 43, Timestamp: 6, Key: []byte("k"), Value: []byte("v")}}},
	}
	for _, b := range want {
		require.NoError(t, l.Append(b))
	}
	require.NoError(t, l.Append(testgen.Batch(0, 100, 2, 0)))

	ps, err := l.Partitions()
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 1}, ps)
	got := collect(t, l, 1, 0)
	require.Len(t, got, len(want))
	for i := range want {
		w := *want[i]
		if len(w.Records) == 0 {
			w.Records = nil
		}
		g := *got[i]
		if len(g.Records) == 0 {
			g.Records = nil
		}
		require.Equal(t, w, g)
		for j, r := range want[i].Records {
			assert.Equal(t, r.Value == nil, got[i].Records[j].Value == nil, "null vs empty value, batch %d record %d", i, j)
			assert.Equal(t, r.Key == nil, got[i].Records[j].Key == nil, "null vs empty key, batch %d record %d", i, j)
		}
	}
	first, next, err := l.Offsets(1)
	require.NoError(t, err)
	assert.EqualValues(t, 0, first)
	assert.EqualValues(t, 44, next)
	first, next, err = l.Offsets(0)
	require.NoError(t, err)
	assert.EqualValues(t, 100, first)
	assert.EqualValues(t, 102, next)

	for _, c := range []struct{ from, base int64 }{{0, 0}, {9, 0}, {10, 10}, {12, 10}, {13, 20}, {30, 40}, {43, 41}} {
		got := collect(t, l, 1, c.from)
		require.NotEmpty(t, got, "from %d", c.from)
		assert.Equal(t, c.base, got[0].BaseOffset, "from %d", c.from)
	}
	assert.Empty(t, collect(t, l, 1, 44))

	err = l.Append(testgen.Batch(1, 43, 1, 0))
	require.ErrorIs(t, err, pebblelog.ErrOffsetRegression)
	require.NoError(t, l.Append(testgen.Batch(1, 1000, 1, 0)), "gaps are allowed")
}

func writeSegments(t *testing.T, root string, parts, batches int) [][]*eventlog.Batch {
	var all [][]*eventlog.Batch
	for p := range parts {
		var bs []*eventlog.Batch
		off := int64(0)
		for i := range batches {
			b := testgen.Batch(int32(p), off, 1+i%9, eventlog.Attributes(eventlog.Codec(i%5)))
			bs = append(bs, b)
			off = b.LastOffset + 1 + int64(i%2)
		}
		require.NoError(t, testgen.WritePartition(filepath.Join(root, fmt.Sprintf("__consumer_offsets-%d", p)), bs, segment.WriterOptions{SegmentBytes: 8 << 10}))
		all = append(all, bs)
	}
	return all
}

func TestImportIdempotentResumable(t *testing.T) {
	root := t.TempDir()
	want := writeSegments(t, root, 3, 200)
	src, err := segment.Open(root, segment.Options{})
	require.NoError(t, err)
	l := memLog(t)

	// An import of partition 1 alone, then everything: partition 1 resumes at its end.
	_, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{Partitions: []int32{1}})
	require.NoError(t, err)
	var calls int
	st, err := pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{CommitBytes: 4096, Progress: func(pebblelog.ImportProgress) { calls++ }})
	require.NoError(t, err)
	assert.Greater(t, calls, 2)
	assert.EqualValues(t, 400, st.Batches)
	for p := range 3 {
		got := collect(t, l, int32(p), 0)
		require.Len(t, got, len(want[p]))
		for i := range got {
			assert.Equal(t, want[p][i].Records, got[i].Records)
			assert.Equal(t, want[p][i].LastOffset, got[i].LastOffset)
			assert.Contains(t, got[i].Origin.File, ".log")
		}
	}
	st, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{})
	require.NoError(t, err)
	assert.Zero(t, st.Batches, "re-importing adds nothing")
}

func TestImportStrictStopsAtBadBatch(t *testing.T) {
	root := t.TempDir()
	writeSegments(t, root, 1, 100)
	dir := filepath.Join(root, "__consumer_offsets-0")
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	require.GreaterOrEqual(t, len(files), 2)
	// Corrupt the second batch of the second file.
	raw, err := os.ReadFile(files[1])
	require.NoError(t, err)
	second := 12 + int(binary.BigEndian.Uint32(raw[8:]))
	raw[second+40] ^= 0xff
	require.NoError(t, os.WriteFile(files[1], raw, 0o644))

	src, err := segment.Open(root, segment.Options{})
	require.NoError(t, err)
	l := memLog(t)
	_, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{CommitBytes: 1})
	var p *eventlog.Problem
	require.ErrorAs(t, err, &p)
	assert.Equal(t, eventlog.KindBadCRC, p.Kind)
	assert.Equal(t, files[1], p.File)
	assert.EqualValues(t, second, p.Pos)
	next, err := l.NextOffset(0)
	require.NoError(t, err)
	assert.Equal(t, p.Offset, next, "everything before the bad batch is in the log")
	got := collect(t, l, 0, 0)
	assert.Equal(t, next, got[len(got)-1].LastOffset+1)

	// Forensic import on top of it resumes and skips the bad batch.
	src, err = segment.Open(root, segment.Options{Mode: eventlog.Forensic})
	require.NoError(t, err)
	_, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{})
	require.NoError(t, err)
	assert.Len(t, src.Report().Problems(), 1)
	assert.Len(t, collect(t, l, 0, 0), 99)
}

// TestCrash takes crash clones of the filesystem at many points of an import (before commits,
// after commits, with random parts of unsynced data), and checks that every clone opens to a
// log whose batches are whole, whose next offset agrees with its last batch, and that
// re-importing completes it.
func TestCrash(t *testing.T) {
	root := t.TempDir()
	want := writeSegments(t, root, 2, 120)
	src, err := segment.Open(root, segment.Options{})
	require.NoError(t, err)

	fs := vfs.NewCrashableMem()
	l, err := pebblelog.Open("db", &pebblelog.Options{FS: fs})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 7))
	var clones []*vfs.MemFS
	crash := func() {
		clones = append(clones, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(100), RNG: rng}))
	}
	l.SetTestHookBeforeCommit(crash)
	_, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{CommitBytes: 2048, Progress: func(pebblelog.ImportProgress) { crash() }})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.Greater(t, len(clones), 40)

	for i, c := range clones {
		cl, err := pebblelog.Open("db", &pebblelog.Options{FS: c})
		require.NoError(t, err, "clone %d", i)
		for p := range 2 {
			next, err := cl.NextOffset(int32(p))
			require.NoError(t, err)
			got := collect(t, cl, int32(p), 0)
			if len(got) == 0 {
				assert.Zero(t, next, "clone %d partition %d", i, p)
				continue
			}
			assert.Equal(t, got[len(got)-1].LastOffset+1, next, "clone %d partition %d: next offset agrees with the entries", i, p)
			for j, b := range got {
				assert.Equal(t, want[p][j].Records, b.Records, "clone %d partition %d batch %d whole", i, p, j)
			}
		}
		_, err = pebblelog.Import(context.Background(), src, cl, pebblelog.ImportOptions{})
		require.NoError(t, err, "clone %d: re-import", i)
		for p := range 2 {
			got := collect(t, cl, int32(p), 0)
			require.Len(t, got, len(want[p]), "clone %d partition %d complete", i, p)
		}
		require.NoError(t, cl.Close())
	}
}
