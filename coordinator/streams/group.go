package streams

import (
	"maps"
	"slices"
	"strings"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
)

// Member states of record 22 (streams numbering: MemberState.java).
const (
	stateStable          int8 = 1
	stateUnrevokedTasks  int8 = 2
	stateUnreleasedTasks int8 = 3
	stateUnknown         int8 = 127
)

// member is the coordinator's working copy of a streams member (StreamsGroupMember).
type member struct {
	id                 string
	epoch, prevEpoch   int32
	state              int8
	instanceID, rackID *string
	clientID           string
	clientHost         string
	rebalanceTimeoutMs int32
	topologyEpoch      int32
	processID          string
	endpoint           *groupstate.StreamsEndpoint
	clientTags         []kv // sorted by key, unique keys
	assigned, pending  tuple
}

// newDefaultMember is StreamsGroupMember.Builder.withDefaults.
func newDefaultMember(id string) *member {
	return &member{id: id, state: stateStable, rebalanceTimeoutMs: -1, topologyEpoch: -1}
}

func (m *member) clone() *member {
	c := *m
	c.assigned, c.pending = m.assigned.clone(), m.pending.clone()
	c.clientTags = slices.Clone(m.clientTags)
	return &c
}

func (m *member) isReconciledTo(epoch int32) bool { return m.state == stateStable && m.epoch == epoch }

func memberID(m *member) string { return m.id }

func endpointEq(a, b *groupstate.StreamsEndpoint) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// sameMetadata compares what record 19 holds.
func sameMetadata(a, b *member) bool {
	return a.id == b.id && coordinator.SameString(a.instanceID, b.instanceID) && coordinator.SameString(a.rackID, b.rackID) &&
		a.clientID == b.clientID && a.clientHost == b.clientHost && a.rebalanceTimeoutMs == b.rebalanceTimeoutMs &&
		a.topologyEpoch == b.topologyEpoch && a.processID == b.processID && endpointEq(a.endpoint, b.endpoint) &&
		sameKVs(a.clientTags, b.clientTags)
}

// sameAssignment compares what record 22 holds.
func sameAssignment(a, b *member) bool {
	return a.epoch == b.epoch && a.prevEpoch == b.prevEpoch && a.state == b.state &&
		a.assigned.sameWithEpochs(b.assigned) && a.pending.sameWithEpochs(b.pending)
}

// epochRelevantChange is hasEpochRelevantMemberConfigChanged: what bumps the group epoch for a
// static member (KIP-1071: topology epoch, rack, client tags, process id).
func epochRelevantChange(a, b *member) bool {
	return a.topologyEpoch != b.topologyEpoch || !coordinator.SameString(a.rackID, b.rackID) ||
		!sameKVs(a.clientTags, b.clientTags) || a.processID != b.processID
}

// group is the coordinator's working copy of a streams group, built from the read-only
// groupstate view. It is never written back: decisions become records.
type group struct {
	id                     string
	exists                 bool
	epoch                  int32
	assignmentEpoch        int32
	assignmentTimestamp    int64
	metadataHash           int64
	validatedTopologyEpoch int32
	lastAssignmentConfigs  []kv
	storedDescEpoch        int32
	failedDescEpoch        int32
	topology               *groupstate.StreamsTopology
	members                map[string]*member
	static                 map[string]string // instance id -> member id
	target                 map[string]tuple

	// order is the members of the stored group in the order Kafka's map of them (a
	// TimelineHashMap) iterates them, from the order replay inserted them and the map's table
	// size (groupstate's MemberTable); kafkaOrder gives the members as a decision changed them.
	order []string

	// Derived on demand (owners): who currently holds each task (assigned or pending
	// revocation), by process id; StreamsGroup.currentActiveTaskProcessId and friends.
	ownersBuilt    bool
	activeOwner    map[TaskID]string
	standbyHolders map[TaskID][]string
	warmupHolders  map[TaskID][]string
}

// newGroup is a group created by a first join (Kafka 4.3+: group and assignment epoch 1;
// 4.4: validated topology epoch and description epochs -1).
func newGroup(id string) *group {
	return &group{
		id: id, epoch: 1, assignmentEpoch: 1, validatedTopologyEpoch: -1, storedDescEpoch: -1, failedDescEpoch: -1,
		members: map[string]*member{}, static: map[string]string{}, target: map[string]tuple{},
	}
}

