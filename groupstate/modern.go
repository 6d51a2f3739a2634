package groupstate

import "strings"

// The consumer (KIP-848), share (KIP-932) and streams (KIP-1071) groups share a core, as
// Kafka's ConsumerGroup, ShareGroup and StreamsGroup share ModernGroup<T extends
// ModernGroupMember> (group-coordinator modern/ModernGroup.java): the group epoch, the
// metadata hash, the target assignment epoch and timestamp, the members and the target
// assignment. modernGroup holds it, embedded in consumerGroup, shareGroup and streamsGroup,
// and the replay rules that the three types share are written once, here: the lookup of the
// group a record is for (lookupModern, which creates it or replaces a simple classic group)
// and install, and the steps of the records the three replay alike as modernGroup's methods
// (group metadata value and tombstone, target assignment metadata value and tombstone, member
// metadata tombstone). Each type's Replay* methods look the group up, call the step and
// install a new group; where that is all they do, they are one call of a function generic in
// the group type (replayGroupMetadata, replayGroupTombstone, replayAssignmentMetadata).
//
// Where Kafka's three group types differ (what a simple classic group in the way becomes,
// the streams group tombstone not checking the target assignment, Kafka 4.0's strict share
// replay, the words of the messages), the type's modernRules says so; everything else is
// the same code.
//
// The steps are methods of the embedded struct, called on the concrete group types: static
// calls, no interface values and no closures on the per-record path, so the shared core
// costs what the three copies did. Each type's lookup (lookupConsumer, ...) returns an
// existing group of its type at once; lookupModern, generic in the group type, does the rest
// (it creates groups through the type's init).

// modernGroup is the core of a consumer, share or streams group. M is the member type, T a
// member's target assignment.
type modernGroup[M, T any] struct {
	groupEpoch          int32
	metadataHash        int64
	assignmentEpoch     int32
	assignmentTimestamp int64
	members             map[string]*M // each updated in place (scratch.go), keyed by its own id
	target              map[string]T  // by member id; the member need not exist
	// memberTable is the layout of Kafka's map of the members (order.go); each member keeps
	// its insertion sequence number (the member types' seq field).
	memberTable kafkaTable
}

// init makes g the core of a group created implicitly during replay.
func (g *modernGroup[M, T]) init(v KafkaVersion) {
	e := v.initialEpoch()
	g.groupEpoch, g.assignmentEpoch = e, e
	g.members = map[string]*M{}
	g.target = map[string]T{}
	g.memberTable = newKafkaTable()
}

// modernRules is what the shared replay steps need to know of a group type.
type modernRules struct {
	name string // "consumer", "share", "streams", as messages name the type
	// versioned: the type's records are unknown to some versions (streams: Kafka 4.0), which
	// the lookup refuses (KafkaVersion.ReplaysRecordType).
	versioned bool
	// simple is what the type's records do to a simple classic group in their way.
	simple simpleRule
	// strict: the type has Kafka 4.0's strict share replay (KafkaVersion.shareStrictLookup),
	// where a lookup that does not create fails on a missing group (share.go has the rest).
	strict bool
	// groupTombstoneChecksTarget: the group tombstone requires an empty target assignment.
	// Kafka's streams replay does not check it (records 3 and 11 do).
	groupTombstoneChecksTarget bool
	// Kafka's messages for the tombstone invariants, which it words differently per type:
	// a group tombstone while the assignment epoch is not -1 (group id, epoch), a member
	// tombstone while the member epoch is not -1 (member id, epoch), and a member tombstone
	// while the member has a target assignment (member id).
	groupTombstoneEpoch, memberTombstoneEpoch, memberTombstoneTarget string
}

// simpleRule is what a record of a modern group type does when the group id belongs to a
// simple classic group (ClassicGroup.isSimpleGroup: what an offset commit creates).
type simpleRule uint8

