package groupstate

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every *ReplayError matches exactly one of them with errors.Is.
var (
	// ErrWrongGroupType: a record of one group type was replayed for an existing group of
	// another type that it may not replace (Kafka: IllegalStateException "Group g is not a
	// consumer/streams/share group").
	ErrWrongGroupType = errors.New("group exists with another type")
	// ErrTombstoneOrder: a tombstone arrived before the tombstones Kafka writes ahead of it
	// (group with members, member still in the target assignment, member epoch not -1, target
	// assignment metadata deleted while member targets remain) (IllegalStateException).
	ErrTombstoneOrder = errors.New("tombstone invariant violated")
	// ErrClassicGroupAdd: ClassicGroup.add refused a member of a GroupMetadata value
	// (duplicate static instance id, protocol type mismatch, unsupported protocol)
	// (IllegalStateException).
	ErrClassicGroupAdd = errors.New("classic group member rejected")
	// ErrInvalidAssignmentMetadata: on 4.3+, a target assignment metadata value with an epoch
	// below -1 or a negative timestamp (IllegalArgumentException from TargetAssignmentMetadata).
	ErrInvalidAssignmentMetadata = errors.New("invalid target assignment metadata")
	// ErrDuplicateKey: a list Kafka collects with Collectors.toMap holds the same key twice
	// (IllegalStateException "Duplicate key").
	ErrDuplicateKey = errors.New("duplicate key")
	// ErrGroupNotFound: Kafka 4.0 share replay looks up the group without creating it and
	// throws GroupIdNotFoundException when it is missing.
	ErrGroupNotFound = errors.New("group not found")
	// ErrMemberNotFound: Kafka 4.0 share replay looks up the member without creating it
	// and throws UnknownMemberIdException when it is missing.
	ErrMemberNotFound = errors.New("member not found")
	// ErrMissingField: Kafka would dereference a field that no record has set yet
	// (NullPointerException; a streams member tombstone for a member whose epoch was never
	// set).
	ErrMissingField = errors.New("field never set")
	// ErrNotReplayed: the record type is not replayed by the selected Kafka version (see
	// KafkaVersion.ReplaysRecordType).
	ErrNotReplayed = errors.New("record type not replayed by this Kafka version")
)

// ReplayError is the error every mutator returns. It names the record type, group, member
// (when there is one), the reason in words, and the Java exception Kafka throws in the same
// situation. A mutator that returns an error leaves the state unchanged.
type ReplayError struct {
	Kind       error  // one of the sentinel errors above
	RecordType int16  // __consumer_offsets record type id (2 for GroupMetadata, ...)
	Tombstone  bool   // the record was a tombstone
	GroupID    string //
	MemberID   string // empty when the record has no member
	Reason     string // human-readable, Kafka's message where it has one
	Exception  string // the Java exception Kafka throws: IllegalStateException, ...
}

func (e *ReplayError) Error() string {
	var b strings.Builder
	b.WriteString("groupstate: record type ")
	fmt.Fprintf(&b, "%d", e.RecordType)
	if e.Tombstone {
		b.WriteString(" (tombstone)")
	}
	fmt.Fprintf(&b, ", group %q", e.GroupID)
	if e.MemberID != "" {
		fmt.Fprintf(&b, ", member %q", e.MemberID)
	}
	fmt.Fprintf(&b, ": %s: %s", e.Kind, e.Reason)
	if e.Exception != "" {
		fmt.Fprintf(&b, " (Kafka: %s)", e.Exception)
	}
	return b.String()
}

// Unwrap returns the sentinel kind so that errors.Is works.
func (e *ReplayError) Unwrap() error { return e.Kind }

const (
	illegalState    = "IllegalStateException"
	illegalArgument = "IllegalArgumentException"
	groupIDNotFound = "GroupIdNotFoundException"
	nullPointer     = "NullPointerException"
	unknownMemberID = "UnknownMemberIdException"
)

// rec identifies the record being replayed, for errors.
type rec struct {
	typ       int16
	tombstone bool
	group     string
	member    string
}

func (r rec) err(kind error, exception, format string, args ...any) *ReplayError {
	return &ReplayError{
		// The ids may alias a read buffer (scratch.go): the error, which outlives the
		// record, copies them.
		Kind: kind, RecordType: r.typ, Tombstone: r.tombstone, GroupID: strings.Clone(r.group),
		MemberID: strings.Clone(r.member), Reason: fmt.Sprintf(format, args...), Exception: exception,
	}
}
