package recordcodec

import (
	"encoding/binary"
	"unsafe"
)

// Key is a decoded record key. Every key is the int16 record type followed by a non-flexible
// version-0 message of one of five shapes; Key holds the union of their fields.
type Key struct {
	Type RecordType
	// Group is the group id: `group` for ids 0-2, `GroupId` for every other id.
	Group string
	// Topic and Partition are set for offset commits (ids 0 and 1).
	Topic     string
	Partition int32
	// Member is the member id of member-scoped ids (5, 7, 8, 10, 13, 14, 19, 21, 22).
	Member string
	// Regex is the regular expression of id 16.
	Regex string
	// Raw is the key body after the type prefix when the type is unknown (nil otherwise).
	Raw []byte
}

type keyShape int8

const (
	shapeUnknown keyShape = iota
	shapeOffset           // group, topic, partition
	shapeGroup            // group (id 2)
	shapeGroupID          // GroupId
	shapeMember           // GroupId, MemberId
	shapeRegex            // GroupId, RegularExpression
)

// shapeOf (generated from the schema's record table) returns the key shape of type t;
// knownIn (generated too) reports whether type t has a schema in layout l.

// Key decodes a record key. For a type unknown in the decoder's layout it returns the type and
// the raw body (Key.Raw) with an *UnknownTypeError.
func (d Decoder) Key(b []byte) (Key, error) {
	if len(b) < 2 {
		return Key{}, &DecodeError{Part: "key", Type: -1, Version: -1, Field: "type", Pos: 0, Err: ErrTruncated}
	}
	k := Key{Type: RecordType(binary.BigEndian.Uint16(b))}
	if !knownIn(k.Type, d.Layout) {
		k.Raw = d.keep(b[2:])
		return k, &UnknownTypeError{Type: k.Type, Layout: d.Layout}
	}
	if d.NoCopy {
		// The replay path: the usual key, read without the general reader.
		if ok := k.readNoCopy(b); ok {
			return k, nil
		}
		k = Key{Type: k.Type}
	}
	r := reader{b: b, off: 2, alias: d.NoCopy}
	switch shapeOf(k.Type) {
	case shapeOffset:
		k.Group = r.str(false, "group")
		k.Topic = r.str(false, "topic")
		k.Partition = r.int32("partition")
	case shapeGroup:
		k.Group = r.str(false, "group")
	case shapeGroupID:
		k.Group = r.str(false, "GroupId")
	case shapeMember:
		k.Group = r.str(false, "GroupId")
		k.Member = r.str(false, "MemberId")
	case shapeRegex:
		k.Group = r.str(false, "GroupId")
		k.Regex = r.str(false, "RegularExpression")
	}
	if r.err != nil {
		return k, &DecodeError{Part: "key", Type: k.Type, Version: -1, Field: r.field, Pos: r.at, Err: r.err}
	}
	if r.off != len(b) {
		return k, &TrailingBytesError{Part: "key", Type: k.Type, Version: -1, Pos: r.off, Count: len(b) - r.off}
	}
	return k, nil
}

// readNoCopy fills k's strings from a complete, exact key b of k's type (aliasing b) and
// reports success; on anything unusual (a null or truncated string, trailing bytes) it
// returns false and the caller takes the general reader, for its error.
func (k *Key) readNoCopy(b []byte) bool {
	off := 2
	next := func() (string, bool) {
		if len(b)-off < 2 {
			return "", false
		}
		n := int(int16(binary.BigEndian.Uint16(b[off:])))
		if n < 0 || len(b)-off-2 < n {
			return "", false
		}
		var s string
		if n > 0 {
			s = unsafe.String(&b[off+2], n)
		}
		off += 2 + n
		return s, true
	}
	var ok1, ok2 bool
	switch shapeOf(k.Type) {
	case shapeGroup, shapeGroupID:
		k.Group, ok1 = next()
		ok2 = true
	case shapeMember:
		k.Group, ok1 = next()
		k.Member, ok2 = next()
	case shapeRegex:
		k.Group, ok1 = next()
		k.Regex, ok2 = next()
	default:
		return false // offset commits have their own fast path (OffsetCommitKeyNoCopy)
	}
	return ok1 && ok2 && off == len(b)
}

// AppendTo appends the encoded key to dst. A key with Raw set (one decoded from an unknown
// type) is written as its type and raw body.
func (k Key) AppendTo(dst []byte) ([]byte, error) {
	for _, s := range [...]string{k.Group, k.Topic, k.Member, k.Regex} {
		if len(s) > 0x7fff {
			return dst, &EncodeError{Struct: k.Type.String() + "Key", Reason: "string longer than 32767 bytes"}
		}
	}
	dst = appendInt16(dst, int16(k.Type))
	if k.Raw != nil {
		return append(dst, k.Raw...), nil
	}
	switch shapeOf(k.Type) {
	case shapeOffset:
		dst = appendString(dst, false, k.Group)
		dst = appendString(dst, false, k.Topic)
		dst = appendInt32(dst, k.Partition)
	case shapeGroup, shapeGroupID:
		dst = appendString(dst, false, k.Group)
	case shapeMember:
		dst = appendString(dst, false, k.Group)
		dst = appendString(dst, false, k.Member)
	case shapeRegex:
		dst = appendString(dst, false, k.Group)
		dst = appendString(dst, false, k.Regex)
	}
	return dst, nil
}

// writeJSON writes the key's data object with Kafka's field names.
func (k *Key) writeJSON(w *jsonWriter) {
	w.openObject()
	switch shapeOf(k.Type) {
	case shapeOffset:
		w.key("group")
		w.string(k.Group)
		w.key("topic")
		w.string(k.Topic)
		w.key("partition")
		w.int(int64(k.Partition))
	case shapeGroup:
		w.key("group")
		w.string(k.Group)
	case shapeGroupID:
		w.key("groupId")
		w.string(k.Group)
	case shapeMember:
		w.key("groupId")
		w.string(k.Group)
		w.key("memberId")
		w.string(k.Member)
	case shapeRegex:
		w.key("groupId")
		w.string(k.Group)
		w.key("regularExpression")
		w.string(k.Regex)
	}
	w.closeObject()
}

// OffsetCommitKeyNoCopy parses the key of an offset commit (record types 0 and 1) without
// allocating: group and topic alias b. ok is false when b is not a complete, exact offset
// commit key; callers then take the general path (Decoder.Key) for its error.
func OffsetCommitKeyNoCopy(b []byte) (t RecordType, group, topic string, partition int32, ok bool) {
	if len(b) < 10 {
		return 0, "", "", 0, false
	}
	t = RecordType(binary.BigEndian.Uint16(b))
	if t != OffsetCommit && t != LegacyOffsetCommit {
		return 0, "", "", 0, false
	}
	gl := int(int16(binary.BigEndian.Uint16(b[2:])))
	if gl < 0 || len(b) < 4+gl+2 {
		return 0, "", "", 0, false
	}
	tl := int(int16(binary.BigEndian.Uint16(b[4+gl:])))
	if tl < 0 || len(b) != 4+gl+2+tl+4 {
		return 0, "", "", 0, false
	}
	if gl > 0 {
		group = unsafe.String(&b[4], gl)
	}
	if tl > 0 {
		topic = unsafe.String(&b[6+gl], tl)
	}
	return t, group, topic, int32(binary.BigEndian.Uint32(b[6+gl+tl:])), true
}
