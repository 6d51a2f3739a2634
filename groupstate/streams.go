package groupstate

import (
	"slices"
	"strings"
)

// StreamsEndpoint is a streams member's user endpoint.
type StreamsEndpoint struct {
	Host string `json:"host"`
	Port uint16 `json:"port"`
}

// StreamsMemberMetadata is the value of record 19 and, in views, the metadata part of a
// streams member (nil until a record 19 has been replayed for the member).
type StreamsMemberMetadata struct {
	InstanceID         *string          `json:"instanceId"`
	RackID             *string          `json:"rackId"`
	ClientID           string           `json:"clientId"`
	ClientHost         string           `json:"clientHost"`
	RebalanceTimeoutMs int32            `json:"rebalanceTimeoutMs"`
	TopologyEpoch      int32            `json:"topologyEpoch"`
	ProcessID          string           `json:"processId"`
	UserEndpoint       *StreamsEndpoint `json:"userEndpoint"`
	ClientTags         []KeyValue       `json:"clientTags,omitempty"` // sorted by key in views
}

func (m *StreamsMemberMetadata) clone() *StreamsMemberMetadata {
	if m == nil {
		return nil
	}
	c := *m
	c.InstanceID = cloneStrPtr(m.InstanceID)
	c.RackID = cloneStrPtr(m.RackID)
	if m.UserEndpoint != nil {
		e := *m.UserEndpoint
		c.UserEndpoint = &e
	}
	c.ClientTags = cloneKVs(m.ClientTags)
	return &c
}

// TaskIDs is a subtopology with task (partition) numbers.
type TaskIDs struct {
	SubtopologyID string  `json:"subtopologyId"`
	Partitions    []int32 `json:"partitions,omitempty"` // sorted set in views
}

// TaskIDsWithEpochs is a subtopology with tasks and, for active tasks on 4.2+, one
// assignment epoch per task. As a mutator input AssignmentEpochs nil means the tag was
// absent.
type TaskIDsWithEpochs struct {
	SubtopologyID    string  `json:"subtopologyId"`
	Partitions       []int32 `json:"partitions,omitempty"`
	AssignmentEpochs []int32 `json:"assignmentEpochs,omitempty"`
}

// StreamsTasks is a member's assigned (or pending revocation) tasks, each list sorted by
// subtopology id. Active tasks carry per-task assignment epochs on 4.2+ (nil on 4.1).
type StreamsTasks struct {
	ActiveTasks  []TaskIDsWithEpochs `json:"activeTasks,omitempty"`
	StandbyTasks []TaskIDs           `json:"standbyTasks,omitempty"`
	WarmupTasks  []TaskIDs           `json:"warmupTasks,omitempty"`
}

func (t *StreamsTasks) clone() *StreamsTasks {
	if t == nil {
		return nil
	}
	c := &StreamsTasks{StandbyTasks: cloneTaskIDs(t.StandbyTasks), WarmupTasks: cloneTaskIDs(t.WarmupTasks)}
	if len(t.ActiveTasks) > 0 {
		c.ActiveTasks = make([]TaskIDsWithEpochs, len(t.ActiveTasks))
		for i, a := range t.ActiveTasks {
			c.ActiveTasks[i] = TaskIDsWithEpochs{SubtopologyID: a.SubtopologyID, Partitions: cloneInt32s(a.Partitions), AssignmentEpochs: cloneInt32s(a.AssignmentEpochs)}
		}
	}
	return c
}

func cloneTaskIDs(s []TaskIDs) []TaskIDs {
	if len(s) == 0 {
		return nil
	}
	out := make([]TaskIDs, len(s))
	for i, t := range s {
		out[i] = TaskIDs{SubtopologyID: t.SubtopologyID, Partitions: cloneInt32s(t.Partitions)}
	}
	return out
}

// StreamsMember is the view of a streams member. Every field is nil until a record sets
// it, as in Kafka's StreamsGroupMember.Builder(memberId): Metadata by record 19; the epochs,
// State, AssignedTasks and TasksPendingRevocation by record 22 (its tombstone sets the epochs
// to -1 and the tasks to empty, and leaves State as it was).
type StreamsMember struct {
	MemberID               string                 `json:"memberId"`
	MemberEpoch            *int32                 `json:"memberEpoch"`
	PreviousMemberEpoch    *int32                 `json:"previousMemberEpoch"`
	State                  *int8                  `json:"state"` // streams numbering: 1 = STABLE
	StateName              string                 `json:"stateName,omitempty"`
	Metadata               *StreamsMemberMetadata `json:"metadata"`
	AssignedTasks          *StreamsTasks          `json:"assignedTasks"`
	TasksPendingRevocation *StreamsTasks          `json:"tasksPendingRevocation"`

	seq uint64 // the member's insertion into Kafka's map (order.go); not copied to views
}

