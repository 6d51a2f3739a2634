package segment_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/internal/testgen"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// writeSegment writes batches into one file of dir under name.
func writeSegment(t *testing.T, dir, name string, batches ...*eventlog.Batch) {
	t.Helper()
	enc := segment.NewEncoder(segment.EncodeOptions{})
	defer enc.Close()
	var raw []byte
	for _, b := range batches {
		var err error
		raw, err = enc.AppendBatch(raw, b)
		require.NoError(t, err)
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), raw, 0o644))
}

// bases reads every batch of dir in mode and returns their base offsets and the reader.
func bases(t *testing.T, dir string, mode eventlog.Mode) ([]int64, *segment.Reader, error) {
	t.Helper()
	r, err := segment.Open(dir, segment.Options{Mode: mode})
	require.NoError(t, err)
	got, err := readAll(t, r, 0)
	var out []int64
	for _, b := range got {
		out = append(out, b.BaseOffset)
	}
	return out, r, err
}

// warningsAbout returns the warnings about file (a name or a path), which start with its path.
func warningsAbout(r *segment.Reader, file string) []string {
	var out []string
	for _, w := range r.Report().Warnings() {
		if path, _, ok := strings.Cut(w, ": "); ok && (path == file || filepath.Base(path) == file) {
			out = append(out, w)
		}
	}
	return out
}

// A broker stopped in the middle of a log-cleaner swap (issue 13, defect 4) leaves the cleaned
// segment as NNN.log.swap beside the segments it replaces, either still named .log (stopped
// before deleting them) or already renamed .deleted. Kafka's log recovery (LogLoader.load)
// completes the swap; so does the reader, in memory, saying what it did.
func TestInterruptedCleanerSwap(t *testing.T) {
	b := func(base int64, n int) *eventlog.Batch { return testgen.Batch(3, base, n, 0) }
	// The original log: segments 0 (offsets 0-9) and 10 (10-19), active segment 20 (20-24).
	// The cleaner's output for segments 0 and 10 keeps some batches of each, base offset 0.
	cleaned := []*eventlog.Batch{b(5, 5), b(15, 5)}
	for _, tc := range []struct {
		name      string
		originals string // the suffix the replaced segments carry
	}{
		{"originals-renamed-deleted", ".log.deleted"},
		{"originals-not-yet-deleted", ".log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := partDir(t)
			writeSegment(t, dir, strings.TrimSuffix(segment.FileName(0), ".log")+tc.originals, b(0, 5), b(5, 5))
			writeSegment(t, dir, strings.TrimSuffix(segment.FileName(10), ".log")+tc.originals, b(10, 5), b(15, 5))
			writeSegment(t, dir, segment.FileName(20), b(20, 5))
			writeSegment(t, dir, segment.FileName(0)+".swap", cleaned...)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "00000000000000000000.index.swap"), make([]byte, 16), 0o644))

			got, r, err := bases(t, dir, eventlog.Strict)
			require.NoError(t, err)
			assert.Equal(t, []int64{5, 15, 20}, got, "the cleaned batches, then the active segment")
			swap := warningsAbout(r, segment.FileName(0)+".swap")
			require.Len(t, swap, 1)
			assert.Contains(t, swap[0], "read as 00000000000000000000.log")
			assert.Contains(t, swap[0], "base offsets in [0, 20)")
			for _, orig := range []string{"00000000000000000000" + tc.originals, "00000000000000000010" + tc.originals} {
				assert.Len(t, warningsAbout(r, orig), 1, "%s is said to be ignored", orig)
			}
			assert.Empty(t, warningsAbout(r, segment.FileName(20)), "the active segment is not a leftover")
			assert.Empty(t, r.Report().Problems())
			first, next, err := r.Offsets(3)
			require.NoError(t, err)
			assert.EqualValues(t, 5, first)
			assert.EqualValues(t, 25, next)
			for _, f := range []string{segment.FileName(0) + ".swap", "00000000000000000000" + tc.originals} {
				_, err := os.Stat(filepath.Join(dir, f))
				assert.NoError(t, err, "%s is left as it was", f)
			}
		})
	}
}

