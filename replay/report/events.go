package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coordlog/coordlog/replay/explain"
)

// The adapter: the timeline's events of one group, in the order the analyzer hands them
// out, turned into the picture model. It draws nothing the events do not say: lanes are
// Member.Lane, lane states the reconcile steps, rebalances the rebalance-end events (each
// rebalance has exactly one), owners the target moves and the members' owned sets, offsets
// the changes of offsets-committed and of committed transactions.

// groupBuild collects one group's picture.
type groupBuild struct {
	g    *Group
	opts *Options
	from int64 // the first offset drawn (the time window); earlier events only set the state

	// unit and last: the axis's unit (fixed by the group's first event) and the last
	// position on it, carried to events without a timestamp.
	unitSet bool
	last    int64
	started bool // an event in the window was seen (the axis starts there)
	before  bool // an event before the window was seen

	lanes      map[string]*laneBuild
	memberLane map[string]*laneBuild // member id -> lane
	target     map[itemKey]*openOwner
	current    map[itemKey]*openOwner
	rows       map[itemKey]*AssignRow
	series     map[seriesKey]*Series
	txns       map[int64]*txnBuild
	epoch      int32
	haveEpoch  bool
	// important and routine count the listed events of each kind (list).
	important int
	routine   int
}

// laneBuild is a lane as it is drawn: its segment in progress and what its member owns.
type laneBuild struct {
	lane  *Lane
	index int
	// open is the lane's current segment (nil: the member is gone); owned what it owns.
	open  *Span
	owned map[itemKey]bool
}

// itemKey is a topic-partition (Topic set) or a streams task (Subtopology and Role set).
type itemKey struct {
	topic       string
	subtopology string
	role        string
	partition   int32
}

func (k itemKey) label() string {
	if k.subtopology != "" || k.role != "" {
		return fmt.Sprintf("%s_%d %s", k.subtopology, k.partition, k.role)
	}
	return fmt.Sprintf("%s-%d", k.topic, k.partition)
}

// openOwner is a member owning (or meant to own) an item since start.
type openOwner struct {
	lane  *laneBuild
	start int64
	src   Src
}

// seriesKey is a committed topic-partition.
type seriesKey struct {
	topic     string
	partition int32
}

// txnBuild is a producer's row and its transaction in progress (open since start).
type txnBuild struct {
	row   *TxnRow
	start int64
	open  bool
}

func newGroupBuild(id string, partition int32, opts *Options, from int64) *groupBuild {
	return &groupBuild{
		g:     &Group{ID: id, Partition: partition, LastActivity: Src{Time: -1, Row: -1}},
		opts:  opts,
		from:  from,
		lanes: map[string]*laneBuild{}, memberLane: map[string]*laneBuild{},
		target: map[itemKey]*openOwner{}, current: map[itemKey]*openOwner{}, rows: map[itemKey]*AssignRow{},
		series: map[seriesKey]*Series{}, txns: map[int64]*txnBuild{},
	}
}

// x places an event's position on the group's axis and carries it to the next events: its
// timestamp, or the group's last position when the record has none; a group whose first
// event has no timestamp is drawn by offsets.
func (b *groupBuild) x(p explain.Position) int64 {
	if !b.unitSet {
		b.unitSet = true
		if p.Timestamp < 0 {
			b.g.Axis.Unit = UnitOffset
		}
	}
	b.last = b.xOf(p)
	return b.last
}

// xOf places an earlier position (a rebalance's or a transaction's start) on the axis.
func (b *groupBuild) xOf(p explain.Position) int64 {
	switch {
	case b.g.Axis.Unit == UnitOffset:
		return p.Offset
	case p.Timestamp >= 0:
		return p.Timestamp
	}
	return b.last
}

// inWindow says whether an event is drawn (at or after the window's first offset).
func (b *groupBuild) inWindow(e *explain.Event) bool { return e.At.LastOffset >= b.from }

