package eventlog_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/internal/leakcheck"
	"github.com/coordlog/coordlog/internal/testcorpus"
	"github.com/stretchr/testify/require"
)

// drain reads every batch of it (cloned: iterators reuse their buffers) and its error.
func drain(t *testing.T, it eventlog.Iterator) ([]*eventlog.Batch, error) {
	t.Helper()
	var out []*eventlog.Batch
	for it.Next() {
		out = append(out, it.Batch().Clone())
	}
	err := it.Err()
	require.NoError(t, it.Close())
	return out, err
}

// requireSameBatches compares two batch lists field by field, nil and empty apart.
func requireSameBatches(t *testing.T, want, got []*eventlog.Batch, where string) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: batch count", where)
	for i := range want {
		w, g := want[i], got[i]
		require.Equal(t, w, g, "%s: batch %d", where, i)
		for j := range w.Records {
			wr, gr := w.Records[j], g.Records[j]
			require.Equal(t, wr.Key == nil, gr.Key == nil, "%s: batch %d record %d: null key", where, i, j)
			require.Equal(t, wr.Value == nil, gr.Value == nil, "%s: batch %d record %d: null value (tombstone)", where, i, j)
			require.Equal(t, wr.Headers == nil, gr.Headers == nil, "%s: batch %d record %d: headers", where, i, j)
		}
	}
}

// Every recording of a real broker reads the same through ReadAhead as directly: every batch,
// record, byte, null and header, and the same error at the end.
func TestReadAheadGivesTheSameBatches(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(testcorpus.Recordings(), "*", "__consumer_offsets-0"))
	require.NotEmpty(t, dirs)
	requireSameThroughReadAhead(t, dirs)
}

// So does every public dump, damaged ones included, in forensic and in strict mode.
func TestReadAheadGivesTheSameBatchesOnPublicDumps(t *testing.T) {
	requireSameThroughReadAhead(t, testcorpus.PartitionDirs(t, testcorpus.Found(t)))
}

func requireSameThroughReadAhead(t *testing.T, dirs []string) {
	t.Helper()
	batches := 0
	for _, dir := range dirs {
		for _, mode := range []eventlog.Mode{eventlog.Forensic, eventlog.Strict} {
			r, err := segment.Open(dir, segment.Options{Mode: mode})
			require.NoError(t, err, dir)
			parts, err := r.Partitions()
			require.NoError(t, err)
			for _, p := range parts {
				where := fmt.Sprintf("%s partition %d (%v)", dir, p, mode)
				it, err := r.Batches(p, 0)
				require.NoError(t, err)
				want, wantErr := drain(t, it)
				it, err = r.Batches(p, 0)
				require.NoError(t, err)
				got, gotErr := drain(t, eventlog.ReadAhead(it))
				requireSameBatches(t, want, got, where)
				require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), where)
				batches += len(want)
			}
		}
	}
	require.Positive(t, batches)
	leakcheck.None(t, 5*time.Second, "github.com/coordlog/coordlog/eventlog.")
}

// failing is an iterator over batches that fails after them.
type failing struct {
	bs     []*eventlog.Batch
	i      int
	err    error
	closed bool
}

func (f *failing) Next() bool {
	if f.i >= len(f.bs) {
		return false
	}
	f.i++
	return true
}
func (f *failing) Batch() *eventlog.Batch { return f.bs[f.i-1] }
func (f *failing) Err() error {
	if f.i >= len(f.bs) {
		return f.err
	}
	return nil
}
func (f *failing) Close() error { f.closed = true; return nil }

// batchOf builds a batch of n records at offset base, each with a key and a value of size
// bytes; every third record is a tombstone, every fifth has an empty key and a header.
func batchOf(base int64, n, size int) *eventlog.Batch {
	b := &eventlog.Batch{BaseOffset: base, LastOffset: base + int64(n) - 1, NumRecords: int32(n), Magic: 2}
	for i := range n {
		r := eventlog.Record{Offset: base + int64(i), Timestamp: 1000 + int64(i), Key: []byte(strings.Repeat("k", size)), Value: []byte(strings.Repeat("v", size))}
		if i%3 == 2 {
			r.Value = nil
		}
		if i%5 == 4 {
			r.Key = []byte{}
			r.Headers = []eventlog.Header{{Key: []byte("h"), Value: nil}, {Key: []byte("i"), Value: []byte{}}}
		}
		b.Records = append(b.Records, r)
	}
	return b
}

