package consumer

import (
	"maps"
	"slices"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Member states of record 8 (consumer numbering: MemberState.java).
const (
	stateStable             int8 = 0
	stateUnrevokedPartitons int8 = 1
	stateUnreleased         int8 = 2
	stateUnknown            int8 = 127
)

// partitions is a member's partitions with their assignment epochs: topic -> partition ->
// the epoch at which it was assigned.
type partitions map[Uuid]map[int32]int32

func (p partitions) clone() partitions {
	if p == nil {
		return nil
	}
	c := make(partitions, len(p))
	for t, ps := range p {
		c[t] = maps.Clone(ps)
	}
	return c
}

func (p partitions) has(t Uuid, n int32) bool {
	_, ok := p[t][n]
	return ok
}

func (p partitions) count() int {
	n := 0
	for _, ps := range p {
		n += len(ps)
	}
	return n
}

// equalWithEpochs compares partitions and their epochs (ConsumerGroupMember.equals).
func (p partitions) equalWithEpochs(o partitions) bool {
	if len(p) != len(o) {
		return false
	}
	for t, ps := range p {
		if !maps.Equal(ps, o[t]) {
			return false
		}
	}
	return true
}

// member is the coordinator's working copy of a consumer group member (ConsumerGroupMember).
type member struct {
	id                 string
	epoch, prevEpoch   int32
	state              int8
	instanceID, rackID *string
	clientID           string
	clientHost         string
	names              []string // subscribed topic names, sorted set
	regex              string   // "" = none
	rebalanceTimeoutMs int32
	serverAssignor     *string
	classic            *groupstate.ClassicMemberMetadata
	assigned, pending  partitions
}

// newDefaultMember is ConsumerGroupMember.Builder's defaults (ModernGroup.getOrMaybeCreateMember).
func newDefaultMember(id string) *member {
	return &member{id: id, prevEpoch: -1, state: stateStable, rebalanceTimeoutMs: -1}
}

func (m *member) clone() *member {
	c := *m
	c.names = slices.Clone(m.names)
	c.assigned, c.pending = m.assigned.clone(), m.pending.clone()
	return &c
}

func (m *member) usesClassic() bool { return m.classic != nil }

func (m *member) isReconciledTo(epoch int32) bool { return m.state == stateStable && m.epoch == epoch }

func memberID(m *member) string { return m.id }

// sameMetadata compares what record 5 holds.
func sameMetadata(a, b *member) bool {
	return coordinator.SameString(a.instanceID, b.instanceID) && coordinator.SameString(a.rackID, b.rackID) && a.clientID == b.clientID &&
		a.clientHost == b.clientHost && slices.Equal(a.names, b.names) && a.regex == b.regex &&
		a.rebalanceTimeoutMs == b.rebalanceTimeoutMs && coordinator.SameString(a.serverAssignor, b.serverAssignor) &&
		sameClassic(a.classic, b.classic)
}

func sameClassic(a, b *groupstate.ClassicMemberMetadata) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.SessionTimeoutMs == b.SessionTimeoutMs && slices.EqualFunc(a.SupportedProtocols, b.SupportedProtocols, func(x, y groupstate.ClassicProtocol) bool {
		return x.Name == y.Name && string(x.Metadata) == string(y.Metadata)
	})
}

// sameAssignment compares what record 8 holds.
func sameAssignment(a, b *member) bool {
	return a.epoch == b.epoch && a.prevEpoch == b.prevEpoch && a.state == b.state &&
		a.assigned.equalWithEpochs(b.assigned) && a.pending.equalWithEpochs(b.pending)
}

// group is the coordinator's working copy of a consumer group, built from the read-only
// groupstate view. It is never written back: decisions become records.
type group struct {
	id                  string
	exists              bool
	epoch               int32
	assignmentEpoch     int32
	assignmentTimestamp int64
	metadataHash        int64
	hasPartitionRecord  bool // a 4.0 partition-metadata record (4) to tombstone
	members             map[string]*member
	static              map[string]string // instance id -> member id
	target              map[string][]TopicPartitions
	regexes             map[string]groupstate.ResolvedRegularExpression
	// memberTable and regexTable are the layouts of Kafka's maps of the members and the
	// regexes (TimelineHashMaps), whose iteration orders Kafka's group-wide records and its
	// assignors follow (memberOrder, regexOrder); assignorTable is the layout of its map of
	// members per server assignor (serverAssignors), whose order breaks the preferred
	// assignor's ties.
	memberTable, regexTable, assignorTable timelineTable

	// Derived on demand and kept with a cached model: the group's preferred assignor and
	// its subscription type.
	preferredName   string
	preferredFor    string // the default assignor preferredName was computed with
	homogeneousSet  bool
	homogeneousType bool
}

// preferred is preferredServerAssignor() or the default assignor, computed once per model.
func (g *group) preferred(cfg Config) string {
	if g.preferredName == "" || g.preferredFor != cfg.Assignors[0] {
		g.preferredName, g.preferredFor = preferredAssignor(g, nil, nil, cfg), cfg.Assignors[0]
	}
	return g.preferredName
}