// important says whether an event is listed before the routine ones (commits, pending
// transactional writes, reconcile steps).
func important(e *explain.Event) bool {
	if len(e.Marks) > 0 {
		return true
	}
	switch e.Kind {
	case explain.KindOffsetsCommitted, explain.KindTransactionOffsets, explain.KindReconcile, explain.KindTargetAssignment,
		explain.KindRebalance:
		return false
	case explain.KindTransactionEnd:
		return e.Transaction != nil && e.Transaction.Result != "committed"
	}
	return true
}

// src is the record behind an event at pos, listed (Row set) when the event is.
func src(e *explain.Event, pos explain.Position, records string, row int) Src {
	return Src{Partition: pos.Partition, Offset: pos.Offset, LastOffset: pos.LastOffset, Time: pos.Timestamp,
		Records: records, Kind: string(e.Kind), Row: row}
}

// add takes one event.
func (b *groupBuild) add(e *explain.Event, records string) {
	g := b.g
	if e.GroupType != "" {
		g.Type = e.GroupType
	}
	x := b.x(e.At)
	in := b.inWindow(e)
	b.before = b.before || !in
	if in {
		if !b.started {
			b.started = true
			g.Axis.Start = x
			b.clip(x)
		}
		g.Axis.End = max(g.Axis.End, x)
		g.Counts.Events++
	}
	g.LastActivity = Src{Partition: e.At.Partition, Offset: e.At.Offset, LastOffset: e.At.LastOffset, Time: e.At.Timestamp, Row: -1}
	row := -1
	if in {
		row = b.list(e, records)
	}
	s := src(e, e.At, records, row)

	switch e.Kind {
	case explain.KindGroupCreated:
		if r := e.Rebalance; r != nil {
			b.step(x, r.Epoch, s, in)
		}
		b.groupMark(in, x, "created", e.Text, s)
	case explain.KindGroupConverted:
		if c := e.Conversion; c != nil {
			b.step(x, c.Epoch, s, in)
			for i := range c.Members { // carried over: members of the new group from here
				if l := b.lane(&c.Members[i]); l.open == nil {
					b.setState(l, x, "stable", e.Text, s)
				}
			}
		}
		b.groupMark(in, x, "converted", e.Text, s)
	case explain.KindGroupDeleted, explain.KindOffsetsDeleted:
		if d := e.Deletion; d != nil {
			for _, o := range d.Offsets {
				b.point(in, o.Topic, o.Partition, Point{X: x, Value: o.Offset, Offset: e.At.Offset, Time: e.At.Timestamp, Flags: PointDeleted, Row: row})
				if in {
					g.Counts.Deletions++
				}
			}
			if d.GroupDeleted {
				b.endAll(x)
			}
		}
		if e.Kind == explain.KindGroupDeleted {
			b.groupMark(in, x, "deleted", e.Text, s)
		}
	case explain.KindMemberJoined:
		if e.Member != nil {
			l := b.lane(e.Member)
			b.setState(l, x, "joined", e.Text, s)
			b.laneMark(in, l, x, "joined", e.Text, s)
		}
	case explain.KindMemberUpdated:
		if e.Member != nil {
			b.laneMark(in, b.lane(e.Member), x, "updated", e.Text, s)
		}
	case explain.KindMemberReplaced:
		if r := e.Replacement; r != nil {
			l := b.lane(&r.Member)
			b.memberLane[r.Previous.ID] = l
			b.setOwned(l, r.Owned, x, s)
			if l.open == nil || l.open.Class == "away" {
				b.setState(l, x, "stable", e.Text, s)
			}
			b.laneMark(in, l, x, "replaced", e.Text, s)
		}
	case explain.KindMemberTemporaryLeave:
		if e.Member != nil {
			l := b.lane(e.Member)
			b.setState(l, x, "away", e.Text, s)
			b.laneMark(in, l, x, "temporary-leave", e.Text, s)
		}
	case explain.KindMemberLeft, explain.KindMemberFenced:
		if r := e.Removal; r != nil {
			l := b.lane(&r.Member)
			class := "left"
			switch {
			case e.Kind == explain.KindMemberFenced:
				class = "fenced"
				if in {
					g.Counts.Fenced++
				}
			case r.Cause == "expired-after-temporary-leave":
				class = "expired"
			}
			b.removeMember(l, x)
			b.laneMark(in, l, x, class, e.Text, s)
		}
	case explain.KindRebalance, explain.KindTargetAssignment:
		if r := e.Rebalance; r != nil {
			if e.Kind == explain.KindRebalance {
				b.step(x, r.Epoch, s, in)
			}
			b.moves(r.Moves, x, s, false)
		}
	case explain.KindReconcile:
		if r := e.Reconcile; r != nil {
			l := b.lane(&r.Member)
			b.setState(l, x, reconcileState(r), e.Text, s)
			owned := r.Owned
			if r.Step == "revoking" {
				// What it must revoke is still its own until it says it revoked it.
				owned = append(append([]explain.Assignment(nil), owned...), r.Items...)
			}
			b.setOwned(l, owned, x, s)
		}
	case explain.KindRebalanceEnd:
		b.rebalanceEnd(e, in, x, s)
	case explain.KindOffsetsCommitted:
		if o := e.Offsets; o != nil {
			var flags PointFlag
			if e.HasMark(explain.MarkWhileEmpty) {
				flags |= PointWhileEmpty
				if in {
					g.Counts.WhileEmpty++
				}
			}
			if e.HasMark(explain.MarkWithoutOwner) {
				flags |= PointWithoutOwner
			}
			b.changes(in, o.Changes, x, e.At, flags, row)
		}
	case explain.KindTransactionOffsets:
		if t := e.Transaction; t != nil {
			if tb := b.txn(t.ProducerID); !tb.open {
				tb.open, tb.start = true, b.xOf(t.Start)
			}
		}
	case explain.KindTransactionEnd, explain.KindTransactionOpen:
		b.transactionEnd(e, in, x, s, row)
	case explain.KindViolation:
		if in {
			g.Counts.Violations++
		}
		b.groupMark(in, x, "violation", e.Text, s)
	}
}

