package explain

import (
	"encoding/json"
	"time"
)

// Kind says what happened. The kinds, and the payload each one carries, are listed in doc.go.
type Kind string

// Event kinds.
const (
	KindGroupCreated         Kind = "group-created"
	KindGroupConverted       Kind = "group-converted"
	KindGroupDeleted         Kind = "group-deleted"
	KindMemberJoined         Kind = "member-joined"
	KindMemberUpdated        Kind = "member-updated"
	KindMemberReplaced       Kind = "member-replaced"
	KindMemberTemporaryLeave Kind = "member-temporary-leave"
	KindMemberLeft           Kind = "member-left"
	KindMemberFenced         Kind = "member-fenced"
	KindRebalance            Kind = "rebalance"
	KindTargetAssignment     Kind = "target-assignment"
	KindReconcile            Kind = "reconcile"
	KindRebalanceEnd         Kind = "rebalance-end"
	KindOffsetsCommitted     Kind = "offsets-committed"
	KindOffsetsDeleted       Kind = "offsets-deleted"
	KindTransactionOffsets   Kind = "transaction-offsets"
	KindTransactionEnd       Kind = "transaction-end"
	KindTransactionOpen      Kind = "transaction-open"
	KindViolation            Kind = "violation"
)

// Kinds lists every kind, in the order doc.go describes them.
var Kinds = []Kind{
	KindGroupCreated, KindGroupConverted, KindGroupDeleted,
	KindMemberJoined, KindMemberUpdated, KindMemberReplaced, KindMemberTemporaryLeave, KindMemberLeft, KindMemberFenced,
	KindRebalance, KindTargetAssignment, KindReconcile, KindRebalanceEnd,
	KindOffsetsCommitted, KindOffsetsDeleted,
	KindTransactionOffsets, KindTransactionEnd, KindTransactionOpen,
	KindViolation,
}

// Mark flags an event an operator should look at; check reports the same things as findings.
type Mark string

// Marks.
const (
	// MarkRewind: a committed offset moved back.
	MarkRewind Mark = "rewind"
	// MarkWhileEmpty: offsets written while a group that has a protocol had no members (an
	// admin tool such as kafka-consumer-groups --reset-offsets, or a standalone consumer).
	MarkWhileEmpty Mark = "while-empty"
	// MarkWithoutOwner: offsets written while the group had members, none of which owned the
	// partition.
	MarkWithoutOwner Mark = "without-owner"
	// MarkFenced: a member was removed by a timeout, not by its own leave.
	MarkFenced Mark = "fenced"
	// MarkSlow: a rebalance that took longer than Options.SlowRebalance to converge, or a
	// transaction open longer than Options.LongTransaction.
	MarkSlow Mark = "slow"
	// MarkDeleted: committed offsets were deleted, with the group or not (by whom, as far as
	// the log tells).
	MarkDeleted Mark = "deleted"
)

// Certainty says how sure an event's cause is, by the rules of what Kafka writes for each
// cause (doc.go's rule table).
type Certainty string

// Certainties.
const (
	// CertaintyProved: the log rules out every other cause (Event.Evidence says by which
	// records and which rule).
	CertaintyProved Certainty = "proved"
	// CertaintyLikely: the log fits this cause and the others only by coincidence
	// (Event.Evidence says why); Event.Alternatives are the others, each with what would
	// settle it.
	CertaintyLikely Certainty = "likely"
	// CertaintyOneOfSeveral: the log fits several causes alike; Event.Alternatives are the
	// others, each with the evidence that would settle it (a broker config, the client's log,
	// the broker's request log).
	CertaintyOneOfSeveral Certainty = "one-of-several"
)

// Alternative is a cause the log does not rule out, with what would settle it.
type Alternative struct {
	Cause string `json:"cause"`
	// Settle is the evidence outside the log that would tell (a broker config, the client's
	// log, the broker's request log).
	Settle string `json:"settle"`
}

// Position is where an event shows in the log: the record (or marker) that shows it.
type Position struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
	// LastOffset is the last record of the event when it spans several (a batch's records of
	// the group); equal to Offset otherwise.
	LastOffset int64 `json:"lastOffset"`
	BatchBase  int64 `json:"batchBaseOffset"`
	// ProducerID is the batch's producer (-1: not transactional).
	ProducerID int64 `json:"producerId"`
	// Timestamp is the record's timestamp in Unix milliseconds (-1: none).
	Timestamp int64 `json:"timestamp"`
}