// homogeneous is the group's stored subscription type, computed once per model.
func (g *group) homogeneous() bool {
	if !g.homogeneousSet {
		g.homogeneousType = subscriptionHomogeneous(g.subscribedRegexes(nil, nil), g.subscribedTopicNames(nil, nil, nil), len(g.members))
		g.homogeneousSet = true
	}
	return g.homogeneousType
}

// newGroup is a group created by a first join (Kafka 4.3+: group and assignment epoch 1).
func newGroup(id string) *group {
	return &group{id: id, epoch: 1, assignmentEpoch: 1, members: map[string]*member{}, static: map[string]string{},
		target: map[string][]TopicPartitions{}, regexes: map[string]groupstate.ResolvedRegularExpression{},
		memberTable: newTimelineTable(), regexTable: newTimelineTable(), assignorTable: newTimelineTable()}
}

// timelineTable is the layout of one of Kafka's TimelineHashMaps of a group (groupstate's
// MemberTable and RegexTable): its keys in the order they were inserted, and the size of its
// table.
type timelineTable struct {
	inserted []string
	slots    int
}

func newTimelineTable() timelineTable {
	return timelineTable{slots: coordinator.KafkaTimelineMinSlots}
}

// order is the order in which the map iterates its keys.
func (t timelineTable) order() []string {
	return coordinator.KafkaTimelineOrder(slices.Clone(t.inserted), coordinator.JavaStringHash, t.slots)
}

// consumerGroupOf is the consumer group id as the state holds it (false when it is not one).
func consumerGroupOf(st groupstate.View, id string) (*group, bool) {
	v, ok := st.ConsumerGroup(id)
	if !ok {
		return nil, false
	}
	g := groupFromView(&v)
	mt, _ := st.MemberTable(id)
	rt, _ := st.RegexTable(id)
	at, _ := st.AssignorTable(id)
	g.memberTable = timelineTable{inserted: mt.Inserted, slots: mt.Slots}
	g.regexTable = timelineTable{inserted: rt.Inserted, slots: rt.Slots}
	g.assignorTable = timelineTable{inserted: at.Inserted, slots: at.Slots}
	return g, true
}

func fromViewPartitions(v []groupstate.TopicPartitionsWithEpochs, memberEpoch int32) partitions {
	if len(v) == 0 {
		return nil
	}
	p := make(partitions, len(v))
	for _, tp := range v {
		m := make(map[int32]int32, len(tp.Partitions))
		for i, n := range tp.Partitions {
			e := memberEpoch
			if i < len(tp.AssignmentEpochs) {
				e = tp.AssignmentEpochs[i]
			}
			m[n] = e
		}
		p[tp.TopicID] = m
	}
	return p
}

func memberFromView(v *groupstate.ConsumerMember) *member {
	m := &member{
		id: v.MemberID, epoch: v.MemberEpoch, prevEpoch: v.PreviousMemberEpoch, state: v.State,
		instanceID: v.InstanceID, rackID: v.RackID, clientID: v.ClientID, clientHost: v.ClientHost,
		names: slices.Clone(v.SubscribedTopicNames), rebalanceTimeoutMs: v.RebalanceTimeoutMs,
		serverAssignor: v.ServerAssignor, classic: v.ClassicMemberMetadata,
	}
	switch m.state {
	case stateStable, stateUnrevokedPartitons, stateUnreleased:
	default:
		m.state = stateUnknown
	}
	if v.SubscribedTopicRegex != nil {
		m.regex = *v.SubscribedTopicRegex
	}
	m.assigned = fromViewPartitions(v.AssignedPartitions, v.MemberEpoch)
	m.pending = fromViewPartitions(v.PartitionsPendingRevocation, v.MemberEpoch)
	return m
}

func groupFromView(v *groupstate.ConsumerGroup) *group {
	g := &group{
		id: v.GroupID, exists: true, epoch: v.GroupEpoch, assignmentEpoch: v.AssignmentEpoch,
		assignmentTimestamp: v.AssignmentTimestamp, metadataHash: v.MetadataHash,
		hasPartitionRecord: len(v.SubscriptionMetadata) > 0,
		members:            make(map[string]*member, len(v.Members)), static: map[string]string{},
		target:  make(map[string][]TopicPartitions, len(v.TargetAssignment)),
		regexes: make(map[string]groupstate.ResolvedRegularExpression, len(v.ResolvedRegularExpressions)),
	}
	for i := range v.Members {
		m := memberFromView(&v.Members[i])
		g.members[m.id] = m
		if m.instanceID != nil {
			g.static[*m.instanceID] = m.id
		}
	}
	for _, t := range v.TargetAssignment {
		tps := make([]TopicPartitions, len(t.Partitions))
		for i, tp := range t.Partitions {
			tps[i] = TopicPartitions{Topic: tp.TopicID, Partitions: tp.Partitions}
		}
		g.target[t.MemberID] = tps
	}
	for _, r := range v.ResolvedRegularExpressions {
		g.regexes[r.Regex] = r
	}
	return g
}

// memberOrder is the iteration order of Kafka's map of the members (a TimelineHashMap), which
// its group-wide records, its conversions and its assignors' input follow.
func (g *group) memberOrder() []string { return g.memberTable.order() }

