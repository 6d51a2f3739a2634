package recordcodec

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
)

//go:generate go run ./internal/gen -in internal/gen/schema.txt -out zz_generated.go -groupstate ../groupstate/zz_recordtypes.go -values ../groupstate/zz_values.go -dispatch ../replay/zz_dispatch.go -fast zz_fastpath.go

// RecordType is the int16 prefix of a record key: which schema the key and value use. It is
// not a version. The ids, their names and key shapes, the layouts that decode them and the
// Kafka releases that know them are declared once, in internal/gen/schema.txt (`record` lines),
// and generated into zz_generated.go. Ids 9 and 18 are retired: they decode only under an
// explicit Layout.
type RecordType int16

// String returns the schema name without the Key/Value suffix, e.g. "OffsetCommit".
func (t RecordType) String() string {
	if t >= 0 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Unknown(%d)", int16(t))
}

// Known reports whether t is a live record type of Kafka 4.1 to 4.4 (ids 0-8, 10-17, 19-23):
// one the default layout decodes.
func (t RecordType) Known() bool { return knownIn(t, LayoutCurrent) }

// Layout selects the schema of the ids whose value layout changed incompatibly between
// releases without a version bump. The zero value is the layout of Kafka 4.1 to 4.4, under
// which ids 9 and 18 are unknown, as they are to Kafka.
type Layout int8

const (
	// LayoutCurrent is Kafka 4.1 to 4.4.
	LayoutCurrent Layout = iota
	// Layout40 is Kafka 4.0: id 9 is ShareGroupPartitionMetadata (the shape of id 4), id 11
	// has no MetadataHash and id 15 has no InitializingTopics.
	Layout40
	// Layout39 is Kafka 3.9: id 9 holds {InitializedTopics, DeletingTopics} and id 11 has no
	// MetadataHash.
	Layout39
	// LayoutStreamsPreview is Apache trunk between February and June 2025, which wrote id 18
	// (StreamsGroupPartitionMetadata) before it was removed unreleased.
	LayoutStreamsPreview
)

func (l Layout) String() string {
	switch l {
	case LayoutCurrent:
		return "4.1+"
	case Layout40:
		return "4.0"
	case Layout39:
		return "3.9"
	case LayoutStreamsPreview:
		return "streams-preview"
	}
	return fmt.Sprintf("Layout(%d)", int8(l))
}

// ParseLayout reads the names String returns.
func ParseLayout(s string) (Layout, error) {
	for _, l := range []Layout{LayoutCurrent, Layout40, Layout39, LayoutStreamsPreview} {
		if l.String() == s {
			return l, nil
		}
	}
	return 0, fmt.Errorf("recordcodec: unknown layout %q (want 4.1+, 4.0, 3.9 or streams-preview)", s)
}

// ValueVersions returns the value versions Kafka reads for type t in layout l; ok is false
// when the type is unknown in that layout.
func ValueVersions(t RecordType, l Layout) (lo, hi int16, ok bool) {
	v := newValue(t, l)
	if v == nil {
		return 0, 0, false
	}
	lo, hi = v.versionRange()
	return lo, hi, true
}

// UUID is a Kafka Uuid: 16 bytes, most significant half first.
type UUID [16]byte

// String renders the UUID as Kafka does: unpadded base64url, 22 characters.
func (u UUID) String() string {
	return base64.RawURLEncoding.EncodeToString(u[:])
}

// ParseUUID reads the form String writes.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, fmt.Errorf("recordcodec: invalid uuid %q", s)
	}
	copy(u[:], b)
	return u, nil
}

// RawTag is a tagged field the schema does not know: its tag and its payload bytes.
type RawTag struct {
	Tag  uint32
	Data []byte
}

// Value is the decoded value of a record. Its concrete type is one of the generated *...Value
// types, or *RawValue for an unknown record type.
type Value interface {
	RecordType() RecordType
	ValueVersion() int16
	Layout() Layout
	versionRange() (lo, hi int16)
	decodeBody(r reader, version int16) reader
	appendBody(b []byte) ([]byte, error)
	writeJSONBody(w *jsonWriter)
}

