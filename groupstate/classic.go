package groupstate

import (
	"bytes"
	"slices"
	"strings"
)

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

// ReplayGroupMetadata replays a GroupMetadataValue (record 2): it builds a new classic group
// and puts it in place of any group with that id, whatever its type. State is Empty without
// members, Stable otherwise; a null leader becomes the first member; a rebalance timeout of
// -1 becomes the session timeout. It fails as ClassicGroup.add does: a static instance id
// used twice, or a member whose protocol is not supported by all members already added
// (which only happens when a member id repeats and more members follow).
//
// decode, when not nil, decodes the subscription and assignment of a member of a group of
// protocol type "consumer" (ConsumerProtocolSubscription and Assignment), filling
// ProtocolDecoded, SubscribedTopics and AssignedPartitions for display (groupstate never
// parses them itself); when it is nil the members come decoded (or not) by the caller.
//
// A value equal to the classic group in place changes nothing; members equal to the ones in
// place are kept as they are, and with decode set only members whose protocol bytes changed
// are decoded (the others keep the decoded lists in place).
func (s *State) ReplayGroupMetadata(groupID string, v ClassicGroupValue, decode func(m *ClassicMember)) error {
	s.touch(groupID)
	old, _ := s.groups[groupID].(*classicGroup)
	members, err := s.classicMembers(groupID, v, old, decode)
	if err != nil {
		return err
	}
	leader := v.Leader
	if leader == nil && len(v.Members) > 0 {
		leader = &v.Members[0].MemberID
	}
	if old != nil && old.same(v, leader, members) {
		return nil
	}
	g := &classicGroup{
		protocolType:          s.intern(v.ProtocolType),
		generation:            v.Generation,
		protocol:              keepStrPtr(nil, v.Protocol),
		leader:                keepStrPtr(nil, leader),
		currentStateTimestamp: v.CurrentStateTimestamp,
	}
	if len(members) > 0 {
		g.members = make([]ClassicMember, len(members))
		for i := range members {
			g.members[i] = s.keepClassicMember(old, &members[i])
		}
	}
	s.groups[strings.Clone(groupID)] = g
	return nil
}

// classicMembers validates the members of v as ClassicGroup.add does and returns them
// normalized (the display lists sorted), the last of a repeated id kept, sorted by id: in
// scratch memory.
func (s *State) classicMembers(groupID string, v ClassicGroupValue, old *classicGroup, decodeFn func(*ClassicMember)) ([]ClassicMember, error) {
	sc := s.scr()
	if sc.memberIdx == nil {
		sc.memberIdx, sc.statics = map[string]int{}, map[string]bool{}
	}
	clear(sc.memberIdx)
	clear(sc.statics)
	out, strs, named := sc.classic[:0], sc.strs[:0], sc.named[:0]
	decode := decodeFn != nil && v.ProtocolType == "consumer"
	supported := 0 // supportedProtocols count of the single protocol every loaded member has
	for _, in := range v.Members {
		r := rec{typ: recordTypeGroupMetadata, group: groupID, member: in.MemberID}
		if in.GroupInstanceID != nil {
			if sc.statics[*in.GroupInstanceID] {
				return nil, r.err(ErrClassicGroupAdd, illegalState, "static member with groupInstanceId=%s cannot be added to group %s since it is already a member", *in.GroupInstanceID, groupID)
			}
			sc.statics[*in.GroupInstanceID] = true
		}
		// The protocol type check cannot fail here: the first member sets the group's type to
		// the value's protocol type, which every member shares.
		if supported != len(sc.memberIdx) {
			return nil, r.err(ErrClassicGroupAdd, illegalState, "none of the member's protocols can be supported (member id repeated in the GroupMetadata value)")
		}
		m := in
		if decode {
			if om := old.decodedMember(m.MemberID, m.Subscription, m.Assignment); om != nil {
				m.ProtocolDecoded, m.SubscribedTopics, m.AssignedPartitions = om.ProtocolDecoded, om.SubscribedTopics, om.AssignedPartitions
			} else {
				// Through scratch memory: m itself would escape to the heap.
				sc.decoded = m
				decodeFn(&sc.decoded)
				m = sc.decoded
				sc.decoded = ClassicMember{}
			}
		}
		// normalized, in scratch memory
		if len(m.SubscribedTopics) > 0 {
			start := len(strs)
			strs = append(strs, m.SubscribedTopics...)
			set := strs[start:]
			slices.Sort(set)
			set = slices.Compact(set)
			strs = strs[:start+len(set)]
			m.SubscribedTopics = set[:len(set):len(set)]
		} else {
			m.SubscribedTopics = nil
		}
		if len(m.AssignedPartitions) > 0 {
			start := len(named)
			for _, tp := range m.AssignedPartitions {
				named = append(named, NamedTopicPartitions{Topic: tp.Topic, Partitions: appendSet(&sc.ints, tp.Partitions)})
			}
			l := named[start:len(named):len(named)]
			slices.SortStableFunc(l, func(a, b NamedTopicPartitions) int { return strings.Compare(a.Topic, b.Topic) })
			m.AssignedPartitions = l
		} else {
			m.AssignedPartitions = nil
		}
		if m.RebalanceTimeoutMs == -1 {
			m.RebalanceTimeoutMs = m.SessionTimeoutMs
		}
		if i, ok := sc.memberIdx[m.MemberID]; ok {
			out[i] = m
		} else {
			sc.memberIdx[m.MemberID] = len(out)
			out = append(out, m)
		}
		supported++
	}
	slices.SortFunc(out, func(a, b ClassicMember) int { return strings.Compare(a.MemberID, b.MemberID) })
	sc.classic, sc.strs, sc.named = out, strs, named
	return out, nil
}