func (m *StreamsMember) clone() StreamsMember {
	c := StreamsMember{MemberID: m.MemberID}
	if m.MemberEpoch != nil {
		e := *m.MemberEpoch
		c.MemberEpoch = &e
	}
	if m.PreviousMemberEpoch != nil {
		e := *m.PreviousMemberEpoch
		c.PreviousMemberEpoch = &e
	}
	if m.State != nil {
		st := *m.State
		c.State = &st
		c.StateName = StreamsMemberStateName(st)
	}
	c.Metadata = m.Metadata.clone()
	c.AssignedTasks = m.AssignedTasks.clone()
	c.TasksPendingRevocation = m.TasksPendingRevocation.clone()
	return c
}

func (m *StreamsMember) isReconciledTo(epoch int32) bool {
	return m.State != nil && *m.State == StreamsMemberStable && m.MemberEpoch != nil && *m.MemberEpoch == epoch
}

// StreamsTopicInfo is a changelog or repartition topic of a subtopology.
type StreamsTopicInfo struct {
	Name              string     `json:"name"`
	Partitions        int32      `json:"partitions"`
	ReplicationFactor int16      `json:"replicationFactor"`
	TopicConfigs      []KeyValue `json:"topicConfigs,omitempty"` // record order
}

// CopartitionGroup holds indexes into its subtopology's source topic, source topic regex and
// repartition source topic lists.
type CopartitionGroup struct {
	SourceTopics            []int16 `json:"sourceTopics,omitempty"`
	SourceTopicRegex        []int16 `json:"sourceTopicRegex,omitempty"`
	RepartitionSourceTopics []int16 `json:"repartitionSourceTopics,omitempty"`
}

// Subtopology is one subtopology of a streams topology. Lists keep the record's order (the
// copartition groups index into them).
type Subtopology struct {
	SubtopologyID           string             `json:"subtopologyId"`
	SourceTopics            []string           `json:"sourceTopics,omitempty"`
	SourceTopicRegex        []string           `json:"sourceTopicRegex,omitempty"`
	StateChangelogTopics    []StreamsTopicInfo `json:"stateChangelogTopics,omitempty"`
	RepartitionSinkTopics   []string           `json:"repartitionSinkTopics,omitempty"`
	RepartitionSourceTopics []StreamsTopicInfo `json:"repartitionSourceTopics,omitempty"`
	CopartitionGroups       []CopartitionGroup `json:"copartitionGroups,omitempty"`
}

// StreamsTopology is the value of record 23 and the view of a group's topology; in views
// Subtopologies are sorted by id.
type StreamsTopology struct {
	Epoch         int32         `json:"epoch"`
	Subtopologies []Subtopology `json:"subtopologies,omitempty"`
}

func cloneTopicInfos(s []StreamsTopicInfo) []StreamsTopicInfo {
	if len(s) == 0 {
		return nil
	}
	out := make([]StreamsTopicInfo, len(s))
	for i, t := range s {
		out[i] = StreamsTopicInfo{Name: t.Name, Partitions: t.Partitions, ReplicationFactor: t.ReplicationFactor, TopicConfigs: cloneKVs(t.TopicConfigs)}
	}
	return out
}

func (t *StreamsTopology) clone() *StreamsTopology {
	if t == nil {
		return nil
	}
	c := &StreamsTopology{Epoch: t.Epoch}
	if len(t.Subtopologies) > 0 {
		c.Subtopologies = make([]Subtopology, len(t.Subtopologies))
		for i, st := range t.Subtopologies {
			n := Subtopology{
				SubtopologyID:           st.SubtopologyID,
				SourceTopics:            cloneStrings(st.SourceTopics),
				SourceTopicRegex:        cloneStrings(st.SourceTopicRegex),
				StateChangelogTopics:    cloneTopicInfos(st.StateChangelogTopics),
				RepartitionSinkTopics:   cloneStrings(st.RepartitionSinkTopics),
				RepartitionSourceTopics: cloneTopicInfos(st.RepartitionSourceTopics),
			}
			if len(st.CopartitionGroups) > 0 {
				n.CopartitionGroups = make([]CopartitionGroup, len(st.CopartitionGroups))
				for j, cg := range st.CopartitionGroups {
					n.CopartitionGroups[j] = CopartitionGroup{
						SourceTopics:            cloneInt16s(cg.SourceTopics),
						SourceTopicRegex:        cloneInt16s(cg.SourceTopicRegex),
						RepartitionSourceTopics: cloneInt16s(cg.RepartitionSourceTopics),
					}
				}
			}
			c.Subtopologies[i] = n
		}
	}
	return c
}

// RequiredTopics returns StreamsTopology.requiredTopics: every source, repartition source
// and changelog topic name, sorted.
func (t *StreamsTopology) RequiredTopics() []string {
	if t == nil {
		return nil
	}
	var all []string
	for _, st := range t.Subtopologies {
		all = append(all, st.SourceTopics...)
		for _, r := range st.RepartitionSourceTopics {
			all = append(all, r.Name)
		}
		for _, c := range st.StateChangelogTopics {
			all = append(all, c.Name)
		}
	}
	return stringSet(all)
}