// RawValue carries the value bytes of a record whose type is unknown, so that a caller can skip
// and count it and still re-emit it unchanged.
type RawValue struct {
	Type  RecordType
	Bytes []byte // the whole value, version prefix included
}

func (v *RawValue) RecordType() RecordType { return v.Type }

// ValueVersion returns the int16 prefix of the raw value, or -1 when it is shorter than that.
func (v *RawValue) ValueVersion() int16 {
	if len(v.Bytes) < 2 {
		return -1
	}
	return int16(binary.BigEndian.Uint16(v.Bytes))
}
func (v *RawValue) Layout() Layout                            { return LayoutCurrent }
func (v *RawValue) versionRange() (lo, hi int16)              { return 0, -1 }
func (v *RawValue) decodeBody(r reader, version int16) reader { return r }
func (v *RawValue) appendBody(b []byte) ([]byte, error) {
	if len(v.Bytes) < 2 {
		return b, nil
	}
	return append(b, v.Bytes[2:]...), nil
}
func (v *RawValue) writeJSONBody(w *jsonWriter) { w.bytes(v.Bytes) }

// Record is one decoded __consumer_offsets record. A nil Value is a tombstone (the Kafka
// record's value was null); an empty value is not a tombstone and does not decode.
type Record struct {
	Key   Key
	Value Value
}

// Tombstone reports whether the record deletes its key.
func (r Record) Tombstone() bool { return r.Value == nil }

// Decoder decodes keys and values. The zero Decoder copies its input once per buffer and uses
// the Kafka 4.1-4.4 layout.
type Decoder struct {
	// Layout selects the schemas of ids whose layout changed between releases.
	Layout Layout
	// NoCopy makes decoded strings and byte slices alias the input buffer, which must then stay
	// unchanged for as long as the decoded value is used. It saves an allocation per buffer.
	NoCopy bool
}

// DecodeKey decodes a record key with the default Decoder.
func DecodeKey(b []byte) (Key, error) { return Decoder{}.Key(b) }

// DecodeValue decodes a record value of type t with the default Decoder. A nil b is a
// tombstone and returns a nil Value and no error.
func DecodeValue(t RecordType, b []byte) (Value, error) { return Decoder{}.Value(t, b) }

// Decode decodes a key and its value with the default Decoder.
func Decode(key, value []byte) (Record, error) { return Decoder{}.Record(key, value) }

// Record decodes a key and its value. For an unknown record type it returns the record with
// the raw bytes kept (Key.Raw and a *RawValue) and an *UnknownTypeError. A *TrailingBytesError
// comes with a fully decoded record; every other error comes with a partial one.
func (d Decoder) Record(key, value []byte) (Record, error) {
	k, err := d.Key(key)
	if err != nil {
		if ue, ok := err.(*UnknownTypeError); ok {
			rec := Record{Key: k}
			if value != nil {
				rec.Value = &RawValue{Type: ue.Type, Bytes: d.keep(value)}
			}
			return rec, err
		}
		return Record{Key: k}, err
	}
	v, err := d.Value(k.Type, value)
	return Record{Key: k, Value: v}, err
}

func (d Decoder) keep(b []byte) []byte {
	if d.NoCopy || b == nil {
		return b
	}
	return append(make([]byte, 0, len(b)), b...)
}

// Value decodes a value of record type t: the int16 version, then the value at that version.
func (d Decoder) Value(t RecordType, b []byte) (Value, error) {
	if b == nil {
		return nil, nil
	}
	if len(b) < 2 {
		return nil, &DecodeError{Part: "value", Type: t, Version: -1, Field: "version", Pos: 0, Err: ErrTruncated}
	}
	version := int16(binary.BigEndian.Uint16(b))
	v := newValue(t, d.Layout)
	if v == nil {
		return &RawValue{Type: t, Bytes: d.keep(b)}, &UnknownTypeError{Type: t, Layout: d.Layout}
	}
	if lo, hi := v.versionRange(); version < lo || version > hi {
		return nil, &UnsupportedVersionError{Type: t, Version: version, Lo: lo, Hi: hi, Layout: d.Layout}
	}
	r := v.decodeBody(reader{b: b, off: 2, alias: d.NoCopy}, version)
	if r.err != nil {
		return v, &DecodeError{Part: "value", Type: t, Version: version, Field: r.field, Pos: r.at, Err: r.err}
	}
	if r.off != len(b) {
		return v, &TrailingBytesError{Part: "value", Type: t, Version: version, Pos: r.off, Count: len(b) - r.off}
	}
	return v, nil
}

