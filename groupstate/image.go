package groupstate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// A state image is the whole State in a compact binary form that is written straight from
// the state's maps and read straight back into them, without the Dump in between (Dump and
// Restore deep-copy every member and offset, which made them most of a snapshot's cost).
// Snapshots use it (package replay); the parts are independent, so a caller may encode and
// decode them on several goroutines.
//
// An image is a head and parts:
//
//   - The head: the image format (1), the Kafka version, the totals (groups, groups with
//     offsets, offsets) that the parts must add up to, the pending transactional offsets and
//     the share-group state-partition metadata.
//   - Each part: a run of entries, one per id in sorted order, an id being a group or the
//     owner of committed offsets (offsets outlive their group, so the two are keyed alike
//     but each optional). An entry is the id, a flag byte (1: group, 2: offsets), the group
//     (a type byte and every field of the group's internal struct, maps as sorted lists) and
//     its offsets: their number and their length-prefixed block (packed.go), which a
//     restored state keeps as it is until a mutation needs the group's offsets.
//
// The split into parts (PlanImage) depends only on the state, so the same state gives the
// same bytes whatever the number of goroutines. Every field of the internal structs is
// written, including the nil-ness of slices, maps and pointers: a decoded image is the same
// State, not just one with an equal Dump. TestImageCoversEveryField fails when a struct
// gains a field this file does not know.

// imageFormat is the version of the image layout; decoders accept exactly this one (the
// caller's snapshot format names it).
const imageFormat = 1

// Entry flags.
const (
	imageHasGroup   = 1
	imageHasOffsets = 2
)

// Group type bytes.
const (
	imageClassic  = 1
	imageConsumer = 2
	imageShare    = 3
	imageStreams  = 4
)

// ImagePlan is the split of a state's ids into image parts.
type ImagePlan struct {
	ids  []string
	cuts []int // part i is ids[cuts[i]:cuts[i+1]]
}

// NumParts returns the number of parts (at least one, which may be empty).
func (p *ImagePlan) NumParts() int { return len(p.cuts) - 1 }

