package groupstate

import "errors"

// StoredTasks is a plain task list (a target's active, standby or warm-up tasks, a current
// assignment's standby or warm-up tasks) exactly as a State stores it: in its canonical form
// (subtopologies strictly increasing, each with a sorted set of partitions; nil when empty)
// and never written again once stored (scratch.go). Only a State makes one, so a StoredTasks
// value is always canonical and immutable; its holder may hand it back to a state of the same
// Kafka version in place of the record the list came from. It does not hand out the list:
// the state's lists are shared, and read through the View's copies.
//
// That is what replay's cache of decoded task lists does (replay/tasklists.go): streams
// coordinators write the same task lists again and again, so a record whose encoded lists
// were all seen before is replayed from the lists the state stored for them, without decoding
// them into scratch memory, putting them into canonical form, comparing and hashing them.
type StoredTasks struct {
	l []TaskIDs
	v KafkaVersion
}

// StoredActiveTasks is StoredTasks for a current assignment's active tasks, with their
// assignment epochs as the state keeps them (none on 4.1).
type StoredActiveTasks struct {
	l []TaskIDsWithEpochs
	v KafkaVersion
}

// StoredStreamsAssignment is the six lists of a streams member's current assignment (record
// 22) as a State stores them.
type StoredStreamsAssignment struct {
	Active, ActivePendingRevocation                                    StoredActiveTasks
	Standby, Warmup, StandbyPendingRevocation, WarmupPendingRevocation StoredTasks
}

// StoredStreamsTarget is the three lists of a streams member's target assignment (record 21)
// as a State stores them.
type StoredStreamsTarget struct {
	Active, Standby, Warmup StoredTasks
}

// StreamsStoredTarget returns the stored lists of a member's target assignment.
func (v View) StreamsStoredTarget(groupID, memberID string) (StoredStreamsTarget, bool) {
	g, ok := v.s.groups[groupID].(*streamsGroup)
	if !ok {
		return StoredStreamsTarget{}, false
	}
	t, ok := g.target[memberID]
	if !ok {
		return StoredStreamsTarget{}, false
	}
	ver := v.s.version
	return StoredStreamsTarget{Active: StoredTasks{t.ActiveTasks, ver}, Standby: StoredTasks{t.StandbyTasks, ver},
		Warmup: StoredTasks{t.WarmupTasks, ver}}, true
}

// StreamsStoredAssignment returns the stored lists of a member's current assignment; false
// when the group or member is missing or the member has no current assignment yet.
func (v View) StreamsStoredAssignment(groupID, memberID string) (StoredStreamsAssignment, bool) {
	g, ok := v.s.groups[groupID].(*streamsGroup)
	if !ok {
		return StoredStreamsAssignment{}, false
	}
	m := g.members[memberID]
	if m == nil || m.AssignedTasks == nil || m.TasksPendingRevocation == nil {
		return StoredStreamsAssignment{}, false
	}
	ver := v.s.version
	cur, rev := m.AssignedTasks, m.TasksPendingRevocation
	return StoredStreamsAssignment{
		Active: StoredActiveTasks{cur.ActiveTasks, ver}, ActivePendingRevocation: StoredActiveTasks{rev.ActiveTasks, ver},
		Standby: StoredTasks{cur.StandbyTasks, ver}, Warmup: StoredTasks{cur.WarmupTasks, ver},
		StandbyPendingRevocation: StoredTasks{rev.StandbyTasks, ver}, WarmupPendingRevocation: StoredTasks{rev.WarmupTasks, ver},
	}, true
}

// from checks that every list was stored by a state of s's version: the canonical form of a
// list depends on the version (4.1 keeps no assignment epochs and rejects a repeated
// subtopology that later versions resolve). The zero value (an empty list) fits any state.
func (t StoredStreamsTarget) from(v KafkaVersion) bool {
	return storedBy(v, t.Active.v, t.Standby.v, t.Warmup.v)
}

func (t StoredStreamsAssignment) from(v KafkaVersion) bool {
	return storedBy(v, t.Active.v, t.ActivePendingRevocation.v, t.Standby.v, t.Warmup.v,
		t.StandbyPendingRevocation.v, t.WarmupPendingRevocation.v)
}

func storedBy(v KafkaVersion, vs ...KafkaVersion) bool {
	for _, x := range vs {
		if x != v && x != 0 {
			return false
		}
	}
	return true
}

var errForeignStoredTasks = errors.New("groupstate: stored task lists of a state of another Kafka version")

// ReplayStreamsGroupTargetAssignmentMemberStored is ReplayStreamsGroupTargetAssignmentMember
// for a record whose three lists are, in canonical form, lists the state stored before: it
// changes the state as that would, without the canonical forms, comparisons and copies.
func (s *State) ReplayStreamsGroupTargetAssignmentMemberStored(groupID, memberID string, t StoredStreamsTarget) error {
	if !t.from(s.version) {
		return errForeignStoredTasks
	}
	r := rec{typ: recordTypeStreamsGroupTargetAssignmentMember, group: groupID, member: memberID}
	g, fresh, err := s.lookupStreams(r, true)
	if err != nil {
		return err
	}
	old, had := g.target[memberID]
	if !had || !sameList(old.ActiveTasks, t.Active.l) || !sameList(old.StandbyTasks, t.Standby.l) ||
		!sameList(old.WarmupTasks, t.Warmup.l) {
		id := old.MemberID
		if !had {
			id = g.ownMemberID(memberID)
		}
		g.target[id] = StreamsMemberTarget{MemberID: id, ActiveTasks: t.Active.l, StandbyTasks: t.Standby.l, WarmupTasks: t.Warmup.l}
	}
	s.install(groupID, g, fresh)
	return nil
}

// ReplayStreamsGroupCurrentMemberAssignmentStored is ReplayStreamsGroupCurrentMemberAssignment
// for a record whose six lists are, in canonical form, lists the state stored before. The
// active lists must not depend on the member epoch (on 4.2+ a task without its assignment
// epoch gets the record's member epoch): the caller hands in only lists whose every task
// came with its epoch.
func (s *State) ReplayStreamsGroupCurrentMemberAssignmentStored(groupID, memberID string, memberEpoch, previousMemberEpoch int32, state int8, t StoredStreamsAssignment) error {
	if !t.from(s.version) {
		return errForeignStoredTasks
	}
	r := rec{typ: recordTypeStreamsGroupCurrentMemberAssignment, group: groupID, member: memberID}
	g, fresh, err := s.lookupStreams(r, true)
	if err != nil {
		return err
	}
	m := g.member(memberID)
	setInt32(&m.MemberEpoch, memberEpoch)
	setInt32(&m.PreviousMemberEpoch, previousMemberEpoch)
	setInt8(&m.State, streamsMemberState(state))
	if m.AssignedTasks == nil {
		m.AssignedTasks = &StreamsTasks{}
	}
	if m.TasksPendingRevocation == nil {
		m.TasksPendingRevocation = &StreamsTasks{}
	}
	*m.AssignedTasks = StreamsTasks{ActiveTasks: t.Active.l, StandbyTasks: t.Standby.l, WarmupTasks: t.Warmup.l}
	*m.TasksPendingRevocation = StreamsTasks{ActiveTasks: t.ActivePendingRevocation.l,
		StandbyTasks: t.StandbyPendingRevocation.l, WarmupTasks: t.WarmupPendingRevocation.l}
	s.install(groupID, g, fresh)
	return nil
}

// sameList reports whether a and b are the same stored list (not merely equal ones).
func sameList[E any](a, b []E) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