// Time is the position's timestamp as a time (the zero time when the record has none).
func (p Position) Time() time.Time {
	if p.Timestamp < 0 {
		return time.Time{}
	}
	return time.UnixMilli(p.Timestamp).UTC()
}

// MarshalJSON adds the timestamp as RFC 3339 text ("time"; null when the record has none).
func (p Position) MarshalJSON() ([]byte, error) {
	type plain Position
	var t *string
	if p.Timestamp >= 0 {
		s := p.Time().Format("2006-01-02T15:04:05.000Z")
		t = &s
	}
	return json.Marshal(struct {
		plain
		Time *string `json:"time"`
	}{plain(p), t})
}

// Member identifies a member as an operator knows it: by client id and host first.
type Member struct {
	ID         string  `json:"memberId"`
	ClientID   string  `json:"clientId"`
	Host       string  `json:"clientHost"`
	InstanceID *string `json:"instanceId"`
	// ProcessID is a streams member's process (one per Kafka Streams instance); JSON null for
	// other members.
	ProcessID string `json:"processId"`
	// Protocol is "classic" for a classic-protocol member of a consumer group (or any member of
	// a classic group), "consumer", "share" or "streams" otherwise.
	Protocol string `json:"protocol"`
	// Subscription is what the member subscribed to: topics (and a /regex/), or a streams
	// member's topology epoch.
	Subscription string `json:"subscription,omitempty"`
	// Lane is the member's lane in a picture of the group: its instance id when static (so a
	// static member's replacement continues the lane), its member id otherwise.
	Lane string `json:"lane"`
	// Name is how the text names the member: its client id, followed by the start of its
	// member id when another member of the group has the same client id.
	Name string `json:"name"`
}

// Assignment is a set of partitions of one topic, or of tasks of one subtopology in one role.
type Assignment struct {
	// Topic is the topic name ("" when only its id is known), TopicID its id when the record
	// names the topic by id; Subtopology and Role ("active", "standby", "warm-up") are set for
	// streams tasks instead.
	Topic       string  `json:"topic,omitempty"`
	TopicID     string  `json:"topicId,omitempty"`
	Subtopology string  `json:"subtopology,omitempty"`
	Role        string  `json:"role,omitempty"`
	Partitions  []int32 `json:"partitions"`
}

