package groupstate

import (
	"slices"
	"strings"
)

// TopicPartitionsInfo is a topic of the share-group state-partition metadata.
type TopicPartitionsInfo struct {
	TopicID    Uuid    `json:"topicId"`
	TopicName  string  `json:"topicName"`
	Partitions []int32 `json:"partitions,omitempty"` // sorted set in views
}

// TopicInfo names a topic being deleted (record 15).
type TopicInfo struct {
	TopicID   Uuid
	TopicName string
}

// ShareStatePartitionMetadata is the replayed record 15 of a group. Kafka keeps only the ids
// of the deleting topics (their names are dropped on replay), and stamps each topic with the
// wall-clock time of replay, which is not modelled.
type ShareStatePartitionMetadata struct {
	GroupID            string                `json:"groupId"`
	InitializingTopics []TopicPartitionsInfo `json:"initializingTopics,omitempty"` // sorted by topic id
	InitializedTopics  []TopicPartitionsInfo `json:"initializedTopics,omitempty"`  // sorted by topic id
	DeletingTopicIDs   []Uuid                `json:"deletingTopicIds,omitempty"`   // sorted
}

func (m ShareStatePartitionMetadata) clone() ShareStatePartitionMetadata {
	c := func(s []TopicPartitionsInfo) []TopicPartitionsInfo {
		if len(s) == 0 {
			return nil
		}
		out := make([]TopicPartitionsInfo, len(s))
		for i, t := range s {
			out[i] = TopicPartitionsInfo{TopicID: t.TopicID, TopicName: t.TopicName, Partitions: cloneInt32s(t.Partitions)}
		}
		return out
	}
	m.InitializingTopics = c(m.InitializingTopics)
	m.InitializedTopics = c(m.InitializedTopics)
	if len(m.DeletingTopicIDs) > 0 {
		m.DeletingTopicIDs = slices.Clone(m.DeletingTopicIDs)
	} else {
		m.DeletingTopicIDs = nil
	}
	return m
}

// ShareMember is the view of a share group member.
type ShareMember struct {
	MemberID             string            `json:"memberId"`
	MemberEpoch          int32             `json:"memberEpoch"`
	PreviousMemberEpoch  int32             `json:"previousMemberEpoch"`
	State                int8              `json:"state"`
	StateName            string            `json:"stateName"`
	RackID               *string           `json:"rackId"`
	ClientID             string            `json:"clientId"`
	ClientHost           string            `json:"clientHost"`
	SubscribedTopicNames []string          `json:"subscribedTopicNames,omitempty"` // sorted set
	AssignedPartitions   []TopicPartitions `json:"assignedPartitions,omitempty"`   // sorted by topic id

	seq uint64 // the member's insertion into Kafka's map (order.go); 0 in views
}

func (m *ShareMember) clone() ShareMember {
	c := *m
	c.seq = 0
	c.RackID = cloneStrPtr(m.RackID)
	c.SubscribedTopicNames = cloneStrings(m.SubscribedTopicNames)
	c.AssignedPartitions = cloneTopicPartitions(m.AssignedPartitions)
	c.StateName = ConsumerMemberStateName(m.State)
	return c
}

// ShareGroup is the view of a share group.
type ShareGroup struct {
	GroupID              string                   `json:"groupId"`
	State                string                   `json:"state"`
	GroupEpoch           int32                    `json:"groupEpoch"`
	MetadataHash         int64                    `json:"metadataHash"`
	SubscriptionMetadata []TopicMetadata          `json:"subscriptionMetadata,omitempty"` // 4.0 record 9 only
	AssignmentEpoch      int32                    `json:"assignmentEpoch"`
	AssignmentTimestamp  int64                    `json:"assignmentTimestamp"`
	Members              []ShareMember            `json:"members,omitempty"`
	TargetAssignment     []MemberTargetAssignment `json:"targetAssignment,omitempty"`
}

// shareGroup is a share group: the modern core (modern.go) and the share group's own field.
type shareGroup struct {
	modernGroup[ShareMember, []TopicPartitions]
	subscriptionMetadata map[string]TopicMetadata // record 9, Kafka 4.0 only
}

func (*shareGroup) groupType() GroupType { return GroupTypeShare }