// regexOrder is the iteration order of Kafka's map of the resolved regexes.
func (g *group) regexOrder() []string { return g.regexTable.order() }

// numClassic is numClassicProtocolMembers: the members using the classic protocol.
func (g *group) numClassic() int {
	n := 0
	for _, m := range g.members {
		if m.usesClassic() {
			n++
		}
	}
	return n
}

// supportsClassicProtocols is ConsumerGroup.supportsClassicProtocols: a JoinGroup's protocols
// are acceptable when its protocol type is "consumer" and one of its protocol names is
// supported by every classic-protocol member (any name, in a group without members).
func (g *group) supportsClassicProtocols(protocolType string, names []string) bool {
	if protocolType != recordcodec.ConsumerProtocolType {
		return false
	}
	if len(g.members) == 0 {
		return len(names) > 0
	}
	counts := map[string]int{}
	for _, m := range g.members {
		if m.usesClassic() {
			for _, p := range m.classic.SupportedProtocols {
				counts[p.Name]++
			}
		}
	}
	n := g.numClassic()
	for _, name := range names {
		if counts[name] == n {
			return true
		}
	}
	return false
}

// waitingOnUnreleasedPartition: m is UNRELEASED_PARTITIONS and a partition of its target it
// does not have yet is still owned (assigned or pending revocation) by some member.
func (g *group) waitingOnUnreleasedPartition(m *member) bool {
	if m.state != stateUnreleased {
		return false
	}
	owners := g.owners()
	for _, tp := range g.target[m.id] {
		for _, p := range tp.Partitions {
			if !m.assigned.has(tp.Topic, p) && owners.epoch(tp.Topic, p) != -1 {
				return true
			}
		}
	}
	return false
}

// numRegexSubscribers is numSubscribedMembers(regex).
func (g *group) numRegexSubscribers(regex string) int {
	n := 0
	for _, m := range g.members {
		if m.regex == regex {
			n++
		}
	}
	return n
}

// subscribedRegexes is subscribedRegularExpressions with old replaced by updated (either may
// be nil): regex -> number of members using it.
func (g *group) subscribedRegexes(old, updated *member) map[string]int {
	out := map[string]int{}
	for _, m := range g.members {
		if old != nil && m.id == old.id {
			continue
		}
		if m.regex != "" {
			out[m.regex]++
		}
	}
	if updated != nil && updated.regex != "" {
		out[updated.regex]++
	}
	return out
}

// subscriptionCount is SubscriptionCount: members subscribing to a topic name by name and by
// a resolved regex.
type subscriptionCount struct{ byName, byRegex int }

// subscribedTopicNames is computeSubscribedTopicNames with old replaced by updated (either
// may be nil), and without the members in gone: topic name -> subscription counts. A regex
// counts once for each topic of its resolution, however many members use it.
func (g *group) subscribedTopicNames(old, updated *member, gone map[string]bool) map[string]subscriptionCount {
	out := map[string]subscriptionCount{}
	regexes := map[string]bool{}
	add := func(m *member) {
		for _, n := range m.names {
			c := out[n]
			c.byName++
			out[n] = c
		}
		if m.regex != "" {
			regexes[m.regex] = true
		}
	}
	for _, m := range g.members {
		if (old != nil && m.id == old.id) || gone[m.id] {
			continue
		}
		add(m)
	}
	if updated != nil {
		add(updated)
	}
	for re := range regexes {
		for _, n := range g.regexes[re].Topics {
			c := out[n]
			c.byRegex++
			out[n] = c
		}
	}
	return out
}

// subscriptionHomogeneous is ConsumerGroup.subscriptionType.
func subscriptionHomogeneous(regexes map[string]int, names map[string]subscriptionCount, numMembers int) bool {
	if len(regexes) == 0 {
		for _, c := range names {
			if c.byName != numMembers {
				return false
			}
		}
		return true
	}
	if len(regexes) != 1 {
		return false
	}
	for _, n := range regexes {
		if n != numMembers {
			return false
		}
	}
	for _, c := range names {
		if c.byRegex != 1 || c.byName > 0 {
			return false
		}
	}
	return true
}

// currentPartitionEpoch is ConsumerGroup.currentPartitionEpoch: the epoch of the member that
// owns a partition (assigned or pending revocation), -1 if free.
type ownerIndex map[Uuid]map[int32]int32

func (g *group) owners() ownerIndex {
	idx := ownerIndex{}
	for _, m := range g.members {
		for _, ps := range []partitions{m.assigned, m.pending} {
			for t, pm := range ps {
				o := idx[t]
				if o == nil {
					o = map[int32]int32{}
					idx[t] = o
				}
				for p := range pm {
					o[p] = m.epoch
				}
			}
		}
	}
	return idx
}

func (o ownerIndex) epoch(t Uuid, p int32) int32 {
	if e, ok := o[t][p]; ok {
		return e
	}
	return -1
}

// state is ConsumerGroup's derived state.
func (g *group) state() string {
	return coordinator.GroupState(g.members, true, g.epoch, g.assignmentEpoch, (*member).isReconciledTo)
}