// Move is what a rebalance's target assignment gave to another member.
type Move struct {
	Assignment
	// From and To are member ids ("" for none: newly assigned, or no longer assigned; null in
	// JSON).
	From string `json:"from"`
	To   string `json:"to"`
	// FromName and ToName are the members' names (Member.Name), "" for none.
	FromName string `json:"fromName"`
	ToName   string `json:"toName"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// MarshalJSON writes absent members as null.
func (m Move) MarshalJSON() ([]byte, error) {
	type plain Move
	return json.Marshal(struct {
		plain
		From     *string `json:"from"`
		To       *string `json:"to"`
		FromName *string `json:"fromName"`
		ToName   *string `json:"toName"`
	}{plain(m), nullable(m.From), nullable(m.To), nullable(m.FromName), nullable(m.ToName)})
}

// MarshalJSON writes an absent process id as null.
func (m Member) MarshalJSON() ([]byte, error) {
	type plain Member
	return json.Marshal(struct {
		plain
		ProcessID *string `json:"processId"`
	}{plain(m), nullable(m.ProcessID)})
}

// Cause is one reason for a rebalance.
type Cause struct {
	// Kind: member-joined, member-left, member-fenced, subscription-changed,
	// topology-changed, topology-validated, regex-resolved, metadata-changed,
	// assignment-configs-changed, group-converted, unknown.
	Kind   string  `json:"kind"`
	Member *Member `json:"member,omitempty"`
	Detail string  `json:"detail,omitempty"`
}

// Rebalance is a group epoch (consumer, share and streams groups) or generation (classic
// groups) and how the group got there.
type Rebalance struct {
	Epoch         int32   `json:"epoch"`
	PreviousEpoch int32   `json:"previousEpoch"`
	Causes        []Cause `json:"causes"`
	// Moves is the target assignment's change; for a classic group, the assignment's.
	Moves []Move   `json:"moves"`
	Start Position `json:"start"`
	// End is set on rebalance-end: the record that completed it (or the last record of the
	// log for an open one).
	End *Position `json:"end,omitempty"`
	// DurationMs is End-Start in milliseconds; -1 when unknown (classic rebalances are
	// recorded only when they complete).
	DurationMs int64 `json:"durationMs"`
	// Outcome on rebalance-end: converged, completed (classic), superseded (by a newer
	// epoch before converging), open (at the end of the log), group-deleted, group-converted.
	Outcome string `json:"outcome,omitempty"`
	// SupersededBy is the epoch that superseded it.
	SupersededBy int32 `json:"supersededBy,omitempty"`
	// Waits are what still held the group up when it ended unconverged.
	Waits []Wait `json:"waits,omitempty"`
}

// Wait is a member waiting for partitions or tasks another member still owns.
type Wait struct {
	Member   Member       `json:"member"`
	Holder   *Member      `json:"holder,omitempty"`
	Items    []Assignment `json:"items"`
	Since    Position     `json:"since"`
	Revoking bool         `json:"revoking"` // the holder was asked to revoke them
}

// Reconcile is a member's step towards its target assignment.
type Reconcile struct {
	Member Member `json:"member"`
	Epoch  int32  `json:"epoch"`
	// State is the member state as Kafka names it (STABLE, UNREVOKED_PARTITIONS,
	// UNRELEASED_PARTITIONS, UNREVOKED_TASKS, UNRELEASED_TASKS).
	State string `json:"state"`
	// Step: waiting (for partitions others own), revoking (asked to give some up), revoked
	// (gave them up), stable (owns its target at the group's epoch).
	Step  string       `json:"step"`
	Items []Assignment `json:"items"`
	// Others are the members it waits for (waiting) or that wait for it (revoking).
	Others []Member `json:"others,omitempty"`
	// WaitedMs is how long the step before this one lasted (-1: unknown).
	WaitedMs int64 `json:"waitedMs"`
	// Owned is what the member owns after the record.
	Owned []Assignment `json:"owned"`
}

// Removal says how a member went away.
type Removal struct {
	Member Member `json:"member"`
	// Cause: left, fenced-session-timeout, fenced-rebalance-timeout,
	// expired-after-temporary-leave, unknown.
	Cause string `json:"cause"`
	// LastSeen is the member's last sign of life in the log (a record of it, or a commit of a
	// partition it owned); SilentMs the time from there to the removal.
	LastSeen *Position `json:"lastSeen"`
	SilentMs int64     `json:"silentMs"`
	// Joined is where the member first showed (nil: before the log's start).
	Joined *Position `json:"joined"`
	// OwnRecord is the member's last record written for a request of its own (a heartbeat,
	// a join or sync of its generation): its session was alive then.
	OwnRecord *Position `json:"ownRecord"`
	// SessionTimeoutMs and RebalanceTimeoutMs are the member's, when the records carry them
	// (-1 otherwise).
	SessionTimeoutMs   int32 `json:"sessionTimeoutMs"`
	RebalanceTimeoutMs int32 `json:"rebalanceTimeoutMs"`
	// Owned is what it owned when it went.
	Owned []Assignment `json:"owned"`
}

// Replacement is a static member's new member id taking over its instance.
type Replacement struct {
	Previous Member `json:"previous"`
	Member   Member `json:"member"`
	// Rebalance is false when the group epoch stayed (the usual case: the new member takes
	// the old one's assignment).
	Rebalance bool         `json:"rebalance"`
	Owned     []Assignment `json:"owned"`
}

// OffsetChange is one committed (or deleted) offset.
type OffsetChange struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Previous is the committed offset before the record (nil: none).
	Previous *int64 `json:"previous"`
	// Offset is the new committed offset (for a deletion, the deleted one).
	Offset   int64  `json:"offset"`
	Delta    *int64 `json:"delta"`
	Rewind   bool   `json:"rewind"`
	Metadata string `json:"metadata,omitempty"`
	// CommittedAt is, for a deletion, when the deleted offset was committed (-1 unknown).
	CommittedAt int64 `json:"committedAt,omitempty"`
}

// Writer is who wrote plain offset commits, as far as the log tells (offset commits name no
// member; a transaction's are in Transaction events).
type Writer struct {
	// Kind: owner (the member that owned the partitions), owners (several members),
	// without-owner (the group had members, none owning them), empty-group (a group with
	// a protocol and no members: an admin tool or a standalone consumer), no-group-members
	// (a simple group: a standalone consumer or an admin tool).
	Kind string `json:"kind"`
	// Members are the owners (owner, owners).
	Members []Member `json:"members"`
	// EmptySince is when the group lost its last member (empty-group; null otherwise).
	EmptySince *Position `json:"emptySince"`
}

// Offsets is a batch's offset commits of a group.
type Offsets struct {
	Writer Writer `json:"writer"`
	// Changes are the offsets committed (an analysis of marked events only, check's, keeps
	// only the marked ones: moved back, written while empty or without owner).
	Changes []OffsetChange `json:"changes"`
	// Committed is how many offsets the batch committed; Rewound how many of them moved back.
	Committed int `json:"committed"`
	Rewound   int `json:"rewound"`
}

// Deletion is offsets (and maybe the group) removed by tombstones, with the likeliest cause
// the log shows.
type Deletion struct {
	// Cause: group-deletion (DeleteGroups), offset-delete (OffsetDelete), expiry
	// (offsets.retention.minutes), topic-deletion, cleanup (the coordinator's periodic
	// cleanup of an empty group without offsets), unknown.
	Cause string `json:"cause"`
	// Alternatives are the other causes the log does not rule out (Event.Alternatives says
	// what would settle each).
	Alternatives []string       `json:"alternatives,omitempty"`
	Offsets      []OffsetChange `json:"offsets"`
	GroupDeleted bool           `json:"groupDeleted"`
	// OtherGroups is how many other groups lost offsets in the same batch.
	OtherGroups int `json:"otherGroups"`
	// YoungestAgeMs is the age of the most recently committed deleted offset, measured as
	// expiry measures it (-1: unknown).
	YoungestAgeMs int64 `json:"youngestAgeMs"`
	// RetentionAtMostMs and RetentionOverMs bound offsets.retention.minutes when the cause is
	// expiry, going by this batch: at most the youngest removed offset's age, and more than
	// the oldest age of an offset that could have expired and stayed (-1: no bound).
	RetentionAtMostMs int64 `json:"retentionAtMostMs"`
	RetentionOverMs   int64 `json:"retentionOverMs"`
}

// Conversion is a group changing type in place (KIP-848's online upgrade and downgrade).
type Conversion struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Epoch is the group epoch (or generation) the group continues with.
	Epoch int32 `json:"epoch"`
	// Members are the members carried over; Trigger the member whose join (upgrade) or
	// departure (downgrade) caused it.
	Members []Member `json:"members"`
	Trigger *Member  `json:"trigger,omitempty"`
}

// Transaction is a producer's transaction as it touched the group's offsets.
type Transaction struct {
	ProducerID int64 `json:"producerId"`
	// Start is its first offset write for the group.
	Start Position `json:"start"`
	// Result: pending (transaction-offsets), committed, aborted, open (at the end of the log).
	Result     string         `json:"result"`
	DurationMs int64          `json:"durationMs"`
	Offsets    []OffsetChange `json:"offsets"`
}

// Event is one thing that happened to a group.
type Event struct {
	Kind      Kind     `json:"kind"`
	Group     string   `json:"group"`
	GroupType string   `json:"groupType"`
	At        Position `json:"at"`
	// Text says what happened in one sentence, without the position.
	Text  string `json:"text"`
	Marks []Mark `json:"marks"`

	Member      *Member      `json:"member,omitempty"`
	Rebalance   *Rebalance   `json:"rebalance,omitempty"`
	Reconcile   *Reconcile   `json:"reconcile,omitempty"`
	Removal     *Removal     `json:"removal,omitempty"`
	Replacement *Replacement `json:"replacement,omitempty"`
	Offsets     *Offsets     `json:"offsets,omitempty"`
	Deletion    *Deletion    `json:"deletion,omitempty"`
	Conversion  *Conversion  `json:"conversion,omitempty"`
	Transaction *Transaction `json:"transaction,omitempty"`
	// Next is what to look at next, when the event is marked.
	Next string `json:"next,omitempty"`

	// Certainty, Evidence and Alternatives say how sure the event's cause is (removals,
	// deletions, offsets written while empty or without owner): what proves it, or makes it
	// likely, and the other causes with what would settle each. Events that state no cause
	// (the records show what they say) have none.
	Certainty    Certainty     `json:"certainty,omitempty"`
	Evidence     []string      `json:"evidence,omitempty"`
	Alternatives []Alternative `json:"alternatives,omitempty"`
}

// diagnosis is an event's cause with its certainty.
type diagnosis struct {
	certainty    Certainty
	evidence     []string
	alternatives []Alternative
}

func (d diagnosis) set(e *Event) {
	e.Certainty, e.Evidence, e.Alternatives = d.certainty, d.evidence, d.alternatives
}

// HasMark reports whether the event carries m.
func (e *Event) HasMark(m Mark) bool {
	for _, x := range e.Marks {
		if x == m {
			return true
		}
	}
	return false
}
