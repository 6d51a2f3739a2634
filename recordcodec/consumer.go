package recordcodec

import (
	"encoding/binary"
	"fmt"
)

// ConsumerProtocolType is the protocol type whose member bytes are ConsumerProtocol messages.
const ConsumerProtocolType = "consumer"

// DecodeConsumerSubscription parses the subscription bytes of a classic group member with
// protocol type "consumer": an int16 version (0-3) and a ConsumerProtocolSubscription at that
// version. Trailing bytes are ignored, as Kafka's parser ignores them; the member keeps its raw
// bytes, so nothing is lost.
func DecodeConsumerSubscription(b []byte) (*ConsumerProtocolSubscription, error) {
	return decodeConsumerProtocol(b, false, "ConsumerProtocolSubscription", func(r reader, v int16) (*ConsumerProtocolSubscription, reader) {
		s := &ConsumerProtocolSubscription{}
		return s, s.decodeBody(r, v)
	})
}

// DecodeConsumerSubscriptionLenient parses like the group coordinator does when it reads a
// member's topics (ConsumerProtocol.deserializeSubscription): a version above 3 is read with the
// version-3 layout, since later versions may only append fields.
func DecodeConsumerSubscriptionLenient(b []byte) (*ConsumerProtocolSubscription, error) {
	return decodeConsumerProtocol(b, true, "ConsumerProtocolSubscription", func(r reader, v int16) (*ConsumerProtocolSubscription, reader) {
		s := &ConsumerProtocolSubscription{}
		return s, s.decodeBody(r, v)
	})
}

// DecodeConsumerAssignment parses the assignment bytes of a classic group member with protocol
// type "consumer" (int16 version 0-3, then ConsumerProtocolAssignment).
func DecodeConsumerAssignment(b []byte) (*ConsumerProtocolAssignment, error) {
	return decodeConsumerProtocol(b, false, "ConsumerProtocolAssignment", func(r reader, v int16) (*ConsumerProtocolAssignment, reader) {
		a := &ConsumerProtocolAssignment{}
		return a, a.decodeBody(r, v)
	})
}

// DecodeConsumerAssignmentLenient reads versions above 3 with the version-3 layout.
func DecodeConsumerAssignmentLenient(b []byte) (*ConsumerProtocolAssignment, error) {
	return decodeConsumerProtocol(b, true, "ConsumerProtocolAssignment", func(r reader, v int16) (*ConsumerProtocolAssignment, reader) {
		a := &ConsumerProtocolAssignment{}
		return a, a.decodeBody(r, v)
	})
}

// ConsumerProtocolError reports member bytes that are not a ConsumerProtocol message.
type ConsumerProtocolError struct {
	Message string
	Version int16
	Field   string
	Pos     int
	Err     error
}

func (e *ConsumerProtocolError) Error() string {
	return fmt.Sprintf("recordcodec: %s version %d: field %s at byte %d: %v", e.Message, e.Version, e.Field, e.Pos, e.Err)
}

func (e *ConsumerProtocolError) Unwrap() error { return e.Err }

func decodeConsumerProtocol[T any](b []byte, lenient bool, name string, read func(reader, int16) (T, reader)) (T, error) {
	var zero T
	if len(b) < 2 {
		return zero, &ConsumerProtocolError{Message: name, Version: -1, Field: "version", Err: ErrTruncated}
	}
	version := int16(binary.BigEndian.Uint16(b))
	readAt := version
	if version < 0 || version > 3 {
		if !lenient || version < 0 {
			return zero, &ConsumerProtocolError{Message: name, Version: version, Field: "version", Err: fmt.Errorf("unsupported version (0-3)")}
		}
		readAt = 3
	}
	v, r := read(reader{b: b, off: 2}, readAt)
	if r.err != nil {
		return zero, &ConsumerProtocolError{Message: name, Version: version, Field: r.field, Pos: r.at, Err: r.err}
	}
	return v, nil
}

// EncodeConsumerSubscription returns the member bytes of s (protocol type "consumer"): the
// int16 s.Version, then the subscription at that version, as ConsumerProtocol.
// serializeSubscription writes them.
func EncodeConsumerSubscription(s *ConsumerProtocolSubscription) ([]byte, error) {
	return encodeConsumerProtocol(s.Version, "ConsumerProtocolSubscription", s.appendBody)
}

// EncodeConsumerAssignment returns the member bytes of a (the int16 a.Version, then the
// assignment at that version), as ConsumerProtocol.serializeAssignment writes them.
func EncodeConsumerAssignment(a *ConsumerProtocolAssignment) ([]byte, error) {
	return encodeConsumerProtocol(a.Version, "ConsumerProtocolAssignment", a.appendBody)
}

func encodeConsumerProtocol(version int16, name string, body func([]byte) ([]byte, error)) ([]byte, error) {
	if version < 0 || version > 3 {
		return nil, &ConsumerProtocolError{Message: name, Version: version, Field: "version", Err: fmt.Errorf("unsupported version (0-3)")}
	}
	return body(appendInt16(nil, version))
}