// lookupShare is lookupModern for share records (getOrMaybeCreatePersistedShareGroup: no
// simple-group replacement). On 4.0 a missing group with create false is
// GroupIdNotFoundException (Kafka 4.0 did not catch it), reported as ErrGroupNotFound.
// The common case, an existing share group, comes first (as in lookupConsumer).
func (s *State) lookupShare(r rec, create bool) (g *shareGroup, fresh bool, err error) {
	s.touch(r.group)
	if g, ok := s.groups[r.group].(*shareGroup); ok {
		return g, false, nil
	}
	return lookupModern[shareGroup](s, r, create, shareRules)
}

// errMemberNotFound is Kafka 4.0's UnknownMemberIdException for a share record whose member
// is missing.
func errMemberNotFound(r rec) error {
	return r.err(ErrMemberNotFound, unknownMemberID, "member %s is not a member of share group %s", r.member, r.group)
}

func (g *shareGroup) state() string {
	if len(g.members) == 0 {
		return StateEmpty
	}
	return StateStable
}

// member is the puts into Kafka's map of members of ShareGroup.getOrMaybeCreateMember and
// updateMember: it returns the member id, created with ShareGroupMember.Builder's defaults
// (epoch 0, previous epoch -1, state STABLE; under a copy of id) when missing, which Kafka
// puts once more.
func (g *shareGroup) member(id string) *ShareMember {
	m := g.members[id]
	if m == nil {
		g.memberTable.put(len(g.members))
		m = &ShareMember{MemberID: strings.Clone(id), PreviousMemberEpoch: -1, State: MemberStable, seq: g.memberTable.insert()}
		g.members[m.MemberID] = m
	}
	g.memberTable.put(len(g.members))
	return m
}

// ownMemberID is the group's copy of a member id: the member's, else a new one.
func (g *shareGroup) ownMemberID(id string) string {
	if m := g.members[id]; m != nil {
		return m.MemberID
	}
	return strings.Clone(id)
}

// createOnValue is the create flag of records 12, 13 and 14: Kafka 4.0 never creates.
func (s *State) shareCreate(value bool) bool { return value && !s.version.shareStrictLookup() }

// ReplayShareGroupMemberMetadata replays record 10: get or create the share group and the
// member; overwrite rack, client id and host, and subscribed topics.
func (s *State) ReplayShareGroupMemberMetadata(groupID, memberID string, v ShareMemberMetadataValue) error {
	g, fresh, err := s.lookupShare(rec{typ: recordTypeShareGroupMemberMetadata, group: groupID, member: memberID}, true)
	if err != nil {
		return err
	}
	m := g.member(memberID)
	m.RackID = keepStrPtr(m.RackID, v.RackID)
	m.ClientID = keepStr(m.ClientID, v.ClientID)
	m.ClientHost = keepStr(m.ClientHost, v.ClientHost)
	m.SubscribedTopicNames = s.keepStrings(m.SubscribedTopicNames, s.scr().canonStrings(v.SubscribedTopicNames))
	s.install(groupID, g, fresh)
	return nil
}

// ReplayShareGroupMemberMetadataTombstone replays a record 10 tombstone: the member must
// have epoch -1 and no target assignment. A missing group or member is ignored (4.1+; on
// 4.0 both are errors).
func (s *State) ReplayShareGroupMemberMetadataTombstone(groupID, memberID string) error {
	r := rec{typ: recordTypeShareGroupMemberMetadata, tombstone: true, group: groupID, member: memberID}
	g, fresh, err := s.lookupShare(r, false)
	if err != nil || g == nil {
		return err
	}
	m, ok := g.members[memberID]
	if !ok {
		if s.version.shareStrictLookup() {
			return errMemberNotFound(r)
		}
		s.install(groupID, g, fresh)
		return nil
	}
	return g.removeMember(r, shareRules, m.MemberEpoch, true)
}

// ReplayShareGroupMetadata replays record 11: get or create, set epoch and metadata hash.
func (s *State) ReplayShareGroupMetadata(groupID string, v ShareGroupMetadataValue) error {
	return replayGroupMetadata(s, rec{typ: recordTypeShareGroupMetadata, group: groupID}, (*State).lookupShare, v.Epoch, v.MetadataHash)
}

