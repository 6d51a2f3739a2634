package dumplog

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/recordcodec"
)

// Filter selects what Dump prints of a partition: the records in an offset range, and of
// those, with a group or types, only the matching records, each under its batch's header.
type Filter struct {
	From, To int64 // record offsets, both included
	// Group keeps the records keyed by this group id, and the transaction markers of the
	// producers that wrote one of them.
	Group string
	// Types keeps records of these types (nil: every type); Control keeps control batches
	// (transaction markers) too.
	Types   map[recordcodec.RecordType]bool
	Control bool
}

// selects reports whether the filter drops records within the offset range.
func (f *Filter) selects() bool { return f.Group != "" || f.Types != nil }

// ParseTypes reads record types as users name them: ids (1), names (OffsetCommit, any case)
// or "control" for control batches, into f.
func (f *Filter) ParseTypes(specs []string) error {
	if len(specs) == 0 {
		return nil
	}
	f.Types = map[recordcodec.RecordType]bool{}
	for _, s := range specs {
		s = strings.TrimSpace(s)
		if strings.EqualFold(s, "control") {
			f.Control = true
			continue
		}
		if n, err := strconv.ParseInt(s, 10, 16); err == nil {
			f.Types[recordcodec.RecordType(n)] = true
			continue
		}
		found := false
		for t := recordcodec.RecordType(0); t <= 23; t++ {
			if strings.EqualFold(t.String(), s) {
				f.Types[t], found = true, true
			}
		}
		if !found {
			return fmt.Errorf("--type %q is not a record type id, name or 'control'", s)
		}
	}
	return nil
}

// GroupsSeen is what a dump with a Group met: whether the group had a record, and (up to
// 100,000) the group ids the records named otherwise, for the close matches of a name that
// matched nothing.
type GroupsSeen struct {
	Matched bool
	Others  map[string]bool
}

func (g *GroupsSeen) see(e *Entry, group string) {
	k := e.Decoded.Key.Group
	switch {
	case k == group:
		g.Matched = true
	case k != "" && len(g.Others) < 100000 && !g.Others[k]:
		if g.Others == nil {
			g.Others = map[string]bool{}
		}
		g.Others[strings.Clone(k)] = true
	}
}

// Dump prints partition p of src as f selects it, a chunk of records at a time (a batch may
// hold millions of them), decoding with dec; seen, when set, learns the groups the records
// name. A damaged batch stops it with the reader's *eventlog.Problem (a forensic source skips
// it instead).
func Dump(ctx context.Context, src eventlog.Source, p int32, f Filter, dec recordcodec.Decoder, print Printer, seen *GroupsSeen) error {
	it, err := src.Batches(p, f.From)
	if err != nil {
		return err
	}
	defer it.Close()
	var entries, kept []Entry
	// producers whose records were kept: their transaction markers are kept too.
	producers := map[int64]bool{}
	for it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := it.Batch()
		if b.BaseOffset > f.To {
			break
		}
		printed := false
		for i := 0; i < len(b.Records) || i == 0; i += ChunkRecords {
			entries = DecodeRecords(dec, b, b.Records[i:min(i+ChunkRecords, len(b.Records))], entries)
			kept = kept[:0]
			for _, e := range entries {
				if e.Record.Offset < f.From || e.Record.Offset > f.To {
					continue
				}
				if seen != nil && e.Err == nil && !b.Attributes.Control() {
					seen.see(&e, f.Group)
				}
				if f.selects() && !f.keep(b, &e, producers) {
					continue
				}
				kept = append(kept, e)
			}
			if f.selects() && len(kept) == 0 {
				continue
			}
			if !printed {
				if err := print.BatchHeader(b); err != nil {
					return err
				}
				printed = true
			}
			if err := print.Records(b, kept); err != nil {
				return err
			}
		}
	}
	return it.Err()
}

func (f *Filter) keep(b *eventlog.Batch, e *Entry, producers map[int64]bool) bool {
	if b.Attributes.Control() {
		if f.Types != nil && !f.Control {
			return false
		}
		if f.Group != "" && !producers[b.ProducerID] {
			return false
		}
		return true
	}
	k := e.Decoded.Key
	if f.Group != "" && (e.Err != nil && k.Group == "" || k.Group != f.Group) {
		return false
	}
	if f.Types != nil && !f.Types[k.Type] {
		return false
	}
	if b.ProducerID >= 0 {
		producers[b.ProducerID] = true
	}
	return true
}
