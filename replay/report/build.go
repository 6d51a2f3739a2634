package report

import (
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"path"
	"slices"
	"sync"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
	"github.com/coordlog/coordlog/replay/query"
)

// Options select what a report draws.
type Options struct {
	// Explain sets the analysis' thresholds (slow rebalances, long transactions, session
	// timeout); its Group and Emit are the builder's.
	Explain explain.Options
	// Group draws only this group; Pattern only groups whose id matches this shell pattern
	// (path.Match); Types only groups of these types at the end of the replay (nil: all).
	Group   string
	Pattern string
	Types   map[string]bool
	// Topics and TopicPartitions select the rows of the assignment and offsets charts (topic ->
	// partitions); nil selects all.
	Topics          []string
	TopicPartitions map[string]map[int32]bool
	// From is, per __consumer_offsets partition, the first offset drawn (a --since window):
	// the events before it are analysed, so that the picture starts in the state the group was
	// in, but not drawn. The end of the window is where the replay stops.
	From map[int32]int64
	// MaxGroups is how many group sections are drawn (the groups with the most findings,
	// rebalances and events first; default 50); MaxOverview how many groups the overview
	// lists (default 5000).
	MaxGroups   int
	MaxOverview int
	// MaxRows is how many events of a group are listed under its picture among the
	// important ones (marked events, rebalances, members, conversions, deletions, aborted
	// and open transactions; default 200); MaxRoutineRows among the others (default 50).
	MaxRows        int
	MaxRoutineRows int
	// MaxLanes and MaxItems bound a group's member lanes and its assignment and offsets rows
	// (default 100 and 200).
	MaxLanes int
	MaxItems int
}

func (o *Options) defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxGroups, 50)
	def(&o.MaxOverview, 5000)
	def(&o.MaxRows, 200)
	def(&o.MaxRoutineRows, 50)
	def(&o.MaxLanes, 100)
	def(&o.MaxItems, 200)
}

// keepGroup says whether the group id passes the group and pattern filters.
func (o *Options) keepGroup(id string) bool {
	if o.Group != "" && id != o.Group {
		return false
	}
	if o.Pattern != "" {
		if ok, _ := path.Match(o.Pattern, id); !ok {
			return false
		}
	}
	return true
}

// keepItem says whether a topic-partition (or a task) passes the topic filters.
func (o *Options) keepItem(k itemKey) bool {
	if k.topic == "" || len(o.Topics) == 0 && o.TopicPartitions == nil {
		return true
	}
	if slices.Contains(o.Topics, k.topic) {
		return true
	}
	return o.TopicPartitions[k.topic][k.partition]
}

// Builder draws a report from a replay: give each partition's engine its Observer, replay,
// then call Finish.
type Builder struct {
	opts  Options
	seed  maphash.Seed
	mu    sync.Mutex
	parts []*partBuild
}

// partBuild is one __consumer_offsets partition: its analyzer and the groups' pictures.
type partBuild struct {
	p        int32
	analyzer *explain.Analyzer
	kinds    *recordKinds
	activity *query.Activity
	groups   map[string]*groupBuild
	opts     *Options
}

// Observe implements replay.Observer.
func (pb *partBuild) Observe(ev *replay.Event, st groupstate.View) {
	pb.kinds.note(ev)
	pb.activity.Observe(ev, st)
	pb.analyzer.Observe(ev, st)
}

// NewBuilder returns a builder drawing what opts select.
func NewBuilder(opts Options) *Builder {
	opts.defaults()
	return &Builder{opts: opts, seed: maphash.MakeSeed()}
}

// Observer returns the observer of partition p: the timeline's analyzer, whose events the
// builder draws. Partitions are independent: their engines may run in parallel.
func (b *Builder) Observer(p int32) replay.Observer {
	pb := &partBuild{p: p, groups: map[string]*groupBuild{}, opts: &b.opts}
	eo := b.opts.Explain
	eo.Group, eo.MarkedOnly, eo.Emit = b.opts.Group, false, pb.emit
	pb.analyzer = explain.NewAnalyzer(p, eo)
	pb.kinds = newRecordKinds(b.seed)
	pb.activity = query.NewActivity()
	b.mu.Lock()
	b.parts = append(b.parts, pb)
	b.mu.Unlock()
	return pb
}

func (pb *partBuild) emit(e *explain.Event) {
	if !pb.opts.keepGroup(e.Group) {
		return
	}
	gb := pb.groups[e.Group]
	if gb == nil {
		from := int64(0)
		if f, ok := pb.opts.From[pb.p]; ok {
			from = f
		}
		gb = newGroupBuild(e.Group, pb.p, pb.opts, from)
		pb.groups[e.Group] = gb
	}
	gb.add(e, pb.kinds.describe(e.Group, e.At.Offset, e.At.LastOffset))
}

