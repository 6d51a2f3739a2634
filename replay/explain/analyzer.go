package explain

import (
	"slices"
	"strings"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// Options configure an Analyzer.
type Options struct {
	// Group is the group to explain; "" explains every group of the partition.
	Group string
	// MarkedOnly emits only the events that carry a mark (what check reports), and builds no
	// other event: the analysis of a whole log stays cheap.
	MarkedOnly bool
	// SlowRebalanceMs marks a rebalance that took longer to converge (default 60 s);
	// LongTransactionMs a transaction open longer (default 60 s, the producer's default
	// transaction.timeout.ms).
	SlowRebalanceMs   int64
	LongTransactionMs int64
	// OffsetsRetentionMs is the brokers' offsets.retention.minutes, to tell an expiry from
	// other deletions; 0 infers it from the log (an expiry's batch bounds it: deletions.go).
	OffsetsRetentionMs int64
	// SessionTimeoutMs is the shortest session timeout a consumer, share or streams group of
	// the brokers has (group.consumer.min.session.timeout.ms, or a group's own config), whose
	// records do not carry it: a removal sooner than that after a member's own last record
	// is a leave. 0 assumes Kafka's default, 45 s (the smallest a group may set unless the
	// brokers lower group.consumer.min.session.timeout.ms), and says such a leave is likely
	// rather than proved. Classic members' records carry their own.
	SessionTimeoutMs int64
	// Emit receives every event, in log order (the event is the caller's to keep).
	Emit func(*Event)
}

// Defaults of Options.
const (
	DefaultSlowRebalanceMs   = 60_000
	DefaultLongTransactionMs = 60_000
	DefaultSessionTimeoutMs  = 45_000
	// lookahead is how many events may wait for a topic id's name before they go out with
	// the id.
	lookahead = 512
)

// Analyzer explains the records of one partition as they replay: give it to the engine as
// its observer (replay.Options.Observer), then call Close once the replay ends. It must see
// every record of the partition in order.
type Analyzer struct {
	opts Options
	// sessionAssumed: Options.SessionTimeoutMs was not given (Kafka's default is assumed).
	sessionAssumed bool
	partition      int32
	groups         map[string]*groupModel
	last           *groupModel // the group of the previous record (records come in runs)

	// The batch being read: the records of each group are collected as steps and explained
	// when the batch ends (a conversion, a deletion or a static replacement is several
	// records of one batch).
	batchBase int64
	inBatch   bool
	batchSeq  uint64        // counts batches (groupModel.inBatch)
	touched   []*groupModel // groups with records in the batch, in order of first record
	out       []*Event      // the batch's events, sorted by offset when the batch ends

	txns      map[int64]*txnState // producer id -> its open transaction's writes
	names     names
	seenIDs   map[recordcodec.UUID]string // ids whose name is known
	idStrings map[recordcodec.UUID]string
	lastID    recordcodec.UUID
	spentAccs []*commitAcc
	queue     []*Event // events waiting for a topic name
	lastPos   Position // the last record seen
}

// NewAnalyzer returns the analyzer of partition p.
func NewAnalyzer(p int32, opts Options) *Analyzer {
	if opts.SlowRebalanceMs <= 0 {
		opts.SlowRebalanceMs = DefaultSlowRebalanceMs
	}
	if opts.LongTransactionMs <= 0 {
		opts.LongTransactionMs = DefaultLongTransactionMs
	}
	if opts.OffsetsRetentionMs < 0 {
		opts.OffsetsRetentionMs = 0
	}
	assumed := opts.SessionTimeoutMs <= 0
	if assumed {
		opts.SessionTimeoutMs = DefaultSessionTimeoutMs
	}
	return &Analyzer{
		opts: opts, sessionAssumed: assumed, partition: p, groups: map[string]*groupModel{}, batchBase: -1,
		txns: map[int64]*txnState{}, names: names{}, seenIDs: map[recordcodec.UUID]string{},
		idStrings: map[recordcodec.UUID]string{},
	}
}

// NewTimeline returns the analyzer of group in partition p, every event going to emit. Call
// Close after the replay.
func NewTimeline(group string, p int32, emit func(*Event)) *Analyzer {
	return NewAnalyzer(p, Options{Group: group, Emit: emit})
}

func (a *Analyzer) tracked(group string) bool { return a.opts.Group == "" || a.opts.Group == group }

// group returns the model of group id, created on first use.
func (a *Analyzer) group(id string) *groupModel {
	if a.last != nil && a.last.id == id {
		return a.last
	}
	g := a.groups[id]
	if g == nil {
		g = newGroupModel(strings.Clone(id))
		a.groups[g.id] = g
	}
	a.last = g
	return g
}

func (a *Analyzer) position(ev *replay.Event) Position {
	return Position{Partition: a.partition, Offset: ev.Offset, LastOffset: ev.Offset, BatchBase: ev.Batch.BaseOffset,
		ProducerID: ev.Batch.ProducerID, Timestamp: ev.Timestamp}
}

// Observe implements replay.Observer.
func (a *Analyzer) Observe(ev *replay.Event, st groupstate.View) {
	if a.inBatch && ev.Batch.BaseOffset != a.batchBase {
		a.endBatch()
	}
	a.inBatch, a.batchBase = true, ev.Batch.BaseOffset
	pos := a.position(ev)
	a.lastPos = pos
	switch {
	case ev.Marker != nil:
		a.marker(ev.Marker, pos)
	case ev.Skipped != "":
	default:
		a.record(ev, pos)
	}
	if recs := ev.Batch.Records; len(recs) > 0 && ev.Offset == recs[len(recs)-1].Offset {
		a.endBatch()
	}
}

func (a *Analyzer) record(ev *replay.Event, pos Position) {
	k := ev.Record.Key
	v := ev.Record.Value
	if oc, ok := v.(*recordcodec.OffsetCommitValue); ok && oc.TopicId != (recordcodec.UUID{}) && oc.TopicId != a.lastID {
		a.learnName(oc.TopicId, k.Topic)
		a.lastID = oc.TopicId // commits come in runs of one topic: its name is known now
	}
	switch pm := v.(type) {
	case *recordcodec.ConsumerGroupPartitionMetadataValue:
		for _, t := range pm.Topics {
			a.learnName(t.TopicId, t.TopicName)
		}
	case *recordcodec.ShareGroupStatePartitionMetadataValue:
		for _, t := range pm.InitializingTopics {
			a.learnName(t.TopicId, t.TopicName)
		}
		for _, t := range pm.InitializedTopics {
			a.learnName(t.TopicId, t.TopicName)
		}
	}
	if !a.tracked(k.Group) {
		return
	}
	g := a.group(k.Group)
	if ev.Violation != nil {
		if !a.opts.MarkedOnly {
			a.out = append(a.out, &Event{Kind: KindViolation, Group: g.id, GroupType: g.typ, At: pos,
				Text: "record not applied: " + ev.Violation.Err.Error()})
		}
		return
	}
	switch k.Type {
	case recordcodec.LegacyOffsetCommit, recordcodec.OffsetCommit:
		if v == nil {
			a.offsetTombstone(g, k.Topic, k.Partition, pos)
			return
		}
		var off int64
		var meta string
		var topicID recordcodec.UUID
		switch c := v.(type) {
		case *recordcodec.OffsetCommitValue:
			off, meta, topicID = c.Offset, c.Metadata, c.TopicId
		case *recordcodec.LegacyOffsetCommitValue:
			off, meta = c.Offset, c.Metadata
		}
		if ev.Batch.ProducerID >= 0 {
			a.txnWrite(g, k.Topic, k.Partition, off, pos)
			return
		}
		a.commit(g, k.Topic, topicID, k.Partition, off, meta, pos)
		return
	}
	a.touch(g)
	g.steps = append(g.steps, captureStep(k, v, pos))
}

func (a *Analyzer) learnName(id recordcodec.UUID, topic string) {
	if _, ok := a.seenIDs[id]; ok || topic == "" {
		return
	}
	a.seenIDs[id] = a.idString(id)
	a.names[a.seenIDs[id]] = strings.Clone(topic)
	for _, g := range a.groups {
		g.ownersDirty = true // owners of partitions known by id are now known by name too
	}
	if len(a.queue) > 0 {
		a.release(false)
	}
}

// idString is a topic id's text (recordcodec.UUID's), computed once per id.
func (a *Analyzer) idString(id recordcodec.UUID) string {
	if s, ok := a.idStrings[id]; ok {
		return s
	}
	s := id.String()
	a.idStrings[id] = s
	return s
}

// touch notes that g has records in the current batch.
func (a *Analyzer) touch(g *groupModel) {
	if g.inBatch == a.batchSeq+1 {
		return
	}
	g.inBatch = a.batchSeq + 1
	a.touched = append(a.touched, g)
}

// maxKeptSteps is the largest steps slice a group keeps between batches.
const maxKeptSteps = 8

// endBatch explains what the batch did to each group, then emits the batch's events in log
// order.
func (a *Analyzer) endBatch() {
	a.inBatch = false
	for _, g := range a.touched {
		a.interpret(g, g.steps)
	}
	a.finishCommits()
	a.finishTombstones()
	a.finishTxnWrites()
	for _, g := range a.touched {
		a.checkConverged(g)
	}
	for _, g := range a.touched {
		// Drop what the steps hold. A group keeps its slice for the next batch only when it
		// is small: tens of thousands of groups each keeping the capacity of its largest
		// batch held gigabytes on a 17 M-record log.
		if cap(g.steps) > maxKeptSteps {
			g.steps = nil
			continue
		}
		clear(g.steps)
		g.steps = g.steps[:0]
	}
	a.touched = a.touched[:0]
	a.batchSeq++
	if len(a.out) == 0 {
		return
	}
	slices.SortStableFunc(a.out, func(x, y *Event) int {
		switch {
		case x.At.Offset < y.At.Offset:
			return -1
		case x.At.Offset > y.At.Offset:
			return 1
		}
		return 0
	})
	for _, e := range a.out {
		a.queue = append(a.queue, e)
	}
	a.out = a.out[:0]
	a.release(false)
}

// Close explains the last batch and what is still open at the end of the log: rebalances
// that have not converged, transactions without a marker.
func (a *Analyzer) Close() {
	if a.inBatch {
		a.endBatch()
	}
	ids := make([]string, 0, len(a.groups))
	for id := range a.groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		g := a.groups[id]
		if g.open != nil {
			a.endRebalance(g, g.typ, "open", a.lastPos, 0)
		}
	}
	a.openTransactions()
	for _, e := range a.out {
		a.queue = append(a.queue, e)
	}
	a.out = nil
	a.release(true)
}