// ReplayShareGroupMetadataTombstone replays a record 11 tombstone: the group must have no
// members, no target assignment and assignment epoch -1; then it is removed. The
// state-partition metadata (record 15) is kept.
func (s *State) ReplayShareGroupMetadataTombstone(groupID string) error {
	return replayGroupTombstone(s, rec{typ: recordTypeShareGroupMetadata, tombstone: true, group: groupID}, (*State).lookupShare, shareRules)
}

// ReplayShareGroupTargetAssignmentMetadata replays record 12 (same rules as record 6).
func (s *State) ReplayShareGroupTargetAssignmentMetadata(groupID string, v TargetAssignmentMetadataValue) error {
	return replayAssignmentMetadata(s, rec{typ: recordTypeShareGroupTargetAssignmentMetadata, group: groupID}, s.shareCreate(true), (*State).lookupShare, v)
}

// ReplayShareGroupTargetAssignmentMetadataTombstone replays a record 12 tombstone: the
// target assignment must be empty; the epoch becomes -1 and the timestamp 0.
func (s *State) ReplayShareGroupTargetAssignmentMetadataTombstone(groupID string) error {
	return replayAssignmentMetadata(s, rec{typ: recordTypeShareGroupTargetAssignmentMetadata, tombstone: true, group: groupID}, false, (*State).lookupShare, TargetAssignmentMetadataValue{})
}

// ReplayShareGroupTargetAssignmentMember replays record 13.
func (s *State) ReplayShareGroupTargetAssignmentMember(groupID, memberID string, partitions []TopicPartitions) error {
	r := rec{typ: recordTypeShareGroupTargetAssignmentMember, group: groupID, member: memberID}
	g, fresh, err := s.lookupShare(r, s.shareCreate(true))
	if err != nil {
		return err
	}
	tps, repeated := s.scr().canonTopicPartitions(partitions)
	if repeated {
		return r.err(ErrDuplicateKey, illegalState, "duplicate topic id %s in the target assignment", firstRepeated(partitions, topicOf))
	}
	if old, had := g.target[memberID]; !had || !sameTopicPartitions(old, tps) {
		g.target[g.ownMemberID(memberID)] = ownTopicPartitions(tps)
	}
	s.install(groupID, g, fresh)
	return nil
}

// ReplayShareGroupTargetAssignmentMemberTombstone replays a record 13 tombstone.
func (s *State) ReplayShareGroupTargetAssignmentMemberTombstone(groupID, memberID string) error {
	g, fresh, err := s.lookupShare(rec{typ: recordTypeShareGroupTargetAssignmentMember, tombstone: true, group: groupID, member: memberID}, false)
	if err != nil || g == nil {
		return err
	}
	delete(g.target, memberID)
	s.install(groupID, g, fresh)
	return nil
}

// ReplayShareGroupCurrentMemberAssignment replays record 14: get or create the group and
// the member (4.1+; Kafka 4.0 requires both to exist); set epochs, state and partitions.
func (s *State) ReplayShareGroupCurrentMemberAssignment(groupID, memberID string, v ShareCurrentAssignmentValue) error {
	r := rec{typ: recordTypeShareGroupCurrentMemberAssignment, group: groupID, member: memberID}
	g, fresh, err := s.lookupShare(r, s.shareCreate(true))
	if err != nil {
		return err
	}
	if _, ok := g.members[memberID]; !ok && s.version.shareStrictLookup() {
		return errMemberNotFound(r)
	}
	tps, repeated := s.scr().canonTopicPartitions(v.AssignedPartitions)
	if repeated {
		return r.err(ErrDuplicateKey, illegalState, "duplicate topic id %s in the current assignment", firstRepeated(v.AssignedPartitions, topicOf))
	}
	m := g.member(memberID)
	m.MemberEpoch = v.MemberEpoch
	m.PreviousMemberEpoch = v.PreviousMemberEpoch
	m.State = consumerMemberState(v.State)
	if !sameTopicPartitions(m.AssignedPartitions, tps) {
		m.AssignedPartitions = ownTopicPartitions(tps)
	}
	s.install(groupID, g, fresh)
	return nil
}

