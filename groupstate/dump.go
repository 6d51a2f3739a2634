package groupstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Group is the view of one group of any type: exactly one of Classic, Consumer, Share and
// Streams is set, matching Type.
type Group struct {
	GroupID  string         `json:"groupId"`
	Type     GroupType      `json:"type"`
	State    string         `json:"state"`
	Classic  *ClassicGroup  `json:"classic,omitempty"`
	Consumer *ConsumerGroup `json:"consumer,omitempty"`
	Share    *ShareGroup    `json:"share,omitempty"`
	Streams  *StreamsGroup  `json:"streams,omitempty"`
}

// Dump is the canonical, self-contained form of a State: every list sorted, empty lists
// nil (omitted in JSON), no maps. Dumps of equal states are reflect.DeepEqual and marshal to
// identical JSON; Restore turns a Dump back into a State. Derived fields (group and member
// state names, Simple, SubscribedTopics of classic groups) are recomputed, not restored.
type Dump struct {
	KafkaVersion                     KafkaVersion                  `json:"kafkaVersion"`
	Groups                           []Group                       `json:"groups,omitempty"`              // sorted by group id
	Offsets                          []CommittedOffset             `json:"offsets,omitempty"`             // sorted by group, topic, partition
	PendingTransactions              []PendingTransaction          `json:"pendingTransactions,omitempty"` // sorted by producer id
	ShareGroupStatePartitionMetadata []ShareStatePartitionMetadata `json:"shareGroupStatePartitionMetadata,omitempty"`
}

// Group returns a copy of group id, of any type.
func (v View) Group(id string) (Group, bool) {
	s := v.s
	g, ok := s.groups[id]
	if !ok {
		return Group{}, false
	}
	out := Group{GroupID: id, Type: g.groupType()}
	switch g := g.(type) {
	case *classicGroup:
		v := g.view(id)
		out.State, out.Classic = v.State, &v
	case *consumerGroup:
		v := g.view(id)
		out.State, out.Consumer = v.State, &v
	case *shareGroup:
		v := g.view(id)
		out.State, out.Share = v.State, &v
	case *streamsGroup:
		v := g.view(id, s.version)
		out.State, out.Streams = v.State, &v
	}
	return out, true
}

// Groups returns copies of all groups, sorted by id.
func (v View) Groups() []Group {
	s := v.s
	if len(s.groups) == 0 {
		return nil
	}
	out := make([]Group, 0, len(s.groups))
	for _, id := range v.GroupIDs() {
		g, _ := v.Group(id)
		out = append(out, g)
	}
	return out
}

// Dump returns the canonical form of the state.
func (v View) Dump() Dump {
	s := v.s
	d := Dump{
		KafkaVersion:        s.version,
		Groups:              v.Groups(),
		Offsets:             v.AllOffsets(),
		PendingTransactions: v.PendingTransactions(),
	}
	for _, id := range v.ShareGroupStatePartitionMetadataGroupIDs() {
		d.ShareGroupStatePartitionMetadata = append(d.ShareGroupStatePartitionMetadata, s.shareStateMeta[id].clone())
	}
	return d
}

// MarshalJSON renders the canonical dump.
func (v View) MarshalJSON() ([]byte, error) { return json.Marshal(v.Dump()) }

// Equal reports whether two states are the same model state (same version, groups,
// offsets, pending transactions and share state metadata).
func Equal(a, b View) bool { return reflect.DeepEqual(a.Dump(), b.Dump()) }

