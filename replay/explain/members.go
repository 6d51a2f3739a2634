package explain

import (
	"slices"
	"strconv"
	"strings"
)

// ref is how events name member m of g.
func (g *groupModel) ref(m *memberModel) Member {
	r := Member{ID: m.id, ClientID: m.clientID, Host: strings.TrimPrefix(m.host, "/"), InstanceID: m.instanceID,
		ProcessID: m.processID, Protocol: m.protocol, Subscription: m.subscription, Lane: m.id}
	if m.static() {
		r.Lane = "instance " + *m.instanceID
	}
	r.Name = displayName(m)
	if r.Name == "" {
		r.Name = "member " + shortID(m.id, "")
		return r
	}
	for id, o := range g.members {
		if id != m.id && o.clientID == m.clientID && !(m.static() && o.static() && *o.instanceID == *m.instanceID) {
			r.Name += " (" + shortID(m.id, m.clientID) + ")"
			break
		}
	}
	return r
}

// displayName is the member's client id, without the "-consumer" Kafka Streams appends to a
// stream thread's client id.
func displayName(m *memberModel) string {
	if m.protocol == typeStreams {
		return strings.TrimSuffix(m.clientID, "-consumer")
	}
	return m.clientID
}

// shortID is the start of a member id that tells it apart: the start of the UUID a classic
// member id ends with ("<client or instance id>-<uuid>"), else its first characters.
func shortID(id, clientID string) string {
	s := id
	if n := len(id); n > 37 && id[n-37] == '-' && id[n-28] == '-' && id[n-23] == '-' {
		s = id[n-36:]
	} else if clientID != "" && strings.HasPrefix(id, clientID+"-") {
		s = id[len(clientID)+1:]
	}
	if len(s) > 8 {
		s = s[:8]
	}
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// removalCause is a removal as a rebalance's cause: member-fenced, or member-left (with the
// detail "unknown" when the log cannot tell).
func removalCause(r Removal) Cause {
	m := r.Member
	switch {
	case strings.HasPrefix(r.Cause, "fenced"):
		return Cause{Kind: "member-fenced", Member: &m, Detail: r.Cause}
	case r.Cause == "unknown":
		return Cause{Kind: "member-left", Member: &m, Detail: "unknown"}
	}
	return Cause{Kind: "member-left", Member: &m, Detail: r.Cause}
}

func (a *Analyzer) removalEvent(g *groupModel, r Removal, d diagnosis, at Position) {
	kind := KindMemberLeft
	var marks []Mark
	next := ""
	if strings.HasPrefix(r.Cause, "fenced") {
		kind, marks = KindMemberFenced, []Mark{MarkFenced}
		next = fencedNext(g.id, &r)
	}
	if a.opts.MarkedOnly && len(marks) == 0 {
		return
	}
	m := r.Member
	e := &Event{Kind: kind, Group: g.id, GroupType: g.typ, At: at, Member: &m, Removal: &r, Marks: marks, Next: next}
	d.set(e)
	a.emit(e)
}

func (a *Analyzer) joinEvent(g *groupModel, m *memberModel, at Position) {
	if a.opts.MarkedOnly {
		return
	}
	r := g.ref(m)
	a.emit(&Event{Kind: KindMemberJoined, Group: g.id, GroupType: g.typ, At: at, Member: &r})
}

// replacement explains a static member's new member id taking over its instance.
func (a *Analyzer) replacement(f *batchFacts, old, n *memberModel, at Position, rebalance bool) {
	if old.lastSeen.Offset > n.lastSeen.Offset {
		n.lastSeen = old.lastSeen
	}
	if a.opts.MarkedOnly {
		return
	}
	g := f.g
	owned := n.assigned
	if len(owned) == 0 {
		owned = n.target
	}
	pr, nr := g.ref(old), g.ref(n)
	e := &Event{Kind: KindMemberReplaced, Group: g.id, GroupType: g.typ, At: at, Member: &nr,
		Replacement: &Replacement{Previous: pr, Member: nr, Rebalance: rebalance, Owned: owned.assignments(a.names)}}
	diagnosis{certainty: CertaintyProved, evidence: []string{"one batch removes member " + old.id + " of instance " + *n.instanceID +
		" and adds member " + n.id + " with that instance id: what Kafka writes when a static member rejoins, and for nothing else"}}.set(e)
	a.emit(e)
}

// explainBatch turns what a batch did to a group into events.
func (a *Analyzer) explainBatch(f *batchFacts) {
	g := f.g
	deleted := (f.classicTmb || f.modernTmb) && !g.exists
	converted := f.converted != "" && g.exists
	if deleted {
		typ := f.typBefore
		if typ == "" {
			typ = g.typ
		}
		a.groupDeleted(g, *f.tombAt, typ, f.open)
	}
	if converted && f.converted == typeClassic {
		a.conversion(f)
	}
	// Members that went (not carried over, not replaced, not part of a deletion).
	var causes []Cause
	if !deleted {
		for _, id := range f.removedOrder {
			r := f.removed[id]
			if r == nil || g.members[id] != nil {
				continue
			}
			rm, d := a.classifyRemoval(g, r.m, r.at)
			a.removalEvent(g, rm, d, r.at)
			causes = append(causes, removalCause(rm))
		}
	}
	if converted && f.converted != typeClassic {
		a.conversion(f) // a downgrade follows the departure that caused it
	}
	for _, id := range sortedKeys(f.replaced) {
		if n := g.members[id]; n != nil {
			a.replacement(f, f.replaced[id], n, n.joined, false)
		}
	}
	for _, m := range f.joined {
		if g.members[m.id] == nil {
			continue
		}
		a.joinEvent(g, m, m.joined)
		r := g.ref(m)
		causes = append(causes, Cause{Kind: "member-joined", Member: &r})
	}
	for _, u := range f.updates {
		if g.members[u.m.id] == nil {
			continue
		}
		r := g.ref(u.m)
		if !a.opts.MarkedOnly {
			a.emit(&Event{Kind: KindMemberUpdated, Group: g.id, GroupType: g.typ, At: u.m.lastSeen, Member: &r,
				Rebalance: &Rebalance{Causes: []Cause{{Kind: "member-updated", Member: &r, Detail: u.what}}, DurationMs: -1}})
		}
		if strings.Contains(u.what, "subscription") {
			causes = append(causes, Cause{Kind: "subscription-changed", Member: &r, Detail: u.what})
		}
	}
	for _, m := range f.leaves {
		if g.members[m.id] == nil || a.opts.MarkedOnly {
			continue
		}
		r := g.ref(m)
		a.emit(&Event{Kind: KindMemberTemporaryLeave, Group: g.id, GroupType: g.typ, At: *m.awayAt, Member: &r,
			Reconcile: &Reconcile{Member: r, Epoch: -2, State: memberStateName(g.typ, m.state), Step: "away", Owned: m.assigned.assignments(a.names), WaitedMs: -1}})
	}
	if converted && f.converted == typeClassic {
		// The joins of an upgrade's batch after the conversion (the consumer-protocol member
		// that caused it) start the first rebalance of the consumer group.
		causes = slices.DeleteFunc(causes, func(c Cause) bool { return c.Kind == "member-left" || c.Kind == "member-fenced" })
	}
	causes = append(causes, f.causes...)
	if f.epochAt != nil {
		causes = append(causes, g.carry...)
		g.carry = nil
	}
	if len(causes) > 1 {
		causes = slices.DeleteFunc(causes, func(c Cause) bool { return c.Kind == "metadata-changed" })
	}
	if !g.exists || g.typ == typeClassic {
		return // a classic group's generations are explained as their records apply
	}
	a.modernRebalance(f, causes)
	a.reconcile(f)
	switch {
	case len(g.members) > 0:
		g.emptySince = nil
	case g.emptySince == nil:
		p := f.last
		g.emptySince = &p
	}
}

// conversion explains an online upgrade (classic -> consumer) or downgrade (consumer ->
// classic).
func (a *Analyzer) conversion(f *batchFacts) {
	g := f.g
	c := &Conversion{From: f.converted, To: g.typ, Epoch: f.convEpoch}
	for _, m := range f.carried {
		c.Members = append(c.Members, g.ref(m))
	}
	switch {
	case f.converted == typeClassic && len(f.joined) > 0:
		r := g.ref(f.joined[0])
		c.Trigger = &r
	case f.converted != typeClassic:
		for _, id := range f.removedOrder {
			if r := f.removed[id]; r != nil {
				m := g.ref(r.m)
				c.Trigger = &m
				break
			}
		}
	}
	at := *f.tombAt
	if f.converted != typeClassic {
		at = f.first
	}
	if f.open != nil {
		saved := g.open
		g.open = f.open
		a.endRebalance(g, f.converted, "group-converted", at, 0)
		g.open = saved
	}
	if a.opts.MarkedOnly {
		return
	}
	a.emit(&Event{Kind: KindGroupConverted, Group: g.id, GroupType: g.typ, At: at, Conversion: c})
}

// modernRebalance starts a rebalance when the batch bumped the group epoch of a consumer,
// share or streams group, and records the target assignment the batch wrote.
func (a *Analyzer) modernRebalance(f *batchFacts, causes []Cause) {
	g := f.g
	var moves []Move
	targetNow := f.targetMeta
	if targetNow && !a.opts.MarkedOnly {
		// (A marked-only analysis, check's, does without what moved: its findings point to
		// the timeline for that.)
		moves = a.targetMoves(f)
	}
	if f.epochAt != nil && g.hasEpoch && g.epoch != f.epochFrom {
		if g.open != nil {
			a.endRebalance(g, g.typ, "superseded", *f.epochAt, g.epoch)
		}
		if len(causes) == 0 {
			causes = []Cause{{Kind: "unknown", Detail: "the log does not say why (no member change in the batch)"}}
		}
		g.open = &Rebalance{Epoch: g.epoch, PreviousEpoch: f.epochFrom, Causes: causes, Start: *f.epochAt, DurationMs: -1}
		if targetNow && g.targetEpoch == g.open.Epoch {
			g.open.Moves = moves
		}
		r := *g.open
		a.emit(&Event{Kind: KindRebalance, Group: g.id, GroupType: g.typ, At: r.Start, Rebalance: &r})
		return
	}
	if targetNow && g.open != nil && g.targetEpoch == g.open.Epoch {
		g.open.Moves = moves
		if !a.opts.MarkedOnly {
			r := *g.open
			a.emit(&Event{Kind: KindTargetAssignment, Group: g.id, GroupType: g.typ, At: f.first, Rebalance: &r})
		}
	}
}

// targetMoves compares the batch's target assignment with the previous one (an upgrade's
// first: with what the classic members owned), and remembers it for the next.
func (a *Analyzer) targetMoves(f *batchFacts) []Move {
	g := f.g
	owner := g.prevTarget
	if owner == nil {
		owner = map[item]string{}
		if f.converted == typeClassic {
			for _, id := range sortedKeys(f.classicBefore) {
				for _, it := range f.classicBefore[id].assigned {
					owner[it] = id
				}
			}
		}
	}
	after := map[string]items{}
	next := map[item]string{}
	for id, m := range g.members {
		after[id] = m.target
		for _, it := range m.target {
			next[it] = id
		}
	}
	name := func(id string) string {
		if m := g.members[id]; m != nil {
			return g.ref(m).Name
		}
		if n, ok := g.prevNames[id]; ok {
			return n
		}
		return f.nameOf(id)
	}
	moves := a.moves(owner, after, name)
	g.prevTarget = next
	g.prevNames = map[string]string{}
	for id, m := range g.members {
		g.prevNames[id] = g.ref(m).Name
	}
	return moves
}

// reconcile explains the members' steps towards their targets in the batch.
func (a *Analyzer) reconcile(f *batchFacts) {
	g := f.g
	for _, id := range f.currentOrder {
		m := g.members[id]
		before := f.currentBefore[id]
		if m == nil || !m.hasCurrent || m.awayAt != nil {
			continue
		}
		at := m.lastSeen
		step := "stable"
		switch {
		case unreleasedState(g.typ, m.state):
			step = "waiting"
		case unrevokedState(g.typ, m.state):
			step = "revoking"
		}
		waited := int64(-1)
		if m.step != "" && m.step != step && m.stepSince.Timestamp >= 0 && at.Timestamp >= 0 {
			waited = at.Timestamp - m.stepSince.Timestamp
		}
		prevStep := m.step
		if m.step != step {
			m.step, m.stepSince = step, at
		}
		if a.opts.MarkedOnly {
			// Nothing of this is reported: only when each step began matters (a removal's
			// cause), not what the member waits for, which is costly to work out.
			continue
		}
		var its items
		var others []Member
		switch step {
		case "waiting":
			its = a.canonical(m.target).minus(a.canonical(m.assigned))
			seen := map[string]bool{}
			for _, oid := range g.memberIDs() {
				o := g.members[oid]
				if oid == id {
					continue
				}
				held := a.canonical(append(slices.Clone(o.assigned), o.pending...)).intersect(its)
				if len(held) > 0 && !seen[oid] {
					seen[oid] = true
					others = append(others, g.ref(o))
				}
			}
		case "revoking":
			its = a.canonical(m.pending)
			for _, oid := range g.memberIDs() {
				o := g.members[oid]
				if oid != id && len(a.canonical(o.target).intersect(its)) > 0 {
					others = append(others, g.ref(o))
				}
			}
		}
		key := step + "|" + m.assigned.label(nil) + "|" + its.label(nil) + "|" + itoa(int64(m.epoch))
		if key == m.waitKey {
			continue // the same step again: nothing new
		}
		m.waitKey = key
		rec := &Reconcile{Member: g.ref(m), Epoch: m.epoch, State: memberStateName(g.typ, m.state), Step: step,
			Items: its.assignments(a.names), Others: others, WaitedMs: waited, Owned: m.assigned.assignments(a.names)}
		if step == "stable" && before != nil && len(before.pending) > 0 {
			rec.Step = "revoked"
			rec.Items = a.canonical(before.pending).minus(a.canonical(m.pending)).assignments(a.names)
		} else if step == "stable" && prevStep == "waiting" && before != nil {
			rec.Items = a.canonical(m.assigned).minus(a.canonical(before.assigned)).assignments(a.names)
		}
		r := rec.Member
		a.emit(&Event{Kind: KindReconcile, Group: g.id, GroupType: g.typ, At: at, Member: &r, Reconcile: rec})
	}
}

// checkConverged ends g's open rebalance once every member (but those on temporary leave)
// is stable at the rebalance's epoch.
func (a *Analyzer) checkConverged(g *groupModel) {
	r := g.open
	if r == nil || !g.exists || g.typ == typeClassic {
		return
	}
	if g.targetEpoch != r.Epoch || g.epoch != r.Epoch {
		return
	}
	var last Position
	for _, m := range g.members {
		if m.awayAt != nil {
			continue
		}
		if !m.hasCurrent || m.epoch != r.Epoch || !stableState(g.typ, m.state) {
			return
		}
		if m.lastSeen.Offset > last.Offset {
			last = m.lastSeen
		}
	}
	if last.Offset < r.Start.Offset {
		last = r.Start
	}
	a.endRebalance(g, g.typ, "converged", last, 0)
}

// endRebalance closes g's open rebalance, of a group of type typ.
func (a *Analyzer) endRebalance(g *groupModel, typ, outcome string, at Position, supersededBy int32) {
	r := g.open
	g.open = nil
	end := at
	r.End, r.Outcome, r.SupersededBy = &end, outcome, supersededBy
	if r.Start.Timestamp >= 0 && at.Timestamp >= 0 {
		r.DurationMs = at.Timestamp - r.Start.Timestamp
	}
	var marks []Mark
	if r.DurationMs > a.opts.SlowRebalanceMs && outcome != "group-deleted" && outcome != "group-converted" {
		marks = append(marks, MarkSlow)
	}
	// The waits go into the event only: not worked out for an event that is not emitted.
	if outcome != "converged" && (!a.opts.MarkedOnly || len(marks) > 0) {
		r.Waits = a.waits(g)
	}
	next := ""
	if len(marks) > 0 {
		next = slowNext(g.id, r)
	}
	a.emit(&Event{Kind: KindRebalanceEnd, Group: g.id, GroupType: typ, At: at, Rebalance: r, Marks: marks, Next: next})
}

// waits lists the members still waiting for partitions or tasks (or asked to revoke them).
func (a *Analyzer) waits(g *groupModel) []Wait {
	var out []Wait
	for _, id := range g.memberIDs() {
		m := g.members[id]
		if m.awayAt != nil || !m.hasCurrent {
			continue
		}
		switch {
		case unrevokedState(g.typ, m.state) && len(m.pending) > 0:
			w := Wait{Member: g.ref(m), Items: a.canonical(m.pending).assignments(a.names), Since: m.stepSince, Revoking: true}
			out = append(out, w)
		case unreleasedState(g.typ, m.state):
			its := a.canonical(m.target).minus(a.canonical(m.assigned))
			w := Wait{Member: g.ref(m), Items: its.assignments(a.names), Since: m.stepSince}
			for _, oid := range g.memberIDs() {
				o := g.members[oid]
				if oid != id && len(a.canonical(append(slices.Clone(o.assigned), o.pending...)).intersect(its)) > 0 {
					h := g.ref(o)
					w.Holder = &h
					break
				}
			}
			out = append(out, w)
		}
	}
	return out
}