// ReplayShareGroupCurrentMemberAssignmentTombstone replays a record 14 tombstone: epochs
// become -1 and the assignment is cleared.
func (s *State) ReplayShareGroupCurrentMemberAssignmentTombstone(groupID, memberID string) error {
	r := rec{typ: recordTypeShareGroupCurrentMemberAssignment, tombstone: true, group: groupID, member: memberID}
	g, fresh, err := s.lookupShare(r, false)
	if err != nil || g == nil {
		return err
	}
	m, ok := g.members[memberID]
	if !ok && s.version.shareStrictLookup() {
		return errMemberNotFound(r)
	}
	s.install(groupID, g, fresh)
	if !ok {
		return nil
	}
	g.memberTable.put(len(g.members))
	m.MemberEpoch, m.PreviousMemberEpoch = LeaveGroupMemberEpoch, LeaveGroupMemberEpoch
	m.AssignedPartitions = nil
	return nil
}

// ReplayShareGroupPartitionMetadata replays record 9, which only Kafka 4.0 replays: the
// share group must exist; its subscription metadata is replaced.
func (s *State) ReplayShareGroupPartitionMetadata(groupID string, v ConsumerGroupPartitionMetadataValue) error {
	return s.shareGroupPartitionMetadata(groupID, v.Topics, false)
}

// ReplayShareGroupPartitionMetadataTombstone replays a record 9 tombstone (Kafka 4.0 only):
// the share group must exist; its subscription metadata is cleared.
func (s *State) ReplayShareGroupPartitionMetadataTombstone(groupID string) error {
	return s.shareGroupPartitionMetadata(groupID, nil, true)
}

func (s *State) shareGroupPartitionMetadata(groupID string, topics []TopicMetadata, tombstone bool) error {
	r := rec{typ: recordTypeShareGroupPartitionMetadata, tombstone: tombstone, group: groupID}
	if !s.version.ReplaysRecordType(recordTypeShareGroupPartitionMetadata) {
		return r.err(ErrNotReplayed, "", "record type 9 was removed in Kafka 4.1")
	}
	g, _, err := s.lookupShare(r, false)
	if err != nil {
		return err
	}
	g.subscriptionMetadata = s.ownTopicMetadataMap(g.subscriptionMetadata, topics)
	return nil
}

// ReplayShareGroupStatePartitionMetadata replays record 15: get or create the share group
// and store its state-partition metadata (apart from the group). A topic id listed twice in
// the initializing or initialized topics fails (Collectors.toMap). Kafka 4.0 decodes the
// record but its replay switch has no case for it (IllegalStateException), reported as
// ErrNotReplayed.
func (s *State) ReplayShareGroupStatePartitionMetadata(groupID string, v ShareStatePartitionMetadataValue) error {
	r := rec{typ: recordTypeShareGroupStatePartitionMetadata, group: groupID}
	if !s.version.ReplaysRecordType(r.typ) {
		return r.err(ErrNotReplayed, illegalState, "Kafka 4.0 has no replay for record type 15")
	}
	g, fresh, err := s.lookupShare(r, true)
	if err != nil {
		return err
	}
	sc := s.scr()
	var c [2][]TopicPartitionsInfo
	for i, in := range [2][]TopicPartitionsInfo{v.InitializingTopics, v.InitializedTopics} {
		if len(in) == 0 {
			continue
		}
		l := sc.infos[i][:0]
		for _, t := range in {
			l = append(l, TopicPartitionsInfo{TopicID: t.TopicID, TopicName: t.TopicName, Partitions: appendSet(&sc.ints, t.Partitions)})
		}
		sc.infos[i] = l
		var repeated bool
		if c[i], repeated = canonKeyed(l, func(a, b TopicPartitionsInfo) int { return a.TopicID.Compare(b.TopicID) }); repeated {
			return r.err(ErrDuplicateKey, illegalState, "duplicate topic id %s in the %s topics",
				firstRepeated(in, func(t TopicPartitionsInfo) Uuid { return t.TopicID }), [2]string{"initializing", "initialized"}[i])
		}
	}
	var deleting []Uuid
	if len(v.DeletingTopics) > 0 {
		deleting = sc.uuids[:0]
		for _, t := range v.DeletingTopics {
			deleting = append(deleting, t.TopicID)
		}
		sc.uuids = deleting
		slices.SortFunc(deleting, Uuid.Compare)
		deleting = slices.Compact(deleting)
	}
	old, had := s.shareStateMeta[groupID]
	if !had || !sameTopicInfos15(old.InitializingTopics, c[0]) || !sameTopicInfos15(old.InitializedTopics, c[1]) ||
		!((old.DeletingTopicIDs == nil) == (deleting == nil) && slices.Equal(old.DeletingTopicIDs, deleting)) {
		md := ShareStatePartitionMetadata{GroupID: old.GroupID, InitializingTopics: s.ownTopicInfos15(c[0]), InitializedTopics: s.ownTopicInfos15(c[1])}
		if !had {
			md.GroupID = strings.Clone(groupID)
		}
		if deleting != nil {
			md.DeletingTopicIDs = slices.Clone(deleting)
		}
		s.shareStateMeta[md.GroupID] = md
	}
	s.install(groupID, g, fresh)
	return nil
}