const (
	// simpleReplaced: the simple group is replaced by a new group of the record's type, even
	// for a tombstone (getOrMaybeCreatePersistedConsumerGroup).
	simpleReplaced simpleRule = iota
	// simpleReplacedByVersion: replaced on the versions that do
	// (KafkaVersion.streamsReplacesSimpleGroup), refused with its own message before.
	simpleReplacedByVersion
	// simpleKept: the simple group is a group of another type, an error
	// (getOrMaybeCreatePersistedShareGroup).
	simpleKept
)

// strictLookup reports whether Kafka 4.0's strict share replay applies.
func (k *modernRules) strictLookup(v KafkaVersion) bool { return k.strict && v.shareStrictLookup() }

var (
	consumerRules = &modernRules{
		name:                       "consumer",
		simple:                     simpleReplaced,
		groupTombstoneChecksTarget: true,
		groupTombstoneEpoch:        "received a tombstone record to delete group %s but did not receive ConsumerGroupTargetAssignmentMetadataValue tombstone (assignment epoch %d)",
		memberTombstoneEpoch:       "received a tombstone record to delete member %s but did not receive ConsumerGroupCurrentMemberAssignmentValue tombstone (member epoch %d)",
		memberTombstoneTarget:      "received a tombstone record to delete member %s but did not receive ConsumerGroupTargetAssignmentMetadataValue tombstone (member still in the target assignment)",
	}
	shareRules = &modernRules{
		name:                       "share",
		simple:                     simpleKept,
		strict:                     true,
		groupTombstoneChecksTarget: true,
		groupTombstoneEpoch:        "received a tombstone record to delete group %s but target assignment epoch in invalid (%d)",
		memberTombstoneEpoch:       "received a tombstone record to delete member %s with invalid leave group epoch %d",
		memberTombstoneTarget:      "received a tombstone record to delete member %s but member exists in target assignment",
	}
	streamsRules = &modernRules{
		name:                  "streams",
		versioned:             true,
		simple:                simpleReplacedByVersion,
		groupTombstoneEpoch:   "received a tombstone record to delete group %s but did not receive StreamsGroupTargetAssignmentMetadataValue tombstone (assignment epoch %d)",
		memberTombstoneEpoch:  "received a tombstone record to delete member %s but did not receive StreamsGroupCurrentMemberAssignmentValue tombstone (member epoch %d)",
		memberTombstoneTarget: "received a tombstone record to delete member %s but did not receive StreamsGroupTargetAssignmentMetadataValue tombstone (member still in the target assignment)",
	}
)

// modernGroupPtr is *consumerGroup, *shareGroup or *streamsGroup, for lookupModern.
type modernGroupPtr[G any] interface {
	*G
	group
	init(v KafkaVersion) // the core's init and the type's own fields
}

// lookupModern mirrors getOrMaybeCreatePersisted{Consumer,Share,Streams}Group for the group
// type G whose rules k are. It returns (nil, false, nil) when the group is missing and
// create is false (an error for the strict share replay). fresh reports a group that is not
// yet in the map (new, or replacing a simple classic group, which Kafka does even for
// tombstones); the caller installs it with s.install once nothing can fail.
func lookupModern[G any, P modernGroupPtr[G]](s *State, r rec, create bool, k *modernRules) (g P, fresh bool, err error) {
	if k.versioned && !s.version.ReplaysRecordType(r.typ) {
		return nil, false, r.err(ErrNotReplayed, "", "%s records are unknown to Kafka %s", k.name, s.version)
	}
	switch cur := s.groups[r.group].(type) {
	case nil:
		if create {
			return newModern[G, P](s), true, nil
		}
		if k.strictLookup(s.version) {
			return nil, false, r.err(ErrGroupNotFound, groupIDNotFound, "%s group %s not found (Kafka 4.0 share replay requires the group to exist)", k.name, r.group)
		}
		return nil, false, nil
	case P:
		return cur, false, nil
	case *classicGroup:
		if cur.isSimple() {
			switch k.simple {
			case simpleReplaced:
				return newModern[G, P](s), true, nil
			case simpleReplacedByVersion:
				if s.version.streamsReplacesSimpleGroup() {
					return newModern[G, P](s), true, nil
				}
				return nil, false, r.err(ErrWrongGroupType, illegalState, "group %s is a simple classic group, which Kafka %s does not replace with a %s group", r.group, s.version, k.name)
			}
		}
	}
	return nil, false, r.err(ErrWrongGroupType, illegalState, "group %s is a %s group, not a %s group", r.group, s.groups[r.group].groupType(), k.name)
}