// Diff describes how b differs from a, one line per differing group, offset, pending
// transaction or share state entry (at most limit lines; limit <= 0 means all). It is empty
// when Equal(a, b).
func Diff(a, b View, limit int) []string {
	ka, kb := keyed(a.Dump()), keyed(b.Dump())
	keys := make([]string, 0, len(ka)+len(kb))
	for k := range ka {
		keys = append(keys, k)
	}
	for k := range kb {
		if _, ok := ka[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		va, okA := ka[k]
		vb, okB := kb[k]
		switch {
		case !okA:
			out = append(out, fmt.Sprintf("+ %s: %s", k, vb))
		case !okB:
			out = append(out, fmt.Sprintf("- %s: %s", k, va))
		case !bytes.Equal(va, vb):
			out = append(out, fmt.Sprintf("~ %s: %s -> %s", k, va, vb))
		default:
			continue
		}
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out
}

func keyed(d Dump) map[string][]byte {
	m := map[string][]byte{}
	put := func(k string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(err.Error())
		}
		m[k] = b
	}
	put("kafkaVersion", d.KafkaVersion)
	for _, g := range d.Groups {
		put("group "+g.GroupID, g)
	}
	for _, o := range d.Offsets {
		put(fmt.Sprintf("offset %s/%s-%d", o.GroupID, o.Topic, o.Partition), o.OffsetAndMetadata)
	}
	for _, p := range d.PendingTransactions {
		put(fmt.Sprintf("pending %d", p.ProducerID), p.Offsets)
	}
	for _, sm := range d.ShareGroupStatePartitionMetadata {
		put("shareStatePartitionMetadata "+sm.GroupID, sm)
	}
	return m
}

// Clone returns a deep copy of the state, the orders of Kafka's maps (order.go) included.
func (s *State) Clone() *State {
	c, err := Restore(s.View().Dump())
	if err != nil {
		panic("groupstate: Clone: " + err.Error()) // a state's own dump always restores
	}
	c.copyOrder(s)
	return c
}

// Restore rebuilds a State from its Dump. It checks the dump's shape (known version and
// group types, one body per group, unique keys) but not Kafka's replay invariants. A Dump
// does not hold the orders of Kafka's maps: the restored state assumes them (order.go).
func Restore(d Dump) (*State, error) {
	if !d.KafkaVersion.Valid() {
		return nil, fmt.Errorf("groupstate: restore: invalid Kafka version %d", d.KafkaVersion)
	}
	s := New(d.KafkaVersion)
	for _, g := range d.Groups {
		if _, dup := s.groups[g.GroupID]; dup {
			return nil, fmt.Errorf("groupstate: restore: group %q listed twice", g.GroupID)
		}
		n := 0
		for _, set := range []bool{g.Classic != nil, g.Consumer != nil, g.Share != nil, g.Streams != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("groupstate: restore: group %q has %d bodies, want 1", g.GroupID, n)
		}
		switch {
		case g.Type == GroupTypeClassic && g.Classic != nil:
			s.groups[g.GroupID] = restoreClassic(g.Classic)
		case g.Type == GroupTypeConsumer && g.Consumer != nil:
			s.groups[g.GroupID] = restoreConsumer(g.Consumer)
		case g.Type == GroupTypeShare && g.Share != nil:
			s.groups[g.GroupID] = restoreShare(g.Share)
		case g.Type == GroupTypeStreams && g.Streams != nil:
			s.groups[g.GroupID] = restoreStreams(g.Streams)
		default:
			return nil, fmt.Errorf("groupstate: restore: group %q has type %q and another body", g.GroupID, g.Type)
		}
	}
	for _, o := range d.Offsets {
		if _, dup := s.View().Offset(o.GroupID, o.Topic, o.Partition); dup {
			return nil, fmt.Errorf("groupstate: restore: offset %s/%s-%d listed twice", o.GroupID, o.Topic, o.Partition)
		}
		s.putOffset(o.GroupID, o.Topic, o.Partition, o.OffsetAndMetadata)
	}
	for _, p := range d.PendingTransactions {
		if _, dup := s.pending[p.ProducerID]; dup {
			return nil, fmt.Errorf("groupstate: restore: producer %d listed twice", p.ProducerID)
		}
		pm := map[offsetKey]OffsetAndMetadata{}
		s.pending[p.ProducerID] = pm
		for _, o := range p.Offsets {
			k := offsetKey{o.GroupID, o.Topic, o.Partition}
			pm[k] = o.OffsetAndMetadata
			ids := s.open[k]
			if i, found := slices.BinarySearch(ids, p.ProducerID); !found {
				s.open[k] = slices.Insert(ids, i, p.ProducerID)
			}
		}
	}
	for _, m := range d.ShareGroupStatePartitionMetadata {
		s.shareStateMeta[m.GroupID] = m.clone()
	}
	s.assumeOrder()
	return s, nil
}

func restoreClassic(v *ClassicGroup) *classicGroup {
	g := &classicGroup{
		protocolType: v.ProtocolType, generation: v.Generation, protocol: cloneStrPtr(v.Protocol),
		leader: cloneStrPtr(v.Leader), currentStateTimestamp: v.CurrentStateTimestamp,
	}
	for _, m := range v.Members {
		g.members = append(g.members, m.clone())
	}
	slices.SortFunc(g.members, func(a, b ClassicMember) int { return strings.Compare(a.MemberID, b.MemberID) })
	return g
}

func restoreConsumer(v *ConsumerGroup) *consumerGroup {
	g := &consumerGroup{
		modernGroup: modernGroup[ConsumerMember, []TopicPartitions]{
			groupEpoch: v.GroupEpoch, metadataHash: v.MetadataHash,
			assignmentEpoch: v.AssignmentEpoch, assignmentTimestamp: v.AssignmentTimestamp,
			members: map[string]*ConsumerMember{}, target: map[string][]TopicPartitions{},
		},
		hasSubscriptionMetadataRecord: v.HasSubscriptionMetadataRecord,
		subscriptionMetadata:          topicMetadataMap(v.SubscriptionMetadata),
		regexes:                       map[string]ResolvedRegularExpression{},
	}
	for i := range v.Members {
		m := v.Members[i].clone()
		m.StateName = ""
		g.members[m.MemberID] = &m
	}
	for _, t := range v.TargetAssignment {
		g.target[t.MemberID] = cloneTopicPartitions(t.Partitions)
	}
	for _, r := range v.ResolvedRegularExpressions {
		r.Topics = cloneStrings(r.Topics)
		g.regexes[r.Regex] = r
	}
	return g
}

func restoreShare(v *ShareGroup) *shareGroup {
	g := &shareGroup{
		modernGroup: modernGroup[ShareMember, []TopicPartitions]{
			groupEpoch: v.GroupEpoch, metadataHash: v.MetadataHash,
			assignmentEpoch: v.AssignmentEpoch, assignmentTimestamp: v.AssignmentTimestamp,
			members: map[string]*ShareMember{}, target: map[string][]TopicPartitions{},
		},
		subscriptionMetadata: topicMetadataMap(v.SubscriptionMetadata),
	}
	for i := range v.Members {
		m := v.Members[i].clone()
		m.StateName = ""
		g.members[m.MemberID] = &m
	}
	for _, t := range v.TargetAssignment {
		g.target[t.MemberID] = cloneTopicPartitions(t.Partitions)
	}
	return g
}

func restoreStreams(v *StreamsGroup) *streamsGroup {
	g := &streamsGroup{
		modernGroup: modernGroup[StreamsMember, StreamsMemberTarget]{
			groupEpoch: v.GroupEpoch, metadataHash: v.MetadataHash,
			assignmentEpoch: v.AssignmentEpoch, assignmentTimestamp: v.AssignmentTimestamp,
			members: map[string]*StreamsMember{}, target: map[string]StreamsMemberTarget{},
		},
		validatedTopologyEpoch: v.ValidatedTopologyEpoch, storedDescriptionTopologyEpoch: v.StoredDescriptionTopologyEpoch,
		failedDescriptionTopologyEpoch: v.FailedDescriptionTopologyEpoch,
		lastAssignmentConfigs:          cloneKVs(v.LastAssignmentConfigs),
		topology:                       v.Topology.clone(),
	}
	for i := range v.Members {
		m := v.Members[i].clone()
		m.StateName = ""
		g.members[m.MemberID] = &m
	}
	for _, t := range v.TargetAssignment {
		g.target[t.MemberID] = StreamsMemberTarget{MemberID: t.MemberID, ActiveTasks: cloneTaskIDs(t.ActiveTasks), StandbyTasks: cloneTaskIDs(t.StandbyTasks), WarmupTasks: cloneTaskIDs(t.WarmupTasks)}
	}
	return g
}