func sameTopicInfos15(a, b []TopicPartitionsInfo) bool {
	return (a == nil) == (b == nil) && slices.EqualFunc(a, b, func(x, y TopicPartitionsInfo) bool {
		return x.TopicID == y.TopicID && x.TopicName == y.TopicName && sameInts(x.Partitions, y.Partitions)
	})
}

func (s *State) ownTopicInfos15(c []TopicPartitionsInfo) []TopicPartitionsInfo {
	if c == nil {
		return nil
	}
	out := make([]TopicPartitionsInfo, len(c))
	for i, t := range c {
		out[i] = TopicPartitionsInfo{TopicID: t.TopicID, TopicName: s.intern(t.TopicName), Partitions: cloneInt32s(t.Partitions)}
	}
	return out
}

// ReplayShareGroupStatePartitionMetadataTombstone replays a record 15 tombstone: the entry
// is removed even when the group is missing; an existing group of another type fails.
func (s *State) ReplayShareGroupStatePartitionMetadataTombstone(groupID string) error {
	r := rec{typ: recordTypeShareGroupStatePartitionMetadata, tombstone: true, group: groupID}
	if !s.version.ReplaysRecordType(r.typ) {
		return r.err(ErrNotReplayed, illegalState, "Kafka 4.0 has no replay for record type 15")
	}
	if _, _, err := s.lookupShare(r, false); err != nil {
		return err
	}
	delete(s.shareStateMeta, groupID)
	return nil
}

// ShareGroup returns a copy of the share group id.
func (v View) ShareGroup(id string) (ShareGroup, bool) {
	s := v.s
	g, ok := s.groups[id].(*shareGroup)
	if !ok {
		return ShareGroup{}, false
	}
	return g.view(id), true
}

func (g *shareGroup) view(id string) ShareGroup {
	v := ShareGroup{
		GroupID: id, State: g.state(), GroupEpoch: g.groupEpoch, MetadataHash: g.metadataHash,
		AssignmentEpoch: g.assignmentEpoch, AssignmentTimestamp: g.assignmentTimestamp,
	}
	for _, n := range sortedKeys(g.subscriptionMetadata) {
		v.SubscriptionMetadata = append(v.SubscriptionMetadata, g.subscriptionMetadata[n])
	}
	for _, mid := range sortedKeys(g.members) {
		v.Members = append(v.Members, g.members[mid].clone())
	}
	v.TargetAssignment = targetView(g.target)
	return v
}

// ShareGroupStatePartitionMetadata returns the record 15 state of a group; it may exist
// without the group.
func (v View) ShareGroupStatePartitionMetadata(groupID string) (ShareStatePartitionMetadata, bool) {
	s := v.s
	m, ok := s.shareStateMeta[groupID]
	if !ok {
		return ShareStatePartitionMetadata{}, false
	}
	return m.clone(), true
}

// ShareGroupStatePartitionMetadataGroupIDs lists the groups with record 15 state, sorted.
func (v View) ShareGroupStatePartitionMetadataGroupIDs() []string {
	s := v.s
	return sortedKeys(s.shareStateMeta)
}
