package groupstate

import (
	"bytes"
	"slices"
	"strings"
)

// ClassicProtocol is one protocol a classic-protocol member of a consumer group supports.
type ClassicProtocol struct {
	Name     string `json:"name"`
	Metadata []byte `json:"metadata,omitempty"`
}

// ClassicMemberMetadata is the metadata of a member that joined a consumer group with the
// classic protocol (record 5 tag 0).
type ClassicMemberMetadata struct {
	SessionTimeoutMs   int32             `json:"sessionTimeoutMs"`
	SupportedProtocols []ClassicProtocol `json:"supportedProtocols,omitempty"` // record order
}

func (c *ClassicMemberMetadata) clone() *ClassicMemberMetadata {
	if c == nil {
		return nil
	}
	out := &ClassicMemberMetadata{SessionTimeoutMs: c.SessionTimeoutMs}
	if len(c.SupportedProtocols) > 0 {
		out.SupportedProtocols = make([]ClassicProtocol, len(c.SupportedProtocols))
		for i, p := range c.SupportedProtocols {
			out.SupportedProtocols[i] = ClassicProtocol{Name: strings.Clone(p.Name), Metadata: cloneBytes(p.Metadata)}
		}
	}
	return out
}

// ResolvedRegularExpression is a consumer group's resolution of a subscribed regex.
type ResolvedRegularExpression struct {
	Regex     string   `json:"regex"`
	Topics    []string `json:"topics,omitempty"` // sorted
	Version   int64    `json:"version"`
	Timestamp int64    `json:"timestamp"`

	seq uint64 // the regex's insertion into Kafka's map (order.go); 0 in views
}

// ConsumerMember is the view of a consumer group member. A member created by a record 8 or
// 7 before its record 5 has Kafka's builder defaults (epoch 0, previous epoch -1, state
// STABLE, rebalance timeout -1, regex "").
type ConsumerMember struct {
	MemberID                    string                      `json:"memberId"`
	MemberEpoch                 int32                       `json:"memberEpoch"`
	PreviousMemberEpoch         int32                       `json:"previousMemberEpoch"`
	State                       int8                        `json:"state"`
	StateName                   string                      `json:"stateName"`
	InstanceID                  *string                     `json:"instanceId"`
	RackID                      *string                     `json:"rackId"`
	RebalanceTimeoutMs          int32                       `json:"rebalanceTimeoutMs"`
	ClientID                    string                      `json:"clientId"`
	ClientHost                  string                      `json:"clientHost"`
	SubscribedTopicNames        []string                    `json:"subscribedTopicNames,omitempty"` // sorted set
	SubscribedTopicRegex        *string                     `json:"subscribedTopicRegex"`
	ServerAssignor              *string                     `json:"serverAssignor"`
	ClassicMemberMetadata       *ClassicMemberMetadata      `json:"classicMemberMetadata"`
	AssignedPartitions          []TopicPartitionsWithEpochs `json:"assignedPartitions,omitempty"`          // sorted by topic id
	PartitionsPendingRevocation []TopicPartitionsWithEpochs `json:"partitionsPendingRevocation,omitempty"` // sorted by topic id

	seq uint64 // the member's insertion into Kafka's map (order.go); 0 in views
}

func (m *ConsumerMember) clone() ConsumerMember {
	c := *m
	c.seq = 0
	c.InstanceID = cloneStrPtr(m.InstanceID)
	c.RackID = cloneStrPtr(m.RackID)
	c.SubscribedTopicNames = cloneStrings(m.SubscribedTopicNames)
	c.SubscribedTopicRegex = cloneStrPtr(m.SubscribedTopicRegex)
	c.ServerAssignor = cloneStrPtr(m.ServerAssignor)
	c.ClassicMemberMetadata = m.ClassicMemberMetadata.clone()
	c.AssignedPartitions = cloneTopicPartitionsWithEpochs(m.AssignedPartitions)
	c.PartitionsPendingRevocation = cloneTopicPartitionsWithEpochs(m.PartitionsPendingRevocation)
	c.StateName = ConsumerMemberStateName(m.State)
	return c
}

