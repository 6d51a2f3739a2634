package recovery

import (
	"errors"
	"fmt"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/snapshot"
)

// A snapshot's state is the replay of its log up to the snapshot's offset, so it may only be
// continued on that very log. Its meta records the log's identity (snapshot.Meta.Log, format
// 2): the first batch of the partition and the batch holding the last offset replayed, each by
// its offsets and CRC. A coordlog database keeps every batch with its CRC as read (pebblelog),
// so the identity is checked with two seeks, before a byte of the payload is decoded. A
// different dump, another cluster's partition, or the same log after a compaction that
// rewrote those batches, all fail it: the state of another log, or of records compaction has
// since removed, is not the state this log replays to.

// ErrForeignLog is wrapped by the error of a snapshot that was taken from another log than the
// one it would continue.
var ErrForeignLog = errors.New("taken from another log")

// ErrNoLogIdentity is wrapped by CheckLog's error for a snapshot that records no log identity
// (format 1, written before coordlog recorded one) but passed what can be checked without it.
var ErrNoLogIdentity = errors.New("no log identity")

// LogIdentity returns the marks that identify partition p of src as replayed up to next (the
// snapshot's next offset): the log's first batch and the batch holding offset next-1, the last
// one replayed (one mark when they are the same batch, none when next is 0).
func LogIdentity(src eventlog.Source, p int32, next int64) ([]snapshot.LogMark, error) {
	if next <= 0 {
		return nil, nil
	}
	var marks []snapshot.LogMark
	for _, off := range []int64{0, next - 1} {
		m, ok, err := markAt(src, p, off)
		if err != nil {
			return nil, fmt.Errorf("partition %d: log identity at offset %d: %w", p, off, err)
		}
		if !ok {
			return nil, fmt.Errorf("partition %d: log identity: no batch at or after offset %d, below the snapshot's offset %d", p, off, next)
		}
		if len(marks) > 0 && marks[0].BaseOffset == m.BaseOffset {
			break // the first batch is the last one replayed
		}
		marks = append(marks, m)
	}
	return marks, nil
}

// markAt returns the mark of the batch a read of partition p of src from offset starts with;
// ok is false when there is none.
func markAt(src eventlog.Source, p int32, offset int64) (m snapshot.LogMark, ok bool, err error) {
	it, err := src.Batches(p, offset)
	if err != nil {
		return m, false, err
	}
	defer it.Close()
	if !it.Next() {
		return m, false, it.Err()
	}
	b := it.Batch()
	return snapshot.LogMark{Offset: offset, BaseOffset: b.BaseOffset, LastOffset: b.LastOffset, CRC: b.CRC}, true, nil
}

// CheckLog checks that the snapshot whose meta is m was taken from partition m.Partition of
// src. It returns nil when every mark of m's identity matches src, an error wrapping
// ErrForeignLog that names the first mark that does not (its offset and both values), and, for
// a snapshot without an identity (format 1), an error wrapping ErrForeignLog when src does not
// even hold offset m.NextOffset-1, the last one the snapshot replayed, else one wrapping
// ErrNoLogIdentity: such a snapshot can be used, but nothing tells which log it came from.
func CheckLog(src eventlog.Source, m snapshot.Meta) error {
	p := m.Partition
	if len(m.Log) == 0 {
		if m.NextOffset <= 0 {
			return nil // nothing replayed: the state of any log at offset 0
		}
		last := m.NextOffset - 1
		got, ok, err := markAt(src, p, last)
		switch {
		case err != nil:
			return fmt.Errorf("partition %d: read the batch at offset %d: %w", p, last, err)
		case !ok || got.BaseOffset > last:
			return fmt.Errorf("%w: no batch of this log holds offset %d, the last one the snapshot replayed", ErrForeignLog, last)
		}
		return fmt.Errorf("%w (snapshot format 1): checked only that this log holds offset %d, the last one it replayed", ErrNoLogIdentity, last)
	}
	for _, want := range m.Log {
		got, ok, err := markAt(src, p, want.Offset)
		if err != nil {
			return fmt.Errorf("partition %d: read the batch at offset %d: %w", p, want.Offset, err)
		}
		where := fmt.Sprintf("batch at offset %d", want.Offset)
		if want.Offset == 0 {
			where = "first batch"
		}
		snap := fmt.Sprintf("offsets %d..%d crc 0x%08x in the snapshot", want.BaseOffset, want.LastOffset, want.CRC)
		switch {
		case !ok:
			return fmt.Errorf("%w: %s: none here, %s", ErrForeignLog, where, snap)
		case got.BaseOffset != want.BaseOffset || got.LastOffset != want.LastOffset:
			return fmt.Errorf("%w: %s: offsets %d..%d crc 0x%08x here, %s", ErrForeignLog, where, got.BaseOffset, got.LastOffset, got.CRC, snap)
		case got.CRC != want.CRC:
			return fmt.Errorf("%w: %s (offsets %d..%d): crc 0x%08x here, 0x%08x in the snapshot", ErrForeignLog, where, got.BaseOffset, got.LastOffset, got.CRC, want.CRC)
		}
	}
	return nil
}
