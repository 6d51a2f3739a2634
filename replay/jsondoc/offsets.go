package jsondoc

import (
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay/explain"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

// Offsets is replay offsets' document (docs/json/offsets.schema.json): the committed offsets
// of every partition, each with the record that wrote it, and the offsets of transactions
// still open. Its offsets are streamed (Seq), one group's at a time.
type Offsets struct {
	SchemaVersion int                `json:"schemaVersion"`
	KafkaVersion  string             `json:"kafkaVersion"`
	AtOffset      *int64             `json:"atOffset"`
	AtTime        *string            `json:"atTime,omitempty"`
	Partitions    []OffsetsPartition `json:"partitions"`
}

// OffsetsPartition is one partition of an Offsets document.
type OffsetsPartition struct {
	Partition  int32           `json:"partition"`
	NextOffset int64           `json:"nextOffset"`
	Position   *query.Position `json:"position,omitempty"`
	// Offsets are by group, topic and partition.
	Offsets             Seq[OffsetRow]       `json:"offsets"`
	PendingTransactions []PendingTransaction `json:"pendingTransactions"`
}

// OffsetRow is a committed offset of an offsets listing; read live at the end of the log, with
// its partition's log end offset and the lag (LogEnd).
type OffsetRow struct {
	Offset
	*LogEnd
}

// LogEnd is an offset's partition's log end offset now, and the lag.
type LogEnd struct {
	// End is nil when the topic or partition is not on the cluster (Missing says why).
	End *int64 `json:"logEndOffset"`
	// Lag is End - committedOffset, never below 0 (nil without End).
	Lag     *int64 `json:"lag"`
	Missing string `json:"missing,omitempty"`
}

// OffsetsOptions are what an offsets listing adds to the offsets: each one's mark, or its lag.
type OffsetsOptions struct {
	// Mark returns what the commit that wrote o in partition p is marked with (nil: nothing).
	Mark func(p int32, o groupstate.CommittedOffset) *explain.OffsetMark
	// Ends, when set, are the logs' end offsets: every row has its lag (and no mark).
	Ends query.LogEnds
}

// NewOffsets is the offsets document of r's selected offsets.
func NewOffsets(r *session.Replayed, sel query.OffsetSelection, opts OffsetsOptions) *Offsets {
	doc := &Offsets{SchemaVersion: SchemaVersion, KafkaVersion: r.Options.Version.String(), Partitions: []OffsetsPartition{}}
	doc.AtOffset, doc.AtTime = Point(r.At)
	for _, p := range r.Partitions {
		st, part := p.Engine.State(), p.Engine.Partition()
		op := OffsetsPartition{Partition: part, NextOffset: p.Engine.NextOffset(), PendingTransactions: PendingOf(sel.Pending(st))}
		if p.Position != nil && !p.Position.AtEnd() {
			op.Position = p.Position
		}
		op.Offsets = func(yield func(OffsetRow) bool) {
			for _, g := range sel.Groups(st) {
				for _, row := range offsetRows(part, sel.Offsets(st, g), opts) {
					if !yield(row) {
						return
					}
				}
			}
		}
		doc.Partitions = append(doc.Partitions, op)
	}
	return doc
}

// offsetRows renders one group's offsets of partition part.
func offsetRows(part int32, offs []groupstate.CommittedOffset, opts OffsetsOptions) []OffsetRow {
	rows := make([]OffsetRow, 0, len(offs))
	if opts.Ends != nil {
		for _, l := range query.Lag(offs, opts.Ends) {
			rows = append(rows, OffsetRow{Offset: OffsetOf(l.CommittedOffset), LogEnd: &LogEnd{End: l.LogEnd, Lag: l.Lag, Missing: l.Missing}})
		}
		return rows
	}
	for _, o := range offs {
		row := OffsetRow{Offset: OffsetOf(o)}
		if opts.Mark != nil {
			row.Mark = MarkOf(opts.Mark(part, o))
		}
		rows = append(rows, row)
	}
	return rows
}
