package pebblelog_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/internal/testgen"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// logDir writes partitions (batches per partition) as a log directory and opens it.
func logDir(t *testing.T, partitions [][]*eventlog.Batch) *segment.Reader {
	t.Helper()
	root := t.TempDir()
	for p, bs := range partitions {
		require.NoError(t, testgen.WritePartition(filepath.Join(root, fmt.Sprintf("__consumer_offsets-%d", p)), bs, segment.WriterOptions{SegmentBytes: 8 << 10}))
	}
	r, err := segment.Open(root, segment.Options{})
	require.NoError(t, err)
	return r
}

// genBatches is n batches of partition p from offset 0, as writeSegments makes them.
func genBatches(p int32, n int) []*eventlog.Batch {
	var bs []*eventlog.Batch
	off := int64(0)
	for i := range n {
		b := testgen.Batch(p, off, 1+i%9, 0)
		bs = append(bs, b)
		off = b.LastOffset + 1 + int64(i%2)
	}
	return bs
}

// snapshotLog reads every batch of every partition of l.
func snapshotLog(t *testing.T, l *pebblelog.Log) [][]*eventlog.Batch {
	ps, err := l.Partitions()
	require.NoError(t, err)
	var out [][]*eventlog.Batch
	for _, p := range ps {
		out = append(out, collect(t, l, p, 0))
	}
	return out
}

// TestImportRefusesAnotherLog: importing into a database a dump whose batches below the
// database's end differ from what it holds (here one record value at one offset of partition
// 1) is refused with ErrOtherLog, naming the offset and both records, and nothing is written,
// not even the new batches of partition 0, which the other log also has.
func TestImportRefusesAnotherLog(t *testing.T) {
	a := [][]*eventlog.Batch{genBatches(0, 100), genBatches(1, 100)}
	l := memLog(t)
	_, err := pebblelog.Import(context.Background(), logDir(t, [][]*eventlog.Batch{a[0][:60], a[1][:60]}), l, pebblelog.ImportOptions{})
	require.NoError(t, err)
	before := snapshotLog(t, l)

	b := [][]*eventlog.Batch{genBatches(0, 100), genBatches(1, 100)}
	changed := b[1][30].Records[2]
	b[1][30].Records[2].Value = []byte("another cluster's value")
	_, err = pebblelog.Import(context.Background(), logDir(t, b), l, pebblelog.ImportOptions{})
	require.ErrorIs(t, err, pebblelog.ErrOtherLog)
	t.Log(err)
	require.ErrorContains(t, err, fmt.Sprintf("partition 1: the input is another log than the database holds: offset %d holds key", changed.Offset))
	require.ErrorContains(t, err, fmt.Sprintf("value %x", changed.Value[:12]))
	require.ErrorContains(t, err, "value 616e6f7468657220636c7573… (23 bytes) in the input")
	require.ErrorContains(t, err, "nothing imported")
	require.Equal(t, before, snapshotLog(t, l), "nothing written")

	// The same log, longer: the overlap checks, the rest is imported.
	st, err := pebblelog.Import(context.Background(), logDir(t, a), l, pebblelog.ImportOptions{})
	require.NoError(t, err)
	require.EqualValues(t, 120, st.Checked)
	require.Zero(t, st.Rewritten)
	require.EqualValues(t, 80, st.Batches)
}

// TestImportAcceptsCleanedLog: a later dump of the same log, in which Kafka's log cleaner
// removed records from batches (same offsets, fewer records, other CRCs), is the same log: its
// overlap is accepted (counted as rewritten) and its new batches imported. A record removed on
// one side is no conflict; batches below the database's first offset are counted, not lost
// silently.
func TestImportAcceptsCleanedLog(t *testing.T) {
	all := genBatches(0, 80)
	l := memLog(t)
	_, err := pebblelog.Import(context.Background(), logDir(t, [][]*eventlog.Batch{all[10:50]}), l, pebblelog.ImportOptions{})
	require.NoError(t, err)

	cleaned := make([]*eventlog.Batch, len(all))
	rewritten := 0
	for i, b := range all {
		c := b.Clone()
		if i >= 10 && i < 50 && len(c.Records) > 2 {
			c.Records = append(c.Records[:1], c.Records[2:]...) // the cleaner dropped the second
			c.NumRecords = int32(len(c.Records))
			rewritten++
		}
		cleaned[i] = c
	}
	st, err := pebblelog.Import(context.Background(), logDir(t, [][]*eventlog.Batch{cleaned}), l, pebblelog.ImportOptions{})
	require.NoError(t, err)
	require.EqualValues(t, 40, st.Checked)
	require.EqualValues(t, rewritten, st.Rewritten)
	require.EqualValues(t, 10, st.BeforeStart)
	require.EqualValues(t, 30, st.Batches)

	// A cleaned batch that also changed a remaining record is another log.
	other := genBatches(0, 90)
	other[20].Records = other[20].Records[1:]
	other[20].Records[0].Key = []byte("k")
	_, err = pebblelog.Import(context.Background(), logDir(t, [][]*eventlog.Batch{other}), l, pebblelog.ImportOptions{})
	require.True(t, errors.Is(err, pebblelog.ErrOtherLog), "%v", err)
}