// ConsumerGroup is the view of a consumer group.
type ConsumerGroup struct {
	GroupID                       string                      `json:"groupId"`
	State                         string                      `json:"state"`
	GroupEpoch                    int32                       `json:"groupEpoch"`
	MetadataHash                  int64                       `json:"metadataHash"`
	HasSubscriptionMetadataRecord bool                        `json:"hasSubscriptionMetadataRecord"`  // 4.1+
	SubscriptionMetadata          []TopicMetadata             `json:"subscriptionMetadata,omitempty"` // 4.0 only; sorted by name
	AssignmentEpoch               int32                       `json:"assignmentEpoch"`
	AssignmentTimestamp           int64                       `json:"assignmentTimestamp"`
	Members                       []ConsumerMember            `json:"members,omitempty"`          // sorted by member id
	TargetAssignment              []MemberTargetAssignment    `json:"targetAssignment,omitempty"` // sorted by member id
	ResolvedRegularExpressions    []ResolvedRegularExpression `json:"resolvedRegularExpressions,omitempty"`
}

// consumerGroup is a consumer group: the modern core (modern.go) and the consumer's own
// fields.
type consumerGroup struct {
	modernGroup[ConsumerMember, []TopicPartitions]
	hasSubscriptionMetadataRecord bool
	subscriptionMetadata          map[string]TopicMetadata
	regexes                       map[string]ResolvedRegularExpression
	regexTable                    kafkaTable // the layout of Kafka's map of the regexes (order.go)
	// assignors is Kafka's serverAssignors map (order.go): per server assignor the members
	// name, how many do; nil while none does. assignorTable is its layout.
	assignors     map[string]assignorCount
	assignorTable kafkaTable
}

func (*consumerGroup) groupType() GroupType { return GroupTypeConsumer }

func (g *consumerGroup) init(v KafkaVersion) {
	g.modernGroup.init(v)
	g.regexes = map[string]ResolvedRegularExpression{}
	g.regexTable = newKafkaTable()
	g.assignorTable = newKafkaTable()
}

// lookupConsumer is lookupModern for consumer records (getOrMaybeCreatePersistedConsumerGroup:
// a simple classic group is replaced), with the common case, an existing consumer group,
// first: a plain function, as cheap per record as the lookup before the shared core.
func (s *State) lookupConsumer(r rec, create bool) (g *consumerGroup, fresh bool, err error) {
	s.touch(r.group)
	if g, ok := s.groups[r.group].(*consumerGroup); ok {
		return g, false, nil
	}
	return lookupModern[consumerGroup](s, r, create, consumerRules)
}

// state is ConsumerGroup.maybeUpdateGroupState.
func (g *consumerGroup) state() string {
	if len(g.members) == 0 {
		return StateEmpty
	}
	if g.groupEpoch > g.assignmentEpoch {
		return StateAssigning
	}
	for _, m := range g.members {
		if m.State != MemberStable || m.MemberEpoch != g.assignmentEpoch {
			return StateReconciling
		}
	}
	return StateStable
}

func newConsumerMember(id string) *ConsumerMember {
	empty := ""
	return &ConsumerMember{
		MemberID: id, MemberEpoch: 0, PreviousMemberEpoch: -1, State: MemberStable,
		RebalanceTimeoutMs: -1, SubscribedTopicRegex: &empty,
	}
}

// member is ConsumerGroup.updateMember's put into Kafka's map of members: it returns the
// member id, created with the builder's defaults (under a copy of id) when missing.
func (g *consumerGroup) member(id string) *ConsumerMember {
	g.memberTable.put(len(g.members))
	if m := g.members[id]; m != nil {
		return m
	}
	m := newConsumerMember(strings.Clone(id))
	m.seq = g.memberTable.insert()
	g.members[m.MemberID] = m
	return m
}

// ownMemberID is the group's copy of a member id: the member's, else a new one.
func (g *consumerGroup) ownMemberID(id string) string {
	if m := g.members[id]; m != nil {
		return m.MemberID
	}
	return strings.Clone(id)
}