// StreamsMemberTarget is one member's target assignment in a streams group.
type StreamsMemberTarget struct {
	MemberID     string    `json:"memberId"`
	ActiveTasks  []TaskIDs `json:"activeTasks,omitempty"`
	StandbyTasks []TaskIDs `json:"standbyTasks,omitempty"`
	WarmupTasks  []TaskIDs `json:"warmupTasks,omitempty"`
}

// StreamsGroup is the view of a streams group.
type StreamsGroup struct {
	GroupID                        string                `json:"groupId"`
	State                          string                `json:"state"`
	GroupEpoch                     int32                 `json:"groupEpoch"`
	MetadataHash                   int64                 `json:"metadataHash"`
	ValidatedTopologyEpoch         int32                 `json:"validatedTopologyEpoch"`
	StoredDescriptionTopologyEpoch int32                 `json:"storedDescriptionTopologyEpoch"`
	FailedDescriptionTopologyEpoch int32                 `json:"failedDescriptionTopologyEpoch"`
	LastAssignmentConfigs          []KeyValue            `json:"lastAssignmentConfigs,omitempty"` // sorted by key
	AssignmentEpoch                int32                 `json:"assignmentEpoch"`
	AssignmentTimestamp            int64                 `json:"assignmentTimestamp"`
	Topology                       *StreamsTopology      `json:"topology"`
	Members                        []StreamsMember       `json:"members,omitempty"`
	TargetAssignment               []StreamsMemberTarget `json:"targetAssignment,omitempty"`
}

// streamsGroup is a streams group: the modern core (modern.go) and the streams group's own
// fields.
type streamsGroup struct {
	modernGroup[StreamsMember, StreamsMemberTarget]
	validatedTopologyEpoch         int32
	storedDescriptionTopologyEpoch int32
	failedDescriptionTopologyEpoch int32
	lastAssignmentConfigs          []KeyValue
	topology                       *StreamsTopology
}

func (*streamsGroup) groupType() GroupType { return GroupTypeStreams }

func (g *streamsGroup) init(v KafkaVersion) {
	g.modernGroup.init(v)
	g.validatedTopologyEpoch = v.initialValidatedTopologyEpoch()
	g.storedDescriptionTopologyEpoch = -1
	g.failedDescriptionTopologyEpoch = -1
}

// lookupStreams is lookupModern for streams records (getOrMaybeCreatePersistedStreamsGroup):
// Kafka 4.0 does not know them, and simple classic groups are replaced on 4.2+ only. The
// common case, an existing streams group on a version that replays the record, comes first
// (as in lookupConsumer).
func (s *State) lookupStreams(r rec, create bool) (g *streamsGroup, fresh bool, err error) {
	s.touch(r.group)
	if g, ok := s.groups[r.group].(*streamsGroup); ok && s.version.ReplaysRecordType(r.typ) {
		return g, false, nil
	}
	return lookupModern[streamsGroup](s, r, create, streamsRules)
}

// state is StreamsGroup.maybeUpdateGroupState. On 4.1 the NOT_READY test also needed the
// configured topology, which is built from cluster metadata and cannot be derived from the
// log: the model reports NotReady on 4.1 only when the topology record is absent.
func (g *streamsGroup) state(v KafkaVersion) string {
	if len(g.members) == 0 {
		return StateEmpty
	}
	if g.topology == nil || (v.hasValidatedTopologyEpoch() && g.topology.Epoch != g.validatedTopologyEpoch) {
		return StateNotReady
	}
	if g.groupEpoch > g.assignmentEpoch {
		return StateAssigning
	}
	for _, m := range g.members {
		if !m.isReconciledTo(g.assignmentEpoch) {
			return StateReconciling
		}
	}
	return StateStable
}

// member is StreamsGroup.updateMember's put into Kafka's map of members: it returns the
// member id, created (uninitialized, under a copy of id) when missing.
func (g *streamsGroup) member(id string) *StreamsMember {
	g.memberTable.put(len(g.members))
	if m := g.members[id]; m != nil {
		return m
	}
	m := &StreamsMember{MemberID: strings.Clone(id), seq: g.memberTable.insert()}
	g.members[m.MemberID] = m
	return m
}

// ReplayStreamsGroupMetadata replays record 17: get or create the streams group; set epoch,
// metadata hash and, by version, the validated topology epoch and last assignment configs
// (4.2+) and the description topology epochs (4.4+). Repeated config keys fail.
func (s *State) ReplayStreamsGroupMetadata(groupID string, v StreamsGroupMetadataValue) error {
	r := rec{typ: recordTypeStreamsGroupMetadata, group: groupID}
	g, fresh, err := s.lookupStreams(r, true)
	if err != nil {
		return err
	}
	var cfg []KeyValue
	if s.version.hasValidatedTopologyEpoch() {
		var repeated bool
		if cfg, repeated = s.scr().canonKVs(v.LastAssignmentConfigs); repeated {
			return r.err(ErrDuplicateKey, illegalState, "duplicate key %q in the last assignment configs", firstRepeated(v.LastAssignmentConfigs, kvKey))
		}
	}
	g.setGroupMetadata(v.Epoch, v.MetadataHash, true) // a plain field of record 17 from its first version
	if s.version.hasValidatedTopologyEpoch() {
		g.validatedTopologyEpoch = v.ValidatedTopologyEpoch
		g.lastAssignmentConfigs = s.keepKVs(g.lastAssignmentConfigs, cfg)
	}
	if s.version.hasDescriptionEpochs() {
		g.storedDescriptionTopologyEpoch = v.StoredDescriptionTopologyEpoch
		g.failedDescriptionTopologyEpoch = v.FailedDescriptionTopologyEpoch
	}
	s.install(groupID, g, fresh)
	return nil
}