func newModern[G any, P modernGroupPtr[G]](s *State) P {
	g := P(new(G))
	g.init(s.version)
	return g
}

// install adds a group that a lookup created (fresh), under a copy of its id (which may
// alias a read buffer); it is a no-op for a group already in the map.
func (s *State) install(id string, g group, fresh bool) {
	if fresh {
		s.groups[strings.Clone(id)] = g
	}
}

// ---------------------------------------------------------------------------------------
// The core's replay steps.

// setGroupMetadata sets what records 3, 11 and 17 hold for the core: the group epoch and the
// metadata hash. readHash says whether the record's version has the hash: records 3 and 11
// from Kafka 4.1 (a tagged field, KafkaVersion.hasMetadataHash), record 17 always (a plain
// field since its first version).
func (g *modernGroup[M, T]) setGroupMetadata(epoch int32, hash int64, readHash bool) {
	g.groupEpoch = epoch
	if readHash {
		g.metadataHash = hash
	}
}

// checkTombstone checks that a group tombstone (records 3, 11, 17) may remove the group: no
// members, an empty target assignment (where the type checks it) and assignment epoch -1
// (its target assignment metadata tombstone replayed). A group that the lookup created anew
// (replacing a simple classic group) never passes: its assignment epoch is not -1.
func (g *modernGroup[M, T]) checkTombstone(r rec, k *modernRules) error {
	switch {
	case len(g.members) > 0:
		return r.err(ErrTombstoneOrder, illegalState, "received a tombstone record to delete group %s but the group still has %d members", r.group, len(g.members))
	case k.groupTombstoneChecksTarget && len(g.target) > 0:
		return r.err(ErrTombstoneOrder, illegalState, "received a tombstone record to delete group %s but the target assignment still has %d members", r.group, len(g.target))
	case g.assignmentEpoch != -1:
		return r.err(ErrTombstoneOrder, illegalState, k.groupTombstoneEpoch, r.group, g.assignmentEpoch)
	}
	return nil
}

// setAssignmentMetadata replays a target assignment metadata value (records 6, 12, 20): the
// assignment epoch and (4.3+) timestamp. On 4.3+ the value is checked first
// (TargetAssignmentMetadata): an epoch below -1 or a negative timestamp fails
// (IllegalArgumentException).
func (g *modernGroup[M, T]) setAssignmentMetadata(r rec, v KafkaVersion, a TargetAssignmentMetadataValue) error {
	if v.hasAssignmentTimestamp() {
		switch {
		case a.AssignmentEpoch < -1:
			return r.err(ErrInvalidAssignmentMetadata, illegalArgument, "the assignment epoch must be non-negative or -1, got %d", a.AssignmentEpoch)
		case a.AssignmentTimestamp < 0:
			return r.err(ErrInvalidAssignmentMetadata, illegalArgument, "the assignment timestamp must be non-negative, got %d", a.AssignmentTimestamp)
		}
		g.assignmentTimestamp = a.AssignmentTimestamp
	}
	g.assignmentEpoch = a.AssignmentEpoch
	return nil
}

