package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/snapshot"
)

// This file is the hand-written part of the v1 snapshot payload ("replay/v1"), which this
// build reads but no longer writes (v2 is recover_image.go). Committed offsets are
// by far the largest part of a coordinator's state (millions of them, each a struct of eight
// fields with its group and topic repeated), and msgpack's reflective struct coding spends
// most of its time and bytes on field names and per-offset strings. offsetTable writes them
// grouped by group and topic, each name once, the fields positionally; decoding shares one
// string per group and topic. TestOffsetTableFields fails when OffsetAndMetadata changes, so
// that a new field cannot be dropped silently.

// offsetTable layouts: 1 is msgpack values per field (snapshots up to replay-v1.1.snap), 2
// packs rows into chunks of varints (chunkedOffsets), read without a msgpack call per field.
// Encoding writes 2; decoding reads both.
const (
	offsetTableRows    = 1
	offsetTableChunked = 2
	offsetTableLayout  = offsetTableChunked
)

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

// MarshalSnapshot writes [2, row count, [chunk...]]: each chunk a byte string of whole groups, see
// appendGroupRows.
func (t offsetTable) MarshalSnapshot(e *snapshot.Encoder) error {
	// Chunks of at most 16Ki rows (about half a MiB; a bigger group makes a bigger chunk):
	// bounded extra memory and few msgpack calls.
	var chunks [][2]int // [from, to) row ranges, whole groups
	for i, start := 0, 0; i < len(t); {
		j := i + 1
		for j < len(t) && t[j].GroupID == t[i].GroupID {
			j++
		}
		if j-start >= 16384 || j == len(t) {
			chunks = append(chunks, [2]int{start, j})
			start = j
		}
		i = j
	}
	// The row count first, so that decoding allocates the table once.
	if err := first(e.ArrayLen(3), e.Int(offsetTableLayout), e.Int(int64(len(t))), e.ArrayLen(len(chunks))); err != nil {
		return err
	}
	var buf []byte
	for _, c := range chunks {
		buf = buf[:0]
		for i := c[0]; i < c[1]; {
			j := i + 1
			for j < c[1] && t[j].GroupID == t[i].GroupID {
				j++
			}
			buf = appendGroupRows(buf, t[i:j])
			i = j
		}
		if err := e.Bytes(buf); err != nil {
			return err
		}
	}
	return nil
}

// appendGroupRows appends one group's offsets: uvarint len + group, uvarint topic count, and
// per topic uvarint len + topic, uvarint row count, rows. A row is zigzag varints of
// partition, committed offset and leader epoch, uvarint len + metadata, varints of commit and
// expire timestamps, a byte 0 (zero topic id) or 1 followed by the 16 id bytes, and a varint
// record offset.
func appendGroupRows(b []byte, rows []groupstate.CommittedOffset) []byte {
	b = appendStr(b, rows[0].GroupID)
	topics := 0
	for i := range rows {
		if i == 0 || rows[i].Topic != rows[i-1].Topic {
			topics++
		}
	}
	b = binary.AppendUvarint(b, uint64(topics))
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j].Topic == rows[i].Topic {
			j++
		}
		b = appendStr(b, rows[i].Topic)
		b = binary.AppendUvarint(b, uint64(j-i))
		for k := i; k < j; k++ {
			o := &rows[k]
			b = binary.AppendVarint(b, int64(o.Partition))
			b = binary.AppendVarint(b, o.CommittedOffset)
			b = binary.AppendVarint(b, int64(o.LeaderEpoch))
			b = appendStr(b, o.Metadata)
			b = binary.AppendVarint(b, o.CommitTimestamp)
			b = binary.AppendVarint(b, o.ExpireTimestamp)
			if o.TopicID.IsZero() {
				b = append(b, 0)
			} else {
				b = append(append(b, 1), o.TopicID[:]...)
			}
			b = binary.AppendVarint(b, o.RecordOffset)
		}
		i = j
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// chunkReader parses a chunk; the first error sticks.
type chunkReader struct {
	b   []byte
	err error
}

func (r *chunkReader) fail() {
	if r.err == nil {
		r.err = errors.New("offset chunk: truncated or malformed")
	}
	r.b = nil
}

func (r *chunkReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *chunkReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *chunkReader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *chunkReader) str() string {
	n := r.uvarint()
	if n == 0 {
		return ""
	}
	return string(r.bytes(n))
}