// decodedMember returns g's member id when g is a consumer-protocol group and the member has
// exactly these protocol bytes: its decoded lists are what decoding them again would give.
func (g *classicGroup) decodedMember(id string, sub, asg []byte) *ClassicMember {
	if g == nil || g.protocolType != "consumer" {
		return nil
	}
	if m := g.memberByID(id); m != nil && bytes.Equal(m.Subscription, sub) && bytes.Equal(m.Assignment, asg) {
		return m
	}
	return nil
}

func (g *classicGroup) memberByID(id string) *ClassicMember {
	i, ok := slices.BinarySearchFunc(g.members, id, func(m ClassicMember, id string) int { return strings.Compare(m.MemberID, id) })
	if !ok {
		return nil
	}
	return &g.members[i]
}

// same reports whether g is the group that v (with the leader it gets, and its normalized
// members) builds.
func (g *classicGroup) same(v ClassicGroupValue, leader *string, members []ClassicMember) bool {
	return g.protocolType == v.ProtocolType && g.generation == v.Generation && sameStrPtr(g.protocol, v.Protocol) &&
		sameStrPtr(g.leader, leader) && g.currentStateTimestamp == v.CurrentStateTimestamp &&
		slices.EqualFunc(g.members, members, sameClassicMember)
}

// sameClassicMember compares a stored member with a normalized one (empty lists and bytes
// are nil when stored, so they compare by length).
func sameClassicMember(a, b ClassicMember) bool {
	return a.MemberID == b.MemberID && sameStrPtr(a.GroupInstanceID, b.GroupInstanceID) && a.ClientID == b.ClientID &&
		a.ClientHost == b.ClientHost && a.RebalanceTimeoutMs == b.RebalanceTimeoutMs && a.SessionTimeoutMs == b.SessionTimeoutMs &&
		bytes.Equal(a.Subscription, b.Subscription) && bytes.Equal(a.Assignment, b.Assignment) && a.ProtocolDecoded == b.ProtocolDecoded &&
		slices.Equal(a.SubscribedTopics, b.SubscribedTopics) &&
		slices.EqualFunc(a.AssignedPartitions, b.AssignedPartitions, func(x, y NamedTopicPartitions) bool {
			return x.Topic == y.Topic && slices.Equal(x.Partitions, y.Partitions)
		})
}

// keepClassicMember returns the member of old equal to the normalized m, else a copy of m
// in the state's memory.
func (s *State) keepClassicMember(old *classicGroup, m *ClassicMember) ClassicMember {
	if old != nil {
		if om := old.memberByID(m.MemberID); om != nil && sameClassicMember(*om, *m) {
			return *om
		}
	}
	c := m.clone()
	c.MemberID, c.ClientID, c.ClientHost = strings.Clone(m.MemberID), strings.Clone(m.ClientID), strings.Clone(m.ClientHost)
	c.GroupInstanceID = keepStrPtr(nil, m.GroupInstanceID)
	for i := range c.SubscribedTopics {
		c.SubscribedTopics[i] = s.intern(c.SubscribedTopics[i])
	}
	for i := range c.AssignedPartitions {
		c.AssignedPartitions[i].Topic = s.intern(c.AssignedPartitions[i].Topic)
	}
	return c
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