// modernSteps is a group type with the core's replay steps (*consumerGroup, *shareGroup,
// *streamsGroup), for the Replay* methods the three types share through the functions below.
type modernSteps interface {
	comparable
	group
	setGroupMetadata(epoch int32, hash int64, readHash bool)
	checkTombstone(r rec, k *modernRules) error
	setAssignmentMetadata(r rec, v KafkaVersion, a TargetAssignmentMetadataValue) error
	clearAssignmentMetadata(r rec) error
}

// modernLookup is a group type's lookup (lookupConsumer, lookupShare, lookupStreams).
type modernLookup[P modernSteps] func(s *State, r rec, create bool) (P, bool, error)

// replayGroupMetadata replays a group metadata value of records 3 and 11 (record 17 has more
// to it): the group looked up or created, its epoch and (4.1+) metadata hash set.
func replayGroupMetadata[P modernSteps](s *State, r rec, lookup modernLookup[P], epoch int32, hash int64) error {
	g, fresh, err := lookup(s, r, true)
	if err != nil {
		return err
	}
	g.setGroupMetadata(epoch, hash, s.version.hasMetadataHash())
	s.install(r.group, g, fresh)
	return nil
}

// replayGroupTombstone replays a group tombstone (records 3, 11, 17): a missing group is
// ignored; the group must pass checkTombstone, and is then removed.
func replayGroupTombstone[P modernSteps](s *State, r rec, lookup modernLookup[P], k *modernRules) error {
	g, _, err := lookup(s, r, false)
	var missing P
	if err != nil || g == missing {
		return err
	}
	if err := g.checkTombstone(r, k); err != nil {
		return err
	}
	s.removeGroup(r.group)
	return nil
}

// replayAssignmentMetadata replays a target assignment metadata value v (records 6, 12, 20),
// or its tombstone (r.tombstone), for the group type whose lookup is given: the group looked
// up (created when create), the step, the group installed. (v by value: a pointer escapes
// through the generic call.)
func replayAssignmentMetadata[P modernSteps](s *State, r rec, create bool, lookup modernLookup[P], v TargetAssignmentMetadataValue) error {
	g, fresh, err := lookup(s, r, create)
	var missing P
	if err != nil || g == missing {
		return err
	}
	if r.tombstone {
		err = g.clearAssignmentMetadata(r)
	} else {
		err = g.setAssignmentMetadata(r, s.version, v)
	}
	if err != nil {
		return err
	}
	s.install(r.group, g, fresh)
	return nil
}

// clearAssignmentMetadata replays a target assignment metadata tombstone: the target
// assignment must be empty; the epoch becomes -1 and the timestamp 0.
func (g *modernGroup[M, T]) clearAssignmentMetadata(r rec) error {
	if len(g.target) > 0 {
		return r.err(ErrTombstoneOrder, illegalState, "received a tombstone record to delete target assignment of %s but the assignment still has %d members", r.group, len(g.target))
	}
	g.assignmentEpoch, g.assignmentTimestamp = -1, 0
	return nil
}

// removeMember replays a member metadata tombstone (records 5, 10, 19) for an existing
// member r.member whose epoch is epoch (set is false while no record has set it, which only
// streams members can be): the member must have epoch -1 (its current assignment tombstone
// replayed) and no target assignment; then it is removed. An unset epoch fails with
// ErrMissingField (Kafka unboxes a null epoch: NullPointerException).
func (g *modernGroup[M, T]) removeMember(r rec, k *modernRules, epoch int32, set bool) error {
	switch {
	case !set:
		return r.err(ErrMissingField, nullPointer, "received a tombstone record to delete member %s whose member epoch was never set", r.member)
	case epoch != LeaveGroupMemberEpoch:
		return r.err(ErrTombstoneOrder, illegalState, k.memberTombstoneEpoch, r.member, epoch)
	}
	if _, ok := g.target[r.member]; ok {
		return r.err(ErrTombstoneOrder, illegalState, k.memberTombstoneTarget, r.member)
	}
	delete(g.members, r.member)
	return nil
}