// Batches of every size (empty ones, small ones, one larger than a chunk's arenas, one with
// more records than a chunk holds) come through in order with their error after them, and
// the inner iterator is closed.
func TestReadAheadSizesAndErrors(t *testing.T) {
	var bs []*eventlog.Batch
	off := int64(0)
	add := func(n, size int) {
		b := batchOf(off, n, size)
		if n == 0 {
			b.LastOffset = off
		}
		bs = append(bs, b)
		off = b.LastOffset + 1
	}
	for i := range 3000 {
		add(i%7, 40)
	}
	add(3, 1<<20) // past a chunk's bytes
	add(10000, 8) // past a chunk's records
	for range 100 {
		add(2, 100)
	}
	add(1, 3<<20) // a second oversized batch after the first was recycled
	boom := errors.New("disk on fire")
	inner := &failing{bs: bs, err: boom}
	got, err := drain(t, eventlog.ReadAhead(inner))
	require.ErrorIs(t, err, boom)
	want := make([]*eventlog.Batch, len(bs))
	for i, b := range bs {
		want[i] = b.Clone() // as drain keeps them
	}
	requireSameBatches(t, want, got, "sizes")
	require.True(t, inner.closed)
	leakcheck.None(t, 5*time.Second, "github.com/coordlog/coordlog/eventlog.")
}

// Closing before the end stops the goroutine (no leak) and closes the inner iterator, also
// when the caller read nothing.
func TestReadAheadCloseEarly(t *testing.T) {
	for _, read := range []int{0, 1, 700} {
		var bs []*eventlog.Batch
		for i := range 5000 {
			bs = append(bs, batchOf(int64(i*4), 4, 64))
		}
		inner := &failing{bs: bs}
		it := eventlog.ReadAhead(inner)
		for range read {
			require.True(t, it.Next())
		}
		if read > 0 {
			require.Equal(t, int64((read-1)*4), it.Batch().BaseOffset)
		}
		require.NoError(t, it.Close())
		require.NoError(t, it.Close(), "a second Close is harmless")
		require.False(t, it.Next())
		require.True(t, inner.closed)
	}
	leakcheck.None(t, 5*time.Second, "github.com/coordlog/coordlog/eventlog.")
}

// reusing is an iterator that, like the real ones, reuses one batch and one buffer for every
// batch it returns: the batch handed out last is overwritten by the next call to Next.
type reusing struct {
	src   []*eventlog.Batch
	i     int
	batch eventlog.Batch
	buf   []byte
}

func (r *reusing) Next() bool {
	if r.i >= len(r.src) {
		return false
	}
	b := r.src[r.i]
	r.i++
	r.batch = *b
	r.batch.Records = r.batch.Records[:0:0]
	r.buf = r.buf[:0]
	for _, rec := range b.Records {
		k, v := len(r.buf), 0
		r.buf = append(r.buf, rec.Key...)
		v = len(r.buf)
		r.buf = append(r.buf, rec.Value...)
		rec.Key, rec.Value = r.buf[k:v:v], r.buf[v:len(r.buf):len(r.buf)]
		r.batch.Records = append(r.batch.Records, rec)
	}
	// scribble over what the previous batch's slices pointed at, beyond this batch's bytes
	for i := len(r.buf); i < cap(r.buf); i++ {
		r.buf[:cap(r.buf)][i] = 0xee
	}
	return true
}
func (r *reusing) Batch() *eventlog.Batch { return &r.batch }
func (r *reusing) Err() error             { return nil }
func (r *reusing) Close() error           { return nil }

// A batch too large to copy is lent: the iterator is not advanced (its memory not reused)
// until the caller has moved past it. Batches of 1 and 6 MiB between small ones, from an
// iterator that reuses its buffer, arrive intact (run under -race in CI).
func TestReadAheadLendsLargeBatches(t *testing.T) {
	var bs []*eventlog.Batch
	off := int64(0)
	for i := range 40 {
		size := 50
		switch i % 10 {
		case 3:
			size = 1 << 19 // 1 MiB a batch: copied into a chunk of its own
		case 7:
			size = 3 << 20 // 6 MiB: lent
		}
		b := batchOf(off, 2, size)
		for j := range b.Records { // tombstones and empty keys are the other tests' business
			b.Records[j].Key, b.Records[j].Value, b.Records[j].Headers = []byte(strings.Repeat(fmt.Sprint(i%10), size)), []byte(strings.Repeat("v", size)), nil
		}
		bs = append(bs, b)
		off = b.LastOffset + 1
	}
	it := eventlog.ReadAhead(&reusing{src: bs})
	n := 0
	for it.Next() {
		b := it.Batch()
		time.Sleep(time.Millisecond) // give the goroutine every chance to run ahead
		require.Equal(t, bs[n].BaseOffset, b.BaseOffset)
		for j := range b.Records {
			require.True(t, string(b.Records[j].Key) == string(bs[n].Records[j].Key) && string(b.Records[j].Value) == string(bs[n].Records[j].Value),
				"batch %d record %d changed under the caller", n, j)
		}
		n++
	}
	require.NoError(t, it.Err())
	require.NoError(t, it.Close())
	require.Equal(t, len(bs), n)
	leakcheck.None(t, 5*time.Second, "github.com/coordlog/coordlog/eventlog.")
}