// emit queues e for the batch's events (it goes out when the batch ends).
func (a *Analyzer) emit(e *Event) {
	if a.opts.MarkedOnly && len(e.Marks) == 0 {
		return
	}
	a.out = append(a.out, e)
}

// release sends the queued events that can go: all of them when force is set or the queue is
// long, otherwise up to the first one naming a topic id whose name is still unknown.
func (a *Analyzer) release(force bool) {
	i := 0
	for ; i < len(a.queue); i++ {
		e := a.queue[i]
		if !force && len(a.queue)-i <= lookahead && !a.resolved(e) {
			break
		}
		a.fillNames(e)
		normalize(e)
		e.Text = render(e)
		if a.opts.Emit != nil {
			a.opts.Emit(e)
		}
	}
	a.queue = slices.Delete(a.queue, 0, i)
}

// resolved reports whether every topic id in e has a name.
func (a *Analyzer) resolved(e *Event) bool {
	ok := true
	eachAssignment(e, func(as *Assignment) {
		if as.TopicID != "" && as.Topic == "" && a.names[as.TopicID] == "" {
			ok = false
		}
	})
	return ok
}

func (a *Analyzer) fillNames(e *Event) {
	eachAssignment(e, func(as *Assignment) {
		if as.TopicID != "" && as.Topic == "" {
			as.Topic = a.names[as.TopicID]
		}
	})
	// Assignments were sorted by topic id: sort them by name.
	byName := func(x, y Assignment) int {
		if c := strings.Compare(x.Role, y.Role); c != 0 {
			return c
		}
		if c := strings.Compare(x.Subtopology, y.Subtopology); c != 0 {
			return c
		}
		if c := strings.Compare(x.Topic, y.Topic); c != 0 {
			return c
		}
		return strings.Compare(x.TopicID, y.TopicID)
	}
	if r := e.Rebalance; r != nil {
		slices.SortStableFunc(r.Moves, func(x, y Move) int {
			if c := strings.Compare(x.From, y.From); c != 0 {
				return c
			}
			if c := strings.Compare(x.To, y.To); c != 0 {
				return c
			}
			return byName(x.Assignment, y.Assignment)
		})
		for i := range r.Waits {
			slices.SortStableFunc(r.Waits[i].Items, byName)
		}
	}
	if r := e.Reconcile; r != nil {
		slices.SortStableFunc(r.Items, byName)
		slices.SortStableFunc(r.Owned, byName)
	}
	if r := e.Removal; r != nil {
		slices.SortStableFunc(r.Owned, byName)
	}
	if r := e.Replacement; r != nil {
		slices.SortStableFunc(r.Owned, byName)
	}
}

