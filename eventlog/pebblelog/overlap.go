package pebblelog

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/coordlog/coordlog/eventlog"
)

// CheckOverlap compares, for each of the partitions, the batches of src below the log's next
// offset (those an import skips because the log holds them already) with the log, and returns
// an error wrapping ErrOtherLog at the first offset whose records differ. The counts it
// returns (Checked, CheckedBytes, Rewritten, BeforeStart) are also passed to progress, when
// set, every 1024 batches. Import runs it before writing anything; a caller that wants a
// refused input to leave the database's directory untouched runs it in Options.BeforeWrite
// and tells Import (ImportOptions.OverlapChecked).
func CheckOverlap(ctx context.Context, src eventlog.Source, l *Log, parts []int32, progress func(ImportProgress)) (ImportProgress, error) {
	var total ImportProgress
	for _, p := range parts {
		total.Partition = p
		if err := checkOverlap(ctx, src, l, p, progress, &total); err != nil {
			return total, err
		}
	}
	return total, nil
}

// checkOverlap is CheckOverlap for partition p.
//
// A batch identical to the log's (same offsets and CRC, which covers its records) is the same
// batch. One whose CRC differs may still be the same log's: Kafka's log cleaner (or coordlog's
// compaction) rewrites batches, keeping their offsets and dropping records, so a dump taken
// later, or a compacted database, holds a subset of the records at the same offsets. Such a
// batch is compared record by record: every offset present on both sides must hold the same
// key, value and headers; an offset present on one side only was cleaned away. Anything
// else (a record that differs, a batch straddling the log's end) is another log.
func checkOverlap(ctx context.Context, src eventlog.Source, l *Log, p int32, progress func(ImportProgress), total *ImportProgress) error {
	next, err := l.NextOffset(p)
	if err != nil || next == 0 {
		return err
	}
	first, _, err := l.Offsets(p)
	if err != nil {
		return err
	}
	sit, err := src.Batches(p, 0)
	if err != nil {
		return err
	}
	defer sit.Close()
	it, err := l.Batches(p, 0)
	if err != nil {
		return err
	}
	defer it.Close()
	// The log's batches are read header first: their records are decoded only for the
	// batches whose CRC differs from the input's.
	dit := it.(*iter)
	var d *eventlog.Batch // the log's batch at or after the input's current offset
	decoded := false      // whether d's records are decoded
	// at positions d on the first batch of the log whose last offset is >= off.
	at := func(off int64) error {
		for d == nil || d.LastOffset < off {
			if !dit.nextHeader() {
				d = nil
				return dit.Err()
			}
			d, decoded = dit.Batch(), false
		}
		return nil
	}
	// records positions d like at, with its records decoded.
	records := func(off int64) error {
		if err := at(off); err != nil || d == nil || decoded {
			return err
		}
		decoded = true
		return dit.withRecords()
	}
	for sit.Next() {
		s := sit.Batch()
		if s.BaseOffset >= next {
			break // a gap at the log's end
		}
		if s.LastOffset >= next {
			return fmt.Errorf("partition %d: %w: its batch [%d..%d] at %s ends past the database's end (next offset %d) although it starts below it: nothing imported",
				p, ErrOtherLog, s.BaseOffset, s.LastOffset, s.Origin, next)
		}
		if s.LastOffset < first {
			total.BeforeStart++
			continue
		}
		if err := at(s.BaseOffset); err != nil {
			return err
		}
		if d == nil || d.BaseOffset != s.BaseOffset || d.LastOffset != s.LastOffset || d.CRC != s.CRC {
			if err := sameRecords(p, s, records, &d); err != nil {
				return err
			}
			total.Rewritten++
		}
		total.Checked++
		total.CheckedBytes += s.Origin.Size
		if total.Checked%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if progress != nil {
				progress(*total)
			}
		}
		if s.LastOffset == next-1 {
			// The log's last batch: stop without reading the next one, which the import
			// reads (a damaged batch there would be reported twice).
			break
		}
	}
	return sit.Err()
}

// sameRecords checks that every record of s that the log holds (at positions the log's
// iterator on the batch holding an offset, with its records decoded; d is that batch) is the
// same record there.
func sameRecords(p int32, s *eventlog.Batch, at func(int64) error, d **eventlog.Batch) error {
	for i := range s.Records {
		r := &s.Records[i]
		if err := at(r.Offset); err != nil {
			return err
		}
		if *d == nil {
			return nil // the log holds nothing from here on: cleaned away
		}
		db := *d
		j, found := slices.BinarySearchFunc(db.Records, r.Offset, func(x eventlog.Record, off int64) int {
			return int(x.Offset - off)
		})
		if !found {
			continue // cleaned away on one side
		}
		if dr := &db.Records[j]; !sameRecord(dr, r) {
			return fmt.Errorf("partition %d: %w: offset %d holds %s in the database (batch %d..%d, crc 0x%08x) and %s in the input (batch %d..%d, crc 0x%08x, at %s): nothing imported: import it into a new database",
				p, ErrOtherLog, r.Offset, describeRecord(dr), db.BaseOffset, db.LastOffset, db.CRC, describeRecord(r), s.BaseOffset, s.LastOffset, s.CRC, s.Origin)
		}
	}
	return nil
}

func sameRecord(a, b *eventlog.Record) bool {
	if !bytes.Equal(a.Key, b.Key) || !bytes.Equal(a.Value, b.Value) || (a.Key == nil) != (b.Key == nil) || (a.Value == nil) != (b.Value == nil) || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if !bytes.Equal(a.Headers[i].Key, b.Headers[i].Key) || !bytes.Equal(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}

// describeRecord is a record's key and value as short hex, for an error message.
func describeRecord(r *eventlog.Record) string {
	return fmt.Sprintf("key %s value %s", shortHex(r.Key), shortHex(r.Value))
}

func shortHex(b []byte) string {
	switch {
	case b == nil:
		return "null"
	case len(b) <= 12:
		return fmt.Sprintf("%x", b)
	}
	return fmt.Sprintf("%x… (%d bytes)", b[:12], len(b))
}
