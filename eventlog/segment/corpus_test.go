package segment_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// corpusDir holds real segment files copied off brokers by other projects (see its
// PROVENANCE.md). They are read in place, never copied into this repository.
const corpusDir = "../../../shared/fixtures-found"

// headerCount walks a .log file with kmsg.RecordBatch (an implementation independent of ours),
// counting batches and the records their headers declare. Like Kafka's offset-driven reads it
// skips batches wholly below next (the end of the earlier files) and advances next.
func headerCount(t *testing.T, path string, next *int64) (batches, records int64) {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	for len(raw) > 0 {
		require.GreaterOrEqual(t, len(raw), 17, path)
		require.EqualValues(t, 2, raw[16], "%s: only magic 2 in this corpus", path)
		n := 12 + int(binary.BigEndian.Uint32(raw[8:]))
		var b kmsg.RecordBatch
		require.NoError(t, b.ReadFrom(raw[:n]), path)
		raw = raw[n:]
		if b.FirstOffset+int64(b.LastOffsetDelta) < *next {
			continue
		}
		*next = b.FirstOffset + int64(b.LastOffsetDelta) + 1
		batches++
		records += int64(b.NumRecords)
	}
	return batches, records
}

func TestRealCorpus(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("real segment corpus not found at %s: %v", corpusDir, err)
	}
	// Partition directories: every directory named __consumer_offsets-N that holds .log files.
	dirs := map[string]bool{}
	var files int
	require.NoError(t, filepath.WalkDir(corpusDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".log") {
			dirs[filepath.Dir(path)] = true
			files++
		}
		return err
	}))
	require.NotZero(t, files)
	var totalBatches, totalRecords, superseded int64
	for dir := range dirs {
		r, err := segment.Open(dir, segment.Options{})
		require.NoError(t, err, dir)
		ps, err := r.Partitions()
		require.NoError(t, err)
		require.Len(t, ps, 1)
		var wantB, wantR, next int64
		for _, f := range r.Files(ps[0]) {
			b, rc := headerCount(t, f, &next)
			wantB += b
			wantR += rc
		}
		it, err := r.Batches(ps[0], 0)
		require.NoError(t, err)
		var gotB, gotR int64
		for it.Next() {
			b := it.Batch()
			gotB++
			gotR += int64(len(b.Records))
			require.EqualValues(t, b.NumRecords, len(b.Records))
		}
		require.NoError(t, it.Err(), dir)
		require.NoError(t, it.Close())
		assert.Equal(t, wantB, gotB, "%s: batches", dir)
		assert.Equal(t, wantR, gotR, "%s: records", dir)
		for _, p := range r.Report().Problems() {
			assert.False(t, p.Kind.Damage(), "%s: %v", dir, &p)
			superseded++
		}
		if gotB > 0 {
			first, next, err := r.Offsets(ps[0])
			require.NoError(t, err)
			assert.LessOrEqual(t, first, next)
		}
		totalBatches += gotB
		totalRecords += gotR
	}
	t.Logf("%d files in %d partition dirs: %d batches, %d records, zero damage, %d superseded batches skipped", files, len(dirs), totalBatches, totalRecords, superseded)
	_ = eventlog.Strict
}