// ReplayStreamsGroupMetadataTombstone replays a record 17 tombstone: the group must have no
// members and assignment epoch -1 (the target assignment is not checked); then it is
// removed.
func (s *State) ReplayStreamsGroupMetadataTombstone(groupID string) error {
	return replayGroupTombstone(s, rec{typ: recordTypeStreamsGroupMetadata, tombstone: true, group: groupID}, (*State).lookupStreams, streamsRules)
}

// ReplayStreamsGroupMemberMetadata replays record 19: get or create the group and the
// (uninitialized) member; set its metadata. Repeated client tag keys fail.
func (s *State) ReplayStreamsGroupMemberMetadata(groupID, memberID string, v StreamsMemberMetadata) error {
	r := rec{typ: recordTypeStreamsGroupMemberMetadata, group: groupID, member: memberID}
	g, fresh, err := s.lookupStreams(r, true)
	if err != nil {
		return err
	}
	tags, repeated := s.scr().canonKVs(v.ClientTags)
	if repeated {
		return r.err(ErrDuplicateKey, illegalState, "duplicate client tag key %q", firstRepeated(v.ClientTags, kvKey))
	}
	m := g.member(memberID)
	if !m.Metadata.same(&v, tags) {
		m.Metadata = s.keepStreamsMetadata(m.Metadata, &v, tags)
	}
	s.install(groupID, g, fresh)
	return nil
}

func kvKey(kv KeyValue) string { return kv.Key }

// same reports whether m (nil: no record 19 yet) holds v, whose client tags are the canonical
// tags.
func (m *StreamsMemberMetadata) same(v *StreamsMemberMetadata, tags []KeyValue) bool {
	if m == nil {
		return false
	}
	e, f := m.UserEndpoint, v.UserEndpoint
	return sameStrPtr(m.InstanceID, v.InstanceID) && sameStrPtr(m.RackID, v.RackID) && m.ClientID == v.ClientID &&
		m.ClientHost == v.ClientHost && m.RebalanceTimeoutMs == v.RebalanceTimeoutMs && m.TopologyEpoch == v.TopologyEpoch &&
		m.ProcessID == v.ProcessID && (e == nil) == (f == nil) && (e == nil || *e == *f) && sameKVs(m.ClientTags, tags)
}

// keepStreamsMetadata is a new metadata holding v (with the canonical tags) in the state's
// memory, sharing what it has in common with old.
func (s *State) keepStreamsMetadata(old, v *StreamsMemberMetadata, tags []KeyValue) *StreamsMemberMetadata {
	if old == nil {
		old = &StreamsMemberMetadata{}
	}
	md := &StreamsMemberMetadata{
		InstanceID: keepStrPtr(old.InstanceID, v.InstanceID), RackID: keepStrPtr(old.RackID, v.RackID),
		ClientID: keepStr(old.ClientID, v.ClientID), ClientHost: keepStr(old.ClientHost, v.ClientHost),
		RebalanceTimeoutMs: v.RebalanceTimeoutMs, TopologyEpoch: v.TopologyEpoch, ProcessID: keepStr(old.ProcessID, v.ProcessID),
		UserEndpoint: old.UserEndpoint, ClientTags: s.keepKVs(old.ClientTags, tags),
	}
	if e := v.UserEndpoint; e == nil {
		md.UserEndpoint = nil
	} else if md.UserEndpoint == nil || *md.UserEndpoint != *e {
		md.UserEndpoint = &StreamsEndpoint{Host: strings.Clone(e.Host), Port: e.Port}
	}
	return md
}

// ReplayStreamsGroupMemberMetadataTombstone replays a record 19 tombstone: the member must
// have epoch -1 and no target assignment; then it is removed. A missing group or member is
// ignored. A member whose epoch was never set (no record 22 nor its tombstone) fails with
// ErrMissingField (Kafka unboxes a null epoch: NullPointerException).
func (s *State) ReplayStreamsGroupMemberMetadataTombstone(groupID, memberID string) error {
	r := rec{typ: recordTypeStreamsGroupMemberMetadata, tombstone: true, group: groupID, member: memberID}
	g, fresh, err := s.lookupStreams(r, false)
	if err != nil || g == nil {
		return err
	}
	m, ok := g.members[memberID]
	if !ok {
		s.install(groupID, g, fresh)
		return nil
	}
	var epoch int32
	if m.MemberEpoch != nil {
		epoch = *m.MemberEpoch
	}
	return g.removeMember(r, streamsRules, epoch, m.MemberEpoch != nil)
}

