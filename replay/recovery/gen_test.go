package recovery

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"sort"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/recordcodec"
)

// genSpec sizes a generated __consumer_offsets log. The final state has about Groups groups,
// Groups*Members members and Groups*Offsets committed offsets; Churn random operations
// (offset overwrites and tombstones, member epoch bumps, members leaving and joining,
// transactional commits and aborts, groups deleted and recreated) are mixed in after the
// initial build, so the log is longer than the state, as real coordinator logs are.
type genSpec struct {
	Seed      uint64
	Partition int32
	Groups    int
	Members   int // per group
	Offsets   int // per group (topics x partitions)
	Churn     int
	// Gaps leaves holes between batches, as compaction does.
	Gaps bool
	// MaxOpenTxns bounds the transactions open at once: a new one first ends the oldest, as
	// transaction.timeout.ms makes real producers do. 0 leaves them open until a random
	// close or the end of the log (thousands at once on long logs; the old shape, which the
	// committed snapshots in testdata were cut from).
	MaxOpenTxns int
}

type genMember struct {
	id    string
	epoch int32
}

type genGroup struct {
	id      string
	epoch   int32
	members []genMember
	nextMem int
	live    bool
}

// logGen emits batches that a strict Kafka 4.4 replay accepts.
type logGen struct {
	spec   genSpec
	rng    *rand.Rand
	next   int64
	ts     int64
	groups []*genGroup
	topics []string
	emit   func(*eventlog.Batch) error
	pend   []pendingTxn
	pid    int64
	// cur collects the records of the batch being built.
	cur []eventlog.Record
}

type pendingTxn struct {
	pid   int64
	epoch int16
}

// generate streams the log of spec to emit in offset order.
func generate(spec genSpec, emit func(*eventlog.Batch) error) error {
	g := &logGen{spec: spec, rng: rand.New(rand.NewPCG(spec.Seed, 7)), ts: 1_700_000_000_000, emit: emit, pid: 1000}
	topicsPerGroup := 1 + (spec.Offsets-1)/10
	for i := 0; i < topicsPerGroup; i++ {
		g.topics = append(g.topics, fmt.Sprintf("topic-%03d", i))
	}
	for i := 0; i < spec.Groups; i++ {
		gr := &genGroup{id: fmt.Sprintf("group-%07d", i)}
		g.groups = append(g.groups, gr)
		if err := g.createGroup(gr); err != nil {
			return err
		}
		for o := 0; o < spec.Offsets; o++ {
			g.commit(gr.id, o)
			if len(g.cur) >= 20 {
				if err := g.flush(); err != nil {
					return err
				}
			}
		}
		if err := g.flush(); err != nil {
			return err
		}
	}
	for i := 0; i < spec.Churn; i++ {
		if err := g.churn(); err != nil {
			return err
		}
	}
	for len(g.pend) > 0 {
		if err := g.endTxn(0, true); err != nil {
			return err
		}
	}
	return g.flush()
}

func (g *logGen) topicPartition(o int) (string, int32) {
	return g.topics[o/10], int32(o % 10)
}

func (g *logGen) add(key recordcodec.Key, v recordcodec.Value) {
	k, val, err := recordcodec.Encode(recordcodec.Record{Key: key, Value: v})
	if err != nil {
		panic(err)
	}
	g.cur = append(g.cur, eventlog.Record{Key: k, Value: val})
}

func (g *logGen) commit(group string, o int) {
	t, p := g.topicPartition(o)
	g.add(recordcodec.Key{Type: 1, Group: group, Topic: t, Partition: p},
		&recordcodec.OffsetCommitValue{Version: 3, Offset: g.rng.Int64N(1 << 40), LeaderEpoch: 3, Metadata: "", CommitTimestamp: g.ts, ExpireTimestamp: -1})
}

func (g *logGen) topicID(i int) recordcodec.UUID {
	var u recordcodec.UUID
	u[0], u[15] = byte(i+1), 0x5a
	return u
}

func (g *logGen) memberRecords(gr *genGroup, m genMember) {
	g.add(recordcodec.Key{Type: 5, Group: gr.id, Member: m.id}, &recordcodec.ConsumerGroupMemberMetadataValue{
		Version: 0, ClientId: "client-" + m.id, ClientHost: "/10.0.0.1", SubscribedTopicNames: []string{g.topics[0]}, RebalanceTimeoutMs: 45000,
	})
	tp := []recordcodec.TopicPartitions{{TopicId: g.topicID(0), Partitions: []int32{int32(len(gr.members) % 10)}}}
	g.add(recordcodec.Key{Type: 7, Group: gr.id, Member: m.id}, &recordcodec.ConsumerGroupTargetAssignmentMemberValue{Version: 0, TopicPartitions: tp})
	g.assignment(gr, m)
}