// decodeChunked reads layout 2 (after the layout number).
func decodeChunked(d *snapshot.Decoder) (offsetTable, error) {
	total, err := d.Int()
	if err != nil || total < 0 {
		return nil, fmt.Errorf("offset table: %d rows (%v)", total, err)
	}
	chunks, err := d.ArrayLen()
	if err != nil || chunks < 0 {
		return nil, fmt.Errorf("offset table: %d chunks (%v)", chunks, err)
	}
	// One allocation for the table; a row takes at least 10 bytes, which bounds a damaged
	// count.
	out := make([]groupstate.CommittedOffset, 0, d.Prealloc(int(min(total, math.MaxInt32)), 10))
	var buf []byte
	for c := 0; c < chunks; c++ {
		if buf, err = d.BytesBuf(buf); err != nil {
			return nil, fmt.Errorf("offset table: chunk %d: %w", c, err)
		}
		if out, err = parseRows(buf, out); err != nil {
			return nil, fmt.Errorf("offset table: chunk %d: %w", c, err)
		}
	}
	return out, nil
}

// parseRows appends the offsets of a chunk written by appendGroupRows to out.
func parseRows(b []byte, out []groupstate.CommittedOffset) ([]groupstate.CommittedOffset, error) {
	r := chunkReader{b: b}
	for len(r.b) > 0 && r.err == nil {
		g := r.str()
		for topics := r.uvarint(); topics > 0 && r.err == nil; topics-- {
			topic := r.str()
			n := r.uvarint()
			if n > uint64(len(r.b)) { // every row takes bytes: a larger count is damage
				r.fail()
				break
			}
			out = grow(out, int(n))
			for ; n > 0 && r.err == nil; n-- {
				o := groupstate.CommittedOffset{GroupID: g, Topic: topic}
				o.Partition = int32(r.varint())
				o.CommittedOffset = r.varint()
				o.LeaderEpoch = int32(r.varint())
				o.Metadata = r.str()
				o.CommitTimestamp = r.varint()
				o.ExpireTimestamp = r.varint()
				switch flag := r.bytes(1); {
				case len(flag) == 1 && flag[0] == 1:
					copy(o.TopicID[:], r.bytes(16))
				case len(flag) == 1 && flag[0] != 0:
					r.fail()
				}
				o.RecordOffset = r.varint()
				out = append(out, o)
			}
		}
	}
	return out, r.err
}

// pendingTable carries the pending transactional offsets of a dump: per producer its id and
// its offsets as one chunk of appendGroupRows (they are sorted by group, topic, partition).
// A log whose transactions stay open long holds many of them.
type pendingTable []groupstate.PendingTransaction

const pendingTableLayout = 1

var (
	_ snapshot.Marshaler   = pendingTable(nil)
	_ snapshot.Unmarshaler = (*pendingTable)(nil)
)

// MarshalSnapshot writes [layout, [producer id, chunk]...].
func (t pendingTable) MarshalSnapshot(e *snapshot.Encoder) error {
	if err := first(e.ArrayLen(2), e.Int(pendingTableLayout), e.ArrayLen(2*len(t))); err != nil {
		return err
	}
	var buf []byte
	for _, p := range t {
		buf = buf[:0]
		for i := 0; i < len(p.Offsets); {
			j := i + 1
			for j < len(p.Offsets) && p.Offsets[j].GroupID == p.Offsets[i].GroupID {
				j++
			}
			buf = appendGroupRows(buf, p.Offsets[i:j])
			i = j
		}
		if err := first(e.Int(p.ProducerID), e.Bytes(buf)); err != nil {
			return err
		}
	}
	return nil
}

// UnmarshalSnapshot reads what MarshalSnapshot writes.
func (t *pendingTable) UnmarshalSnapshot(d *snapshot.Decoder) error {
	if n, err := d.ArrayLen(); err != nil || n != 2 {
		return fmt.Errorf("pending table: header of %d elements (%v)", n, err)
	}
	if v, err := d.Int(); err != nil || v != pendingTableLayout {
		return fmt.Errorf("pending table: layout %d (%v), want %d", v, err, pendingTableLayout)
	}
	n, err := d.ArrayLen()
	if err != nil || n < 0 || n%2 != 0 {
		return fmt.Errorf("pending table: %d values (%v)", n, err)
	}
	out := make(pendingTable, 0, d.Prealloc(n/2, 2))
	var buf []byte
	for i := 0; i < n/2; i++ {
		out = append(out, groupstate.PendingTransaction{})
		if out[i].ProducerID, err = d.Int(); err != nil {
			return fmt.Errorf("pending table: producer %d: %w", i, err)
		}
		if buf, err = d.BytesBuf(buf); err != nil {
			return fmt.Errorf("pending table: producer %d: %w", out[i].ProducerID, err)
		}
		if out[i].Offsets, err = parseRows(buf, nil); err != nil {
			return fmt.Errorf("pending table: producer %d: %w", out[i].ProducerID, err)
		}
		if len(out[i].Offsets) == 0 {
			out[i].Offsets = nil // Dump's canonical empty list (a producer whose offsets were all cancelled)
		}
	}
	*t = out
	return nil
}

