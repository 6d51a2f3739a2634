package recordcodec

import (
	"errors"
	"fmt"
)

// Causes carried by a *DecodeError (test with errors.Is).
var (
	ErrTruncated      = errors.New("truncated buffer")
	ErrInvalidLength  = errors.New("invalid length")
	ErrUnexpectedNull = errors.New("null in a non-nullable field")
	ErrVarintOverflow = errors.New("varint longer than 32 bits")
	// ErrNonCanonical marks encodings Kafka's readers accept but its writers never produce
	// (a varint longer than needed, a nullable-struct marker other than -1 and 1). They are
	// refused so that every decoded record re-encodes to its own bytes.
	ErrNonCanonical = errors.New("non-canonical encoding")
	ErrTagOrder     = errors.New("tagged fields not in strictly ascending tag order")
	ErrTagSize      = errors.New("tagged field size does not match its content")
)

// DecodeError says which part of which record failed to decode, at which field and byte.
type DecodeError struct {
	Part    string     // "key" or "value"
	Type    RecordType // -1 when the type itself could not be read
	Version int16      // the value version; -1 for keys or when unread
	Field   string     // the schema field being read
	Pos     int        // byte position in the key or value buffer
	Err     error      // one of the Err* causes
}

func (e *DecodeError) Error() string {
	where := e.Part
	if e.Type >= 0 {
		where = fmt.Sprintf("%s of record type %d (%s)", e.Part, int16(e.Type), e.Type)
	}
	if e.Version >= 0 {
		where += fmt.Sprintf(" version %d", e.Version)
	}
	return fmt.Sprintf("recordcodec: %s: field %s at byte %d: %v", where, e.Field, e.Pos, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// UnknownTypeError is returned for a record type with no schema in the decoder's layout. Kafka
// skips such records ("Found an unknown record type N"); the record comes back with its raw
// bytes so that a caller can do the same and count it.
type UnknownTypeError struct {
	Type   RecordType
	Layout Layout
}

func (e *UnknownTypeError) Error() string {
	msg := fmt.Sprintf("recordcodec: unknown record type %d", int16(e.Type))
	switch {
	case e.Type == 9 && e.Layout == LayoutCurrent:
		msg += " (retired ShareGroupPartitionMetadata of Kafka 3.9-4.0; decode with layout 4.0 or 3.9)"
	case e.Type == 18 && e.Layout != LayoutStreamsPreview:
		msg += " (retired StreamsGroupPartitionMetadata, never released; decode with layout streams-preview)"
	}
	return msg
}

// UnsupportedVersionError is returned for a value version outside the versions Kafka reads for
// the type. Kafka's loader stops on it.
type UnsupportedVersionError struct {
	Type    RecordType
	Version int16
	Lo, Hi  int16
	Layout  Layout
}

func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("recordcodec: record type %d (%s): unsupported value version %d (layout %s reads %d-%d)",
		int16(e.Type), e.Type, e.Version, e.Layout, e.Lo, e.Hi)
}

// TrailingBytesError reports bytes left after a complete key or value. Kafka's readers ignore
// them, so the decoded record that comes with this error is complete and usable; re-encoding it
// drops the trailing bytes.
type TrailingBytesError struct {
	Part    string
	Type    RecordType
	Version int16
	Pos     int // where the trailing bytes start
	Count   int
}

func (e *TrailingBytesError) Error() string {
	v := ""
	if e.Version >= 0 {
		v = fmt.Sprintf(" version %d", e.Version)
	}
	return fmt.Sprintf("recordcodec: %s of record type %d (%s)%s: %d trailing bytes at byte %d",
		e.Part, int16(e.Type), e.Type, v, e.Count, e.Pos)
}

// EncodeError is returned when a value cannot be written at its version.
type EncodeError struct {
	Struct  string
	Field   string
	Version int16
	Reason  string
}

func (e *EncodeError) Error() string {
	return fmt.Sprintf("recordcodec: cannot encode %s field %s at version %d: %s", e.Struct, e.Field, e.Version, e.Reason)
}