// ReplayStreamsGroupTargetAssignmentMetadata replays record 20 (same rules as record 6).
func (s *State) ReplayStreamsGroupTargetAssignmentMetadata(groupID string, v TargetAssignmentMetadataValue) error {
	return replayAssignmentMetadata(s, rec{typ: recordTypeStreamsGroupTargetAssignmentMetadata, group: groupID}, true, (*State).lookupStreams, v)
}

// ReplayStreamsGroupTargetAssignmentMetadataTombstone replays a record 20 tombstone: the
// target assignment must be empty; the epoch becomes -1 and the timestamp 0.
func (s *State) ReplayStreamsGroupTargetAssignmentMetadataTombstone(groupID string) error {
	return replayAssignmentMetadata(s, rec{typ: recordTypeStreamsGroupTargetAssignmentMetadata, tombstone: true, group: groupID}, false, (*State).lookupStreams, TargetAssignmentMetadataValue{})
}

func taskSubtopology(t TaskIDs) string { return t.SubtopologyID }

// ReplayStreamsGroupTargetAssignmentMember replays record 21: set the member's target tasks
// (the member need not exist). A subtopology listed twice in one list fails.
func (s *State) ReplayStreamsGroupTargetAssignmentMember(groupID, memberID string, v StreamsTargetAssignmentValue) error {
	r := rec{typ: recordTypeStreamsGroupTargetAssignmentMember, group: groupID, member: memberID}
	g, fresh, err := s.lookupStreams(r, true)
	if err != nil {
		return err
	}
	sc := s.scr()
	var c [3][]TaskIDs
	for i, in := range [3][]TaskIDs{v.ActiveTasks, v.StandbyTasks, v.WarmupTasks} {
		var repeated bool
		if c[i], repeated = sc.canonTaskIDs(&sc.task3[i], in); repeated {
			return r.err(ErrDuplicateKey, illegalState, "duplicate subtopology id %q in the %s tasks of the target assignment",
				firstRepeated(in, taskSubtopology), [3]string{"active", "standby", "warmup"}[i])
		}
	}
	old, had := g.target[memberID]
	t := old
	lists := [3]*[]TaskIDs{&t.ActiveTasks, &t.StandbyTasks, &t.WarmupTasks}
	var copied [3]bool
	var hashes [3]uint64
	var tc taskCopy
	changed := !had
	for i, l := range lists {
		if sameTaskIDs(*l, c[i]) {
			continue
		}
		changed = true
		if c[i] == nil {
			*l = nil
			continue
		}
		var shared []TaskIDs
		if shared, hashes[i] = sc.shared.find(c[i]); shared != nil {
			*l = shared
			continue
		}
		copied[i] = true
		tc.plan(c[i])
	}
	if changed {
		tc.alloc()
		for i, l := range lists {
			if !copied[i] {
				continue
			}
			if found := sc.shared.plain.lookup(hashes[i], c[i]); found != nil {
				*l = found // equal to a list this record copied before it
				continue
			}
			*l = s.copyTasks(&tc, c[i], *l)
			sc.shared.plain.keep(hashes[i], *l)
		}
		if !had {
			t.MemberID = g.ownMemberID(memberID)
		}
		g.target[t.MemberID] = t
	}
	s.install(groupID, g, fresh)
	return nil
}

// ownMemberID is the group's copy of a member id: the member's, else a new one.
func (g *streamsGroup) ownMemberID(id string) string {
	if m := g.members[id]; m != nil {
		return m.MemberID
	}
	return strings.Clone(id)
}

// ReplayStreamsGroupTargetAssignmentMemberTombstone replays a record 21 tombstone.
func (s *State) ReplayStreamsGroupTargetAssignmentMemberTombstone(groupID, memberID string) error {
	g, fresh, err := s.lookupStreams(rec{typ: recordTypeStreamsGroupTargetAssignmentMember, tombstone: true, group: groupID, member: memberID}, false)
	if err != nil || g == nil {
		return err
	}
	delete(g.target, memberID)
	s.install(groupID, g, fresh)
	return nil
}