func memberFromView(v *groupstate.StreamsMember) *member {
	m := newDefaultMember(v.MemberID)
	if v.MemberEpoch != nil {
		m.epoch = *v.MemberEpoch
	}
	if v.PreviousMemberEpoch != nil {
		m.prevEpoch = *v.PreviousMemberEpoch
	}
	if v.State != nil {
		m.state = *v.State
		switch m.state {
		case stateStable, stateUnrevokedTasks, stateUnreleasedTasks:
		default:
			m.state = stateUnknown
		}
	}
	if md := v.Metadata; md != nil {
		m.instanceID, m.rackID = md.InstanceID, md.RackID
		m.clientID, m.clientHost = md.ClientID, md.ClientHost
		m.rebalanceTimeoutMs, m.topologyEpoch, m.processID = md.RebalanceTimeoutMs, md.TopologyEpoch, md.ProcessID
		if md.UserEndpoint != nil {
			e := *md.UserEndpoint
			m.endpoint = &e
		}
		for _, t := range md.ClientTags {
			m.clientTags = append(m.clientTags, kv{t.Key, t.Value})
		}
		slices.SortFunc(m.clientTags, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	}
	m.assigned = fromStateTuple(v.AssignedTasks, m.epoch)
	m.pending = fromStateTuple(v.TasksPendingRevocation, m.epoch)
	return m
}

func groupFromView(v *groupstate.StreamsGroup) *group {
	g := &group{
		id: v.GroupID, exists: true, epoch: v.GroupEpoch, assignmentEpoch: v.AssignmentEpoch,
		assignmentTimestamp: v.AssignmentTimestamp, metadataHash: v.MetadataHash,
		validatedTopologyEpoch: v.ValidatedTopologyEpoch,
		storedDescEpoch:        v.StoredDescriptionTopologyEpoch, failedDescEpoch: v.FailedDescriptionTopologyEpoch,
		topology: v.Topology,
		members:  make(map[string]*member, len(v.Members)),
		static:   map[string]string{},
		target:   make(map[string]tuple, len(v.TargetAssignment)),
	}
	for _, c := range v.LastAssignmentConfigs {
		g.lastAssignmentConfigs = append(g.lastAssignmentConfigs, kv{c.Key, c.Value})
	}
	for i := range v.Members {
		m := memberFromView(&v.Members[i])
		g.members[m.id] = m
		if m.instanceID != nil {
			g.static[*m.instanceID] = m.id
		}
	}
	for _, t := range v.TargetAssignment {
		g.target[t.MemberID] = tuple{active: fromStateTasks(t.ActiveTasks), standby: fromStateTasks(t.StandbyTasks), warmup: fromStateTasks(t.WarmupTasks)}
	}
	return g
}

// streamsGroupOf is the streams group id as the state holds it (false when it is not one).
func streamsGroupOf(st groupstate.View, id string) (*group, bool) {
	v, ok := st.StreamsGroup(id)
	if !ok {
		return nil, false
	}
	g := groupFromView(&v)
	mt, _ := st.MemberTable(id)
	g.order = coordinator.KafkaTimelineOrder(mt.Inserted, coordinator.JavaStringHash, mt.Slots)
	return g, true
}

// kafkaOrder is the members in the order Kafka's UpdatedMembersAndTargetAssignmentView (an
// OverlayMap over the group's map of members) yields them once a decision changed them: the
// stored members still in the group in their map's order, then the new ones (a heartbeat adds
// at most one).
func (g *group) kafkaOrder() []string {
	ids := make([]string, 0, len(g.members))
	for _, id := range g.order {
		if _, ok := g.members[id]; ok {
			ids = append(ids, id)
		}
	}
	if len(ids) < len(g.members) {
		stored := make(map[string]bool, len(g.order))
		for _, id := range g.order {
			stored[id] = true
		}
		for _, id := range g.sortedMemberIDs() {
			if !stored[id] {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

func (g *group) sortedMemberIDs() []string { return slices.Sorted(maps.Keys(g.members)) }

// state is StreamsGroup.maybeUpdateGroupState (4.2+ rule): not ready while the topology is
// missing or not validated at its epoch.
func (g *group) state() string {
	ready := g.topology != nil && g.topology.Epoch == g.validatedTopologyEpoch
	return coordinator.GroupState(g.members, ready, g.epoch, g.assignmentEpoch, (*member).isReconciledTo)
}

func (g *group) buildOwners() {
	if g.ownersBuilt {
		return
	}
	g.ownersBuilt = true
	g.activeOwner = map[TaskID]string{}
	g.standbyHolders = map[TaskID][]string{}
	g.warmupHolders = map[TaskID][]string{}
	for _, id := range g.sortedMemberIDs() {
		m := g.members[id]
		for _, tt := range []tuple{m.assigned, m.pending} {
			for t := range tt.active {
				g.activeOwner[t] = m.processID
			}
			for t := range tt.standby {
				g.standbyHolders[t] = append(g.standbyHolders[t], m.processID)
			}
			for t := range tt.warmup {
				g.warmupHolders[t] = append(g.warmupHolders[t], m.processID)
			}
		}
	}
}

func (g *group) activeProcess(t TaskID) (string, bool) {
	g.buildOwners()
	p, ok := g.activeOwner[t]
	return p, ok
}

func (g *group) standbyOnProcess(t TaskID, process string) bool {
	g.buildOwners()
	return slices.Contains(g.standbyHolders[t], process)
}

func (g *group) warmupOnProcess(t TaskID, process string) bool {
	g.buildOwners()
	return slices.Contains(g.warmupHolders[t], process)
}
