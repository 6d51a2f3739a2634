package query

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coordlog/coordlog/groupstate"
)

// Side is one side of a diff: the state of every partition read, at one point.
type Side []SideState

// SideState is one partition's state, kept as a Dump so that a diff of two points of one
// replay holds the first while the engine moves on to the second.
type SideState struct {
	Partition  int32
	Dump       groupstate.Dump
	TopicNames map[groupstate.Uuid]string
}

// Capture copies the states of parts into a Side.
func Capture(parts []PartitionState) Side {
	out := make(Side, len(parts))
	for i, ps := range parts {
		out[i] = SideState{Partition: ps.Partition, Dump: ps.View.Dump(), TopicNames: ps.View.TopicNames()}
	}
	return out
}

// Change kinds, by what changed.
const (
	GroupAdded        = "group-added"
	GroupRemoved      = "group-removed"
	GroupTypeChanged  = "type-changed"
	GroupStateChanged = "state-changed"
	GroupEpochChanged = "epoch-changed"
	GroupChanged      = "group-changed" // another group field (protocol, leader, topology, ...)
	MemberJoined      = "member-joined"
	MemberLeft        = "member-left"
	MemberEpoch       = "member-epoch-changed"
	MemberAssignment  = "assignment-changed"
	MemberChanged     = "member-changed" // another member field (state, subscription, client, ...)
	OffsetCommitted   = "offset-committed"
	OffsetMoved       = "offset-moved"
	OffsetDeleted     = "offset-deleted"
	OffsetChanged     = "offset-changed"     // same offset, other metadata or leader epoch
	OffsetRecommitted = "offset-recommitted" // same offset and metadata, a newer record (volatile)
	PendingOpened     = "pending-offsets-added"
	PendingClosed     = "pending-offsets-removed"
	PendingChanged    = "pending-offsets-changed"
)

// Change is one difference between two sides.
type Change struct {
	Group string `json:"group"`
	// Partition is the __consumer_offsets partition of the group (of the second side, or the
	// first when the group is gone).
	Partition int32  `json:"partition"`
	Kind      string `json:"kind"`
	// Subject is what changed inside the group: "" for the group itself, a member id, a
	// topic-partition ("orders:3") or a producer ("producer 4001").
	Member         string `json:"member,omitempty"`
	Topic          string `json:"topic,omitempty"`
	TopicPartition *int32 `json:"topicPartition,omitempty"`
	ProducerID     *int64 `json:"producerId,omitempty"`
	Field          string `json:"field,omitempty"`
	From           string `json:"from,omitempty"`
	To             string `json:"to,omitempty"`
	// Delta is To - From for committed offsets that moved.
	Delta *int64 `json:"delta,omitempty"`
	// Volatile marks changes of record offsets and timestamps only (left out by default).
	Volatile bool `json:"volatile,omitempty"`
}

// Subject renders what the change is about, for a table cell.
func (c *Change) Subject() string {
	switch {
	case c.Member != "":
		return "member " + c.Member
	case c.TopicPartition != nil && c.ProducerID != nil:
		return fmt.Sprintf("%s:%d (producer %d)", c.Topic, *c.TopicPartition, *c.ProducerID)
	case c.TopicPartition != nil:
		return fmt.Sprintf("%s:%d", c.Topic, *c.TopicPartition)
	}
	return "group"
}

// DiffOptions select what Diff reports.
type DiffOptions struct {
	// Volatile includes changes of record offsets and timestamps alone (a re-commit of the same
	// offset, a new currentStateTimestamp, a new assignment timestamp, a new metadata hash).
	Volatile bool
	// Group, when set, limits the diff to that group.
	Group string
}