func (g *logGen) assignment(gr *genGroup, m genMember) {
	g.add(recordcodec.Key{Type: 8, Group: gr.id, Member: m.id}, &recordcodec.ConsumerGroupCurrentMemberAssignmentValue{
		Version: 0, MemberEpoch: m.epoch, PreviousMemberEpoch: m.epoch - 1, State: 0,
		AssignedPartitions: []recordcodec.TopicPartitionsWithEpochs{{TopicId: g.topicID(0), Partitions: []int32{0, 1}, AssignmentEpochs: []int32{m.epoch, m.epoch}}},
	})
}

func (g *logGen) groupEpoch(gr *genGroup) {
	gr.epoch++
	g.add(recordcodec.Key{Type: 3, Group: gr.id}, &recordcodec.ConsumerGroupMetadataValue{Version: 0, Epoch: gr.epoch, MetadataHash: int64(gr.epoch) * 31})
	g.add(recordcodec.Key{Type: 6, Group: gr.id}, &recordcodec.ConsumerGroupTargetAssignmentMetadataValue{Version: 0, AssignmentEpoch: gr.epoch, AssignmentTimestamp: g.ts})
}

func (g *logGen) createGroup(gr *genGroup) error {
	gr.live = true
	g.groupEpoch(gr)
	for j := 0; j < g.spec.Members; j++ {
		g.join(gr)
		if len(g.cur) >= 30 {
			if err := g.flush(); err != nil {
				return err
			}
		}
	}
	return g.flush()
}

func (g *logGen) join(gr *genGroup) {
	m := genMember{id: fmt.Sprintf("%s-m%d", gr.id, gr.nextMem), epoch: gr.epoch}
	gr.nextMem++
	g.memberRecords(gr, m)
	gr.members = append(gr.members, m)
}

func (g *logGen) leave(gr *genGroup, i int) {
	m := gr.members[i]
	// Kafka's order: current assignment, target assignment, then the member.
	g.add(recordcodec.Key{Type: 8, Group: gr.id, Member: m.id}, nil)
	g.add(recordcodec.Key{Type: 7, Group: gr.id, Member: m.id}, nil)
	g.add(recordcodec.Key{Type: 5, Group: gr.id, Member: m.id}, nil)
	gr.members = append(gr.members[:i], gr.members[i+1:]...)
}

func (g *logGen) deleteGroup(gr *genGroup) {
	for len(gr.members) > 0 {
		g.leave(gr, len(gr.members)-1)
	}
	g.add(recordcodec.Key{Type: 6, Group: gr.id}, nil)
	g.add(recordcodec.Key{Type: 3, Group: gr.id}, nil)
	gr.live, gr.epoch = false, 0
}

func (g *logGen) churn() error {
	gr := g.groups[g.rng.IntN(len(g.groups))]
	switch op := g.rng.IntN(100); {
	case op < 55: // offset overwrites, the bulk of a real log
		for n := 1 + g.rng.IntN(8); n > 0; n-- {
			g.commit(gr.id, g.rng.IntN(max(g.spec.Offsets, 1)))
		}
	case op < 60:
		t, p := g.topicPartition(g.rng.IntN(max(g.spec.Offsets, 1)))
		g.add(recordcodec.Key{Type: 1, Group: gr.id, Topic: t, Partition: p}, nil)
	case op < 70 && gr.live && len(gr.members) > 0:
		m := &gr.members[g.rng.IntN(len(gr.members))]
		m.epoch = gr.epoch + 1
		g.groupEpoch(gr)
		g.assignment(gr, *m)
	case op < 77 && gr.live && len(gr.members) > 0:
		g.leave(gr, g.rng.IntN(len(gr.members)))
		g.groupEpoch(gr)
		g.join(gr)
	case op < 87: // a transactional offset commit, ended later
		if err := g.flush(); err != nil {
			return err
		}
		if g.spec.MaxOpenTxns > 0 && len(g.pend) >= g.spec.MaxOpenTxns {
			if err := g.endTxn(0, g.rng.IntN(4) != 0); err != nil {
				return err
			}
		}
		g.pid++
		for n := 1 + g.rng.IntN(3); n > 0; n-- {
			g.commit(gr.id, g.rng.IntN(max(g.spec.Offsets, 1)))
		}
		if err := g.flushTxn(g.pid, 1); err != nil {
			return err
		}
		g.pend = append(g.pend, pendingTxn{pid: g.pid, epoch: 1})
	case op < 95 && len(g.pend) > 0:
		if err := g.flush(); err != nil {
			return err
		}
		return g.endTxn(g.rng.IntN(len(g.pend)), g.rng.IntN(4) != 0)
	case op < 97 && gr.live:
		g.deleteGroup(gr)
	case !gr.live:
		if err := g.createGroup(gr); err != nil {
			return err
		}
	}
	if len(g.cur) >= 1+g.rng.IntN(16) {
		return g.flush()
	}
	return nil
}

