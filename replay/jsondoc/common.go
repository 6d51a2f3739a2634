package jsondoc

import (
	"fmt"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

// SchemaVersion is the version of every document (its "schemaVersion" field): it changes
// when a field changes meaning or goes away, not when one is added.
const SchemaVersion = 1

// Point renders the point of a request for a document: a bare offset as atOffset, a time as
// atTime (both nil: the end of the log, or an offset per partition).
func Point(at query.Point) (atOffset *int64, atTime *string) {
	if o, ok := at.Offset(); ok {
		return &o, nil
	}
	if at.IsTime() {
		s := at.String()
		return nil, &s
	}
	return nil, nil
}

// Partition is what a document says of each partition read: where it ends and, at a point,
// where the point fell.
type Partition struct {
	Partition  int32           `json:"partition"`
	NextOffset int64           `json:"nextOffset"`
	Position   *query.Position `json:"position,omitempty"` // absent at the end of the log
}

// PartitionOf describes partition p of an engine at pos.
func PartitionOf(e *replay.Engine, pos *query.Position) Partition {
	d := Partition{Partition: e.Partition(), NextOffset: e.NextOffset()}
	if pos != nil && !pos.AtEnd() {
		d.Position = pos
	}
	return d
}

// Partitions describes every partition of r.
func Partitions(r *session.Replayed) []Partition {
	out := make([]Partition, 0, len(r.Partitions))
	for _, p := range r.Partitions {
		out = append(out, PartitionOf(p.Engine, p.Position))
	}
	return out
}

// topicID renders a topic id: nil for the all-zero id (none).
func topicID(id groupstate.Uuid) *string {
	if id.IsZero() {
		return nil
	}
	s := id.String()
	return &s
}

// TopicNames resolve topic ids to names (by the id's string), as far as the log names them.
type TopicNames map[string]string

// name returns the topic's name, nil when the log does not name it.
func (n TopicNames) name(id groupstate.Uuid) *string {
	if s, ok := n[id.String()]; ok && !id.IsZero() {
		return &s
	}
	return nil
}

// Offset is a committed or pending offset.
type Offset struct {
	GroupID         string  `json:"groupId"`
	Topic           string  `json:"topic"`
	Partition       int32   `json:"partition"`
	CommittedOffset int64   `json:"committedOffset"`
	LeaderEpoch     int32   `json:"leaderEpoch"` // -1: none
	Metadata        string  `json:"metadata"`
	CommitTimestamp int64   `json:"commitTimestamp"`
	ExpireTimestamp int64   `json:"expireTimestamp"` // -1: none
	TopicID         *string `json:"topicId"`
	RecordOffset    int64   `json:"recordOffset"`
	// Mark is what the commit that wrote it is marked with (offsets only; absent: nothing).
	Mark *OffsetMark `json:"mark,omitempty"`
}

// OffsetMark is explain.OffsetMark in a document.
type OffsetMark struct {
	Marks    []string `json:"marks"`
	Previous *int64   `json:"previous"`
	Delta    *int64   `json:"delta"`
}

// MarkOf renders a mark (nil: none).
func MarkOf(m *explain.OffsetMark) *OffsetMark {
	if m == nil {
		return nil
	}
	d := &OffsetMark{Previous: m.Previous, Delta: m.Delta}
	for _, k := range m.Marks {
		d.Marks = append(d.Marks, string(k))
	}
	return d
}

// OffsetOf renders a committed offset.
func OffsetOf(o groupstate.CommittedOffset) Offset {
	return Offset{GroupID: o.GroupID, Topic: o.Topic, Partition: o.Partition, CommittedOffset: o.CommittedOffset,
		LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, CommitTimestamp: o.CommitTimestamp, ExpireTimestamp: o.ExpireTimestamp,
		TopicID: topicID(o.TopicID), RecordOffset: o.RecordOffset}
}

// OffsetsOf renders committed offsets ([] for none).
func OffsetsOf(offs []groupstate.CommittedOffset) []Offset {
	out := make([]Offset, len(offs))
	for i, o := range offs {
		out[i] = OffsetOf(o)
	}
	return out
}

// PendingTransaction is an open transaction's offsets, not committed until its marker.
type PendingTransaction struct {
	ProducerID int64    `json:"producerId"`
	Offsets    []Offset `json:"offsets"`
}

// PendingOf renders open transactions ([] for none).
func PendingOf(pts []groupstate.PendingTransaction) []PendingTransaction {
	out := make([]PendingTransaction, len(pts))
	for i, pt := range pts {
		out[i] = PendingTransaction{ProducerID: pt.ProducerID, Offsets: OffsetsOf(pt.Offsets)}
	}
	return out
}

// Violation is a replay violation forensic mode recorded, or a count of them.
type Violation struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Error     string `json:"error"`
}

// Violations renders an engine's violations: every one when the engine kept them all
// (replay.Options.AllViolations), else one per file, record type and tombstone: the violation
// itself when it is alone, or how many, their offsets and the first one.
func Violations(e *replay.Engine) []Violation {
	var out []Violation
	if e.Options().AllViolations {
		for _, v := range e.Violations() {
			out = append(out, Violation{Partition: v.Partition, Offset: v.Offset, Error: v.Error()})
		}
		return out
	}
	for _, g := range e.ViolationGroups() {
		line := Violation{Partition: g.First.Partition, Offset: g.First.Offset, Error: g.First.Error()}
		if g.Count > 1 {
			what := "records"
			if g.Type >= 0 {
				what = fmt.Sprintf("records of type %d (%s)", int16(g.Type), g.Type)
				if g.Tombstone {
					what = fmt.Sprintf("tombstones of type %d (%s)", int16(g.Type), g.Type)
				}
			}
			file := g.File
			if file == "" {
				file = fmt.Sprintf("partition %d", g.First.Partition)
			}
			line.Error = fmt.Sprintf("%d violations in %s on %s, offsets %d to %d (--verbose lists each); the first: %s",
				g.Count, file, what, g.First.Offset, g.Last.Offset, g.First.Error())
		}
		out = append(out, line)
	}
	return out
}