// ReplayConsumerGroupMetadata replays record 3: get or create the consumer group, set its
// epoch and metadata hash.
func (s *State) ReplayConsumerGroupMetadata(groupID string, v ConsumerGroupMetadataValue) error {
	return replayGroupMetadata(s, rec{typ: recordTypeConsumerGroupMetadata, group: groupID}, (*State).lookupConsumer, v.Epoch, v.MetadataHash)
}

// ReplayConsumerGroupMetadataTombstone replays a record 3 tombstone: the group must have no
// members, no target assignment and assignment epoch -1; then it is removed.
func (s *State) ReplayConsumerGroupMetadataTombstone(groupID string) error {
	return replayGroupTombstone(s, rec{typ: recordTypeConsumerGroupMetadata, tombstone: true, group: groupID}, (*State).lookupConsumer, consumerRules)
}

// ReplayConsumerGroupPartitionMetadata replays record 4: on 4.1+ it only sets
// hasSubscriptionMetadataRecord; on 4.0 it stores the subscription metadata.
func (s *State) ReplayConsumerGroupPartitionMetadata(groupID string, v ConsumerGroupPartitionMetadataValue) error {
	g, fresh, err := s.lookupConsumer(rec{typ: recordTypeConsumerGroupPartitionMetadata, group: groupID}, true)
	if err != nil {
		return err
	}
	if s.version.storesSubscriptionMetadata() {
		g.subscriptionMetadata = s.ownTopicMetadataMap(g.subscriptionMetadata, v.Topics)
	} else {
		g.hasSubscriptionMetadataRecord = true
	}
	s.install(groupID, g, fresh)
	return nil
}

func topicMetadataMap(topics []TopicMetadata) map[string]TopicMetadata {
	if len(topics) == 0 {
		return nil
	}
	m := make(map[string]TopicMetadata, len(topics))
	for _, t := range topics {
		m[t.TopicName] = t
	}
	return m
}

// ownTopicMetadataMap is topicMetadataMap with the names copied into the state's memory; it
// returns old when old already holds exactly topics (whose names all differ).
func (s *State) ownTopicMetadataMap(old map[string]TopicMetadata, topics []TopicMetadata) map[string]TopicMetadata {
	if len(topics) == 0 {
		return nil
	}
	if len(old) == len(topics) {
		same := true
		names := s.scr().strs[:0]
		for _, t := range topics {
			if o, ok := old[t.TopicName]; !ok || o != t {
				same = false
				break
			}
			names = append(names, t.TopicName)
		}
		s.sc.strs = names
		slices.Sort(names)
		if same && len(slices.Compact(names)) == len(topics) {
			return old
		}
	}
	m := make(map[string]TopicMetadata, len(topics))
	for _, t := range topics {
		t.TopicName = s.intern(t.TopicName)
		m[t.TopicName] = t
	}
	return m
}

// ReplayConsumerGroupPartitionMetadataTombstone replays a record 4 tombstone: on 4.1+ it
// clears hasSubscriptionMetadataRecord, on 4.0 the subscription metadata.
func (s *State) ReplayConsumerGroupPartitionMetadataTombstone(groupID string) error {
	g, fresh, err := s.lookupConsumer(rec{typ: recordTypeConsumerGroupPartitionMetadata, tombstone: true, group: groupID}, false)
	if err != nil || g == nil {
		return err
	}
	if s.version.storesSubscriptionMetadata() {
		g.subscriptionMetadata = nil
	} else {
		g.hasSubscriptionMetadataRecord = false
	}
	s.install(groupID, g, fresh)
	return nil
}

