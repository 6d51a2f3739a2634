package audit

import (
	"fmt"
	"strings"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
)

// Finding kinds that come from the explanation of the log (replay/explain): what happened
// to offsets and members that an operator should look at.
const (
	KindOffsetRewind       = "offset-rewind"
	KindOffsetsWhileEmpty  = "offsets-written-while-empty"
	KindCommitWithoutOwner = "commit-without-owner"
	KindOffsetsDeleted     = "offsets-deleted"
	KindMemberFenced       = "member-fenced"
	KindSlowRebalance      = "slow-rebalance"
	KindLongTransaction    = "long-transaction"
	KindMoreFindings       = "more-findings"
)

// maxPerGroupKind is how many findings of one kind one group gets; the rest are counted in
// one more-findings finding (timeline lists them all).
const maxPerGroupKind = 20

// Options configure an Audit.
type Options struct {
	// Explain sets the thresholds of the explanation (slow rebalances, long transactions,
	// offsets retention, session timeout); its Group, MarkedOnly and Emit are the audit's.
	Explain explain.Options
}

// explained runs a partition's explanation and keeps its marked events.
type explained struct {
	partition int32
	an        *explain.Analyzer
	events    []*explain.Event
}

func newExplained(p int32, o explain.Options) *explained {
	x := &explained{partition: p}
	o.Group, o.MarkedOnly = "", true
	o.Emit = func(e *explain.Event) { x.events = append(x.events, e) }
	x.an = explain.NewAnalyzer(p, o)
	return x
}

// observers is both of a partition's observers.
type observers struct {
	batch *batchAudit
	x     *explained
}

func (o observers) Observe(ev *replay.Event, st groupstate.View) {
	o.batch.Observe(ev, st)
	o.x.an.Observe(ev, st)
}

// findings turns the partition's marked events into findings, in log order.
func (x *explained) findings() []Finding {
	x.an.Close()
	var out []Finding
	episodes := map[string]*episode{} // group|emptySince -> its writes while empty
	var order []*episode
	for _, e := range x.events {
		switch {
		case e.HasMark(explain.MarkWhileEmpty) && e.Offsets != nil:
			key := e.Group + "|"
			if s := e.Offsets.Writer.EmptySince; s != nil {
				key += fmt.Sprint(s.Offset)
			}
			ep := episodes[key]
			if ep == nil {
				ep = &episode{first: e}
				episodes[key] = ep
				order = append(order, ep)
			}
			ep.add(e)
		case e.HasMark(explain.MarkRewind):
			out = append(out, x.finding(e, KindOffsetRewind, rewindDetail(e)))
		case e.HasMark(explain.MarkWithoutOwner):
			out = append(out, x.finding(e, KindCommitWithoutOwner, e.Text))
		case e.HasMark(explain.MarkFenced):
			out = append(out, x.finding(e, KindMemberFenced, e.Text))
		case e.HasMark(explain.MarkSlow) && e.Rebalance != nil:
			f := x.finding(e, KindSlowRebalance, explain.SummaryText(e))
			f.Offset, f.Time = e.Rebalance.Start.Offset, e.Rebalance.Start.Timestamp // where it began
			out = append(out, f)
		case e.HasMark(explain.MarkSlow) && e.Transaction != nil:
			out = append(out, x.finding(e, KindLongTransaction, e.Text))
		case e.HasMark(explain.MarkDeleted):
			out = append(out, x.finding(e, KindOffsetsDeleted, e.Text))
		}
	}
	for _, ep := range order {
		f := x.finding(ep.first, KindOffsetsWhileEmpty, ep.detail())
		f.Event = nil
		f.Episode = ep.summary()
		// Who wrote them is one of several, as the first write's event says.
		f.Certainty, f.Evidence, f.Alternatives = ep.first.Certainty, ep.first.Evidence, ep.first.Alternatives
		out = append(out, f)
	}
	return capPerGroupKind(foldFences(out))
}

func (x *explained) finding(e *explain.Event, kind, detail string) Finding {
	return Finding{Partition: x.partition, Offset: e.At.Offset, Kind: kind, Detail: detail, Time: e.At.Timestamp,
		Group: e.Group, Next: e.Next, Event: e}
}

// rewindDetail says what moved back, how many partitions of the group moved with it, and
// who wrote it as far as the log tells.
func rewindDetail(e *explain.Event) string {
	if e.Transaction != nil {
		return e.Text
	}
	o := e.Offsets
	var back []string
	for _, c := range o.Changes {
		if c.Rewind {
			back = append(back, fmt.Sprintf("%s-%d %d -> %d (%d)", c.Topic, c.Partition, *c.Previous, c.Offset, *c.Delta))
		}
	}
	s := strings.Join(back, ", ") + " moved back"
	if o.Committed > 1 {
		s += fmt.Sprintf(" (%d of the %d partitions the commit wrote)", o.Rewound, o.Committed)
	}
	switch o.Writer.Kind {
	case "owner", "owners":
		var who []string
		for _, m := range o.Writer.Members {
			w := m.Name + " (member " + m.ID
			if m.Host != "" {
				w += ", host " + m.Host
			}
			who = append(who, w+")")
		}
		s += ", committed while " + strings.Join(who, ", ") + " owned it"
	case "without-owner":
		s += ", committed while no member of the group owned it"
	default:
		s += ", committed in a group without members (a standalone consumer or an admin tool)"
	}
	return s
}

