package explain

import (
	"slices"
	"strings"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Group types as events name them.
const (
	typeClassic  = "classic"
	typeConsumer = "consumer"
	typeShare    = "share"
	typeStreams  = "streams"
)

// memberModel is what the records say about a member.
type memberModel struct {
	id         string
	clientID   string
	host       string
	instanceID *string
	processID  string
	protocol   string // classic, consumer, share, streams
	// subscription describes what the member asked for (topics, regex, topology epoch), to
	// tell a changed subscription.
	subscription       string
	rebalanceTimeoutMs int32
	sessionTimeoutMs   int32 // classic members only (-1 otherwise)

	hasCurrent       bool
	epoch, prevEpoch int32
	state            int8 // the record's state byte
	assigned         items
	pending          items
	target           items

	joined   Position
	lastSeen Position // last sign of life: a record of it, or a commit of a partition it owned
	// lastOwn is its last record written for a request of its own (a heartbeat; for a classic
	// member, a join of its generation), when ownSet: its session was alive then. revokingAt
	// is its last record putting it in UNREVOKED_PARTITIONS (or _TASKS), when revoking: Kafka
	// starts the rebalance timeout there.
	lastOwn    Position
	ownSet     bool
	revokingAt Position
	revoking   bool
	// step is the reconciliation step the member is in (waiting, revoking, stable, ""), since
	// stepSince; waitKey is the last waiting or revoking set reported, so that a repeated
	// record says nothing new.
	step      string
	stepSince Position
	waitKey   string
	// awayAt is set while a static member is on temporary leave (epoch -2); awayFrom is its
	// own record before that one (its session timer runs from a heartbeat since then).
	awayAt   *Position
	awayFrom Position
}

func (m *memberModel) clone() *memberModel {
	c := *m
	return &c
}

// static reports whether the member has a group instance id.
func (m *memberModel) static() bool { return m.instanceID != nil && *m.instanceID != "" }

// offKey is a committed offset's key within a group: the index of its topic in the group's
// topic table, and the partition (integers hash and compare faster than names).
type offKey struct {
	topic uint32
	part  int32
}

// offState is a committed offset as the analysis keeps it.
type offState struct {
	offset int64
	ts     int64 // the commit record's timestamp
	rec    int64 // the record's offset (a transaction's COMMIT applies only over older records)
	// owner is the partition's owner when it was committed (an index in the group's
	// ownerList, -1 for none), valid while the group's ownersGen is still ownersGen: most
	// commits find their owner here instead of in the owners map.
	owner     int32
	ownersGen uint32
	set       bool // the entry holds an offset (offTable's dense slices have holes)
}

// maxDensePartition bounds the partitions offTable and ownerTable keep in slices; larger ones
// (unusual) go to a map.
const maxDensePartition = 1 << 14

// offTable is a group's committed offsets by topic index and partition: a slice per topic,
// indexed by partition, since partitions are small dense numbers (a slice index costs far
// less than a map probe on the path every offset commit takes).
type offTable struct {
	dense  [][]offState
	sparse map[offKey]offState
	n      int
}

func (t *offTable) get(k offKey) (offState, bool) {
	if k.part >= 0 && k.part < maxDensePartition {
		if int(k.topic) < len(t.dense) && int(k.part) < len(t.dense[k.topic]) {
			st := t.dense[k.topic][k.part]
			return st, st.set
		}
		return offState{}, false
	}
	st, ok := t.sparse[k]
	return st, ok
}

func (t *offTable) put(k offKey, st offState) {
	st.set = true
	if k.part >= 0 && k.part < maxDensePartition {
		for int(k.topic) >= len(t.dense) {
			t.dense = append(t.dense, nil)
		}
		ps := t.dense[k.topic]
		if int(k.part) >= len(ps) {
			ps = append(ps, make([]offState, int(k.part)+1-len(ps))...)
			t.dense[k.topic] = ps
		}
		if !ps[k.part].set {
			t.n++
		}
		ps[k.part] = st
		return
	}
	if t.sparse == nil {
		t.sparse = map[offKey]offState{}
	}
	if _, ok := t.sparse[k]; !ok {
		t.n++
	}
	t.sparse[k] = st
}

func (t *offTable) del(k offKey) {
	if _, ok := t.get(k); !ok {
		return
	}
	t.n--
	if k.part >= 0 && k.part < maxDensePartition {
		t.dense[k.topic][k.part] = offState{}
		return
	}
	delete(t.sparse, k)
}

// len is the number of offsets held.
func (t *offTable) len() int { return t.n }

// hasTopic reports whether the table holds an offset of the topic at index ti.
func (t *offTable) hasTopic(ti uint32) bool {
	if int(ti) < len(t.dense) {
		for _, st := range t.dense[ti] {
			if st.set {
				return true
			}
		}
	}
	for k := range t.sparse {
		if k.topic == ti {
			return true
		}
	}
	return false
}

// each calls f for every offset held.
func (t *offTable) each(f func(offState)) {
	for _, ps := range t.dense {
		for _, st := range ps {
			if st.set {
				f(st)
			}
		}
	}
	for _, st := range t.sparse {
		f(st)
	}
}

// groupModel is what the records say about a group, enough to tell what each batch did.
type groupModel struct {
	id           string
	typ          string // classic, consumer, share, streams; "" for a group known only by offsets
	exists       bool
	protocolType string // classic groups
	epoch        int32  // group epoch or generation
	hasEpoch     bool
	targetEpoch  int32
	metadataHash int64
	validated    int32 // streams: validated topology epoch
	configs      string
	topologyEp   int32
	topology     map[string][]string // streams: subtopology -> source topics (repartition ones too)
	regexes      map[string]string   // consumer: regex -> resolved topics
	members      map[string]*memberModel

	offsets offTable
	// lastTopic and lastIdx remember the last topic looked up (records come in runs of one
	// topic).
	lastTopic string
	lastIdx   uint32
	// topicIdx and topicNames are the group's topic table: names (and topic ids) by index.
	topicIdx   map[string]uint32
	topicNames []string
	// emptySince is when the group, having a protocol, lost its last member.
	emptySince *Position

	// owners maps (topic or topic id, partition) to the member that owns it (assigned or
	// pending revocation: an index in ownerList); rebuilt when dirty, which counts in
	// ownersGen.
	owners      map[offKey]int32
	ownerList   []*memberModel
	ownersGen   uint32
	ownersDirty bool

	open *Rebalance // the rebalance not yet converged (consumer, share, streams groups)
	// What the batch being read did to the group (Analyzer.endBatch explains it): inBatch is
	// the batch's sequence number when the group is among its touched groups.
	inBatch   uint64
	steps     []step
	commits   *commitAcc
	tombs     *tombAcc
	txnWrites *txnAcc
	deleted   *groupTomb

	// prevTarget is the last complete target assignment (item -> member id) and prevNames
	// its members' names, to tell what the next one moves.
	prevTarget map[item]string
	prevNames  map[string]string
	// Classic groups: revoked is what the last generation took from its owners without
	// giving it to anyone (a cooperative rebalance's first round); afterDowngrade is set
	// until the first generation after a conversion back to classic.
	revoked        items
	afterDowngrade bool
	// carry are causes seen in an earlier batch for the next rebalance (share partitions
	// initialized); shareReady the share partitions initialized so far.
	carry      []Cause
	shareReady items
}

func newGroupModel(id string) *groupModel {
	return &groupModel{id: id, members: map[string]*memberModel{}, topicIdx: map[string]uint32{}, validated: -1}
}

// simple reports whether the group has no protocol: an implicit group of offset commits or a
// classic group without protocol type and members (kafka-consumer-groups and standalone
// consumers write to these).
func (g *groupModel) simple() bool {
	return g.typ == "" || (g.typ == typeClassic && g.protocolType == "" && len(g.members) == 0)
}

// memberIDs returns the member ids, sorted.
func (g *groupModel) memberIDs() []string {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// reset forgets the group's membership state (a deletion or a conversion starts over).
func (g *groupModel) reset() {
	g.exists, g.hasEpoch = false, false
	g.epoch, g.targetEpoch, g.metadataHash, g.validated, g.topologyEp = 0, 0, 0, -1, 0
	g.members = map[string]*memberModel{}
	g.topology, g.regexes, g.configs = nil, nil, ""
	g.protocolType = ""
	g.open = nil
	g.prevTarget, g.prevNames = nil, nil
	g.carry, g.shareReady = nil, nil
	g.ownersDirty = true
}

// owner returns the index in ownerList of the member that owns partition part of topic (the
// index of its name, or of its id, topicID >= 0, when the group names topics by id), -1 if
// none.
func (g *groupModel) owner(n names, topic uint32, topicID int64, part int32) int32 {
	if len(g.members) == 0 {
		return -1
	}
	if g.ownersDirty || g.owners == nil {
		g.rebuildOwners(n)
	}
	if i, ok := g.owners[offKey{topic, part}]; ok {
		return i
	}
	if topicID >= 0 {
		if i, ok := g.owners[offKey{uint32(topicID), part}]; ok {
			return i
		}
	}
	return -1
}

func (g *groupModel) rebuildOwners(n names) {
	if g.owners == nil {
		g.owners = map[offKey]int32{}
	}
	clear(g.owners)
	g.ownerList = g.ownerList[:0]
	g.ownersDirty = false
	g.ownersGen++
	for _, id := range g.memberIDs() {
		m := g.members[id]
		idx := int32(len(g.ownerList))
		g.ownerList = append(g.ownerList, m)
		for _, set := range []items{m.assigned, m.pending} {
			for _, it := range set {
				switch it.space {
				case spaceTopic:
					g.owners[offKey{g.topic(it.name), it.part}] = idx
				case spaceTopicID:
					g.owners[offKey{g.topic(it.name), it.part}] = idx
					if name := n[it.name]; name != "" {
						g.owners[offKey{g.topic(name), it.part}] = idx
					}
				case spaceTask:
					if it.role != roleActive {
						continue
					}
					for _, t := range g.topology[it.name] {
						g.owners[offKey{g.topic(t), it.part}] = idx
					}
				}
			}
		}
	}
}

// topic returns the index of topic (a name or a topic id) in the group's table, adding a
// copy of it when it is new.
func (g *groupModel) topic(topic string) uint32 {
	if topic == g.lastTopic && g.lastTopic != "" {
		return g.lastIdx
	}
	i, ok := g.topicIdx[topic]
	if !ok {
		i = uint32(len(g.topicNames))
		t := strings.Clone(topic)
		g.topicIdx[t] = i
		g.topicNames = append(g.topicNames, t)
	}
	g.lastTopic, g.lastIdx = g.topicNames[i], i
	return i
}

// topicIndex returns the index of topic, or -1 when the table does not hold it.
func (g *groupModel) topicIndex(topic string) int64 {
	if i, ok := g.topicIdx[topic]; ok {
		return int64(i)
	}
	return -1
}

// classicMembers builds the members of a GroupMetadata value, their assignments decoded
// from the consumer protocol when the protocol type is "consumer".
func classicMembers(v *recordcodec.GroupMetadataValue, at Position) map[string]*memberModel {
	out := make(map[string]*memberModel, len(v.Members))
	for i := range v.Members {
		mm := &v.Members[i]
		m := &memberModel{
			id: strings.Clone(mm.MemberId), clientID: strings.Clone(mm.ClientId), host: strings.Clone(mm.ClientHost),
			instanceID: cloneStrPtr(mm.GroupInstanceId), protocol: typeClassic,
			rebalanceTimeoutMs: mm.RebalanceTimeout, sessionTimeoutMs: mm.SessionTimeout,
			hasCurrent: true, epoch: v.Generation, joined: at, lastSeen: at, step: "stable", stepSince: at,
			lastOwn: at, ownSet: true,
		}
		if m.rebalanceTimeoutMs < 0 {
			m.rebalanceTimeoutMs = m.sessionTimeoutMs
		}
		if v.ProtocolType == "consumer" {
			if sub, err := recordcodec.DecodeConsumerSubscriptionLenient(mm.Subscription); err == nil {
				topics := slices.Clone(sub.Topics)
				slices.Sort(topics)
				m.subscription = strings.Join(slices.Compact(topics), ",")
			}
			if asg, err := recordcodec.DecodeConsumerAssignmentLenient(mm.Assignment); err == nil {
				for _, tp := range asg.AssignedPartitions {
					for _, p := range tp.Partitions {
						m.assigned = append(m.assigned, item{space: spaceTopic, name: strings.Clone(tp.Topic), part: p})
					}
				}
				m.assigned = m.assigned.normalize()
				m.target = m.assigned
			}
		}
		out[m.id] = m
	}
	return out
}

func cloneStrPtr(s *string) *string {
	if s == nil {
		return nil
	}
	c := strings.Clone(*s)
	return &c
}

// memberStateName names a member state byte of a group type.
func memberStateName(typ string, b int8) string {
	if typ == typeStreams {
		return groupstate.StreamsMemberStateName(b)
	}
	return groupstate.ConsumerMemberStateName(b)
}

// stableState reports whether b is the group type's STABLE member state.
func stableState(typ string, b int8) bool {
	if typ == typeStreams {
		return b == groupstate.StreamsMemberStable
	}
	return b == groupstate.MemberStable
}

func unrevokedState(typ string, b int8) bool {
	if typ == typeStreams {
		return b == groupstate.StreamsMemberUnrevokedTasks
	}
	return b == groupstate.MemberUnrevokedPartitions
}

func unreleasedState(typ string, b int8) bool {
	if typ == typeStreams {
		return b == groupstate.StreamsMemberUnreleasedTasks
	}
	return b == groupstate.MemberUnreleasedPartitions
}