// list adds the event to the group's listed records when its budget allows, returning its
// row (-1: not listed).
func (b *groupBuild) list(e *explain.Event, records string) int {
	imp := important(e)
	switch {
	case imp && b.important < b.opts.MaxRows:
		b.important++
	case !imp && b.routine < b.opts.MaxRoutineRows:
		b.routine++
	default:
		b.g.Unlisted++
		return -1
	}
	marks := make([]string, len(e.Marks))
	for i, m := range e.Marks {
		marks[i] = string(m)
	}
	text := e.Text
	if e.Kind == explain.KindRebalanceEnd {
		text = explain.SummaryText(e)
	}
	if e.Offsets != nil {
		text += explain.CertaintyNote(e) // who wrote them, as far as the log tells
	}
	if e.Next != "" {
		text += " Next: " + e.Next
	}
	b.g.Records = append(b.g.Records, Record{Src: src(e, e.At, records, len(b.g.Records)), Text: text, Marks: marks})
	return len(b.g.Records) - 1
}

// clip drops what ended before the window's first drawn event at x and starts what is still
// open there at x: the picture begins with the state the group was in.
func (b *groupBuild) clip(x int64) {
	g := b.g
	g.Epochs = clipSteps(g.Epochs, x)
	g.Rebalances = nil
	g.Marks = nil
	for _, l := range b.lanes {
		l.lane.Segments = nil
		l.lane.Marks = nil
		if l.open != nil {
			l.open.Start = max(l.open.Start, x)
		}
	}
	for _, r := range b.rows {
		r.Current, r.Target = nil, nil
	}
	for _, o := range b.current {
		o.start = max(o.start, x)
	}
	for _, o := range b.target {
		o.start = max(o.start, x)
	}
	for _, s := range b.series {
		if n := len(s.Points); n > 0 {
			p := s.Points[n-1]
			p.X, p.Flags, p.Row = x, p.Flags&^(PointRewind|PointWhileEmpty|PointWithoutOwner), -1
			s.Points = append(s.Points[:0], p)
			if p.Flags&PointDeleted != 0 {
				s.Points = s.Points[:0]
			}
		}
		s.Rewinds = 0
	}
	for _, t := range b.txns {
		t.row.Spans = nil
		if t.open {
			t.start = max(t.start, x)
		}
	}
	g.Axis.ClippedStart = b.before
}