// episode is a group's offset writes while it had no members.
type episode struct {
	first, last *explain.Event
	commits     int
	rewinds     int
	largest     *explain.OffsetChange
	seq         map[string][]int64 // topic-partition -> the values it took, the one before first
	keys        []string
}

func (ep *episode) add(e *explain.Event) {
	ep.last = e
	if ep.seq == nil {
		ep.seq = map[string][]int64{}
	}
	for i := range e.Offsets.Changes {
		c := &e.Offsets.Changes[i]
		ep.commits++
		k := fmt.Sprintf("%s-%d", c.Topic, c.Partition)
		if _, ok := ep.seq[k]; !ok {
			ep.keys = append(ep.keys, k)
			if c.Previous != nil {
				ep.seq[k] = append(ep.seq[k], *c.Previous)
			}
		}
		ep.seq[k] = append(ep.seq[k], c.Offset)
		if c.Rewind {
			ep.rewinds++
			if ep.largest == nil || *c.Delta < *ep.largest.Delta {
				ep.largest = c
			}
		}
	}
}

// sequence renders the values a partition took: "134 -> 54 -> 4 -> ... -> 5" (at most 12).
func sequence(vs []int64) string {
	var parts []string
	for i, v := range vs {
		if len(vs) > 12 && i == 9 {
			parts = append(parts, "...")
		}
		if len(vs) > 12 && i >= 9 && i < len(vs)-2 {
			continue
		}
		parts = append(parts, fmt.Sprint(v))
	}
	return strings.Join(parts, " -> ")
}

func (ep *episode) detail() string {
	w := ep.first.Offsets.Writer
	s := fmt.Sprintf("%s to %s", plural(ep.commits, "commit", "commits"), plural(len(ep.keys), "partition", "partitions"))
	if ep.last.At.Offset != ep.first.At.Offset {
		s += fmt.Sprintf(" between offset %d and %d (until %s)", ep.first.At.Offset, ep.last.At.LastOffset, ep.last.At.Time().Format("2006-01-02T15:04:05.000Z"))
	}
	s += " while the group had no members"
	if w.EmptySince != nil {
		s += " (since " + w.EmptySince.Time().Format("2006-01-02T15:04:05.000Z") + ")"
	}
	s += ": an admin tool (kafka-consumer-groups --reset-offsets) or a standalone consumer with this group.id wrote them."
	const maxKeys = 6
	for i, k := range ep.keys {
		if i == maxKeys {
			s += fmt.Sprintf(" And %d more partitions.", len(ep.keys)-maxKeys)
			break
		}
		s += " " + k + ": " + sequence(ep.seq[k]) + "."
	}
	if ep.rewinds > 0 {
		c := ep.largest
		s += fmt.Sprintf(" %s back, the largest %s-%d %d -> %d (%d).", plural(ep.rewinds, "move", "moves"), c.Topic, c.Partition, *c.Previous, c.Offset, *c.Delta)
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Episode is a group's offset writes while it had no members (the finding
// offsets-written-while-empty).
type Episode struct {
	Commits    int               `json:"commits"`
	Rewinds    int               `json:"rewinds"`
	FirstAt    explain.Position  `json:"first"`
	LastAt     explain.Position  `json:"last"`
	EmptySince *explain.Position `json:"emptySince"`
	// Values is, per topic-partition, the committed offsets it took (the one before the
	// first write included, when there was one).
	Values map[string][]int64 `json:"values"`
}

func (ep *episode) summary() *Episode {
	return &Episode{Commits: ep.commits, Rewinds: ep.rewinds, FirstAt: ep.first.At, LastAt: ep.last.At,
		EmptySince: ep.first.Offsets.Writer.EmptySince, Values: ep.seq}
}

// capPerGroupKind keeps the first maxPerGroupKind findings of each (group, kind) and counts
// the rest in one more-findings finding.
func capPerGroupKind(fs []Finding) []Finding {
	type gk struct{ group, kind string }
	seen := map[gk]int{}
	last := map[gk]Finding{}
	var out []Finding
	var over []gk
	for _, f := range fs {
		k := gk{f.Group, f.Kind}
		seen[k]++
		if seen[k] <= maxPerGroupKind {
			out = append(out, f)
			continue
		}
		if seen[k] == maxPerGroupKind+1 {
			over = append(over, k)
		}
		last[k] = f
	}
	for _, k := range over {
		l := last[k]
		out = append(out, Finding{Partition: l.Partition, Offset: l.Offset, Time: l.Time, Group: k.group, Kind: KindMoreFindings,
			Detail: fmt.Sprintf("%d more %s findings of this group, the last at offset %d", seen[k]-maxPerGroupKind, k.kind, l.Offset),
			Next:   "`replay timeline INPUT --group " + k.group + " --kind " + markOf(k.kind) + "` lists them all"})
	}
	return out
}

// markOf is the timeline --kind that lists a finding kind's events.
func markOf(kind string) string {
	switch kind {
	case KindOffsetRewind:
		return "rewind"
	case KindCommitWithoutOwner:
		return "without-owner"
	case KindMemberFenced:
		return "fenced"
	case KindSlowRebalance, KindLongTransaction:
		return "slow"
	case KindOffsetsDeleted:
		return "deleted"
	}
	return "while-empty"
}