// A .swap file at or above the lowest .cleaned offset is part of a segment split that did not
// finish (KAFKA-6264): Kafka deletes both and keeps the segments they would have replaced.
func TestSwapOfUnfinishedSplitIgnored(t *testing.T) {
	dir := partDir(t)
	writeSegment(t, dir, segment.FileName(0), testgen.Batch(3, 0, 5, 0), testgen.Batch(3, 5, 5, 0))
	writeSegment(t, dir, segment.FileName(0)+".cleaned", testgen.Batch(3, 0, 5, 0))
	writeSegment(t, dir, segment.FileName(5)+".swap", testgen.Batch(3, 5, 5, 0))
	got, r, err := bases(t, dir, eventlog.Strict)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 5}, got)
	assert.Len(t, warningsAbout(r, segment.FileName(0)+".cleaned"), 1)
	swap := warningsAbout(r, segment.FileName(5)+".swap")
	require.Len(t, swap, 1)
	assert.Contains(t, swap[0], "interrupted segment split")
}

// Segment files whose batches lie below their own base offset (files renamed or mixed up;
// issue 13, defect 8) were dropped as "superseded" with no error. Strict mode fails naming the
// file and the offsets; forensic mode skips exactly those batches and says so.
func TestBatchesBelowTheFileBaseOffset(t *testing.T) {
	dir := partDir(t)
	writeSegment(t, dir, segment.FileName(0), testgen.Batch(3, 100, 5, 0), testgen.Batch(3, 105, 5, 0))
	writeSegment(t, dir, segment.FileName(100), testgen.Batch(3, 0, 50, 0), testgen.Batch(3, 50, 50, 0))
	file := filepath.Join(dir, segment.FileName(100))

	got, _, err := bases(t, dir, eventlog.Strict)
	var p *eventlog.Problem
	require.ErrorAs(t, err, &p)
	assert.Equal(t, eventlog.KindBelowBase, p.Kind)
	assert.Equal(t, file, p.File)
	assert.EqualValues(t, 0, p.Pos)
	assert.EqualValues(t, 0, p.Offset)
	assert.Contains(t, p.Error(), "batch [0..49] lies below the file's base offset 100")
	assert.Equal(t, []int64{100, 105}, got)

	got, r, err := bases(t, dir, eventlog.Forensic)
	require.NoError(t, err)
	assert.Equal(t, []int64{100, 105}, got)
	sum := r.Report().Summary()
	assert.EqualValues(t, 2, sum[eventlog.KindBelowBase].Batches)
	assert.EqualValues(t, 100, sum[eventlog.KindBelowBase].Records)
	assert.Zero(t, sum[eventlog.KindSuperseded].Batches, "not passed off as superseded")
}

// A preallocated segment (log.preallocate) keeps its zero-filled tail after an unclean stop;
// Kafka's recovery truncates it. It was read as a "v0 message size 0" error.
func TestPreallocatedZeroTail(t *testing.T) {
	dir := partDir(t)
	writeSegment(t, dir, segment.FileName(0), testgen.Batch(3, 0, 5, 0), testgen.Batch(3, 5, 5, 0))
	f := filepath.Join(dir, segment.FileName(0))
	st, err := os.Stat(f)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(f, st.Size()+3<<20)) // zero-filled, like a preallocated file
	writeSegment(t, dir, segment.FileName(10), testgen.Batch(3, 10, 5, 0))

	for _, mode := range []eventlog.Mode{eventlog.Strict, eventlog.Forensic} {
		got, r, err := bases(t, dir, mode)
		require.NoError(t, err, mode)
		assert.Equal(t, []int64{0, 5, 10}, got)
		assert.Empty(t, r.Report().Problems())
		w := warningsAbout(r, f)
		require.Len(t, w, 1, "said once, however often the file is read")
		assert.Contains(t, w[0], "3145728 zero bytes from byte")
		assert.Contains(t, w[0], "preallocated segment")
		first, next, err := r.Offsets(3)
		require.NoError(t, err)
		assert.EqualValues(t, 0, first)
		assert.EqualValues(t, 15, next)
		_, err = readAll(t, r, 0)
		require.NoError(t, err)
		assert.Len(t, warningsAbout(r, f), 1)
	}
}
