package recordcodec

import (
	"encoding/binary"
	"fmt"
)

// ControlType is the type of a control record (Kafka's ControlRecordType).
type ControlType int16

// Control record types. Only ABORT and COMMIT appear in __consumer_offsets; the others are
// KRaft's.
const (
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
)

func (t ControlType) String() string {
	switch t {
	case ControlAbort:
		return "ABORT"
	case ControlCommit:
		return "COMMIT"
	case ControlLeaderChange:
		return "LEADER_CHANGE"
	case ControlSnapshotHeader:
		return "SNAPSHOT_HEADER"
	case ControlSnapshotFooter:
		return "SNAPSHOT_FOOTER"
	case ControlKRaftVersion:
		return "KRAFT_VERSION"
	case ControlKRaftVoters:
		return "KRAFT_VOTERS"
	}
	return "UNKNOWN"
}

// ControlKey is the key of a control record: int16 version, int16 type. Kafka reads a version
// above 0 with the version-0 layout; the bytes after the type are kept in Extra so that such a
// key re-encodes unchanged.
type ControlKey struct {
	Version int16
	Type    ControlType
	Extra   []byte
}

// ControlError reports a control record that Kafka would refuse.
type ControlError struct {
	Part   string // "key" or "value"
	Reason string
}

func (e *ControlError) Error() string {
	return fmt.Sprintf("recordcodec: control record %s: %s", e.Part, e.Reason)
}

// DecodeControlKey decodes a control record key.
func DecodeControlKey(b []byte) (ControlKey, error) {
	if len(b) < 4 {
		return ControlKey{}, &ControlError{Part: "key", Reason: fmt.Sprintf("need at least 4 bytes, found %d", len(b))}
	}
	k := ControlKey{Version: int16(binary.BigEndian.Uint16(b)), Type: ControlType(binary.BigEndian.Uint16(b[2:]))}
	if k.Version < 0 {
		return k, &ControlError{Part: "key", Reason: fmt.Sprintf("invalid version %d", k.Version)}
	}
	if len(b) > 4 {
		k.Extra = append([]byte(nil), b[4:]...)
	}
	return k, nil
}

// AppendTo appends the encoded key.
func (k ControlKey) AppendTo(dst []byte) []byte {
	dst = appendInt16(dst, k.Version)
	dst = appendInt16(dst, int16(k.Type))
	return append(dst, k.Extra...)
}

// EndTxnMarker is the value of a COMMIT or ABORT control record: int16 version, int32
// coordinator epoch. Bytes after the epoch (later versions) are kept in Extra.
type EndTxnMarker struct {
	Version          int16
	CoordinatorEpoch int32
	Extra            []byte
}

// DecodeEndTxnMarker decodes the value of a COMMIT or ABORT control record.
func DecodeEndTxnMarker(b []byte) (EndTxnMarker, error) {
	if len(b) < 6 {
		return EndTxnMarker{}, &ControlError{Part: "value", Reason: fmt.Sprintf("end transaction marker needs 6 bytes, found %d", len(b))}
	}
	m := EndTxnMarker{Version: int16(binary.BigEndian.Uint16(b)), CoordinatorEpoch: int32(binary.BigEndian.Uint32(b[2:]))}
	if m.Version < 0 {
		return m, &ControlError{Part: "value", Reason: fmt.Sprintf("invalid end transaction marker version %d", m.Version)}
	}
	if len(b) > 6 {
		m.Extra = append([]byte(nil), b[6:]...)
	}
	return m, nil
}

// AppendTo appends the encoded marker.
func (m EndTxnMarker) AppendTo(dst []byte) []byte {
	dst = appendInt16(dst, m.Version)
	dst = appendInt32(dst, m.CoordinatorEpoch)
	return append(dst, m.Extra...)
}