// ReplayConsumerGroupMemberMetadata replays record 5: get or create the group and the
// member, then overwrite the member's metadata fields.
func (s *State) ReplayConsumerGroupMemberMetadata(groupID, memberID string, v ConsumerMemberMetadataValue) error {
	g, fresh, err := s.lookupConsumer(rec{typ: recordTypeConsumerGroupMemberMetadata, group: groupID, member: memberID}, true)
	if err != nil {
		return err
	}
	m := g.member(memberID)
	oldAssignor := m.ServerAssignor
	m.InstanceID = keepStrPtr(m.InstanceID, v.InstanceID)
	m.RackID = keepStrPtr(m.RackID, v.RackID)
	m.ClientID = keepStr(m.ClientID, v.ClientID)
	m.ClientHost = keepStr(m.ClientHost, v.ClientHost)
	m.SubscribedTopicNames = s.keepStrings(m.SubscribedTopicNames, s.scr().canonStrings(v.SubscribedTopicNames))
	m.SubscribedTopicRegex = keepStrPtr(m.SubscribedTopicRegex, v.SubscribedTopicRegex)
	m.RebalanceTimeoutMs = v.RebalanceTimeoutMs
	m.ServerAssignor = keepStrPtr(m.ServerAssignor, v.ServerAssignor)
	if !m.ClassicMemberMetadata.same(v.ClassicMemberMetadata) {
		m.ClassicMemberMetadata = v.ClassicMemberMetadata.clone()
	}
	g.updateAssignors(oldAssignor, m.ServerAssignor)
	s.install(groupID, g, fresh)
	return nil
}

// same reports whether c and d hold the same metadata (as clone stores it: empty lists are
// nil, so they compare by length).
func (c *ClassicMemberMetadata) same(d *ClassicMemberMetadata) bool {
	if c == nil || d == nil {
		return c == d
	}
	return c.SessionTimeoutMs == d.SessionTimeoutMs && slices.EqualFunc(c.SupportedProtocols, d.SupportedProtocols, func(a, b ClassicProtocol) bool {
		return a.Name == b.Name && bytes.Equal(a.Metadata, b.Metadata)
	})
}

// ReplayConsumerGroupMemberMetadataTombstone replays a record 5 tombstone: the member must
// have epoch -1 (its record 8 tombstone replayed) and no target assignment; then it is
// removed. A missing group or member is ignored.
func (s *State) ReplayConsumerGroupMemberMetadataTombstone(groupID, memberID string) error {
	r := rec{typ: recordTypeConsumerGroupMemberMetadata, tombstone: true, group: groupID, member: memberID}
	g, fresh, err := s.lookupConsumer(r, false)
	if err != nil || g == nil {
		return err
	}
	m, ok := g.members[memberID]
	if !ok {
		s.install(groupID, g, fresh)
		return nil
	}
	if err := g.removeMember(r, consumerRules, m.MemberEpoch, true); err != nil {
		return err
	}
	g.updateAssignors(m.ServerAssignor, nil)
	return nil
}

// ReplayConsumerGroupTargetAssignmentMetadata replays record 6: set the assignment epoch
// and (4.3+) timestamp. On 4.3+ an epoch below -1 or a negative timestamp fails.
func (s *State) ReplayConsumerGroupTargetAssignmentMetadata(groupID string, v TargetAssignmentMetadataValue) error {
	return replayAssignmentMetadata(s, rec{typ: recordTypeConsumerGroupTargetAssignmentMetadata, group: groupID}, true, (*State).lookupConsumer, v)
}

// ReplayConsumerGroupTargetAssignmentMetadataTombstone replays a record 6 tombstone: the
// target assignment must be empty; the epoch becomes -1 and the timestamp 0.
func (s *State) ReplayConsumerGroupTargetAssignmentMetadataTombstone(groupID string) error {
	return replayAssignmentMetadata(s, rec{typ: recordTypeConsumerGroupTargetAssignmentMetadata, tombstone: true, group: groupID}, false, (*State).lookupConsumer, TargetAssignmentMetadataValue{})
}