// clipSteps keeps the step in force at x (moved to x) and the later ones.
func clipSteps(steps []Step, x int64) []Step {
	if len(steps) == 0 {
		return steps
	}
	last := steps[len(steps)-1]
	last.X, last.Src.Row = x, -1
	return []Step{last}
}

func (b *groupBuild) step(x int64, epoch int32, s Src, in bool) {
	if b.haveEpoch && epoch == b.epoch {
		return
	}
	b.epoch, b.haveEpoch = epoch, true
	if !in && len(b.g.Epochs) > 0 {
		b.g.Epochs = b.g.Epochs[:1] // before the window only the one in force matters
		b.g.Epochs[0] = Step{X: x, Epoch: epoch, Src: s}
		return
	}
	b.g.Epochs = append(b.g.Epochs, Step{X: x, Epoch: epoch, Src: s})
}

func (b *groupBuild) groupMark(in bool, x int64, class, text string, s Src) {
	if in {
		b.g.Marks = append(b.g.Marks, Mark{X: x, Class: class, Text: text, Src: s})
	}
}

func (b *groupBuild) laneMark(in bool, l *laneBuild, x int64, class, text string, s Src) {
	if in {
		l.lane.Marks = append(l.lane.Marks, Mark{X: x, Class: class, Text: text, Src: s})
	}
}

// lane returns the lane of a member, created on first sight; it also learns the member id.
func (b *groupBuild) lane(m *explain.Member) *laneBuild {
	key := m.Lane
	if key == "" {
		key = m.ID
	}
	l := b.lanes[key]
	if l == nil {
		l = &laneBuild{lane: &Lane{Key: key, Color: len(b.lanes)}, index: len(b.g.Lanes), owned: map[itemKey]bool{}}
		b.lanes[key] = l
		b.g.Lanes = append(b.g.Lanes, l.lane)
	}
	l.lane.Name, l.lane.Detail = laneName(l.lane.Name, m), laneDetail(l.lane.Detail, m)
	if m.ID != "" {
		b.memberLane[m.ID] = l
	}
	return l
}

// laneName is how the lane is labelled: the member's name (its client id), and a static
// member's instance id with every name its member ids had ("c3, c3-restarted [static-848]").
func laneName(prev string, m *explain.Member) string {
	name := m.Name
	if name == "" {
		name = m.ClientID
	}
	if name == "" {
		name = m.ID
	}
	if m.InstanceID == nil || *m.InstanceID == "" {
		return name
	}
	suffix := " [" + *m.InstanceID + "]"
	names := strings.TrimSuffix(prev, suffix)
	switch {
	case prev == "":
		return name + suffix
	case slices.Contains(strings.Split(names, ", "), name):
		return prev
	}
	return names + ", " + name + suffix
}

// laneDetail lists the lane's member ids (a static member's lane has one per restart), its
// host, process and protocol.
func laneDetail(prev string, m *explain.Member) string {
	var parts []string
	if prev == "" {
		if m.ClientID != "" {
			parts = append(parts, "client "+m.ClientID)
		}
		if m.Host != "" {
			parts = append(parts, "host "+m.Host)
		}
		if m.InstanceID != nil {
			parts = append(parts, "instance "+*m.InstanceID)
		}
		if m.ProcessID != "" {
			parts = append(parts, "process "+m.ProcessID)
		}
		if m.Protocol != "" {
			parts = append(parts, m.Protocol+" protocol")
		}
		parts = append(parts, "member "+m.ID)
		return strings.Join(parts, ", ")
	}
	if m.ID != "" && !strings.Contains(prev, m.ID) {
		return prev + ", then member " + m.ID
	}
	return prev
}