// canonStreamsTasks is the canonical form of the three lists of record 22, in t, built in
// the scratch lists of buf. On 4.1 a repeated subtopology fails (Collectors.toMap) and no
// epochs are kept; from 4.2 the last entry wins and each active task gets its
// AssignmentEpochs entry, or the member epoch when the list is absent or of another length.
func (s *State) canonStreamsTasks(r rec, t *StreamsTasks, buf *tasksScratch, active, standby, warmup []TaskIDsWithEpochs, memberEpoch int32, what string) error {
	strict := !s.version.hasStreamsTaskEpochs()
	sc := s.sc
	plain := func(dst *[]TaskIDs, in []TaskIDsWithEpochs, name string) ([]TaskIDs, error) {
		if len(in) == 0 {
			return nil, nil
		}
		if canonicalTasksWithEpochs(in) {
			l := (*dst)[:0]
			for _, x := range in {
				l = append(l, TaskIDs{SubtopologyID: x.SubtopologyID, Partitions: x.Partitions})
			}
			*dst = l
			return l, nil
		}
		l := (*dst)[:0]
		for _, x := range in {
			l = append(l, TaskIDs{SubtopologyID: x.SubtopologyID, Partitions: appendSet(&sc.ints, x.Partitions)})
		}
		*dst = l
		out, repeated := canonKeyed(l, byTaskID)
		if repeated && strict {
			return nil, r.err(ErrDuplicateKey, illegalState, "duplicate subtopology id %q in the %s tasks%s",
				firstRepeated(in, func(x TaskIDsWithEpochs) string { return x.SubtopologyID }), name, what)
		}
		return out, nil
	}
	var err error
	if t.StandbyTasks, err = plain(&buf.standby, standby, "standby"); err != nil {
		return err
	}
	if t.WarmupTasks, err = plain(&buf.warmup, warmup, "warmup"); err != nil {
		return err
	}
	l := buf.active[:0]
	if canonicalTasksWithEpochs(active) {
		// The common case: no sorting, and the epochs as they are (or the member epoch).
		for _, x := range active {
			e := TaskIDsWithEpochs{SubtopologyID: x.SubtopologyID, Partitions: x.Partitions}
			switch {
			case strict || len(x.Partitions) == 0:
			case x.AssignmentEpochs != nil && len(x.AssignmentEpochs) == len(x.Partitions):
				e.AssignmentEpochs = x.AssignmentEpochs
			default:
				start := len(sc.ints)
				for range x.Partitions {
					sc.ints = append(sc.ints, memberEpoch)
				}
				e.AssignmentEpochs = sc.ints[start:len(sc.ints):len(sc.ints)]
			}
			l = append(l, e)
		}
		buf.active = l
		if len(l) == 0 {
			l = nil
		}
		t.ActiveTasks = l
		return nil
	}
	if strict {
		for _, x := range active {
			l = append(l, TaskIDsWithEpochs{SubtopologyID: x.SubtopologyID, Partitions: appendSet(&sc.ints, x.Partitions)})
		}
	} else {
		for _, x := range active {
			e := TaskIDsWithEpochs{SubtopologyID: x.SubtopologyID}
			e.Partitions, e.AssignmentEpochs = sc.appendPartitionEpochs(x.Partitions, x.AssignmentEpochs, memberEpoch)
			l = append(l, e)
		}
	}
	buf.active = l
	out, repeated := canonKeyed(l, byTaskIDWithEpochs)
	if repeated && strict {
		return r.err(ErrDuplicateKey, illegalState, "duplicate subtopology id %q in the active tasks%s",
			firstRepeated(active, func(x TaskIDsWithEpochs) string { return x.SubtopologyID }), what)
	}
	if len(out) == 0 {
		out = nil
	}
	t.ActiveTasks = out
	return nil
}

// canonicalTasksWithEpochs reports whether in's subtopologies strictly increase and each has
// a partition set.
func canonicalTasksWithEpochs(in []TaskIDsWithEpochs) bool {
	for i := range in {
		if i > 0 && in[i-1].SubtopologyID >= in[i].SubtopologyID || !isSet(in[i].Partitions) {
			return false
		}
	}
	return true
}

// keepStreamsTasks makes the member's task holders (nil: new ones) hold the canonical
// assigned and pending tasks, keeping the lists that did not change and copying the others
// with one allocation per kind for the record (taskCopy). A standby or warm-up list equal to
// the member's target's is shared with it, and so are the partitions of an active task list
// equal to the target's.
func (s *State) keepStreamsTasks(m *StreamsMember, assigned, pending *StreamsTasks, target StreamsMemberTarget) {
	for _, p := range []**StreamsTasks{&m.AssignedTasks, &m.TasksPendingRevocation} {
		if *p == nil {
			*p = &StreamsTasks{}
		}
	}
	cur, rev := m.AssignedTasks, m.TasksPendingRevocation
	var none StreamsMemberTarget
	type plainList struct {
		dst    *[]TaskIDs
		c, tgt []TaskIDs
	}
	plains := [4]plainList{
		{&cur.StandbyTasks, assigned.StandbyTasks, target.StandbyTasks}, {&cur.WarmupTasks, assigned.WarmupTasks, target.WarmupTasks},
		{&rev.StandbyTasks, pending.StandbyTasks, none.StandbyTasks}, {&rev.WarmupTasks, pending.WarmupTasks, none.WarmupTasks},
	}
	type activeList struct {
		dst  *[]TaskIDsWithEpochs
		c    []TaskIDsWithEpochs
		like []TaskIDs
	}
	actives := [2]activeList{{&cur.ActiveTasks, assigned.ActiveTasks, target.ActiveTasks}, {&rev.ActiveTasks, pending.ActiveTasks, nil}}
	var tc taskCopy
	var copyPlain [4]bool
	var copyActive [2]bool
	var hashes [6]uint64
	shared := s.sc.shared
	for i, l := range plains {
		switch {
		case sameTaskIDs(*l.dst, l.c):
		case l.tgt != nil && sameTaskIDs(l.tgt, l.c):
			*l.dst = l.tgt
		case l.c == nil:
			*l.dst = nil
		default:
			var found []TaskIDs
			if found, hashes[i] = shared.find(l.c); found != nil {
				*l.dst = found
				continue
			}
			copyPlain[i] = true
			tc.plan(l.c)
		}
	}
	for i, l := range actives {
		switch {
		case sameTaskIDsWithEpochs(*l.dst, l.c):
		case l.c == nil:
			*l.dst = nil
		default:
			var found []TaskIDsWithEpochs
			if found, hashes[4+i] = shared.findE(l.c); found != nil {
				*l.dst = found
				continue
			}
			copyActive[i] = true
			tc.planE(l.c, l.like)
		}
	}
	if copyPlain == [4]bool{} && copyActive == [2]bool{} {
		return
	}
	tc.alloc()
	for i, l := range plains {
		if !copyPlain[i] {
			continue
		}
		if found := shared.plain.lookup(hashes[i], l.c); found != nil {
			*l.dst = found // equal to a list this record copied before it
			continue
		}
		*l.dst = s.copyTasks(&tc, l.c, *l.dst)
		shared.plain.keep(hashes[i], *l.dst)
	}
	for i, l := range actives {
		if !copyActive[i] {
			continue
		}
		if found := shared.withE.lookup(hashes[4+i], l.c); found != nil {
			*l.dst = found
			continue
		}
		*l.dst = s.copyTasksE(&tc, l.c, l.like)
		shared.withE.keep(hashes[4+i], *l.dst)
	}
}