// Diff lists what changed from a to b, group by group (sorted by group id), matching groups
// and offsets by id across partitions (two inputs with different partition counts place a
// group differently). Within a group: the group's own changes, then members (sorted), then
// committed offsets (sorted by topic and partition), then pending transactional offsets.
func Diff(a, b Side, opts DiffOptions) []Change {
	ga, gb := groupsOf(a, opts.Group), groupsOf(b, opts.Group)
	ids := map[string]bool{}
	for id := range ga {
		ids[id] = true
	}
	for id := range gb {
		ids[id] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	slices.Sort(sorted)
	var out []Change
	for _, id := range sorted {
		out = append(out, diffGroup(id, ga[id], gb[id], opts)...)
	}
	if !opts.Volatile {
		out = slices.DeleteFunc(out, func(c Change) bool { return c.Volatile })
	}
	return out
}

// sideGroup is everything a side knows of one group id.
type sideGroup struct {
	partition int32
	group     *groupShape
	offsets   map[tpKey]groupstate.OffsetAndMetadata
	pending   map[pendingKey]groupstate.OffsetAndMetadata
}

type tpKey struct {
	topic     string
	partition int32
}

type pendingKey struct {
	producer int64
	tpKey
}

func groupsOf(s Side, only string) map[string]*sideGroup {
	out := map[string]*sideGroup{}
	get := func(id string, p int32) *sideGroup {
		g := out[id]
		if g == nil {
			g = &sideGroup{partition: p, offsets: map[tpKey]groupstate.OffsetAndMetadata{}, pending: map[pendingKey]groupstate.OffsetAndMetadata{}}
			out[id] = g
		}
		return g
	}
	for _, ps := range s {
		for i := range ps.Dump.Groups {
			g := &ps.Dump.Groups[i]
			if only != "" && g.GroupID != only {
				continue
			}
			sg := get(g.GroupID, ps.Partition)
			sg.partition = ps.Partition
			sh := shape(g, ps.TopicNames)
			sg.group = &sh
		}
		for _, o := range ps.Dump.Offsets {
			if only == "" || o.GroupID == only {
				get(o.GroupID, ps.Partition).offsets[tpKey{o.Topic, o.Partition}] = o.OffsetAndMetadata
			}
		}
		for _, pt := range ps.Dump.PendingTransactions {
			for _, o := range pt.Offsets {
				if only == "" || o.GroupID == only {
					get(o.GroupID, ps.Partition).pending[pendingKey{pt.ProducerID, tpKey{o.Topic, o.Partition}}] = o.OffsetAndMetadata
				}
			}
		}
	}
	return out
}

// FindGroupInSides returns an *UnknownGroupError (with the close names) when no side has group:
// neither as a group nor by committed offsets.
func FindGroupInSides(group string, sides ...Side) error {
	var candidates []string
	for _, s := range sides {
		for _, ps := range s {
			for _, g := range ps.Dump.Groups {
				if g.GroupID == group {
					return nil
				}
				candidates = append(candidates, g.GroupID)
			}
			for _, o := range ps.Dump.Offsets {
				if o.GroupID == group {
					return nil
				}
				candidates = append(candidates, o.GroupID)
			}
		}
	}
	return &UnknownGroupError{Group: group, Where: "in the input at either point", Suggests: Suggest(group, candidates, 5)}
}

// field is one named value of a group or member, compared as text.
type field struct {
	name, value string
	kind        string // the Change kind when it differs
	volatile    bool
}

type groupShape struct {
	typ, state string
	fields     []field
	members    map[string]*memberShape
	order      []string                   // member ids, sorted
	names      map[groupstate.Uuid]string // topic names, where the log gives them
}

type memberShape struct {
	summary string // for joined/left: client, host, instance
	fields  []field
}

func shape(g *groupstate.Group, names map[groupstate.Uuid]string) groupShape {
	sh := groupShape{typ: string(g.Type), state: g.State, members: map[string]*memberShape{}, names: names}
	switch {
	case g.Classic != nil:
		sh.classic(g.Classic)
	case g.Consumer != nil:
		sh.consumer(g.Consumer)
	case g.Share != nil:
		sh.share(g.Share)
	case g.Streams != nil:
		sh.streams(g.Streams)
	}
	slices.Sort(sh.order)
	return sh
}

func (sh *groupShape) add(name, value, kind string) {
	sh.fields = append(sh.fields, field{name: name, value: value, kind: kind})
}

// vol adds a field whose changes alone are volatile.
func (sh *groupShape) vol(name, value string) {
	sh.fields = append(sh.fields, field{name: name, value: value, kind: GroupChanged, volatile: true})
}

func (sh *groupShape) member(id, summary string) *memberShape {
	m := &memberShape{summary: summary}
	sh.members[id] = m
	sh.order = append(sh.order, id)
	return m
}

// tps labels topic partitions with the topics' names where the log names them.
func (sh *groupShape) tps(ps []groupstate.TopicPartitions) string {
	return topicPartitionsLabel(len(ps), func(i int) (string, []int32) { return topicName(ps[i].TopicID, sh.names), ps[i].Partitions })
}

func (sh *groupShape) tpsE(ps []groupstate.TopicPartitionsWithEpochs) string {
	return topicPartitionsLabel(len(ps), func(i int) (string, []int32) { return topicName(ps[i].TopicID, sh.names), ps[i].Partitions })
}

func (sh *groupShape) classic(c *groupstate.ClassicGroup) {
	sh.add("protocol type", c.ProtocolType, GroupChanged)
	sh.add("protocol", strOr(c.Protocol), GroupChanged)
	sh.add("generation", itoa(c.Generation), GroupEpochChanged)
	sh.add("leader", strOr(c.Leader), GroupChanged)
	sh.vol("current state timestamp", FormatMillis(c.CurrentStateTimestamp))
	for _, m := range c.Members {
		ms := sh.member(m.MemberID, memberSummary(m.ClientID, m.ClientHost, m.GroupInstanceID))
		ms.add("client", m.ClientID+" "+m.ClientHost, MemberChanged)
		ms.add("session timeout", itoa(m.SessionTimeoutMs), MemberChanged)
		if m.ProtocolDecoded {
			ms.add("subscription", strings.Join(m.SubscribedTopics, ","), MemberChanged)
			ms.add("assignment", topicPartitionsLabel(len(m.AssignedPartitions), func(i int) (string, []int32) {
				return m.AssignedPartitions[i].Topic, m.AssignedPartitions[i].Partitions
			}), MemberAssignment)
		} else {
			ms.add("subscription bytes", fmt.Sprintf("%x", m.Subscription), MemberChanged)
			ms.add("assignment bytes", fmt.Sprintf("%x", m.Assignment), MemberAssignment)
		}
	}
}

func (sh *groupShape) consumer(c *groupstate.ConsumerGroup) {
	sh.add("group epoch", itoa(c.GroupEpoch), GroupEpochChanged)
	sh.add("assignment epoch", itoa(c.AssignmentEpoch), GroupEpochChanged)
	sh.vol("metadata hash", strconv.FormatInt(c.MetadataHash, 10))
	sh.vol("assignment timestamp", FormatMillis(c.AssignmentTimestamp))
	for _, re := range c.ResolvedRegularExpressions {
		sh.add("regex "+re.Regex, strings.Join(re.Topics, ","), GroupChanged)
	}
	target := map[string][]groupstate.TopicPartitions{}
	for _, t := range c.TargetAssignment {
		target[t.MemberID] = t.Partitions
	}
	for _, m := range c.Members {
		ms := sh.member(m.MemberID, memberSummary(m.ClientID, m.ClientHost, m.InstanceID))
		ms.add("member epoch", itoa(m.MemberEpoch), MemberEpoch)
		ms.add("state", m.StateName, MemberChanged)
		ms.add("client", m.ClientID+" "+m.ClientHost, MemberChanged)
		sub := strings.Join(m.SubscribedTopicNames, ",")
		if m.SubscribedTopicRegex != nil && *m.SubscribedTopicRegex != "" {
			sub += " regex " + *m.SubscribedTopicRegex
		}
		ms.add("subscription", sub, MemberChanged)
		ms.add("assignment", sh.tpsE(m.AssignedPartitions), MemberAssignment)
		ms.add("pending revocation", sh.tpsE(m.PartitionsPendingRevocation), MemberAssignment)
		ms.add("target assignment", sh.tps(target[m.MemberID]), MemberAssignment)
	}
}

func (sh *groupShape) share(s *groupstate.ShareGroup) {
	sh.add("group epoch", itoa(s.GroupEpoch), GroupEpochChanged)
	sh.add("assignment epoch", itoa(s.AssignmentEpoch), GroupEpochChanged)
	sh.vol("metadata hash", strconv.FormatInt(s.MetadataHash, 10))
	sh.vol("assignment timestamp", FormatMillis(s.AssignmentTimestamp))
	target := map[string][]groupstate.TopicPartitions{}
	for _, t := range s.TargetAssignment {
		target[t.MemberID] = t.Partitions
	}
	for _, m := range s.Members {
		ms := sh.member(m.MemberID, memberSummary(m.ClientID, m.ClientHost, nil))
		ms.add("member epoch", itoa(m.MemberEpoch), MemberEpoch)
		ms.add("state", m.StateName, MemberChanged)
		ms.add("client", m.ClientID+" "+m.ClientHost, MemberChanged)
		ms.add("subscription", strings.Join(m.SubscribedTopicNames, ","), MemberChanged)
		ms.add("assignment", sh.tps(m.AssignedPartitions), MemberAssignment)
		ms.add("target assignment", sh.tps(target[m.MemberID]), MemberAssignment)
	}
}

func (sh *groupShape) streams(s *groupstate.StreamsGroup) {
	sh.add("group epoch", itoa(s.GroupEpoch), GroupEpochChanged)
	sh.add("assignment epoch", itoa(s.AssignmentEpoch), GroupEpochChanged)
	sh.add("validated topology epoch", itoa(s.ValidatedTopologyEpoch), GroupEpochChanged)
	sh.vol("metadata hash", strconv.FormatInt(s.MetadataHash, 10))
	sh.vol("assignment timestamp", FormatMillis(s.AssignmentTimestamp))
	topo := "none"
	if s.Topology != nil {
		b, _ := json.Marshal(s.Topology.Subtopologies)
		topo = fmt.Sprintf("epoch %d, %d subtopologies (%s)", s.Topology.Epoch, len(s.Topology.Subtopologies), shortHash(b))
	}
	sh.add("topology", topo, GroupChanged)
	target := map[string]groupstate.StreamsMemberTarget{}
	for _, t := range s.TargetAssignment {
		target[t.MemberID] = t
	}
	for _, m := range s.Members {
		client, host := "", ""
		var inst *string
		if m.Metadata != nil {
			client, host, inst = m.Metadata.ClientID, m.Metadata.ClientHost, m.Metadata.InstanceID
		}
		ms := sh.member(m.MemberID, memberSummary(client, host, inst))
		ep := "-"
		if m.MemberEpoch != nil {
			ep = itoa(*m.MemberEpoch)
		}
		ms.add("member epoch", ep, MemberEpoch)
		ms.add("state", m.StateName, MemberChanged)
		ms.add("client", client+" "+host, MemberChanged)
		if m.Metadata != nil {
			ms.add("process", m.Metadata.ProcessID, MemberChanged)
		}
		ms.add("tasks", tasksLabel(m.AssignedTasks), MemberAssignment)
		ms.add("tasks pending revocation", tasksLabel(m.TasksPendingRevocation), MemberAssignment)
		t := target[m.MemberID]
		ms.add("target tasks", tasksLabel(&groupstate.StreamsTasks{StandbyTasks: t.StandbyTasks, WarmupTasks: t.WarmupTasks,
			ActiveTasks: withoutEpochs(t.ActiveTasks)}), MemberAssignment)
	}
}

func (m *memberShape) add(name, value, kind string) {
	m.fields = append(m.fields, field{name: name, value: value, kind: kind})
}

func withoutEpochs(ts []groupstate.TaskIDs) []groupstate.TaskIDsWithEpochs {
	out := make([]groupstate.TaskIDsWithEpochs, len(ts))
	for i, t := range ts {
		out[i] = groupstate.TaskIDsWithEpochs{SubtopologyID: t.SubtopologyID, Partitions: t.Partitions}
	}
	return out
}

func tasksLabel(t *groupstate.StreamsTasks) string {
	if t == nil {
		return "-"
	}
	var parts []string
	one := func(kind string, n int, get func(i int) (string, []int32)) {
		if n == 0 {
			return
		}
		var s []string
		for i := 0; i < n; i++ {
			id, ps := get(i)
			s = append(s, id+":"+ints(ps))
		}
		parts = append(parts, kind+" "+strings.Join(s, ";"))
	}
	one("active", len(t.ActiveTasks), func(i int) (string, []int32) { return t.ActiveTasks[i].SubtopologyID, t.ActiveTasks[i].Partitions })
	one("standby", len(t.StandbyTasks), func(i int) (string, []int32) { return t.StandbyTasks[i].SubtopologyID, t.StandbyTasks[i].Partitions })
	one("warmup", len(t.WarmupTasks), func(i int) (string, []int32) { return t.WarmupTasks[i].SubtopologyID, t.WarmupTasks[i].Partitions })
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func memberSummary(client, host string, instance *string) string {
	s := fmt.Sprintf("client %s, host %s", dash(client), dash(host))
	if instance != nil {
		s += ", instance " + *instance
	}
	return s
}

func topicName(id groupstate.Uuid, names map[groupstate.Uuid]string) string {
	if n, ok := names[id]; ok {
		return n
	}
	return id.String()
}

// topicPartitionsLabel renders n topics' partitions as "orders:0,1;payments:2" (sorted), "-"
// when there are none.
func topicPartitionsLabel(n int, get func(i int) (string, []int32)) string {
	if n == 0 {
		return "-"
	}
	parts := make([]string, 0, n)
	for i := 0; i < n; i++ {
		t, ps := get(i)
		parts = append(parts, t+":"+ints(ps))
	}
	slices.Sort(parts)
	return strings.Join(parts, ";")
}

func ints(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }

func strOr(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortHash names a blob in a few characters (FNV-1a), so that two topologies with the same
// epoch but different contents read as different.
func shortHash(b []byte) string {
	h := uint32(2166136261)
	for _, c := range b {
		h ^= uint32(c)
		h *= 16777619
	}
	return fmt.Sprintf("%08x", h)
}

func diffGroup(id string, a, b *sideGroup, opts DiffOptions) []Change {
	var out []Change
	part := func() int32 {
		if b != nil {
			return b.partition
		}
		return a.partition
	}()
	ch := func(c Change) {
		c.Group, c.Partition = id, part
		out = append(out, c)
	}
	var ag, bg *groupShape
	if a != nil {
		ag = a.group
	}
	if b != nil {
		bg = b.group
	}
	switch {
	case ag == nil && bg != nil:
		ch(Change{Kind: GroupAdded, To: bg.typ + " " + bg.state})
		for _, m := range bg.order {
			ch(Change{Kind: MemberJoined, Member: m, To: bg.members[m].summary})
		}
	case ag != nil && bg == nil:
		ch(Change{Kind: GroupRemoved, From: ag.typ + " " + ag.state})
	case ag != nil && bg != nil:
		if ag.typ != bg.typ {
			ch(Change{Kind: GroupTypeChanged, Field: "type", From: ag.typ, To: bg.typ})
		}
		if ag.state != bg.state {
			ch(Change{Kind: GroupStateChanged, Field: "state", From: ag.state, To: bg.state})
		}
		if ag.typ == bg.typ {
			for _, c := range diffFields(ag.fields, bg.fields) {
				ch(c)
			}
		}
		for _, m := range mergedKeys(ag.order, bg.order) {
			ma, mb := ag.members[m], bg.members[m]
			switch {
			case ma == nil:
				ch(Change{Kind: MemberJoined, Member: m, To: mb.summary})
			case mb == nil:
				ch(Change{Kind: MemberLeft, Member: m, From: ma.summary})
			case ag.typ == bg.typ:
				for _, c := range diffFields(ma.fields, mb.fields) {
					c.Member = m
					ch(c)
				}
			}
		}
	}
	out = append(out, diffOffsets(id, part, a, b)...)
	return out
}

func diffFields(a, b []field) []Change {
	bv := map[string]field{}
	for _, f := range b {
		bv[f.name] = f
	}
	av := map[string]bool{}
	var out []Change
	for _, f := range a {
		av[f.name] = true
		g, ok := bv[f.name]
		if !ok {
			out = append(out, Change{Kind: f.kind, Field: f.name, From: f.value, To: "-", Volatile: f.volatile})
			continue
		}
		if g.value != f.value {
			out = append(out, Change{Kind: f.kind, Field: f.name, From: f.value, To: g.value, Volatile: f.volatile})
		}
	}
	for _, f := range b {
		if !av[f.name] {
			out = append(out, Change{Kind: f.kind, Field: f.name, From: "-", To: f.value, Volatile: f.volatile})
		}
	}
	return out
}

func mergedKeys(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

func diffOffsets(id string, part int32, a, b *sideGroup) []Change {
	empty := &sideGroup{}
	if a == nil {
		a = empty
	}
	if b == nil {
		b = empty
	}
	keys := map[tpKey]bool{}
	for k := range a.offsets {
		keys[k] = true
	}
	for k := range b.offsets {
		keys[k] = true
	}
	var out []Change
	for _, k := range sortedTPs(keys) {
		tp := k.partition
		base := Change{Group: id, Partition: part, Topic: k.topic, TopicPartition: &tp}
		oa, inA := a.offsets[k]
		ob, inB := b.offsets[k]
		c := base
		switch {
		case !inA:
			c.Kind, c.To = OffsetCommitted, offsetLabel(ob)
		case !inB:
			c.Kind, c.From = OffsetDeleted, offsetLabel(oa)
		case oa.CommittedOffset != ob.CommittedOffset:
			d := ob.CommittedOffset - oa.CommittedOffset
			c.Kind, c.From, c.To, c.Delta = OffsetMoved, offsetLabel(oa), offsetLabel(ob), &d
		case oa.Metadata != ob.Metadata || oa.LeaderEpoch != ob.LeaderEpoch:
			c.Kind, c.From, c.To = OffsetChanged, offsetLabel(oa), offsetLabel(ob)
		case oa.RecordOffset != ob.RecordOffset || oa.CommitTimestamp != ob.CommitTimestamp:
			c.Kind, c.Volatile = OffsetRecommitted, true
			c.From = fmt.Sprintf("record %d at %s", oa.RecordOffset, FormatMillis(oa.CommitTimestamp))
			c.To = fmt.Sprintf("record %d at %s", ob.RecordOffset, FormatMillis(ob.CommitTimestamp))
		default:
			continue
		}
		out = append(out, c)
	}
	pkeys := map[pendingKey]bool{}
	for k := range a.pending {
		pkeys[k] = true
	}
	for k := range b.pending {
		pkeys[k] = true
	}
	ps := make([]pendingKey, 0, len(pkeys))
	for k := range pkeys {
		ps = append(ps, k)
	}
	slices.SortFunc(ps, func(x, y pendingKey) int {
		if x.producer != y.producer {
			return cmpInt(x.producer, y.producer)
		}
		return cmpTP(x.tpKey, y.tpKey)
	})
	for _, k := range ps {
		oa, inA := a.pending[k]
		ob, inB := b.pending[k]
		if inA == inB && (!inA || oa == ob) {
			continue
		}
		tp, pid := k.partition, k.producer
		c := Change{Group: id, Partition: part, Topic: k.topic, TopicPartition: &tp, ProducerID: &pid}
		switch {
		case !inA:
			c.Kind, c.To = PendingOpened, offsetLabel(ob)
		case !inB:
			c.Kind, c.From = PendingClosed, offsetLabel(oa)
		default:
			c.Kind, c.From, c.To = PendingChanged, offsetLabel(oa), offsetLabel(ob)
		}
		out = append(out, c)
	}
	return out
}

func offsetLabel(o groupstate.OffsetAndMetadata) string {
	s := strconv.FormatInt(o.CommittedOffset, 10)
	if o.Metadata != "" {
		s += fmt.Sprintf(" %q", o.Metadata)
	}
	if o.LeaderEpoch >= 0 {
		s += fmt.Sprintf(" (leader epoch %d)", o.LeaderEpoch)
	}
	return s
}

func sortedTPs(keys map[tpKey]bool) []tpKey {
	out := make([]tpKey, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	slices.SortFunc(out, cmpTP)
	return out
}

func cmpTP(a, b tpKey) int {
	if c := strings.Compare(a.topic, b.topic); c != 0 {
		return c
	}
	return int(a.partition - b.partition)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Summarize counts changes by kind, sorted by kind, as "3 offset-moved, 1 member-joined".
func Summarize(cs []Change) []KindCount {
	n := map[string]int{}
	for _, c := range cs {
		n[c.Kind]++
	}
	out := make([]KindCount, 0, len(n))
	for k, v := range n {
		out = append(out, KindCount{Kind: k, Count: v})
	}
	slices.SortFunc(out, func(a, b KindCount) int { return strings.Compare(a.Kind, b.Kind) })
	return out
}

// KindCount is one line of a diff's summary.
type KindCount struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}