// encodeRows writes layout 1 (kept for tests of the layout-1 decoder).
func (t offsetTable) encodeRows(e *snapshot.Encoder) error {
	groups := 0
	for i := range t {
		if i == 0 || t[i].GroupID != t[i-1].GroupID {
			groups++
		}
	}
	if err := first(e.ArrayLen(2), e.Int(offsetTableRows), e.ArrayLen(groups)); err != nil {
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
	hdr, err := d.ArrayLen()
	if err != nil || (hdr != 2 && hdr != 3) {
		return fmt.Errorf("offset table: header of %d elements (%v)", hdr, err)
	}
	v, err := d.Int()
	switch {
	case err != nil:
		return fmt.Errorf("offset table: layout: %w", err)
	case v == offsetTableChunked:
		out, err := decodeChunked(d)
		*t = out
		return err
	case v != offsetTableRows:
		return fmt.Errorf("offset table: layout %d, this build reads %d and %d", v, offsetTableRows, offsetTableChunked)
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
	out := make([]groupstate.CommittedOffset, len(s), max(2*cap(s), len(s)+n))
	copy(out, s)
	return out
}

// consumerTable carries the members and target assignments of every consumer group of a
// dump, in the dump's group order, positionally: with a million members their reflective
// coding (every field name of every member) dominated snapshot time. The rest of each group
// stays in the dump. TestConsumerTableFields pins the fields.
type consumerTable []consumerGroupBody

type consumerGroupBody struct {
	Members []groupstate.ConsumerMember
	Target  []groupstate.MemberTargetAssignment
}

const consumerTableLayout = 1

var (
	_ snapshot.Marshaler   = consumerTable(nil)
	_ snapshot.Unmarshaler = (*consumerTable)(nil)
)

// joinConsumers puts them back.
func joinConsumers(d *groupstate.Dump, t consumerTable) error {
	k := 0
	for i := range d.Groups {
		if c := d.Groups[i].Consumer; c != nil {
			if k >= len(t) {
				return fmt.Errorf("consumer table holds %d groups, the dump more", len(t))
			}
			c.Members, c.TargetAssignment = t[k].Members, t[k].Target
			k++
		}
	}
	if k != len(t) {
		return fmt.Errorf("consumer table holds %d groups, the dump %d", len(t), k)
	}
	return nil
}

// MarshalSnapshot writes [layout, [members, targets]...] with each member positional.
func (t consumerTable) MarshalSnapshot(e *snapshot.Encoder) error {
	if err := first(e.ArrayLen(2), e.Int(consumerTableLayout), e.ArrayLen(len(t))); err != nil {
		return err
	}
	for _, g := range t {
		if err := e.ArrayLen(len(g.Members)); err != nil {
			return err
		}
		for i := range g.Members {
			m := &g.Members[i]
			// StateName is derived (Restore recomputes it) and not stored.
			if err := first(e.String(m.MemberID), e.Int(int64(m.MemberEpoch)), e.Int(int64(m.PreviousMemberEpoch)), e.Int(int64(m.State)),
				e.StringPtr(m.InstanceID), e.StringPtr(m.RackID), e.Int(int64(m.RebalanceTimeoutMs)), e.String(m.ClientID), e.String(m.ClientHost),
				e.Strings(m.SubscribedTopicNames), e.StringPtr(m.SubscribedTopicRegex), e.StringPtr(m.ServerAssignor), e.Value(m.ClassicMemberMetadata),
				encodeTPEs(e, m.AssignedPartitions), encodeTPEs(e, m.PartitionsPendingRevocation)); err != nil {
				return err
			}
		}
		if err := e.ArrayLen(len(g.Target)); err != nil {
			return err
		}
		for _, ta := range g.Target {
			if err := first(e.String(ta.MemberID), encodeTPs(e, ta.Partitions)); err != nil {
				return err
			}
		}
	}
	return nil
}

func encodeTPEs(e *snapshot.Encoder, s []groupstate.TopicPartitionsWithEpochs) error {
	if s == nil {
		return e.Nil()
	}
	if err := e.ArrayLen(len(s)); err != nil {
		return err
	}
	for i := range s {
		if err := first(e.Bytes(s[i].TopicID[:]), e.Int32s(s[i].Partitions), e.Int32s(s[i].AssignmentEpochs)); err != nil {
			return err
		}
	}
	return nil
}

func encodeTPs(e *snapshot.Encoder, s []groupstate.TopicPartitions) error {
	if s == nil {
		return e.Nil()
	}
	if err := e.ArrayLen(len(s)); err != nil {
		return err
	}
	for i := range s {
		if err := first(e.Bytes(s[i].TopicID[:]), e.Int32s(s[i].Partitions)); err != nil {
			return err
		}
	}
	return nil
}

// UnmarshalSnapshot reads what MarshalSnapshot writes.
func (t *consumerTable) UnmarshalSnapshot(d *snapshot.Decoder) error {
	if n, err := d.ArrayLen(); err != nil || n != 2 {
		return fmt.Errorf("consumer table: header of %d elements (%v)", n, err)
	}
	if v, err := d.Int(); err != nil || v != consumerTableLayout {
		return fmt.Errorf("consumer table: layout %d (%v), want %d", v, err, consumerTableLayout)
	}
	groups, err := d.ArrayLen()
	if err != nil || groups < 0 {
		return fmt.Errorf("consumer table: %d groups (%v)", groups, err)
	}
	out := make(consumerTable, 0, d.Prealloc(groups, 2))
	for gi := 0; gi < groups; gi++ {
		out = append(out, consumerGroupBody{})
		g := &out[gi]
		n, err := d.ArrayLen()
		if err != nil || n < 0 {
			return fmt.Errorf("consumer table: group %d: %d members (%v)", gi, n, err)
		}
		if n > 0 {
			g.Members = make([]groupstate.ConsumerMember, 0, d.Prealloc(n, 2))
		}
		for i := 0; i < n; i++ {
			g.Members = append(g.Members, groupstate.ConsumerMember{})
			m := &g.Members[i]
			var epoch, prev, state, rto int64
			if err := first(readString(d, &m.MemberID), readInt(d, &epoch), readInt(d, &prev), readInt(d, &state),
				readStringPtr(d, &m.InstanceID), readStringPtr(d, &m.RackID), readInt(d, &rto), readString(d, &m.ClientID), readString(d, &m.ClientHost),
				readStrings(d, &m.SubscribedTopicNames), readStringPtr(d, &m.SubscribedTopicRegex), readStringPtr(d, &m.ServerAssignor), d.Value(&m.ClassicMemberMetadata),
				decodeTPEs(d, &m.AssignedPartitions), decodeTPEs(d, &m.PartitionsPendingRevocation)); err != nil {
				return fmt.Errorf("consumer table: group %d member %d: %w", gi, i, err)
			}
			m.MemberEpoch, m.PreviousMemberEpoch, m.State, m.RebalanceTimeoutMs = int32(epoch), int32(prev), int8(state), int32(rto)
		}
		n, err = d.ArrayLen()
		if err != nil || n < 0 {
			return fmt.Errorf("consumer table: group %d: %d targets (%v)", gi, n, err)
		}
		if n > 0 {
			g.Target = make([]groupstate.MemberTargetAssignment, 0, d.Prealloc(n, 2))
		}
		for i := 0; i < n; i++ {
			g.Target = append(g.Target, groupstate.MemberTargetAssignment{})
			if err := first(readString(d, &g.Target[i].MemberID), decodeTPs(d, &g.Target[i].Partitions)); err != nil {
				return fmt.Errorf("consumer table: group %d target %d: %w", gi, i, err)
			}
		}
	}
	*t = out
	return nil
}

func readStringPtr(d *snapshot.Decoder, s **string) (err error) { *s, err = d.StringPtr(); return }

func readStrings(d *snapshot.Decoder, s *[]string) (err error) { *s, err = d.Strings(); return }

// arrayOrNil reads an array header; ok is false for a nil (a nil slice).
func arrayOrNil(d *snapshot.Decoder) (n int, err error) {
	n, err = d.ArrayLen()
	if err == nil && n < -1 {
		err = fmt.Errorf("bad array length %d", n)
	}
	return n, err
}

func decodeTPEs(d *snapshot.Decoder, out *[]groupstate.TopicPartitionsWithEpochs) error {
	n, err := arrayOrNil(d)
	if err != nil || n < 0 {
		return err // n == -1: nil
	}
	s := make([]groupstate.TopicPartitionsWithEpochs, 0, d.Prealloc(n, 2))
	for i := 0; i < n; i++ {
		s = append(s, groupstate.TopicPartitionsWithEpochs{})
		if err := first(d.BytesInto(s[i].TopicID[:]), readInt32s(d, &s[i].Partitions), readInt32s(d, &s[i].AssignmentEpochs)); err != nil {
			return err
		}
	}
	*out = s
	return nil
}

func decodeTPs(d *snapshot.Decoder, out *[]groupstate.TopicPartitions) error {
	n, err := arrayOrNil(d)
	if err != nil || n < 0 {
		return err
	}
	s := make([]groupstate.TopicPartitions, 0, d.Prealloc(n, 2))
	for i := 0; i < n; i++ {
		s = append(s, groupstate.TopicPartitions{})
		if err := first(d.BytesInto(s[i].TopicID[:]), readInt32s(d, &s[i].Partitions)); err != nil {
			return err
		}
	}
	*out = s
	return nil
}

func readInt32s(d *snapshot.Decoder, s *[]int32) (err error) { *s, err = d.Int32s(); return }