// ReplayStreamsGroupCurrentMemberAssignment replays record 22: get or create the group and
// the (uninitialized) member; set epochs, state (streams numbering) and tasks.
func (s *State) ReplayStreamsGroupCurrentMemberAssignment(groupID, memberID string, v StreamsCurrentAssignmentValue) error {
	r := rec{typ: recordTypeStreamsGroupCurrentMemberAssignment, group: groupID, member: memberID}
	g, fresh, err := s.lookupStreams(r, true)
	if err != nil {
		return err
	}
	sc := s.scr()
	assigned, pending := &sc.tasks[0], &sc.tasks[1]
	if err := s.canonStreamsTasks(r, assigned, &sc.taskBufs[0], v.ActiveTasks, v.StandbyTasks, v.WarmupTasks, v.MemberEpoch, ""); err != nil {
		return err
	}
	if err := s.canonStreamsTasks(r, pending, &sc.taskBufs[1], v.ActiveTasksPendingRevocation, v.StandbyTasksPendingRevocation, v.WarmupTasksPendingRevocation, v.MemberEpoch, " pending revocation"); err != nil {
		return err
	}
	m := g.member(memberID)
	setInt32(&m.MemberEpoch, v.MemberEpoch)
	setInt32(&m.PreviousMemberEpoch, v.PreviousMemberEpoch)
	setInt8(&m.State, streamsMemberState(v.State))
	s.keepStreamsTasks(m, assigned, pending, g.target[memberID])
	s.install(groupID, g, fresh)
	return nil
}

// ReplayStreamsGroupCurrentMemberAssignmentTombstone replays a record 22 tombstone: epochs
// become -1 and the tasks empty; the state is left as it was.
func (s *State) ReplayStreamsGroupCurrentMemberAssignmentTombstone(groupID, memberID string) error {
	g, fresh, err := s.lookupStreams(rec{typ: recordTypeStreamsGroupCurrentMemberAssignment, tombstone: true, group: groupID, member: memberID}, false)
	if err != nil || g == nil {
		return err
	}
	s.install(groupID, g, fresh)
	m := g.members[memberID]
	if m == nil {
		return nil
	}
	g.memberTable.put(len(g.members))
	setInt32(&m.MemberEpoch, LeaveGroupMemberEpoch)
	setInt32(&m.PreviousMemberEpoch, LeaveGroupMemberEpoch)
	for _, t := range []**StreamsTasks{&m.AssignedTasks, &m.TasksPendingRevocation} {
		if *t == nil {
			*t = &StreamsTasks{}
		} else {
			**t = StreamsTasks{}
		}
	}
	return nil
}

// ReplayStreamsGroupTopology replays record 23: get or create the group and set its
// topology. A subtopology id listed twice fails (Collectors.toMap).
func (s *State) ReplayStreamsGroupTopology(groupID string, v StreamsTopology) error {
	r := rec{typ: recordTypeStreamsGroupTopology, group: groupID}
	g, fresh, err := s.lookupStreams(r, true)
	if err != nil {
		return err
	}
	sc := s.scr()
	sc.subs = append(sc.subs[:0], v.Subtopologies...)
	subs, repeated := canonKeyed(sc.subs, func(a, b Subtopology) int { return strings.Compare(a.SubtopologyID, b.SubtopologyID) })
	if repeated {
		return r.err(ErrDuplicateKey, illegalState, "duplicate subtopology id %q in the topology",
			firstRepeated(v.Subtopologies, func(st Subtopology) string { return st.SubtopologyID }))
	}
	if !g.topology.same(v.Epoch, subs) {
		g.topology = s.ownTopology(&StreamsTopology{Epoch: v.Epoch, Subtopologies: subs})
	}
	s.install(groupID, g, fresh)
	return nil
}