// reconcileState is the lane state a reconcile step puts a member in.
func reconcileState(r *explain.Reconcile) string {
	switch r.Step {
	case "waiting":
		return "reconciling"
	case "revoking":
		return "revoking"
	}
	if r.State != "" && r.State != "STABLE" {
		if strings.HasPrefix(r.State, "UNREVOKED") {
			return "revoking"
		}
		return "reconciling"
	}
	return "stable"
}

// setState ends the lane's segment at x and opens one in state class (nothing changes when
// the state stays).
func (b *groupBuild) setState(l *laneBuild, x int64, class, text string, s Src) {
	if l.open != nil && l.open.Class == class {
		return
	}
	b.endSegment(l, x)
	l.open = &Span{Start: x, Class: class, Text: l.lane.Name + ": " + stateWords[class] + "\n" + text, Src: s}
}

var stateWords = map[string]string{
	"joined": "joined, no assignment yet", "stable": "stable", "reconciling": "reconciling (waiting for partitions or tasks others own)",
	"revoking": "revoking", "away": "away (static member left temporarily)",
}

// endSegment ends the lane's segment at x; a segment that lasted no time (a member joining
// and reconciling in one batch) is not drawn, the lane's marks tell it.
func (b *groupBuild) endSegment(l *laneBuild, x int64) {
	if l.open == nil {
		return
	}
	if l.open.Start == x {
		l.open = nil
		return
	}
	sp := *l.open
	sp.End = x
	sp.Text = strings.Replace(sp.Text, "\n", fmt.Sprintf(" from %s to %s\n", formatX(b.g.Axis.Unit, sp.Start), formatX(b.g.Axis.Unit, x)), 1)
	l.lane.Segments = append(l.lane.Segments, sp)
	l.open = nil
}

// removeMember ends a member's lane, what it owned and what it was meant to own.
func (b *groupBuild) removeMember(l *laneBuild, x int64) {
	b.endSegment(l, x)
	for k := range l.owned {
		b.endOwner(b.current, k, x, true)
	}
	clear(l.owned)
	for k, o := range b.target {
		if o.lane == l {
			b.endOwner(b.target, k, x, false)
		}
	}
}

// endAll ends every lane and owner: the group was deleted.
func (b *groupBuild) endAll(x int64) {
	for _, l := range b.lanes {
		b.removeMember(l, x)
	}
}

// setOwned makes as what the lane's member owns from x on.
func (b *groupBuild) setOwned(l *laneBuild, as []explain.Assignment, x int64, s Src) {
	now := map[itemKey]bool{}
	for _, a := range as {
		for _, p := range a.Partitions {
			now[assignmentKey(&a, p)] = true
		}
	}
	for k := range l.owned {
		if !now[k] {
			b.endOwner(b.current, k, x, true)
			delete(l.owned, k)
		}
	}
	keys := make([]itemKey, 0, len(now))
	for k := range now {
		if !l.owned[k] {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareItems)
	for _, k := range keys {
		b.startOwner(b.current, k, l, x, s, true)
		l.owned[k] = true
	}
}

// moves applies a target assignment's changes (and, for a classic group, the assignment's:
// classic members own what the leader gave them).
func (b *groupBuild) moves(ms []explain.Move, x int64, s Src, current bool) {
	for i := range ms {
		m := &ms[i]
		for _, p := range m.Partitions {
			k := assignmentKey(&m.Assignment, p)
			b.endOwner(b.target, k, x, false)
			to := b.memberLane[m.To]
			if m.To != "" && to != nil {
				b.startOwner(b.target, k, to, x, s, false)
			}
			if current {
				if from := b.memberLane[m.From]; from != nil {
					delete(from.owned, k)
				}
				b.endOwner(b.current, k, x, true)
				if to != nil {
					b.startOwner(b.current, k, to, x, s, true)
					to.owned[k] = true
				}
			}
		}
	}
}

func assignmentKey(a *explain.Assignment, p int32) itemKey {
	if a.Subtopology != "" || a.Role != "" {
		return itemKey{subtopology: a.Subtopology, role: a.Role, partition: p}
	}
	t := a.Topic
	if t == "" {
		t = a.TopicID
	}
	return itemKey{topic: t, partition: p}
}

func compareItems(a, b itemKey) int {
	return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.subtopology, b.subtopology), cmp.Compare(a.partition, b.partition),
		cmp.Compare(a.role, b.role))
}

