package pebblelog

import (
	"context"
	"errors"
	"fmt"

	"github.com/coordlog/coordlog/eventlog"
)

// ImportOptions configure Import.
type ImportOptions struct {
	// Partitions restricts the import to these partitions (all of the source's when nil).
	Partitions []int32
	// CommitBytes is the pending size at which a group of batches is committed. Default 4 MiB.
	CommitBytes int
	// Progress, when set, is called after every commit with the running totals.
	Progress func(ImportProgress)
	// OverlapChecked says that the caller ran CheckOverlap on this input and log, under the
	// log's writer lock (Options.BeforeWrite), so Import does not run it again.
	OverlapChecked bool
}

// ImportProgress is the running total of an import: what was newly added, and what of the
// input the log held already and was checked against it.
type ImportProgress struct {
	Partition int32 // the partition being imported (or checked)
	Bytes     int64 // on-disk bytes of the imported batches (their Origin.Size)
	Records   int64
	Batches   int64
	// Checked counts the input's batches the log already held (below its next offset), each
	// compared with the log (checkOverlap); CheckedBytes are their on-disk bytes. Rewritten
	// counts those among them that differ from the log's batches only by records removed
	// (Kafka's log cleaner or coordlog's compaction ran on one of the two copies).
	Checked, CheckedBytes, Rewritten int64
	// BeforeStart counts the input's batches below the log's first batch: a log only grows
	// at its end, so they are not imported.
	BeforeStart int64
}

// ErrOtherLog is wrapped by the error of an import whose input is not the log the database
// holds: a batch of the input that the database holds already has other records.
var ErrOtherLog = errors.New("the input is another log than the database holds")

// Import copies every batch of src that the log does not hold yet into l, and records the
// partitions that have none (AddPartition), so that an empty partition is not lost. Per partition it
// starts at l.NextOffset(p), so re-importing the same input adds nothing (idempotent) and an
// interrupted import resumes where its last commit ended. Batches are committed in groups
// (see Appender). When src returns an error (a strict-mode *eventlog.Problem, an I/O error),
// Import commits everything read before it and returns the error, so the log holds exactly the
// batches before the bad one.
//
// Before anything is written, every batch of the input that the log already holds is compared
// with it (CheckOverlap, unless opts.OverlapChecked): an input that is another log (another
// dump, another cluster's partition) is refused with ErrOtherLog, naming the first offset
// that differs and both records, and nothing is imported, rather than mixing two logs.
func Import(ctx context.Context, src eventlog.Source, l *Log, opts ImportOptions) (ImportProgress, error) {
	if opts.CommitBytes <= 0 {
		opts.CommitBytes = 8 << 20
	}
	parts := opts.Partitions
	if parts == nil {
		var err error
		if parts, err = src.Partitions(); err != nil {
			return ImportProgress{}, err
		}
	}
	var total ImportProgress
	if !opts.OverlapChecked {
		var err error
		if total, err = CheckOverlap(ctx, src, l, parts, opts.Progress); err != nil {
			return total, err
		}
	}
	for _, p := range parts {
		total.Partition = p
		if err := importPartition(ctx, src, l, p, opts, &total); err != nil {
			return total, err
		}
		// A partition without a batch is still a partition of the input: record it, at the
		// source's next offset, so that the log has as many partitions as the input.
		if _, found, err := l.readMeta(p); err != nil {
			return total, err
		} else if !found {
			_, next, err := src.Offsets(p)
			if err != nil {
				return total, fmt.Errorf("partition %d: %w", p, err)
			}
			if err := l.AddPartition(p, next); err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

func importPartition(ctx context.Context, src eventlog.Source, l *Log, p int32, opts ImportOptions, total *ImportProgress) error {
	next, err := l.NextOffset(p)
	if err != nil {
		return err
	}
	it, err := src.Batches(p, next)
	if err != nil {
		return err
	}
	defer it.Close()
	a := l.NewAppender()
	defer a.Close()
	// Groups are committed with CommitAsync: the next group is read while the previous one's
	// fsync runs, and progress is reported once a group is durable.
	var pending, inflight ImportProgress
	durable := func() error {
		if err := a.Wait(); err != nil {
			return err
		}
		if inflight.Batches == 0 {
			return nil
		}
		total.Bytes += inflight.Bytes
		total.Records += inflight.Records
		total.Batches += inflight.Batches
		inflight = ImportProgress{}
		if opts.Progress != nil {
			opts.Progress(*total)
		}
		return nil
	}
	commit := func() error {
		if err := durable(); err != nil {
			return err
		}
		if err := a.CommitAsync(); err != nil {
			return err
		}
		inflight, pending = pending, ImportProgress{}
		return nil
	}
	for it.Next() {
		b := it.Batch()
		if b.LastOffset < next {
			continue // a source that does not skip by itself (checked by checkOverlap)
		}
		if b.BaseOffset < next {
			err = fmt.Errorf("partition %d: %w: its batch [%d..%d] at %s straddles the log's next offset %d", p, ErrOtherLog, b.BaseOffset, b.LastOffset, b.Origin, next)
			break
		}
		b.Partition = p
		if err = a.Add(b); err != nil {
			break
		}
		next = b.LastOffset + 1
		pending.Bytes += b.Origin.Size
		pending.Records += int64(len(b.Records))
		pending.Batches++
		if a.Len() >= opts.CommitBytes {
			if err = commit(); err != nil {
				return err
			}
			if err = ctx.Err(); err != nil {
				return err
			}
		}
	}
	if err == nil {
		err = it.Err()
	}
	if cerr := commit(); cerr != nil {
		return cerr
	}
	if cerr := durable(); cerr != nil {
		return cerr
	}
	return err
}