// same reports whether t (nil: no topology) is the topology of the epoch and the sorted
// subtopologies, as clone would store them (empty lists are nil there).
func (t *StreamsTopology) same(epoch int32, subs []Subtopology) bool {
	return t != nil && t.Epoch == epoch && slices.EqualFunc(t.Subtopologies, subs, func(a, b Subtopology) bool {
		return a.SubtopologyID == b.SubtopologyID && slices.Equal(a.SourceTopics, b.SourceTopics) &&
			slices.Equal(a.SourceTopicRegex, b.SourceTopicRegex) && slices.Equal(a.RepartitionSinkTopics, b.RepartitionSinkTopics) &&
			sameTopicInfos(a.StateChangelogTopics, b.StateChangelogTopics) &&
			sameTopicInfos(a.RepartitionSourceTopics, b.RepartitionSourceTopics) &&
			slices.EqualFunc(a.CopartitionGroups, b.CopartitionGroups, func(x, y CopartitionGroup) bool {
				return slices.Equal(x.SourceTopics, y.SourceTopics) && slices.Equal(x.SourceTopicRegex, y.SourceTopicRegex) &&
					slices.Equal(x.RepartitionSourceTopics, y.RepartitionSourceTopics)
			})
	})
}

func sameTopicInfos(a, b []StreamsTopicInfo) bool {
	return slices.EqualFunc(a, b, func(x, y StreamsTopicInfo) bool {
		return x.Name == y.Name && x.Partitions == y.Partitions && x.ReplicationFactor == y.ReplicationFactor && slices.Equal(x.TopicConfigs, y.TopicConfigs)
	})
}

// ownTopology is clone with every string copied into the state's memory.
func (s *State) ownTopology(t *StreamsTopology) *StreamsTopology {
	c := t.clone()
	strs := func(l []string) {
		for i := range l {
			l[i] = s.intern(l[i])
		}
	}
	infos := func(l []StreamsTopicInfo) {
		for i := range l {
			l[i].Name = s.intern(l[i].Name)
			for j := range l[i].TopicConfigs {
				kv := &l[i].TopicConfigs[j]
				kv.Key, kv.Value = s.intern(kv.Key), s.intern(kv.Value)
			}
		}
	}
	for i := range c.Subtopologies {
		st := &c.Subtopologies[i]
		st.SubtopologyID = s.intern(st.SubtopologyID)
		strs(st.SourceTopics)
		strs(st.SourceTopicRegex)
		strs(st.RepartitionSinkTopics)
		infos(st.StateChangelogTopics)
		infos(st.RepartitionSourceTopics)
	}
	return c
}

// ReplayStreamsGroupTopologyTombstone replays a record 23 tombstone: a missing group is
// ignored (the usual case: the record 17 tombstone came first); otherwise the topology is
// cleared.
func (s *State) ReplayStreamsGroupTopologyTombstone(groupID string) error {
	g, fresh, err := s.lookupStreams(rec{typ: recordTypeStreamsGroupTopology, tombstone: true, group: groupID}, false)
	if err != nil || g == nil {
		return err
	}
	g.topology = nil
	s.install(groupID, g, fresh)
	return nil
}

// StreamsGroup returns a copy of the streams group id.
func (v View) StreamsGroup(id string) (StreamsGroup, bool) {
	s := v.s
	g, ok := s.groups[id].(*streamsGroup)
	if !ok {
		return StreamsGroup{}, false
	}
	return g.view(id, s.version), true
}

func (g *streamsGroup) view(id string, v KafkaVersion) StreamsGroup {
	out := StreamsGroup{
		GroupID: id, State: g.state(v), GroupEpoch: g.groupEpoch, MetadataHash: g.metadataHash,
		ValidatedTopologyEpoch:         g.validatedTopologyEpoch,
		StoredDescriptionTopologyEpoch: g.storedDescriptionTopologyEpoch,
		FailedDescriptionTopologyEpoch: g.failedDescriptionTopologyEpoch,
		LastAssignmentConfigs:          cloneKVs(g.lastAssignmentConfigs),
		AssignmentEpoch:                g.assignmentEpoch, AssignmentTimestamp: g.assignmentTimestamp,
		Topology: g.topology.clone(),
	}
	for _, mid := range sortedKeys(g.members) {
		out.Members = append(out.Members, g.members[mid].clone())
	}
	for _, mid := range sortedKeys(g.target) {
		t := g.target[mid]
		out.TargetAssignment = append(out.TargetAssignment, StreamsMemberTarget{
			MemberID: mid, ActiveTasks: cloneTaskIDs(t.ActiveTasks), StandbyTasks: cloneTaskIDs(t.StandbyTasks), WarmupTasks: cloneTaskIDs(t.WarmupTasks),
		})
	}
	return out
}