func (b *groupBuild) row(k itemKey) *AssignRow {
	r := b.rows[k]
	if r == nil {
		r = &AssignRow{Label: k.label()}
		b.rows[k] = r
	}
	return r
}

func (b *groupBuild) startOwner(m map[itemKey]*openOwner, k itemKey, l *laneBuild, x int64, s Src, current bool) {
	if o := m[k]; o != nil {
		if o.lane == l {
			return
		}
		b.endOwner(m, k, x, current)
	}
	b.row(k)
	m[k] = &openOwner{lane: l, start: x, src: s}
}

func (b *groupBuild) endOwner(m map[itemKey]*openOwner, k itemKey, x int64, current bool) {
	o := m[k]
	if o == nil {
		return
	}
	delete(m, k)
	r := b.row(k)
	ow := Owner{Start: o.start, End: x, Lane: o.lane.index, Src: o.src}
	if current {
		r.Current = append(r.Current, ow)
	} else {
		r.Target = append(r.Target, ow)
	}
}

func (b *groupBuild) rebalanceEnd(e *explain.Event, in bool, x int64, s Src) {
	r := e.Rebalance
	if r == nil {
		return
	}
	g := b.g
	classic := r.Outcome == "completed"
	if classic {
		// A classic group's rebalance is recorded once, when it completes: its generation,
		// its assignment (target and current at once), and members stable from there.
		b.step(x, r.Epoch, s, in)
		b.moves(r.Moves, x, s, true)
		for _, l := range b.lanes {
			if l.open != nil && l.open.Class == "joined" {
				b.setState(l, x, "stable", e.Text, s)
			}
		}
	}
	if !in {
		return
	}
	g.Counts.Rebalances++
	if r.Outcome == "open" || e.HasMark(explain.MarkSlow) {
		g.Counts.Stuck++
	}
	start := b.xOf(r.Start)
	if classic || r.Start.Offset < b.from {
		start = min(start, x)
	}
	start = max(start, g.Axis.Start)
	label := strconv.Itoa(int(r.Epoch))
	g.Rebalances = append(g.Rebalances, Span{Start: start, End: x, Class: r.Outcome, Label: label, Text: explain.SummaryText(e),
		Src: s, Open: r.Outcome == "open"})
}

func (b *groupBuild) point(in bool, topic string, partition int32, p Point) {
	k := seriesKey{topic, partition}
	sr := b.series[k]
	if sr == nil {
		sr = &Series{Topic: topic, Partition: partition}
		b.series[k] = sr
	}
	if !in {
		// Before the window only the value in force matters.
		p.Row = -1
		sr.Points = append(sr.Points[:0], p)
		return
	}
	if p.Flags&PointRewind != 0 {
		sr.Rewinds++
		b.g.Counts.Rewinds++
	}
	sr.Points = append(sr.Points, p)
}

func (b *groupBuild) changes(in bool, cs []explain.OffsetChange, x int64, at explain.Position, flags PointFlag, row int) {
	for _, c := range cs {
		f := flags
		if c.Rewind {
			f |= PointRewind
		}
		b.point(in, c.Topic, c.Partition, Point{X: x, Value: c.Offset, Offset: at.Offset, Time: at.Timestamp, Flags: f, Row: row})
	}
}

func (b *groupBuild) txn(producer int64) *txnBuild {
	t := b.txns[producer]
	if t == nil {
		t = &txnBuild{row: &TxnRow{ProducerID: producer}}
		b.txns[producer] = t
	}
	return t
}

