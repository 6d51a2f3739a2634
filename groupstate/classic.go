package groupstate

import (
	"slices"
	"strings"
)

// ClassicGroupValue is the value of record 2 (GroupMetadataValue).
type ClassicGroupValue struct {
	ProtocolType          string  // "" (or null on the wire) means none
	Generation            int32   //
	Protocol              *string // nullable
	Leader                *string // nullable
	CurrentStateTimestamp int64   // -1: none (absent before v2)
	Members               []ClassicMember
}

// ClassicMember is a member of a classic group, both as mutator input (one element of
// GroupMetadataValue.members, with RebalanceTimeoutMs as on the wire) and in views (with
// RebalanceTimeoutMs -1 replaced by the session timeout, as Kafka does on load).
//
// Subscription and Assignment are kept raw. When the protocol type is "consumer" the caller
// may decode them (ConsumerProtocolSubscription/Assignment) and fill ProtocolDecoded,
// SubscribedTopics and AssignedPartitions for display; groupstate never parses them.
type ClassicMember struct {
	MemberID           string                 `json:"memberId"`
	GroupInstanceID    *string                `json:"groupInstanceId"`
	ClientID           string                 `json:"clientId"`
	ClientHost         string                 `json:"clientHost"`
	RebalanceTimeoutMs int32                  `json:"rebalanceTimeoutMs"`
	SessionTimeoutMs   int32                  `json:"sessionTimeoutMs"`
	Subscription       []byte                 `json:"subscription,omitempty"`
	Assignment         []byte                 `json:"assignment,omitempty"`
	ProtocolDecoded    bool                   `json:"protocolDecoded"`
	SubscribedTopics   []string               `json:"subscribedTopics,omitempty"`   // sorted, deduplicated
	AssignedPartitions []NamedTopicPartitions `json:"assignedPartitions,omitempty"` // sorted by topic
}

// ClassicGroup is the view of a classic group.
type ClassicGroup struct {
	GroupID               string  `json:"groupId"`
	State                 string  `json:"state"` // Empty or Stable after replay
	ProtocolType          string  `json:"protocolType"`
	Generation            int32   `json:"generation"`
	Protocol              *string `json:"protocol"`
	Leader                *string `json:"leader"`
	CurrentStateTimestamp int64   `json:"currentStateTimestamp"` // -1: none
	// Simple is ClassicGroup.isSimpleGroup: no protocol type and no members (the group an
	// offset commit creates, or an empty GroupMetadata value with protocol type "").
	Simple bool `json:"simple"`
	// SubscribedTopics is ClassicGroup.computeSubscribedTopics, from the caller-decoded
	// member subscriptions: known only for protocol type "consumer" when the group is empty
	// or has a protocol and every member's subscription was decoded.
	SubscribedTopicsKnown bool            `json:"subscribedTopicsKnown"`
	SubscribedTopics      []string        `json:"subscribedTopics,omitempty"`
	Members               []ClassicMember `json:"members,omitempty"` // sorted by member id
}

type classicGroup struct {
	protocolType          string
	generation            int32
	protocol              *string
	leader                *string
	currentStateTimestamp int64
	members               []ClassicMember // sorted by id, immutable once stored
}

func (*classicGroup) groupType() GroupType { return GroupTypeClassic }

func (g *classicGroup) isSimple() bool { return g.protocolType == "" && len(g.members) == 0 }

func (g *classicGroup) state() string {
	if len(g.members) == 0 {
		return StateEmpty
	}
	return StateStable
}

func (m ClassicMember) clone() ClassicMember {
	m.GroupInstanceID = cloneStrPtr(m.GroupInstanceID)
	m.Subscription = cloneBytes(m.Subscription)
	m.Assignment = cloneBytes(m.Assignment)
	m.SubscribedTopics = cloneStrings(m.SubscribedTopics)
	if len(m.AssignedPartitions) == 0 {
		m.AssignedPartitions = nil
	} else {
		ap := make([]NamedTopicPartitions, len(m.AssignedPartitions))
		for i, tp := range m.AssignedPartitions {
			ap[i] = NamedTopicPartitions{Topic: tp.Topic, Partitions: cloneInt32s(tp.Partitions)}
		}
		m.AssignedPartitions = ap
	}
	return m
}