func (g *logGen) endTxn(i int, commit bool) error {
	if err := g.flush(); err != nil { // a control batch holds only its marker
		return err
	}
	t := g.pend[i]
	g.pend = append(g.pend[:i], g.pend[i+1:]...)
	typ := recordcodec.ControlAbort
	if commit {
		typ = recordcodec.ControlCommit
	}
	g.cur = append(g.cur, eventlog.Record{
		Key:   recordcodec.ControlKey{Version: 0, Type: typ}.AppendTo(nil),
		Value: recordcodec.EndTxnMarker{Version: 0, CoordinatorEpoch: 5}.AppendTo(nil),
	})
	return g.emitBatch(t.pid, t.epoch, eventlog.AttrTransactional|eventlog.AttrControl)
}

func (g *logGen) flush() error { return g.emitBatch(-1, -1, 0) }

func (g *logGen) flushTxn(pid int64, epoch int16) error {
	return g.emitBatch(pid, epoch, eventlog.AttrTransactional)
}

func (g *logGen) emitBatch(pid int64, epoch int16, attrs eventlog.Attributes) error {
	if len(g.cur) == 0 {
		return nil
	}
	if g.spec.Gaps && g.rng.IntN(10) == 0 {
		g.next += int64(1 + g.rng.IntN(5))
	}
	b := &eventlog.Batch{
		Partition: g.spec.Partition, BaseOffset: g.next, LastOffset: g.next + int64(len(g.cur)) - 1,
		PartitionLeaderEpoch: 0, Magic: 2, Attributes: attrs, BaseTimestamp: g.ts, MaxTimestamp: g.ts,
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, NumRecords: int32(len(g.cur)), Records: g.cur,
	}
	for i := range b.Records {
		b.Records[i].Offset = g.next + int64(i)
		b.Records[i].Timestamp = g.ts
	}
	g.next = b.LastOffset + 1
	g.ts += 7
	g.cur = nil
	return g.emit(b)
}

// genSource is an in-memory eventlog.Source of one partition.
type genSource struct {
	p       int32
	batches []*eventlog.Batch
}

// genMem generates spec's log in memory. Each batch gets a CRC of its records, as a real
// batch has one (a log's identity is its batches' CRCs).
func genMem(spec genSpec) *genSource {
	s := &genSource{p: spec.Partition}
	if err := generate(spec, func(b *eventlog.Batch) error {
		h := crc32.NewIEEE()
		for _, r := range b.Records {
			h.Write(r.Key)
			h.Write(r.Value)
		}
		b.CRC = h.Sum32()
		s.batches = append(s.batches, b)
		return nil
	}); err != nil {
		panic(err)
	}
	return s
}

func (s *genSource) Partitions() ([]int32, error) { return []int32{s.p}, nil }

func (s *genSource) Offsets(p int32) (int64, int64, error) {
	if p != s.p || len(s.batches) == 0 {
		return 0, 0, nil
	}
	return s.batches[0].BaseOffset, s.batches[len(s.batches)-1].NextOffset(), nil
}

func (s *genSource) Batches(p int32, from int64) (eventlog.Iterator, error) {
	if p != s.p {
		return &genIter{}, nil
	}
	i := sort.Search(len(s.batches), func(i int) bool { return s.batches[i].LastOffset >= from })
	return &genIter{bs: s.batches[i:], i: -1}, nil
}

type genIter struct {
	bs []*eventlog.Batch
	i  int
}

func (it *genIter) Next() bool             { it.i++; return it.i < len(it.bs) }
func (it *genIter) Batch() *eventlog.Batch { return it.bs[it.i] }
func (it *genIter) Err() error             { return nil }
func (it *genIter) Close() error           { return nil }