func (b *groupBuild) transactionEnd(e *explain.Event, in bool, x int64, s Src, row int) {
	t := e.Transaction
	if t == nil {
		return
	}
	tb := b.txn(t.ProducerID)
	start := b.xOf(t.Start)
	if tb.open {
		start = tb.start
	}
	tb.open = false
	if e.Kind == explain.KindTransactionEnd && t.Result == "committed" {
		b.changes(in, t.Offsets, x, e.At, PointTransactional, row)
	}
	if !in {
		return
	}
	class := t.Result
	switch {
	case e.Kind == explain.KindTransactionOpen:
		class = "open"
		b.g.Counts.OpenTxns++
	case t.Result == "aborted":
		b.g.Counts.Aborted++
	}
	tb.row.Spans = append(tb.row.Spans, Span{Start: max(start, b.g.Axis.Start), End: x, Class: class, Text: e.Text, Src: s,
		Open: class == "open"})
}

// finish closes what is still open at the end of the group's axis and orders the rows.
func (b *groupBuild) finish() {
	g := b.g
	end := g.Axis.End
	for _, l := range b.g.Lanes {
		lb := b.lanes[l.Key]
		if lb.open != nil {
			sp := *lb.open
			sp.End, sp.Open = end, true
			sp.Text = strings.Replace(sp.Text, "\n", fmt.Sprintf(" from %s to the end\n", formatX(g.Axis.Unit, sp.Start)), 1)
			l.Segments = append(l.Segments, sp)
		}
	}
	closeAll := func(m map[itemKey]*openOwner, current bool) {
		for k, o := range m {
			r := b.row(k)
			ow := Owner{Start: o.start, End: end, Lane: o.lane.index, Src: o.src, Open: true}
			if current {
				r.Current = append(r.Current, ow)
			} else {
				r.Target = append(r.Target, ow)
			}
		}
	}
	closeAll(b.target, false)
	closeAll(b.current, true)
	keys := make([]itemKey, 0, len(b.rows))
	for k, r := range b.rows {
		if len(r.Current)+len(r.Target) > 0 && b.opts.keepItem(k) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareItems)
	for _, k := range keys {
		r := b.rows[k]
		sortOwners(r.Current)
		sortOwners(r.Target)
		g.Assignment = append(g.Assignment, r)
	}
	sks := make([]seriesKey, 0, len(b.series))
	for k, s := range b.series {
		if len(s.Points) > 0 && b.opts.keepItem(itemKey{topic: k.topic, partition: k.partition}) {
			sks = append(sks, k)
		}
	}
	slices.SortFunc(sks, func(a, c seriesKey) int {
		return cmp.Or(cmp.Compare(a.topic, c.topic), cmp.Compare(a.partition, c.partition))
	})
	for _, k := range sks {
		g.Offsets = append(g.Offsets, b.series[k])
	}
	ps := make([]int64, 0, len(b.txns))
	for p, t := range b.txns {
		if len(t.row.Spans) > 0 {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	for _, p := range ps {
		g.Transactions = append(g.Transactions, b.txns[p].row)
	}
	// Lanes drawn: those with something in the window.
	var lanes []*Lane
	for _, l := range g.Lanes {
		if len(l.Segments)+len(l.Marks) > 0 {
			lanes = append(lanes, l)
		}
	}
	if len(lanes) != len(g.Lanes) {
		b.dropLanes(lanes)
	}
}

// dropLanes keeps only lanes (a subset of the group's, in order), renumbering the owners'
// lane indexes.
func (b *groupBuild) dropLanes(lanes []*Lane) {
	g := b.g
	index := map[int]int{}
	for i, l := range g.Lanes {
		if j := slices.Index(lanes, l); j >= 0 {
			index[i] = j
		}
	}
	remap := func(os []Owner) []Owner {
		out := os[:0]
		for _, o := range os {
			if j, ok := index[o.Lane]; ok {
				o.Lane = j
				out = append(out, o)
			}
		}
		return out
	}
	for _, r := range g.Assignment {
		r.Current, r.Target = remap(r.Current), remap(r.Target)
	}
	g.Lanes = lanes
}

func sortOwners(os []Owner) {
	slices.SortStableFunc(os, func(a, b Owner) int { return cmp.Compare(a.Start, b.Start) })
}