// eachAssignment calls f for every Assignment the event holds.
func eachAssignment(e *Event, f func(*Assignment)) {
	list := func(as []Assignment) {
		for i := range as {
			f(&as[i])
		}
	}
	if r := e.Rebalance; r != nil {
		for i := range r.Moves {
			f(&r.Moves[i].Assignment)
		}
		for i := range r.Waits {
			list(r.Waits[i].Items)
		}
	}
	if r := e.Reconcile; r != nil {
		list(r.Items)
		list(r.Owned)
	}
	if r := e.Removal; r != nil {
		list(r.Owned)
	}
	if r := e.Replacement; r != nil {
		list(r.Owned)
	}
}

// normalize gives every list of e that is nil an empty one, so that JSON has [] rather than
// null for them (absent lists are null nowhere in the schema).
func normalize(e *Event) {
	if e.Marks == nil {
		e.Marks = []Mark{}
	}
	orEmpty := func(as *[]Assignment) {
		if *as == nil {
			*as = []Assignment{}
		}
		for i := range *as {
			if (*as)[i].Partitions == nil {
				(*as)[i].Partitions = []int32{}
			}
		}
	}
	changes := func(cs *[]OffsetChange) {
		if *cs == nil {
			*cs = []OffsetChange{}
		}
	}
	if r := e.Rebalance; r != nil {
		if r.Causes == nil {
			r.Causes = []Cause{}
		}
		if r.Moves == nil {
			r.Moves = []Move{}
		}
		for i := range r.Waits {
			orEmpty(&r.Waits[i].Items)
		}
	}
	if r := e.Reconcile; r != nil {
		orEmpty(&r.Items)
		orEmpty(&r.Owned)
	}
	if r := e.Removal; r != nil {
		orEmpty(&r.Owned)
	}
	if r := e.Replacement; r != nil {
		orEmpty(&r.Owned)
	}
	if o := e.Offsets; o != nil {
		changes(&o.Changes)
	}
	if d := e.Deletion; d != nil {
		changes(&d.Offsets)
	}
	if c := e.Conversion; c != nil && c.Members == nil {
		c.Members = []Member{}
	}
	if t := e.Transaction; t != nil {
		changes(&t.Offsets)
	}
}
