package replay

import (
	"fmt"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/snapshot"
)

// This file is the hand-written part of the snapshot payload encoding. Committed offsets are
// by far the largest part of a coordinator's state (millions of them, each a struct of eight
// fields with its group and topic repeated), and msgpack's reflective struct coding spends
// most of its time and bytes on field names and per-offset strings. offsetTable writes them
// grouped by group and topic, each name once, the fields positionally; decoding shares one
// string per group and topic. TestOffsetTableFields fails when OffsetAndMetadata changes, so
// that a new field cannot be dropped silently.

// offsetTableLayout is the layout of an encoded offsetTable; decoding refuses others.
const offsetTableLayout = 1

// offsetFields is the number of positional values per offset row: partition, committed
// offset, leader epoch, metadata, commit timestamp, expire timestamp, topic id, record offset.
const offsetFields = 8

// offsetTable is the committed offsets of a dump, sorted by group, topic and partition (the
// order Dump returns them in).
type offsetTable []groupstate.CommittedOffset

var (
	_ snapshot.Marshaler   = offsetTable(nil)
	_ snapshot.Unmarshaler = (*offsetTable)(nil)
)

// MarshalSnapshot writes [layout, [[group, [[topic, [row values...]]...]]...]].
func (t offsetTable) MarshalSnapshot(e *snapshot.Encoder) error {
	groups := 0
	for i := range t {
		if i == 0 || t[i].GroupID != t[i-1].GroupID {
			groups++
		}
	}
	if err := first(e.ArrayLen(2), e.Int(offsetTableLayout), e.ArrayLen(groups)); err != nil {
		return err
	}
	for i := 0; i < len(t); {
		g := t[i].GroupID
		j, topics := i, 0
		for ; j < len(t) && t[j].GroupID == g; j++ {
			if j == i || t[j].Topic != t[j-1].Topic {
				topics++
			}
		}
		if err := first(e.ArrayLen(2), e.String(g), e.ArrayLen(topics)); err != nil {
			return err
		}
		for k := i; k < j; {
			m := k
			for m < j && t[m].Topic == t[k].Topic {
				m++
			}
			if err := encodeTopicRows(e, t[k:m]); err != nil {
				return err
			}
			k = m
		}
		i = j
	}
	return nil
}

func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func encodeTopicRows(e *snapshot.Encoder, rows []groupstate.CommittedOffset) error {
	if err := first(e.ArrayLen(2), e.String(rows[0].Topic), e.ArrayLen(len(rows)*offsetFields)); err != nil {
		return err
	}
	for i := range rows {
		o := &rows[i]
		if err := first(e.Int(int64(o.Partition)), e.Int(o.CommittedOffset), e.Int(int64(o.LeaderEpoch)), e.String(o.Metadata),
			e.Int(o.CommitTimestamp), e.Int(o.ExpireTimestamp), e.Bytes(o.TopicID[:]), e.Int(o.RecordOffset)); err != nil {
			return err
		}
	}
	return nil
}

// UnmarshalSnapshot reads what MarshalSnapshot writes.
func (t *offsetTable) UnmarshalSnapshot(d *snapshot.Decoder) error {
	if n, err := d.ArrayLen(); err != nil || n != 2 {
		return fmt.Errorf("offset table: header of %d elements (%v)", n, err)
	}
	if v, err := d.Int(); err != nil || v != offsetTableLayout {
		return fmt.Errorf("offset table: layout %d (%v), want %d", v, err, offsetTableLayout)
	}
	groups, err := d.ArrayLen()
	if err != nil {
		return fmt.Errorf("offset table: %w", err)
	}
	var out []groupstate.CommittedOffset
	for ; groups > 0; groups-- {
		if n, err := d.ArrayLen(); err != nil || n != 2 {
			return fmt.Errorf("offset table: group entry of %d elements (%v)", n, err)
		}
		g, err := d.String()
		if err != nil {
			return fmt.Errorf("offset table: group id: %w", err)
		}
		topics, err := d.ArrayLen()
		if err != nil {
			return fmt.Errorf("offset table: group %s: %w", g, err)
		}
		for ; topics > 0; topics-- {
			if out, err = decodeTopicRows(d, g, out); err != nil {
				return fmt.Errorf("offset table: group %s: %w", g, err)
			}
		}
	}
	*t = out
	return nil
}

func decodeTopicRows(d *snapshot.Decoder, g string, out []groupstate.CommittedOffset) ([]groupstate.CommittedOffset, error) {
	if n, err := d.ArrayLen(); err != nil || n != 2 {
		return out, fmt.Errorf("topic entry of %d elements (%v)", n, err)
	}
	topic, err := d.String()
	if err != nil {
		return out, err
	}
	n, err := d.ArrayLen()
	if err != nil || n < 0 || n%offsetFields != 0 {
		return out, fmt.Errorf("topic %s: %d row values (%v)", topic, n, err)
	}
	out = grow(out, n/offsetFields)
	for r := 0; r < n/offsetFields; r++ {
		o := groupstate.CommittedOffset{GroupID: g, Topic: topic}
		var p, le int64
		if err := first(readInt(d, &p), readInt(d, &o.CommittedOffset), readInt(d, &le), readString(d, &o.Metadata),
			readInt(d, &o.CommitTimestamp), readInt(d, &o.ExpireTimestamp), d.BytesInto(o.TopicID[:]), readInt(d, &o.RecordOffset)); err != nil {
			return out, fmt.Errorf("topic %s row %d: %w", topic, r, err)
		}
		o.Partition, o.LeaderEpoch = int32(p), int32(le)
		out = append(out, o)
	}
	return out, nil
}

func readInt(d *snapshot.Decoder, v *int64) (err error) { *v, err = d.Int(); return }

func readString(d *snapshot.Decoder, s *string) (err error) { *s, err = d.String(); return }

// grow makes room for n more offsets, doubling so that appending topic after topic stays
// linear.
func grow(s []groupstate.CommittedOffset, n int) []groupstate.CommittedOffset {
	if cap(s)-len(s) >= n {
		return s
	}
	out := make([]groupstate.CommittedOffset, len(s), max(2*cap(s), len(s)+n, 1024))
	copy(out, s)
	return out
}