// AppendValue appends the encoding of v (int16 version, then the value) to dst. A nil v is a
// tombstone and appends nothing; callers store a null value for it.
func AppendValue(dst []byte, v Value) ([]byte, error) {
	if v == nil {
		return dst, nil
	}
	if rv, ok := v.(*RawValue); ok {
		return append(dst, rv.Bytes...), nil
	}
	version := v.ValueVersion()
	if lo, hi := v.versionRange(); version < lo || version > hi {
		return dst, &UnsupportedVersionError{Type: v.RecordType(), Version: version, Lo: lo, Hi: hi, Layout: v.Layout()}
	}
	return v.appendBody(appendInt16(dst, version))
}

// EncodeValue returns the encoding of v, or nil for a tombstone.
func EncodeValue(v Value) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return AppendValue(nil, v)
}

// Encode returns the key and value bytes of r; the value is nil for a tombstone.
func Encode(r Record) (key, value []byte, err error) {
	key, err = r.Key.AppendTo(nil)
	if err != nil {
		return nil, nil, err
	}
	value, err = EncodeValue(r.Value)
	return key, value, err
}

// DecodeInto decodes b (version prefix included) into v, a value of the matching type (NewValue's, or
// one decoded before), without allocating the value. It reuses v's memory:
// its slices keep their capacity and its pointers their targets, so that decoding record after
// record into one value allocates nothing once the value has grown to the records' size.
// Everything v held before is overwritten, nested slices and pointees included: a caller that
// keeps any part of a decoded value copies it before the next DecodeInto. It is the replay
// hot path's way to decode.
func (d Decoder) DecodeInto(v Value, b []byte) error {
	switch x := v.(type) {
	case *OffsetCommitValue:
		if x.decodeFast(b, d.NoCopy) {
			return nil
		}
	case *StreamsGroupCurrentMemberAssignmentValue:
		if d.NoCopy && x.decodeFast(b) {
			return nil
		}
	case *StreamsGroupTargetAssignmentMemberValue:
		if d.NoCopy && x.decodeFast(b) {
			return nil
		}
	}
	return d.decodeGeneral(v, b)
}

// DecodeOffsetCommitInto is DecodeInto for an offset commit value (record 1), without the
// switch on the value's type: the replay engine's path for the records most of any log holds.
func (d Decoder) DecodeOffsetCommitInto(v *OffsetCommitValue, b []byte) error {
	if v.decodeFast(b, d.NoCopy) {
		return nil
	}
	return d.decodeGeneral(v, b)
}

// decodeGeneral is DecodeInto through the general reader (no fast path).
func (d Decoder) decodeGeneral(v Value, b []byte) error {
	t := v.RecordType()
	if len(b) < 2 {
		return &DecodeError{Part: "value", Type: t, Version: -1, Field: "version", Pos: 0, Err: ErrTruncated}
	}
	version := int16(binary.BigEndian.Uint16(b))
	if lo, hi := v.versionRange(); version < lo || version > hi {
		return &UnsupportedVersionError{Type: t, Version: version, Lo: lo, Hi: hi, Layout: v.Layout()}
	}
	r := v.decodeBody(reader{b: b, off: 2, alias: d.NoCopy}, version)
	if r.err != nil {
		return &DecodeError{Part: "value", Type: t, Version: version, Field: r.field, Pos: r.at, Err: r.err}
	}
	if r.off != len(b) {
		return &TrailingBytesError{Part: "value", Type: t, Version: version, Pos: r.off, Count: len(b) - r.off}
	}
	return nil
}

// MarshalText renders the UUID as String does.
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads the form String writes.
func (u *UUID) UnmarshalText(b []byte) error {
	v, err := ParseUUID(string(b))
	if err != nil {
		return err
	}
	*u = v
	return nil
}
