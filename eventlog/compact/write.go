package compact

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// PartitionDir is the directory name of partition p in a Kafka log directory.
func PartitionDir(p int32) string { return fmt.Sprintf("__consumer_offsets-%d", p) }

// Each runs the compaction of one partition and calls fn with every output batch (valid only
// during the call; raw is its encoding when the batch was rebuilt, nil when unchanged). It
// returns the statistics. A dry run is Each with a fn that does nothing.
func Each(ctx context.Context, c *Compacted, p int32, fn func(b *eventlog.Batch, raw []byte) error) (Stats, error) {
	it, err := c.Batches(p, 0)
	if err != nil {
		return Stats{}, err
	}
	ci := it.(*Iter)
	defer ci.Close()
	n := 0
	for ci.Next() {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return ci.Stats(), err
			}
		}
		if fn != nil {
			if err := fn(ci.Batch(), ci.Encoded()); err != nil {
				return ci.Stats(), err
			}
		}
	}
	return ci.Stats(), ci.Err()
}

// SegmentOptions configure WriteSegments.
type SegmentOptions struct {
	// SegmentBytes rolls output files at this size (default 100 MiB, offsets.topic.segment.bytes).
	SegmentBytes int64
	// LogStart names the first output file when it is at most the first batch's offset: the
	// input's first segment base offset, which is Kafka's log start offset after a restart.
	// Used only when LogStartSet; otherwise the input's first offset names it.
	LogStart    int64
	LogStartSet bool
}

// WriteSegments writes the compacted partition p into dir/__consumer_offsets-p/ as Kafka
// segment files and syncs them (files and directories). The first file is named after the
// input's first offset, as Kafka's cleaner keeps the base offset of the first segment it
// cleans, so the log start offset does not move; later files roll at SegmentBytes and are
// named after their first batch.
func WriteSegments(ctx context.Context, c *Compacted, p int32, dir string, opts SegmentOptions) (Stats, error) {
	pl, ok := c.plans[p]
	if !ok {
		return Stats{}, fmt.Errorf("partition %d not found", p)
	}
	pdir := filepath.Join(dir, PartitionDir(p))
	w, err := segment.NewWriter(pdir, segment.WriterOptions{SegmentBytes: opts.SegmentBytes})
	if err != nil {
		return Stats{}, err
	}
	logStart := pl.First
	if opts.LogStartSet && opts.LogStart >= 0 && opts.LogStart < logStart {
		logStart = opts.LogStart
	}
	enc := segment.NewEncoder(segment.EncodeOptions{})
	defer enc.Close()
	var buf []byte
	first := true
	st, err := Each(ctx, c, p, func(b *eventlog.Batch, raw []byte) error {
		if raw == nil {
			var err error
			if buf, err = enc.AppendBatch(buf[:0], b); err != nil {
				return err
			}
			raw = buf
		}
		base := b.BaseOffset
		if first {
			base, first = min(logStart, base), false
		}
		_, err := w.WriteRaw(base, raw)
		return err
	})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return st, err
	}
	if first {
		// An empty partition still needs its (empty) first segment to be a partition.
		f, err := os.OpenFile(filepath.Join(pdir, segment.FileName(logStart)), os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return st, err
		}
		if err := f.Close(); err != nil {
			return st, err
		}
	}
	st.OutBytes = dirSize(pdir)
	return st, syncDir(pdir)
}

// WritePebble appends the compacted partition p to l (a new, empty log for p) with synced
// commits.
func WritePebble(ctx context.Context, c *Compacted, p int32, l *pebblelog.Log) (Stats, error) {
	a := l.NewAppender()
	defer a.Close()
	const commitBytes = 8 << 20
	st, err := Each(ctx, c, p, func(b *eventlog.Batch, raw []byte) error {
		if err := a.Add(b); err != nil {
			return err
		}
		if a.Len() >= commitBytes {
			return a.Commit()
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	return st, a.Commit()
}

func dirSize(dir string) int64 {
	var n int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, err := e.Info(); err == nil && !e.IsDir() {
			n += info.Size()
		}
	}
	return n
}

// syncDir fsyncs a directory so that the names created in it are durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