// Finish closes the analyses (what is still open at the end of the log is an event too) and
// returns the page. states are the partitions' states at the end of the replay, by
// partition: the overview lists their groups (deleted ones too) with their state then.
func (b *Builder) Finish(states map[int32]groupstate.View) *Page {
	slices.SortFunc(b.parts, func(x, y *partBuild) int { return cmp.Compare(x.p, y.p) })
	var parts []query.PartitionState
	for _, pb := range b.parts {
		if v, ok := states[pb.p]; ok {
			parts = append(parts, query.PartitionState{Partition: pb.p, View: v, Activity: pb.activity})
		}
	}
	type key struct {
		id string
		p  int32
	}
	byKey := map[key]*Group{}
	var all []*Group
	for _, pb := range b.parts {
		pb.analyzer.Close()
		ids := make([]string, 0, len(pb.groups))
		for id := range pb.groups {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			gb := pb.groups[id]
			gb.finish()
			b.capGroup(gb.g)
			gb.g.Drawn = gb.started
			byKey[key{id, pb.p}] = gb.g
			all = append(all, gb.g)
		}
	}
	// The state at the end: type, state, members; groups without an event are listed too.
	for _, row := range query.ListGroups(parts, query.GroupFilter{IncludeDeleted: true}) {
		if !b.opts.keepGroup(row.GroupID) {
			continue
		}
		g := byKey[key{row.GroupID, row.Partition}]
		if g == nil {
			g = &Group{ID: row.GroupID, Partition: row.Partition, LastActivity: Src{Time: -1, Row: -1}}
			byKey[key{row.GroupID, row.Partition}] = g
			all = append(all, g)
		}
		g.Type, g.State, g.Members = string(row.Type), row.State, row.Members
		if row.Deleted != nil {
			g.State = "Dead"
		}
		if row.LastRecord != nil && g.LastActivity.Time < 0 {
			g.LastActivity.Partition, g.LastActivity.Offset, g.LastActivity.Time = row.Partition, row.LastRecord.Offset, row.LastRecord.Timestamp
		}
	}
	page := &Page{}
	var kept []*Group
	for _, g := range all {
		if b.opts.Types != nil && !b.opts.Types[g.Type] {
			continue
		}
		if g.State == "" {
			g.State = "-" // the events name a group the state no longer has (offsets only, or past the cut)
		}
		kept = append(kept, g)
	}
	// The overview: groups with findings first, then by rebalances, events and id.
	slices.SortStableFunc(kept, func(x, y *Group) int {
		return cmp.Or(cmp.Compare(b2i(y.Counts.Findings()), b2i(x.Counts.Findings())), cmp.Compare(y.Counts.Rebalances, x.Counts.Rebalances),
			cmp.Compare(y.Counts.Events, x.Counts.Events), cmp.Compare(x.ID, y.ID), cmp.Compare(x.Partition, y.Partition))
	})
	drawn := 0
	for i, g := range kept {
		g.Anchor = fmt.Sprintf("g%d", i+1)
		if g.Drawn && drawn < b.opts.MaxGroups {
			drawn++
			page.Groups = append(page.Groups, g)
		} else {
			g.Drawn = false
		}
	}
	undrawn := 0
	for _, g := range kept {
		if !g.Drawn && g.Counts.Events > 0 {
			undrawn++
		}
	}
	if undrawn > 0 {
		page.Notes = append(page.Notes, fmt.Sprintf("%d group(s) with events in the window are listed but not drawn (at most %d sections, those with findings, rebalances and events first): select them with --group, --pattern or --type", undrawn, b.opts.MaxGroups))
	}
	if len(kept) > b.opts.MaxOverview {
		page.Notes = append(page.Notes, fmt.Sprintf("the overview lists %d of %d groups (those with findings, rebalances and events first)", b.opts.MaxOverview, len(kept)))
		kept = kept[:b.opts.MaxOverview]
	}
	page.Overview = kept
	return page
}

// capGroup bounds a group's lanes and rows, saying so in its notes.
func (b *Builder) capGroup(g *Group) {
	if n := len(g.Lanes); n > b.opts.MaxLanes {
		g.Notes = append(g.Notes, fmt.Sprintf("%d member lanes; the first %d by first appearance are drawn (select a window with --since/--until)", n, b.opts.MaxLanes))
		keep := g.Lanes[:b.opts.MaxLanes]
		for _, r := range g.Assignment {
			r.Current = slices.DeleteFunc(r.Current, func(o Owner) bool { return o.Lane >= b.opts.MaxLanes })
			r.Target = slices.DeleteFunc(r.Target, func(o Owner) bool { return o.Lane >= b.opts.MaxLanes })
		}
		g.Lanes = keep
	}
	if n := len(g.Assignment); n > b.opts.MaxItems {
		g.Notes = append(g.Notes, fmt.Sprintf("%d assigned partitions or tasks; the first %d are drawn (select with --topic or --topic-partition)", n, b.opts.MaxItems))
		g.Assignment = g.Assignment[:b.opts.MaxItems]
	}
	if n := len(g.Offsets); n > b.opts.MaxItems {
		g.Notes = append(g.Notes, fmt.Sprintf("%d committed partitions; the first %d are drawn (select with --topic or --topic-partition)", n, b.opts.MaxItems))
		g.Offsets = g.Offsets[:b.opts.MaxItems]
	}
}

// Build replays every partition of src to its end and returns the report of its groups:
// what `replay report` does, for a Go caller.
func Build(ctx context.Context, src eventlog.Source, ropts replay.Options, opts Options) (*Page, error) {
	parts, err := src.Partitions()
	if err != nil {
		return nil, err
	}
	b := NewBuilder(opts)
	cuts := make([]replay.Cut, len(parts))
	for i, p := range parts {
		cuts[i] = replay.Cut{Partition: p, Until: math.MaxInt64, Observer: b.Observer(p)}
	}
	res, err := replay.ReplayCuts(ctx, src, cuts, ropts, 0)
	if err != nil {
		return nil, err
	}
	states := map[int32]groupstate.View{}
	for _, r := range res {
		states[r.Engine.Partition()] = r.Engine.State()
	}
	return b.Finish(states), nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