// ReplayConsumerGroupTargetAssignmentMember replays record 7: set the member's target
// assignment (the member need not exist). A topic id listed twice fails (Collectors.toMap).
func (s *State) ReplayConsumerGroupTargetAssignmentMember(groupID, memberID string, partitions []TopicPartitions) error {
	r := rec{typ: recordTypeConsumerGroupTargetAssignmentMember, group: groupID, member: memberID}
	g, fresh, err := s.lookupConsumer(r, true)
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

func topicOf(t TopicPartitions) Uuid { return t.TopicID }

// ReplayConsumerGroupTargetAssignmentMemberTombstone replays a record 7 tombstone.
func (s *State) ReplayConsumerGroupTargetAssignmentMemberTombstone(groupID, memberID string) error {
	g, fresh, err := s.lookupConsumer(rec{typ: recordTypeConsumerGroupTargetAssignmentMember, tombstone: true, group: groupID, member: memberID}, false)
	if err != nil || g == nil {
		return err
	}
	delete(g.target, memberID)
	s.install(groupID, g, fresh)
	return nil
}

// consumerAssignment is the canonical form of record 8 partitions, in the scratch list i. Up
// to 4.2 a repeated topic id fails (Collectors.toMap) and no epochs are kept; from 4.3 the
// last entry wins and each partition gets its AssignmentEpochs entry, or max(memberEpoch, 0)
// when the list is absent or of another length.
func (s *State) consumerAssignment(r rec, i int, in []TopicPartitionsWithEpochs, memberEpoch int32) ([]TopicPartitionsWithEpochs, error) {
	if len(in) == 0 {
		return nil, nil
	}
	sc := s.sc
	withEpochs := s.version.hasConsumerPartitionEpochs()
	def := max(memberEpoch, 0)
	l := sc.tpes[i][:0]
	for _, tp := range in {
		e := TopicPartitionsWithEpochs{TopicID: tp.TopicID}
		if withEpochs {
			e.Partitions, e.AssignmentEpochs = sc.appendPartitionEpochs(tp.Partitions, tp.AssignmentEpochs, def)
		} else {
			e.Partitions = appendSet(&sc.ints, tp.Partitions)
		}
		l = append(l, e)
	}
	sc.tpes[i] = l
	out, repeated := canonKeyed(l, byTopicIDWithEpochs)
	if repeated && !withEpochs {
		return nil, r.err(ErrDuplicateKey, illegalState, "duplicate topic id %s in the current assignment",
			firstRepeated(in, func(t TopicPartitionsWithEpochs) Uuid { return t.TopicID }))
	}
	return out, nil
}

func keepTopicPartitionsWithEpochs(old, c []TopicPartitionsWithEpochs) []TopicPartitionsWithEpochs {
	if sameTopicPartitionsWithEpochs(old, c) {
		return old
	}
	return ownTopicPartitionsWithEpochs(c)
}

// ReplayConsumerGroupCurrentMemberAssignment replays record 8: get or create the group and
// member; set epochs, state and assigned and pending partitions.
func (s *State) ReplayConsumerGroupCurrentMemberAssignment(groupID, memberID string, v ConsumerCurrentAssignmentValue) error {
	r := rec{typ: recordTypeConsumerGroupCurrentMemberAssignment, group: groupID, member: memberID}
	g, fresh, err := s.lookupConsumer(r, true)
	if err != nil {
		return err
	}
	s.scr()
	assigned, err := s.consumerAssignment(r, 0, v.AssignedPartitions, v.MemberEpoch)
	if err != nil {
		return err
	}
	pending, err := s.consumerAssignment(r, 1, v.PartitionsPendingRevocation, v.MemberEpoch)
	if err != nil {
		return err
	}
	m := g.member(memberID)
	m.MemberEpoch = v.MemberEpoch
	m.PreviousMemberEpoch = v.PreviousMemberEpoch
	m.State = consumerMemberState(v.State)
	m.AssignedPartitions = keepTopicPartitionsWithEpochs(m.AssignedPartitions, assigned)
	m.PartitionsPendingRevocation = keepTopicPartitionsWithEpochs(m.PartitionsPendingRevocation, pending)
	g.updateAssignors(m.ServerAssignor, m.ServerAssignor)
	s.install(groupID, g, fresh)
	return nil
}

// ReplayConsumerGroupCurrentMemberAssignmentTombstone replays a record 8 tombstone: the
// member's epochs become -1 and its partitions are cleared; the member stays until its
// record 5 tombstone. A missing group or member is ignored.
func (s *State) ReplayConsumerGroupCurrentMemberAssignmentTombstone(groupID, memberID string) error {
	g, fresh, err := s.lookupConsumer(rec{typ: recordTypeConsumerGroupCurrentMemberAssignment, tombstone: true, group: groupID, member: memberID}, false)
	if err != nil || g == nil {
		return err
	}
	s.install(groupID, g, fresh)
	if m := g.members[memberID]; m != nil {
		g.memberTable.put(len(g.members))
		g.updateAssignors(m.ServerAssignor, m.ServerAssignor)
		m.MemberEpoch, m.PreviousMemberEpoch = LeaveGroupMemberEpoch, LeaveGroupMemberEpoch
		m.AssignedPartitions, m.PartitionsPendingRevocation = nil, nil
	}
	return nil
}

// ReplayConsumerGroupRegularExpression replays record 16: store the regex resolution. Kafka
// removes the regex and puts it again (ConsumerGroup.updateResolvedRegularExpression): it is
// inserted anew, unchanged or not.
func (s *State) ReplayConsumerGroupRegularExpression(groupID, regex string, v RegularExpressionValue) error {
	g, fresh, err := s.lookupConsumer(rec{typ: recordTypeConsumerGroupRegularExpression, group: groupID}, true)
	if err != nil {
		return err
	}
	old, had := g.regexes[regex]
	topics := s.scr().canonStrings(v.Topics)
	re := old
	if !had || !sameStrings(old.Topics, topics) || old.Version != v.Version || old.Timestamp != v.Timestamp {
		re = ResolvedRegularExpression{Regex: old.Regex, Topics: s.keepStrings(old.Topics, topics), Version: v.Version, Timestamp: v.Timestamp}
		if !had {
			re.Regex = strings.Clone(regex)
		}
	}
	size := len(g.regexes)
	if had {
		size--
	}
	g.regexTable.put(size)
	re.seq = g.regexTable.insert()
	g.regexes[re.Regex] = re
	s.install(groupID, g, fresh)
	return nil
}

// ReplayConsumerGroupRegularExpressionTombstone replays a record 16 tombstone.
func (s *State) ReplayConsumerGroupRegularExpressionTombstone(groupID, regex string) error {
	g, fresh, err := s.lookupConsumer(rec{typ: recordTypeConsumerGroupRegularExpression, tombstone: true, group: groupID}, false)
	if err != nil || g == nil {
		return err
	}
	delete(g.regexes, regex)
	s.install(groupID, g, fresh)
	return nil
}

// ConsumerGroup returns a copy of the consumer group id.
func (v View) ConsumerGroup(id string) (ConsumerGroup, bool) {
	s := v.s
	g, ok := s.groups[id].(*consumerGroup)
	if !ok {
		return ConsumerGroup{}, false
	}
	return g.view(id), true
}

func (g *consumerGroup) view(id string) ConsumerGroup {
	v := ConsumerGroup{
		GroupID: id, State: g.state(), GroupEpoch: g.groupEpoch, MetadataHash: g.metadataHash,
		HasSubscriptionMetadataRecord: g.hasSubscriptionMetadataRecord,
		AssignmentEpoch:               g.assignmentEpoch, AssignmentTimestamp: g.assignmentTimestamp,
	}
	for _, n := range sortedKeys(g.subscriptionMetadata) {
		v.SubscriptionMetadata = append(v.SubscriptionMetadata, g.subscriptionMetadata[n])
	}
	for _, mid := range sortedKeys(g.members) {
		v.Members = append(v.Members, g.members[mid].clone())
	}
	v.TargetAssignment = targetView(g.target)
	for _, re := range sortedKeys(g.regexes) {
		r := g.regexes[re]
		r.Topics = cloneStrings(r.Topics)
		r.seq = 0
		v.ResolvedRegularExpressions = append(v.ResolvedRegularExpressions, r)
	}
	return v
}

func targetView(t map[string][]TopicPartitions) []MemberTargetAssignment {
	var out []MemberTargetAssignment
	for _, mid := range sortedKeys(t) {
		out = append(out, MemberTargetAssignment{MemberID: mid, Partitions: cloneTopicPartitions(t[mid])})
	}
	return out
}