// normalized returns a copy with sorted display lists.
func (m ClassicMember) normalized() ClassicMember {
	m = m.clone()
	m.SubscribedTopics = stringSet(m.SubscribedTopics)
	for i := range m.AssignedPartitions {
		m.AssignedPartitions[i].Partitions = int32Set(m.AssignedPartitions[i].Partitions)
	}
	slices.SortStableFunc(m.AssignedPartitions, func(a, b NamedTopicPartitions) int { return strings.Compare(a.Topic, b.Topic) })
	return m
}

// ReplayGroupMetadata replays a GroupMetadataValue (record 2): it builds a new classic group
// and puts it in place of any group with that id, whatever its type. State is Empty without
// members, Stable otherwise; a null leader becomes the first member; a rebalance timeout of
// -1 becomes the session timeout. It fails as ClassicGroup.add does: a static instance id
// used twice, or a member whose protocol is not supported by all members already added
// (which only happens when a member id repeats and more members follow).
func (s *State) ReplayGroupMetadata(groupID string, v ClassicGroupValue) error {
	g := &classicGroup{
		protocolType:          v.ProtocolType,
		generation:            v.Generation,
		protocol:              cloneStrPtr(v.Protocol),
		leader:                cloneStrPtr(v.Leader),
		currentStateTimestamp: v.CurrentStateTimestamp,
	}
	byID := make(map[string]int, len(v.Members))
	statics := map[string]bool{}
	supported := 0 // supportedProtocols count of the single protocol every loaded member has
	for _, in := range v.Members {
		r := rec{typ: recordTypeGroupMetadata, group: groupID, member: in.MemberID}
		if in.GroupInstanceID != nil {
			if statics[*in.GroupInstanceID] {
				return r.err(ErrClassicGroupAdd, illegalState, "static member with groupInstanceId=%s cannot be added to group %s since it is already a member", *in.GroupInstanceID, groupID)
			}
			statics[*in.GroupInstanceID] = true
		}
		// The protocol type check cannot fail here: the first member sets the group's type to
		// the value's protocol type, which every member shares.
		if supported != len(byID) {
			return r.err(ErrClassicGroupAdd, illegalState, "none of the member's protocols can be supported (member id repeated in the GroupMetadata value)")
		}
		if g.leader == nil {
			id := in.MemberID
			g.leader = &id
		}
		m := in.normalized()
		if m.RebalanceTimeoutMs == -1 {
			m.RebalanceTimeoutMs = m.SessionTimeoutMs
		}
		if i, ok := byID[m.MemberID]; ok {
			g.members[i] = m
		} else {
			byID[m.MemberID] = len(g.members)
			g.members = append(g.members, m)
		}
		supported++
	}
	slices.SortFunc(g.members, func(a, b ClassicMember) int { return strings.Compare(a.MemberID, b.MemberID) })
	s.groups[groupID] = g
	return nil
}

// ReplayGroupMetadataTombstone replays a GroupMetadata tombstone (record 2): the group is
// removed whatever its type. A missing group is ignored. It never fails.
func (s *State) ReplayGroupMetadataTombstone(groupID string) error {
	s.removeGroup(groupID)
	return nil
}

// ClassicGroup returns a copy of the classic group id.
func (v View) ClassicGroup(id string) (ClassicGroup, bool) {
	s := v.s
	g, ok := s.groups[id].(*classicGroup)
	if !ok {
		return ClassicGroup{}, false
	}
	return g.view(id), true
}

func (g *classicGroup) view(id string) ClassicGroup {
	v := ClassicGroup{
		GroupID:               id,
		State:                 g.state(),
		ProtocolType:          g.protocolType,
		Generation:            g.generation,
		Protocol:              cloneStrPtr(g.protocol),
		Leader:                cloneStrPtr(g.leader),
		CurrentStateTimestamp: g.currentStateTimestamp,
		Simple:                g.isSimple(),
	}
	if len(g.members) > 0 {
		v.Members = make([]ClassicMember, len(g.members))
		for i, m := range g.members {
			v.Members[i] = m.clone()
		}
	}
	v.SubscribedTopicsKnown, v.SubscribedTopics = g.subscribedTopics()
	return v
}

func (g *classicGroup) subscribedTopics() (bool, []string) {
	if g.protocolType != "consumer" {
		return false, nil
	}
	if len(g.members) == 0 {
		return true, nil
	}
	if g.protocol == nil {
		return false, nil
	}
	var all []string
	for _, m := range g.members {
		if !m.ProtocolDecoded {
			return false, nil
		}
		all = append(all, m.SubscribedTopics...)
	}
	return true, stringSet(all)
}
