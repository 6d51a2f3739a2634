package coordinator

import (
	"strings"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// What the modern groups' decisions share (Kafka's ModernGroup and the steps of
// GroupMetadataManager that consumer and streams heartbeats have in common): how a heartbeat
// finds its group and its member, and the state a group derives from its epochs.

// Loaded is what LoadGroup found for a heartbeat.
type Loaded int

const (
	// LoadNew: no group (or an empty classic group, now tombstoned): the join creates one.
	LoadNew Loaded = iota
	// LoadStored: a group of the coordinator's type, to build from the state.
	LoadStored
	// LoadClassic: a classic group with members, which the join converts (only when the
	// coordinator converts classic groups).
	LoadClassic
)

// LoadGroup is getOrMaybeCreate{Consumer,Streams}Group for a group of type typ: a join
// creates a missing group and replaces an empty classic group (appending its tombstone to
// records); a classic group with members is converted by a join when convertsClassic (the
// consumer coordinator's migration), and is not the coordinator's group otherwise.
func LoadGroup(st groupstate.View, id string, typ groupstate.GroupType, joining, convertsClassic bool, records *[]recordcodec.Record) (Loaded, *Error) {
	stored, exists := st.GroupType(id)
	switch {
	case !exists:
		if !joining {
			return 0, Errorf(ErrGroupIDNotFound, "%s group %s not found.", typeTitle(typ), id)
		}
		return LoadNew, nil
	case stored == typ:
		return LoadStored, nil
	case joining && stored == groupstate.GroupTypeClassic:
		cg, _ := st.ClassicGroup(id)
		if len(cg.Members) == 0 {
			*records = append(*records, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.GroupMetadata, Group: id}})
			return LoadNew, nil
		}
		if convertsClassic {
			return LoadClassic, nil
		}
	}
	return 0, Errorf(ErrGroupIDNotFound, "Group %s is not a %s group.", id, typ)
}

// CheckGroupType is the group lookup of a leave (epoch -1 or -2): the group must exist and
// be of type typ.
func CheckGroupType(st groupstate.View, id string, typ groupstate.GroupType) *Error {
	stored, ok := st.GroupType(id)
	if !ok {
		return Errorf(ErrGroupIDNotFound, "Group %s not found.", id)
	}
	if stored != typ {
		return Errorf(ErrGroupIDNotFound, "Group %s is not a %s group.", id, typ)
	}
	return nil
}

func typeTitle(typ groupstate.GroupType) string {
	s := string(typ)
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// KnownMember is a dynamic member's lookup (getOrMaybeCreate*GroupMember without creating):
// UNKNOWN_MEMBER_ID when group has no member memberID.
func KnownMember[M any](members map[string]M, group, memberID string) (M, *Error) {
	m, ok := members[memberID]
	if !ok {
		return m, unknownMember(group, memberID)
	}
	return m, nil
}

// unknownMember is kept out of KnownMember so that the lookup inlines.
func unknownMember(group, memberID string) *Error {
	return Errorf(ErrUnknownMemberID, "Member %s is not a member of group %s.", memberID, group)
}

// StaticOwner is the member that holds instance id inst (static maps instance ids to member
// ids), if any.
func StaticOwner[M any](members map[string]M, static map[string]string, inst string) (M, bool) {
	var m M
	id := static[inst]
	if id == "" {
		return m, false
	}
	m, ok := members[id]
	return m, ok
}

// KnownStaticMember is a static member's lookup outside a join: throwIfStaticMemberIsUnknown
// (UNKNOWN_MEMBER_ID when nobody holds inst) and throwIfInstanceIdIsFenced
// (FENCED_INSTANCE_ID when another member id holds it; idOf gives a member's id).
func KnownStaticMember[M any](members map[string]M, static map[string]string, memberID, inst string, idOf func(M) string) (M, *Error) {
	m, ok := StaticOwner(members, static, inst)
	if !ok {
		return m, Errorf(ErrUnknownMemberID, "Instance id %s is unknown.", inst)
	}
	if owner := idOf(m); owner != memberID {
		return m, Errorf(ErrFencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", memberID, inst, owner)
	}
	return m, nil
}

// UnreleasedInstance is UNRELEASED_INSTANCE_ID: a static member joins with an instance id
// that an active member (owner) still holds.
func UnreleasedInstance(memberID, inst, owner string) *Error {
	return Errorf(ErrUnreleasedInstanceID, "Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", memberID, inst, owner)
}

// GroupState is the state a modern group derives from its members and epochs
// (ConsumerGroup.maybeUpdateGroupState, StreamsGroup.maybeUpdateGroupState with its 4.2+
// rule): EMPTY without members, NOT_READY when not ready (a streams group whose topology is
// not validated; consumer groups are always ready), ASSIGNING while the group epoch is ahead
// of the assignment epoch, RECONCILING until every member is reconciled to the assignment
// epoch (reconciledTo), else STABLE.
func GroupState[M any](members map[string]M, ready bool, groupEpoch, assignmentEpoch int32, reconciledTo func(M, int32) bool) string {
	switch {
	case len(members) == 0:
		return groupstate.StateEmpty
	case !ready:
		return groupstate.StateNotReady
	case groupEpoch > assignmentEpoch:
		return groupstate.StateAssigning
	}
	for _, m := range members {
		if !reconciledTo(m, assignmentEpoch) {
			return groupstate.StateReconciling
		}
	}
	return groupstate.StateStable
}

// SameString reports whether two optional strings are equal (both nil, or equal values).
func SameString(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// LookupMember is a heartbeat's member outside a join: a dynamic member by its member id
// (KnownMember), a static one by its instance id (KnownStaticMember).
func LookupMember[M any](members map[string]M, static map[string]string, group, memberID string, instanceID *string, idOf func(M) string) (M, *Error) {
	if instanceID == nil {
		return KnownMember(members, group, memberID)
	}
	return KnownStaticMember(members, static, memberID, *instanceID, idOf)
}

// CheckIDs is the part of a heartbeat's validation every modern group shares
// (throwIf{Consumer,Streams}GroupHeartbeatRequestIsInvalid after the member id): the group
// id must not be empty, the instance id and rack id not blank when given.
func CheckIDs(group string, instanceID, rackID *string) *Error {
	if strings.TrimSpace(group) != "" && !blank(instanceID) && !blank(rackID) {
		return nil // the common case, inlined
	}
	return invalidIDs(group, instanceID)
}

// invalidIDs is the error of CheckIDs: the first of the ids that is empty or blank.
func invalidIDs(group string, instanceID *string) *Error {
	switch {
	case strings.TrimSpace(group) == "":
		return Errorf(ErrInvalidRequest, "GroupId can't be empty.")
	case blank(instanceID):
		return Errorf(ErrInvalidRequest, "InstanceId can't be empty.")
	}
	return Errorf(ErrInvalidRequest, "RackId can't be empty.")
}

func blank(s *string) bool { return s != nil && strings.TrimSpace(*s) == "" }
