package explain

import (
	"fmt"
	"strings"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
)

// OffsetMark is what the explanation says of the commit that wrote a committed offset, when it
// is worth a mark: it moved the offset back, or it was written while the group was empty or by
// no member owning the partition.
type OffsetMark struct {
	// Marks are the commit's marks (rewind, while-empty, without-owner).
	Marks []Mark
	// Previous and Delta are the committed offset before the commit and the move (set for a
	// rewind).
	Previous, Delta *int64
}

// Label is the mark as a table cell: "rewind 134->54 (-80)", "while-empty", joined by commas.
func (m *OffsetMark) Label(offset int64) string {
	var parts []string
	for _, k := range m.Marks {
		if k == MarkRewind && m.Previous != nil && m.Delta != nil {
			parts = append(parts, fmt.Sprintf("rewind %d->%d (%d)", *m.Previous, offset, *m.Delta))
			continue
		}
		parts = append(parts, string(k))
	}
	return strings.Join(parts, ", ")
}

type offsetKey struct {
	group, topic string
	partition    int32
}

type offsetMarkAt struct {
	first, last int64 // the offsets of the commit event's records
	mark        OffsetMark
}

// OffsetMarks marks committed offsets by the commit that wrote them: give it to the engine as
// the observer of one __consumer_offsets partition, replay, Close it, then ask Of for each
// committed offset. It runs a marked-only analysis (Options.MarkedOnly), so it costs what
// check's explanation costs, and keeps one entry per topic-partition whose latest marked
// commit is kept; a later unmarked commit of the partition makes Of return nil (its record
// offset is not the marked commit's).
type OffsetMarks struct {
	an    *Analyzer
	marks map[offsetKey]offsetMarkAt
}

// NewOffsetMarks returns the offset marks of partition p; opts' Group (one group or all),
// thresholds and session timeout apply, its MarkedOnly and Emit are the marks' own.
func NewOffsetMarks(p int32, opts Options) *OffsetMarks {
	m := &OffsetMarks{marks: map[offsetKey]offsetMarkAt{}}
	opts.MarkedOnly = true
	opts.Emit = m.add
	m.an = NewAnalyzer(p, opts)
	return m
}

// Observe implements replay.Observer.
func (m *OffsetMarks) Observe(ev *replay.Event, st groupstate.View) { m.an.Observe(ev, st) }

// Close ends the analysis (events still waiting for a topic name go out).
func (m *OffsetMarks) Close() { m.an.Close() }

func (m *OffsetMarks) add(e *Event) {
	var changes []OffsetChange
	first := e.At.Offset
	switch {
	case e.Kind == KindOffsetsCommitted && e.Offsets != nil:
		changes = e.Offsets.Changes
	case e.Kind == KindTransactionEnd && e.Transaction != nil && e.Transaction.Result == "committed":
		// The committed offsets were written by the transaction's records, from its first
		// write for the group to the marker.
		changes, first = e.Transaction.Offsets, e.Transaction.Start.Offset
	default:
		return
	}
	var eventMarks []Mark
	for _, k := range e.Marks {
		if k == MarkWhileEmpty || k == MarkWithoutOwner { // a rewind is the change's own
			eventMarks = append(eventMarks, k)
		}
	}
	for _, c := range changes {
		mk := OffsetMark{Marks: append([]Mark(nil), eventMarks...)}
		if c.Rewind {
			mk.Marks = append([]Mark{MarkRewind}, mk.Marks...)
			mk.Previous, mk.Delta = c.Previous, c.Delta
		}
		if len(mk.Marks) == 0 {
			continue
		}
		m.marks[offsetKey{e.Group, c.Topic, c.Partition}] = offsetMarkAt{first: first, last: e.At.LastOffset, mark: mk}
	}
}

// Of returns the mark of the committed offset of group's topic-partition written by the
// record at recordOffset, nil when that commit has none.
func (m *OffsetMarks) Of(group, topic string, partition int32, recordOffset int64) *OffsetMark {
	at, ok := m.marks[offsetKey{group, topic, partition}]
	if !ok || recordOffset < at.first || recordOffset > at.last {
		return nil
	}
	return &at.mark
}