// PlanImage splits the state into parts of about targetBytes each (estimated from member and
// offset counts; a big group makes a big part). The plan is valid until the state changes.
func (v View) PlanImage(targetBytes int) *ImagePlan {
	s := v.s
	if len(s.unchecked) > 0 {
		// Packed blocks are written out as they are: never ones nobody checked.
		panic("groupstate: PlanImage on a state whose offsets were not checked (State.OffsetCheck)")
	}
	ids := make([]string, 0, len(s.groups)+len(s.offsets))
	for id := range s.groups {
		ids = append(ids, id)
	}
	for id := range s.offsets {
		if _, ok := s.groups[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	p := &ImagePlan{ids: ids, cuts: []int{0}}
	size := 0
	for i, id := range ids {
		size += 16 + len(id)
		if gm := s.offsets[id]; gm != nil {
			size += 32 * gm.n()
		}
		switch g := s.groups[id].(type) {
		case *classicGroup:
			size += 256 * len(g.members)
		case *consumerGroup:
			size += 160 * len(g.members)
		case *shareGroup:
			size += 128 * len(g.members)
		case *streamsGroup:
			size += 256 * len(g.members)
		}
		if size >= targetBytes && i+1 < len(ids) {
			p.cuts = append(p.cuts, i+1)
			size = 0
		}
	}
	p.cuts = append(p.cuts, len(ids))
	return p
}

// AppendImageHead appends the image head to b.
func (v View) AppendImageHead(b []byte) []byte {
	s := v.s
	w := imageWriter{b: b}
	w.uv(imageFormat)
	w.uv(uint64(s.version))
	w.uv(uint64(len(s.groups)))
	w.uv(uint64(len(s.offsets)))
	w.uv(uint64(s.numOffsets))
	pids := make([]int64, 0, len(s.pending))
	for pid := range s.pending {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	w.uv(uint64(len(pids)))
	for _, pid := range pids {
		p := s.pending[pid]
		keys := make([]offsetKey, 0, len(p))
		for k := range p {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareOffsetKeys)
		w.v(pid)
		w.uv(uint64(len(keys)))
		for _, k := range keys {
			w.str(k.group)
			w.str(k.topic)
			w.v(int64(k.partition))
			w.offset(p[k])
		}
	}
	ids := sortedKeys(s.shareStateMeta)
	w.uv(uint64(len(ids)))
	for _, id := range ids {
		m := s.shareStateMeta[id]
		w.str(id)
		w.str(m.GroupID)
		w.topicPartitionsInfos(m.InitializingTopics)
		w.topicPartitionsInfos(m.InitializedTopics)
		w.count(len(m.DeletingTopicIDs), m.DeletingTopicIDs == nil)
		for _, u := range m.DeletingTopicIDs {
			w.uuid(u)
		}
	}
	return w.b
}

func compareOffsetKeys(a, b offsetKey) int {
	if c := strings.Compare(a.group, b.group); c != 0 {
		return c
	}
	if c := strings.Compare(a.topic, b.topic); c != 0 {
		return c
	}
	return cmp.Compare(a.partition, b.partition)
}

// AppendImagePart appends part i of plan to b. It only reads the state: parts may be encoded
// concurrently.
func (v View) AppendImagePart(b []byte, plan *ImagePlan, i int) []byte {
	s := v.s
	w := imageWriter{b: b}
	ids := plan.ids[plan.cuts[i]:plan.cuts[i+1]]
	w.uv(uint64(len(ids)))
	var sc offsetScratch
	var scratch []byte
	for _, id := range ids {
		g, hasGroup := s.groups[id]
		gm := s.offsets[id]
		flags := uint8(0)
		if hasGroup {
			flags |= imageHasGroup
		}
		if gm != nil {
			flags |= imageHasOffsets
		}
		w.str(id)
		w.u8(flags)
		if hasGroup {
			w.group(g)
		}
		if gm != nil {
			w.uv(uint64(gm.n()))
			if gm.packed != "" {
				w.str(gm.packed)
			} else {
				scratch = appendOffsetsBlock(scratch[:0], gm, &sc)
				w.uv(uint64(len(scratch)))
				w.b = append(w.b, scratch...)
			}
		}
	}
	return w.b
}

func (w *imageWriter) offset(o OffsetAndMetadata) {
	w.v(o.CommittedOffset)
	w.v(int64(o.LeaderEpoch))
	w.str(o.Metadata)
	w.v(o.CommitTimestamp)
	w.v(o.ExpireTimestamp)
	if o.TopicID.IsZero() {
		w.u8(0)
	} else {
		w.u8(1)
		w.uuid(o.TopicID)
	}
	w.v(o.RecordOffset)
}

func (r *imageReader) offset() (o OffsetAndMetadata) {
	o.CommittedOffset = r.v()
	o.LeaderEpoch = r.i32()
	o.Metadata = r.str()
	o.CommitTimestamp = r.v()
	o.ExpireTimestamp = r.v()
	switch r.u8() {
	case 0:
	case 1:
		if o.TopicID = r.uuid(); o.TopicID.IsZero() {
			r.fail("zero topic id written as present")
		}
	default:
		r.fail("bad topic id flag")
	}
	o.RecordOffset = r.v()
	return o
}

func (w *imageWriter) topicPartitionsInfos(s []TopicPartitionsInfo) {
	w.count(len(s), s == nil)
	for _, t := range s {
		w.uuid(t.TopicID)
		w.str(t.TopicName)
		w.i32s(t.Partitions)
	}
}

func (r *imageReader) topicPartitionsInfos() []TopicPartitionsInfo {
	n, isNil := r.count(18)
	if isNil {
		return nil
	}
	s := make([]TopicPartitionsInfo, n)
	for i := range s {
		s[i] = TopicPartitionsInfo{TopicID: r.uuid(), TopicName: r.str(), Partitions: r.i32s()}
	}
	return s
}

// ---------------------------------------------------------------------------------------
// Groups.

func (w *imageWriter) group(g group) {
	switch g := g.(type) {
	case *classicGroup:
		w.u8(imageClassic)
		w.classic(g)
	case *consumerGroup:
		w.u8(imageConsumer)
		w.consumer(g)
	case *shareGroup:
		w.u8(imageShare)
		w.share(g)
	case *streamsGroup:
		w.u8(imageStreams)
		w.streams(g)
	default:
		panic(fmt.Sprintf("groupstate: image of unknown group type %T", g))
	}
}

func (r *imageReader) group() group {
	switch t := r.u8(); t {
	case imageClassic:
		return r.classic()
	case imageConsumer:
		return r.consumer()
	case imageShare:
		return r.share()
	case imageStreams:
		return r.streams()
	default:
		r.fail("unknown group type %d", t)
		return nil
	}
}

func (w *imageWriter) classic(g *classicGroup) {
	w.str(g.protocolType)
	w.v(int64(g.generation))
	w.strp(g.protocol)
	w.strp(g.leader)
	w.v(g.currentStateTimestamp)
	w.count(len(g.members), g.members == nil)
	for i := range g.members {
		m := &g.members[i]
		w.str(m.MemberID)
		w.strp(m.GroupInstanceID)
		w.str(m.ClientID)
		w.str(m.ClientHost)
		w.v(int64(m.RebalanceTimeoutMs))
		w.v(int64(m.SessionTimeoutMs))
		w.bytes(m.Subscription)
		w.bytes(m.Assignment)
		w.bool(m.ProtocolDecoded)
		w.strs(m.SubscribedTopics)
		w.count(len(m.AssignedPartitions), m.AssignedPartitions == nil)
		for _, tp := range m.AssignedPartitions {
			w.str(tp.Topic)
			w.i32s(tp.Partitions)
		}
	}
}

func (r *imageReader) classic() *classicGroup {
	g := &classicGroup{
		protocolType: r.str(), generation: r.i32(), protocol: r.strp(), leader: r.strp(),
		currentStateTimestamp: r.v(),
	}
	n, isNil := r.count(11)
	if !isNil {
		g.members = make([]ClassicMember, n)
	}
	for i := range g.members {
		m := &g.members[i]
		m.MemberID = r.str()
		m.GroupInstanceID = r.strp()
		m.ClientID = r.str()
		m.ClientHost = r.str()
		m.RebalanceTimeoutMs = r.i32()
		m.SessionTimeoutMs = r.i32()
		m.Subscription = r.bytes()
		m.Assignment = r.bytes()
		m.ProtocolDecoded = r.bool()
		m.SubscribedTopics = r.strs()
		if k, isNil := r.count(2); !isNil {
			m.AssignedPartitions = make([]NamedTopicPartitions, k)
			for j := range m.AssignedPartitions {
				m.AssignedPartitions[j] = NamedTopicPartitions{Topic: r.str(), Partitions: r.i32s()}
			}
		}
	}
	return g
}

func (w *imageWriter) topicMetadataMap(m map[string]TopicMetadata) {
	w.count(len(m), m == nil)
	for _, k := range sortedKeys(m) {
		t := m[k]
		w.str(k)
		w.uuid(t.TopicID)
		w.str(t.TopicName)
		w.v(int64(t.NumPartitions))
	}
}

func (r *imageReader) topicMetadataMap() map[string]TopicMetadata {
	n, isNil := r.count(19)
	if isNil {
		return nil
	}
	m := make(map[string]TopicMetadata, n)
	for range n {
		k := r.str()
		m[k] = TopicMetadata{TopicID: r.uuid(), TopicName: r.str(), NumPartitions: r.i32()}
	}
	if len(m) != n && r.err == nil {
		r.fail("repeated topic metadata key")
	}
	return m
}

func (w *imageWriter) topicPartitions(s []TopicPartitions) {
	w.count(len(s), s == nil)
	for _, tp := range s {
		w.uuid(tp.TopicID)
		w.i32s(tp.Partitions)
	}
}

func (r *imageReader) topicPartitions() []TopicPartitions {
	n, isNil := r.count(17)
	if isNil {
		return nil
	}
	s := cut(&r.tpSlab, n)
	for i := range s {
		s[i] = TopicPartitions{TopicID: r.uuid(), Partitions: r.i32s()}
	}
	return s
}

func (w *imageWriter) topicPartitionsWithEpochs(s []TopicPartitionsWithEpochs) {
	w.count(len(s), s == nil)
	for _, tp := range s {
		w.uuid(tp.TopicID)
		w.i32s(tp.Partitions)
		w.i32s(tp.AssignmentEpochs)
	}
}

func (r *imageReader) topicPartitionsWithEpochs() []TopicPartitionsWithEpochs {
	n, isNil := r.count(18)
	if isNil {
		return nil
	}
	s := cut(&r.tpeSlab, n)
	for i := range s {
		s[i] = TopicPartitionsWithEpochs{TopicID: r.uuid(), Partitions: r.i32s(), AssignmentEpochs: r.i32s()}
	}
	return s
}

// targets writes a member-id -> partitions map (consumer and share target assignments).
// targets writes a target assignment map. memberKeys, when not nil, are the group's member
// ids, sorted: the target usually has exactly those keys, and then they need no second sort.
func (w *imageWriter) targets(m map[string][]TopicPartitions, memberKeys []string) {
	w.count(len(m), m == nil)
	keys := memberKeys
	if len(keys) != len(m) {
		keys = nil
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			keys = nil
			break
		}
	}
	if keys == nil && len(m) > 0 {
		keys = sortedKeys(m)
	}
	for _, k := range keys {
		w.str(k)
		w.topicPartitions(m[k])
	}
}

func (r *imageReader) targets() map[string][]TopicPartitions {
	n, isNil := r.count(2)
	if isNil {
		return nil
	}
	m := make(map[string][]TopicPartitions, n)
	for range n {
		k := r.str()
		m[k] = r.topicPartitions()
	}
	if len(m) != n && r.err == nil {
		r.fail("repeated target assignment member")
	}
	return m
}

func (w *imageWriter) consumer(g *consumerGroup) {
	w.v(int64(g.groupEpoch))
	w.v(g.metadataHash)
	w.bool(g.hasSubscriptionMetadataRecord)
	w.topicMetadataMap(g.subscriptionMetadata)
	w.v(int64(g.assignmentEpoch))
	w.v(g.assignmentTimestamp)
	w.count(len(g.members), g.members == nil)
	memberKeys := sortedKeys(g.members)
	for _, k := range memberKeys {
		m := g.members[k]
		w.str(k)
		w.str(m.MemberID)
		w.v(int64(m.MemberEpoch))
		w.v(int64(m.PreviousMemberEpoch))
		w.v(int64(m.State))
		w.str(m.StateName)
		w.strp(m.InstanceID)
		w.strp(m.RackID)
		w.v(int64(m.RebalanceTimeoutMs))
		w.str(m.ClientID)
		w.str(m.ClientHost)
		w.strs(m.SubscribedTopicNames)
		w.strp(m.SubscribedTopicRegex)
		w.strp(m.ServerAssignor)
		if c := m.ClassicMemberMetadata; c == nil {
			w.u8(0)
		} else {
			w.u8(1)
			w.v(int64(c.SessionTimeoutMs))
			w.count(len(c.SupportedProtocols), c.SupportedProtocols == nil)
			for _, p := range c.SupportedProtocols {
				w.str(p.Name)
				w.bytes(p.Metadata)
			}
		}
		w.topicPartitionsWithEpochs(m.AssignedPartitions)
		w.topicPartitionsWithEpochs(m.PartitionsPendingRevocation)
	}
	w.targets(g.target, memberKeys)
	w.count(len(g.regexes), g.regexes == nil)
	for _, k := range sortedKeys(g.regexes) {
		re := g.regexes[k]
		w.str(k)
		w.str(re.Regex)
		w.strs(re.Topics)
		w.v(re.Version)
		w.v(re.Timestamp)
	}
}

func (r *imageReader) consumer() *consumerGroup {
	g := &consumerGroup{}
	g.groupEpoch, g.metadataHash, g.hasSubscriptionMetadataRecord = r.i32(), r.v(), r.bool()
	g.subscriptionMetadata, g.assignmentEpoch, g.assignmentTimestamp = r.topicMetadataMap(), r.i32(), r.v()
	n, isNil := r.count(17)
	if !isNil {
		// One allocation for the group's members: they are immutable once stored, and a
		// replaced member simply leaves its slot unreferenced.
		slab := make([]ConsumerMember, n)
		g.members = make(map[string]*ConsumerMember, n)
		for i := range slab {
			m := &slab[i]
			k := r.str()
			m.MemberID = r.str()
			m.MemberEpoch = r.i32()
			m.PreviousMemberEpoch = r.i32()
			m.State = r.i8()
			m.StateName = r.str()
			m.InstanceID = r.strp()
			m.RackID = r.strp()
			m.RebalanceTimeoutMs = r.i32()
			m.ClientID = r.str()
			m.ClientHost = r.str()
			m.SubscribedTopicNames = r.strs()
			m.SubscribedTopicRegex = r.strp()
			m.ServerAssignor = r.strp()
			switch r.u8() {
			case 0:
			case 1:
				c := &ClassicMemberMetadata{SessionTimeoutMs: r.i32()}
				if k, isNil := r.count(2); !isNil {
					c.SupportedProtocols = make([]ClassicProtocol, k)
					for j := range c.SupportedProtocols {
						c.SupportedProtocols[j] = ClassicProtocol{Name: r.str(), Metadata: r.bytes()}
					}
				}
				m.ClassicMemberMetadata = c
			default:
				r.fail("bad classic member metadata flag")
			}
			m.AssignedPartitions = r.topicPartitionsWithEpochs()
			m.PartitionsPendingRevocation = r.topicPartitionsWithEpochs()
			g.members[k] = m
		}
		if len(g.members) != n && r.err == nil {
			r.fail("repeated consumer member")
		}
	}
	g.target = r.targets()
	n, isNil = r.count(5)
	if !isNil {
		g.regexes = make(map[string]ResolvedRegularExpression, n)
		for range n {
			k := r.str()
			g.regexes[k] = ResolvedRegularExpression{Regex: r.str(), Topics: r.strs(), Version: r.v(), Timestamp: r.v()}
		}
		if len(g.regexes) != n && r.err == nil {
			r.fail("repeated regex")
		}
	}
	return g
}

func (w *imageWriter) share(g *shareGroup) {
	w.v(int64(g.groupEpoch))
	w.v(g.metadataHash)
	w.topicMetadataMap(g.subscriptionMetadata)
	w.v(int64(g.assignmentEpoch))
	w.v(g.assignmentTimestamp)
	w.count(len(g.members), g.members == nil)
	memberKeys := sortedKeys(g.members)
	for _, k := range memberKeys {
		m := g.members[k]
		w.str(k)
		w.str(m.MemberID)
		w.v(int64(m.MemberEpoch))
		w.v(int64(m.PreviousMemberEpoch))
		w.v(int64(m.State))
		w.str(m.StateName)
		w.strp(m.RackID)
		w.str(m.ClientID)
		w.str(m.ClientHost)
		w.strs(m.SubscribedTopicNames)
		w.topicPartitions(m.AssignedPartitions)
	}
	w.targets(g.target, memberKeys)
}

func (r *imageReader) share() *shareGroup {
	g := &shareGroup{}
	g.groupEpoch, g.metadataHash, g.subscriptionMetadata = r.i32(), r.v(), r.topicMetadataMap()
	g.assignmentEpoch, g.assignmentTimestamp = r.i32(), r.v()
	n, isNil := r.count(11)
	if !isNil {
		slab := make([]ShareMember, n)
		g.members = make(map[string]*ShareMember, n)
		for i := range slab {
			m := &slab[i]
			k := r.str()
			m.MemberID = r.str()
			m.MemberEpoch = r.i32()
			m.PreviousMemberEpoch = r.i32()
			m.State = r.i8()
			m.StateName = r.str()
			m.RackID = r.strp()
			m.ClientID = r.str()
			m.ClientHost = r.str()
			m.SubscribedTopicNames = r.strs()
			m.AssignedPartitions = r.topicPartitions()
			g.members[k] = m
		}
		if len(g.members) != n && r.err == nil {
			r.fail("repeated share member")
		}
	}
	g.target = r.targets()
	return g
}

func (w *imageWriter) i32p(p *int32) {
	if p == nil {
		w.u8(0)
		return
	}
	w.u8(1)
	w.v(int64(*p))
}

func (r *imageReader) i32p() *int32 {
	if !r.bool() {
		return nil
	}
	v := r.i32()
	return &v
}

func (w *imageWriter) taskIDs(s []TaskIDs) {
	w.count(len(s), s == nil)
	for _, t := range s {
		w.str(t.SubtopologyID)
		w.i32s(t.Partitions)
	}
}

func (r *imageReader) taskIDs() []TaskIDs {
	n, isNil := r.count(2)
	if isNil {
		return nil
	}
	s := make([]TaskIDs, n)
	for i := range s {
		s[i] = TaskIDs{SubtopologyID: r.str(), Partitions: r.i32s()}
	}
	return s
}

func (w *imageWriter) streamsTasks(t *StreamsTasks) {
	if t == nil {
		w.u8(0)
		return
	}
	w.u8(1)
	w.count(len(t.ActiveTasks), t.ActiveTasks == nil)
	for _, a := range t.ActiveTasks {
		w.str(a.SubtopologyID)
		w.i32s(a.Partitions)
		w.i32s(a.AssignmentEpochs)
	}
	w.taskIDs(t.StandbyTasks)
	w.taskIDs(t.WarmupTasks)
}

func (r *imageReader) streamsTasks() *StreamsTasks {
	if !r.bool() {
		return nil
	}
	t := &StreamsTasks{}
	if n, isNil := r.count(3); !isNil {
		t.ActiveTasks = make([]TaskIDsWithEpochs, n)
		for i := range t.ActiveTasks {
			t.ActiveTasks[i] = TaskIDsWithEpochs{SubtopologyID: r.str(), Partitions: r.i32s(), AssignmentEpochs: r.i32s()}
		}
	}
	t.StandbyTasks = r.taskIDs()
	t.WarmupTasks = r.taskIDs()
	return t
}

func (w *imageWriter) topicInfos(s []StreamsTopicInfo) {
	w.count(len(s), s == nil)
	for _, t := range s {
		w.str(t.Name)
		w.v(int64(t.Partitions))
		w.v(int64(t.ReplicationFactor))
		w.kvs(t.TopicConfigs)
	}
}

func (r *imageReader) topicInfos() []StreamsTopicInfo {
	n, isNil := r.count(4)
	if isNil {
		return nil
	}
	s := make([]StreamsTopicInfo, n)
	for i := range s {
		s[i] = StreamsTopicInfo{Name: r.str(), Partitions: r.i32(), ReplicationFactor: r.i16(), TopicConfigs: r.kvs()}
	}
	return s
}

func (w *imageWriter) topology(t *StreamsTopology) {
	if t == nil {
		w.u8(0)
		return
	}
	w.u8(1)
	w.v(int64(t.Epoch))
	w.count(len(t.Subtopologies), t.Subtopologies == nil)
	for _, st := range t.Subtopologies {
		w.str(st.SubtopologyID)
		w.strs(st.SourceTopics)
		w.strs(st.SourceTopicRegex)
		w.topicInfos(st.StateChangelogTopics)
		w.strs(st.RepartitionSinkTopics)
		w.topicInfos(st.RepartitionSourceTopics)
		w.count(len(st.CopartitionGroups), st.CopartitionGroups == nil)
		for _, cg := range st.CopartitionGroups {
			w.i16s(cg.SourceTopics)
			w.i16s(cg.SourceTopicRegex)
			w.i16s(cg.RepartitionSourceTopics)
		}
	}
}

func (r *imageReader) topology() *StreamsTopology {
	if !r.bool() {
		return nil
	}
	t := &StreamsTopology{Epoch: r.i32()}
	if n, isNil := r.count(7); !isNil {
		t.Subtopologies = make([]Subtopology, n)
		for i := range t.Subtopologies {
			st := &t.Subtopologies[i]
			st.SubtopologyID = r.str()
			st.SourceTopics = r.strs()
			st.SourceTopicRegex = r.strs()
			st.StateChangelogTopics = r.topicInfos()
			st.RepartitionSinkTopics = r.strs()
			st.RepartitionSourceTopics = r.topicInfos()
			if k, isNil := r.count(3); !isNil {
				st.CopartitionGroups = make([]CopartitionGroup, k)
				for j := range st.CopartitionGroups {
					st.CopartitionGroups[j] = CopartitionGroup{SourceTopics: r.i16s(), SourceTopicRegex: r.i16s(), RepartitionSourceTopics: r.i16s()}
				}
			}
		}
	}
	return t
}

func (w *imageWriter) streams(g *streamsGroup) {
	w.v(int64(g.groupEpoch))
	w.v(g.metadataHash)
	w.v(int64(g.validatedTopologyEpoch))
	w.v(int64(g.storedDescriptionTopologyEpoch))
	w.v(int64(g.failedDescriptionTopologyEpoch))
	w.kvs(g.lastAssignmentConfigs)
	w.v(int64(g.assignmentEpoch))
	w.v(g.assignmentTimestamp)
	w.topology(g.topology)
	w.count(len(g.members), g.members == nil)
	for _, k := range sortedKeys(g.members) {
		m := g.members[k]
		w.str(k)
		w.str(m.MemberID)
		w.i32p(m.MemberEpoch)
		w.i32p(m.PreviousMemberEpoch)
		if m.State == nil {
			w.u8(0)
		} else {
			w.u8(1)
			w.v(int64(*m.State))
		}
		w.str(m.StateName)
		if md := m.Metadata; md == nil {
			w.u8(0)
		} else {
			w.u8(1)
			w.strp(md.InstanceID)
			w.strp(md.RackID)
			w.str(md.ClientID)
			w.str(md.ClientHost)
			w.v(int64(md.RebalanceTimeoutMs))
			w.v(int64(md.TopologyEpoch))
			w.str(md.ProcessID)
			if e := md.UserEndpoint; e == nil {
				w.u8(0)
			} else {
				w.u8(1)
				w.str(e.Host)
				w.uv(uint64(e.Port))
			}
			w.kvs(md.ClientTags)
		}
		w.streamsTasks(m.AssignedTasks)
		w.streamsTasks(m.TasksPendingRevocation)
	}
	w.count(len(g.target), g.target == nil)
	for _, k := range sortedKeys(g.target) {
		t := g.target[k]
		w.str(k)
		w.str(t.MemberID)
		w.taskIDs(t.ActiveTasks)
		w.taskIDs(t.StandbyTasks)
		w.taskIDs(t.WarmupTasks)
	}
}

func (r *imageReader) streams() *streamsGroup {
	g := &streamsGroup{}
	g.groupEpoch, g.metadataHash, g.validatedTopologyEpoch = r.i32(), r.v(), r.i32()
	g.storedDescriptionTopologyEpoch, g.failedDescriptionTopologyEpoch = r.i32(), r.i32()
	g.lastAssignmentConfigs, g.assignmentEpoch, g.assignmentTimestamp = r.kvs(), r.i32(), r.v()
	g.topology = r.topology()
	n, isNil := r.count(9)
	if !isNil {
		slab := make([]StreamsMember, n)
		g.members = make(map[string]*StreamsMember, n)
		for i := range slab {
			m := &slab[i]
			k := r.str()
			m.MemberID = r.str()
			m.MemberEpoch = r.i32p()
			m.PreviousMemberEpoch = r.i32p()
			if r.bool() {
				st := r.i8()
				m.State = &st
			}
			m.StateName = r.str()
			if r.bool() {
				md := &StreamsMemberMetadata{
					InstanceID: r.strp(), RackID: r.strp(), ClientID: r.str(), ClientHost: r.str(),
					RebalanceTimeoutMs: r.i32(), TopologyEpoch: r.i32(), ProcessID: r.str(),
				}
				if r.bool() {
					e := &StreamsEndpoint{Host: r.str()}
					if p := r.uv(); p > 0xffff {
						r.fail("port %d", p)
					} else {
						e.Port = uint16(p)
					}
					md.UserEndpoint = e
				}
				md.ClientTags = r.kvs()
				m.Metadata = md
			}
			m.AssignedTasks = r.streamsTasks()
			m.TasksPendingRevocation = r.streamsTasks()
			g.members[k] = m
		}
		if len(g.members) != n && r.err == nil {
			r.fail("repeated streams member")
		}
	}
	if n, isNil := r.count(5); !isNil {
		g.target = make(map[string]StreamsMemberTarget, n)
		for range n {
			k := r.str()
			g.target[k] = StreamsMemberTarget{MemberID: r.str(), ActiveTasks: r.taskIDs(), StandbyTasks: r.taskIDs(), WarmupTasks: r.taskIDs()}
		}
		if len(g.target) != n && r.err == nil {
			r.fail("repeated streams target member")
		}
	}
	return g
}

// ---------------------------------------------------------------------------------------
// Decoding.

// ImagePart is a decoded part, ready to be added to a state (AddImagePart).
type ImagePart struct {
	entries []imageEntry
	offsets int
	// unchecked are the offset blocks DecodeImagePartUnchecked left for an OffsetCheck.
	unchecked []uncheckedBlock
}

type imageEntry struct {
	id  string
	g   group
	off *groupOffsets
}

// DecodeImagePart decodes one part. The state's strings will be substrings of data (no
// copies: data stays referenced while any of them lives). It touches no state, so parts may
// be decoded concurrently.
func DecodeImagePart(data string) (*ImagePart, error) { return decodeImagePart(data, true) }

// DecodeImagePartUnchecked is DecodeImagePart without checking the committed-offset blocks,
// most of a part's bytes and of its decode time: the state built from such parts holds them
// unchecked until an OffsetCheck (State.OffsetCheck) has run, which a caller may do on idle
// cores while it goes on using the state. Until then reads and mutations of those offsets
// are safe (bounded, never a panic) but may see garbage, which a mutation records in
// State.ImageErr; a state is only good once its check passed and ImageErr is nil.
func DecodeImagePartUnchecked(data string) (*ImagePart, error) { return decodeImagePart(data, false) }

func decodeImagePart(data string, checkOffsets bool) (*ImagePart, error) {
	r := &imageReader{s: data, what: "part header"}
	n := r.length(2, "entries")
	if r.err != nil {
		return nil, r.err
	}
	p := &ImagePart{entries: make([]imageEntry, n)}
	prev := ""
	for i := range p.entries {
		e := &p.entries[i]
		e.id = r.str()
		r.what, r.entry, r.entryID = "entry", i, e.id
		if i > 0 && e.id <= prev {
			r.fail("ids out of order")
		}
		prev = e.id
		flags := r.u8()
		if flags == 0 || flags&^(imageHasGroup|imageHasOffsets) != 0 {
			r.fail("bad entry flags %#x", flags)
		}
		if flags&imageHasGroup != 0 {
			e.g = r.group()
		}
		if flags&imageHasOffsets != 0 {
			if e.off = r.groupOffsets(e.id, checkOffsets); e.off != nil {
				p.offsets += e.off.n()
				if !checkOffsets && e.off.packed != "" {
					p.unchecked = append(p.unchecked, uncheckedBlock{id: e.id, block: e.off.packed, count: e.off.count})
				}
			}
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	if r.left() != 0 {
		r.what = "part"
		r.fail("%d bytes after the last entry", r.left())
		return nil, r.err
	}
	return p, nil
}

// groupOffsets reads one id's offsets: their number and their block, which stays packed in
// the state until a mutation needs it (packed.go). With check the block is checked here,
// completely, so that unpacking it later cannot fail; else an OffsetCheck does it later.
func (r *imageReader) groupOffsets(id string, check bool) *groupOffsets {
	n := r.length(8, "offsets")
	block := r.str()
	if r.err != nil {
		return nil
	}
	if n == 0 {
		// Only an empty group's block, which the state never holds but an image may.
		if block != "\x00" {
			r.fail("offsets: %d-byte block for no offsets", len(block))
			return nil
		}
		return &groupOffsets{id: id, topics: map[string]string{}, byTP: map[TopicPartition]OffsetAndMetadata{}}
	}
	if check {
		if err := checkOffsetsBlock(block, n); err != nil {
			r.fail("%s", strings.TrimPrefix(err.Error(), ErrImageCorrupt.Error()+": "))
			return nil
		}
	}
	return &groupOffsets{id: id, packed: block, count: n}
}

// NewFromImageHead starts a state from an image head: the version, the pending
// transactional offsets and the share-group state metadata, with room for the totals the
// head announces. Add every part with AddImagePart, then call FinishImage.
func NewFromImageHead(head string) (*State, error) {
	r := &imageReader{s: head, what: "head"}
	if f := r.uv(); f != imageFormat && r.err == nil {
		return nil, fmt.Errorf("%w: image format %d, this build reads %d", ErrImageCorrupt, f, imageFormat)
	}
	v := KafkaVersion(r.uv())
	if !v.Valid() && r.err == nil {
		return nil, fmt.Errorf("%w: invalid Kafka version %d", ErrImageCorrupt, v)
	}
	groups, offGroups, offsets := r.uv(), r.uv(), r.uv()
	if r.err != nil {
		return nil, r.err
	}
	// Bounds for the preallocations: the totals are checked exactly by FinishImage; here they
	// only must not make a damaged head allocate without limit.
	const maxPrealloc = 1 << 24
	s := &State{
		version:        v,
		groups:         make(map[string]group, min(groups, maxPrealloc)),
		offsets:        make(map[string]*groupOffsets, min(offGroups, maxPrealloc)),
		pending:        map[int64]map[offsetKey]OffsetAndMetadata{},
		open:           map[offsetKey][]int64{},
		shareStateMeta: map[string]ShareStatePartitionMetadata{},
	}
	s.imageTotals = &imageTotals{groups: groups, offsetGroups: offGroups, offsets: offsets}
	npids := r.length(2, "producers")
	for range npids {
		pid := r.v()
		r.what = fmt.Sprintf("pending offsets of producer %d", pid)
		if _, dup := s.pending[pid]; dup {
			r.fail("producer listed twice")
		}
		n := r.length(10, "offsets")
		pm := make(map[offsetKey]OffsetAndMetadata, n)
		s.pending[pid] = pm
		for range n {
			k := offsetKey{group: r.str(), topic: r.str(), partition: r.i32()}
			pm[k] = r.offset()
			if r.err != nil {
				return nil, r.err
			}
			ids := s.open[k]
			i, found := slices.BinarySearch(ids, pid)
			if found {
				r.fail("offset %s/%s-%d listed twice", k.group, k.topic, k.partition)
				return nil, r.err
			}
			s.open[k] = slices.Insert(ids, i, pid)
		}
	}
	r.what = "share-group state metadata"
	nmeta := r.length(5, "entries")
	for range nmeta {
		id := r.str()
		m := ShareStatePartitionMetadata{GroupID: r.str(), InitializingTopics: r.topicPartitionsInfos(), InitializedTopics: r.topicPartitionsInfos()}
		if n, isNil := r.count(16); !isNil {
			m.DeletingTopicIDs = make([]Uuid, n)
			for i := range m.DeletingTopicIDs {
				m.DeletingTopicIDs[i] = r.uuid()
			}
		}
		if _, dup := s.shareStateMeta[id]; dup {
			r.fail("group %q listed twice", id)
		}
		s.shareStateMeta[id] = m
	}
	if r.err == nil && r.left() != 0 {
		r.fail("%d bytes after the head", r.left())
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

// imageTotals is what an image head announced, until FinishImage checks it.
type imageTotals struct {
	groups, offsetGroups, offsets uint64
	lastID                        string // the last id added, for the order check across parts
	parts                         int
}

// AddImagePart adds a decoded part to a state started by NewFromImageHead. Parts must come in
// order (their ids ascend across parts).
func (s *State) AddImagePart(p *ImagePart) error {
	t := s.imageTotals
	if t == nil {
		return fmt.Errorf("groupstate: AddImagePart on a state not started by NewFromImageHead")
	}
	t.parts++
	if len(p.entries) > 0 && t.lastID != "" && p.entries[0].id <= t.lastID {
		return fmt.Errorf("%w: part %d: id %q does not follow %q", ErrImageCorrupt, t.parts, p.entries[0].id, t.lastID)
	}
	for _, e := range p.entries {
		if e.g != nil {
			s.groups[e.id] = e.g
		}
		if e.off != nil {
			s.offsets[e.id] = e.off
		}
	}
	if n := len(p.entries); n > 0 {
		t.lastID = p.entries[n-1].id
	}
	s.numOffsets += p.offsets
	s.unchecked = append(s.unchecked, p.unchecked...)
	return nil
}

// FinishImage checks that the parts added up to what the head announced and makes the
// state ready for use.
func (s *State) FinishImage() error {
	t := s.imageTotals
	if t == nil {
		return fmt.Errorf("groupstate: FinishImage on a state not started by NewFromImageHead")
	}
	s.imageTotals = nil
	if uint64(len(s.groups)) != t.groups || uint64(len(s.offsets)) != t.offsetGroups || uint64(s.numOffsets) != t.offsets {
		return fmt.Errorf("%w: the head announces %d groups, %d groups with offsets and %d offsets; the %d parts held %d, %d and %d",
			ErrImageCorrupt, t.groups, t.offsetGroups, t.offsets, t.parts, len(s.groups), len(s.offsets), s.numOffsets)
	}
	return nil
}
