package explain

import (
	"slices"
	"strings"
)

// removal is a member removed in the batch, as it was before.
type removal struct {
	m  *memberModel
	at Position // its first tombstone
}

// batchFacts is what one batch did to one group, gathered while its steps apply.
type batchFacts struct {
	g          *groupModel
	typBefore  string
	epochFrom  int32 // the epoch a rebalance of this batch starts from
	hadEpoch   bool
	first      Position
	last       Position
	epochAt    *Position // the record that bumped the group epoch
	tombAt     *Position // the first group tombstone
	classicTmb bool
	modernTmb  bool
	// classicBefore are the members of the classic group a tombstone removed (an upgrade
	// carries them over); removed the members whose tombstones the batch holds, by id.
	classicBefore map[string]*memberModel
	removed       map[string]*removal
	removedOrder  []string
	joined        []*memberModel
	carried       []*memberModel          // members a conversion carried over
	replaced      map[string]*memberModel // new member id -> the static member it replaced
	updates       []memberUpdate
	leaves        []*memberModel // temporary leaves (epoch -2)
	convEpoch     int32
	converted     string // the type converted from
	targetMeta    bool
	currentBefore map[string]*memberModel
	currentOrder  []string
	causes        []Cause
	open          *Rebalance // the rebalance a group tombstone interrupted
}

type memberUpdate struct {
	m    *memberModel
	what string
}

// interpret applies a batch's steps of group g to its model and explains them.
func (a *Analyzer) interpret(g *groupModel, steps []step) {
	if len(steps) == 0 {
		return
	}
	f := &batchFacts{g: g, typBefore: g.typ, epochFrom: g.epoch, hadEpoch: g.hasEpoch && g.exists,
		first: steps[0].pos, last: steps[len(steps)-1].pos, removed: map[string]*removal{}, replaced: map[string]*memberModel{}}
	if !f.hadEpoch {
		f.epochFrom = 0
	}
	for i := range steps {
		a.apply(f, &steps[i])
	}
	a.explainBatch(f)
}

// own notes a record the member's own request wrote, unless the batch converts the group
// (an upgrade or downgrade writes every member's records at one member's request).
func (f *batchFacts) own(m *memberModel, at Position) {
	if f.classicTmb || f.modernTmb || f.converted != "" {
		if m.ownSet || m.joined.Offset != at.Offset {
			return
		}
	}
	m.lastOwn, m.ownSet = at, true
}

// remember notes m's removal (once, before its state is cleared).
func (f *batchFacts) remember(m *memberModel, at Position) {
	if m == nil {
		return
	}
	if _, ok := f.removed[m.id]; ok {
		return
	}
	f.removed[m.id] = &removal{m: m.clone(), at: at}
	f.removedOrder = append(f.removedOrder, m.id)
}

func (f *batchFacts) snapshotCurrent(m *memberModel) {
	if f.currentBefore == nil {
		f.currentBefore = map[string]*memberModel{}
	}
	if _, ok := f.currentBefore[m.id]; !ok {
		f.currentBefore[m.id] = m.clone()
		f.currentOrder = append(f.currentOrder, m.id)
	}
}

// become makes g a group of type typ (a value of another type replaces the group, as Kafka's
// replay does), noting an upgrade from a classic group removed earlier in the batch.
func (f *batchFacts) become(typ string) {
	g := f.g
	if g.exists && g.typ == typ {
		return
	}
	if g.exists && g.typ != typ {
		// Kafka replaces a group of another type only through a tombstone; keep what is
		// known and carry on.
		g.reset()
	}
	if f.classicTmb && f.converted == "" && typ != typeClassic {
		f.converted = typeClassic
	}
	g.typ, g.exists = typ, true
	g.ownersDirty = true
}

func (a *Analyzer) apply(f *batchFacts, s *step) {
	if a.applyMemberStep(f, s) {
		return
	}
	g := f.g
	switch s.kind {
	case stClassicTomb, stGroupMetaTomb:
		if f.tombAt == nil {
			p := s.pos
			f.tombAt = &p
		}
		if s.kind == stClassicTomb {
			f.classicTmb = true
			if g.typ == typeClassic {
				f.classicBefore = g.members
			}
		} else {
			f.modernTmb = true
		}
		for _, id := range g.memberIDs() {
			f.remember(g.members[id], s.pos)
		}
		if g.open != nil {
			f.open = g.open // ended by the deletion or the conversion
		}
		typ := g.typ
		g.reset()
		g.typ = typ
	case stClassic:
		a.applyClassic(f, s)
	case stTargetMeta:
		f.become(s.typ)
		g.targetEpoch, f.targetMeta = s.epoch, true
	case stTargetMetaTomb:
	case stGroupMeta:
		f.become(s.typ)
		switch {
		case !g.hasEpoch && f.converted != "":
			// The epoch an upgrade continues with (the classic generation): not a rebalance.
			f.convEpoch, f.epochFrom = s.epoch, s.epoch
		case !g.hasEpoch || s.epoch != g.epoch:
			if f.epochAt == nil {
				p := s.pos
				f.epochAt = &p
			}
		}
		if g.hasEpoch && g.metadataHash != s.hash {
			f.causes = append(f.causes, Cause{Kind: "metadata-changed", Detail: "the subscribed topics' metadata changed (partitions added, or a topic created or deleted)"})
		}
		if s.typ == typeStreams {
			if g.hasEpoch && s.valid != g.validated && s.valid >= 0 {
				f.causes = append(f.causes, Cause{Kind: "topology-validated", Detail: "topology epoch " + itoa(int64(s.valid)) + " validated (its internal topics exist)"})
			}
			if g.hasEpoch && s.configs != g.configs {
				f.causes = append(f.causes, Cause{Kind: "assignment-configs-changed", Detail: "assignment configs " + orNone(g.configs) + " -> " + orNone(s.configs)})
			}
			g.validated, g.configs = s.valid, s.configs
		}
		g.epoch, g.hasEpoch, g.metadataHash = s.epoch, true, s.hash
	case stTopology:
		f.become(typeStreams)
		if g.topology != nil && g.topologyEp != s.epoch {
			f.causes = append(f.causes, Cause{Kind: "topology-changed", Detail: "topology epoch " + itoa(int64(g.topologyEp)) + " -> " + itoa(int64(s.epoch))})
		}
		g.topology, g.topologyEp = s.topology, s.epoch
		g.ownersDirty = true
	case stRegex:
		if g.regexes == nil {
			g.regexes = map[string]string{}
		}
		if old, ok := g.regexes[s.regex]; !ok || old != s.resolved {
			f.causes = append(f.causes, Cause{Kind: "regex-resolved", Detail: "regex /" + s.regex + "/ now matches " + orNone(s.resolved)})
		}
		g.regexes[s.regex] = s.resolved
	case stRegexTomb:
		delete(g.regexes, s.regex)
	case stShareState:
		f.become(typeShare)
		if added := s.items.minus(g.shareReady); len(added) > 0 {
			// Share partitions are assigned once the share coordinator initialized them:
			// the next rebalance is for them.
			g.carry = append(g.carry, Cause{Kind: "share-partitions-initialized", Detail: "share partitions " + added.label(nil) + " initialized"})
		}
		g.shareReady = s.items
	}
}

// applyMemberStep applies a member's record (metadata, target, current assignment) or its
// tombstone; false for the others.
func (a *Analyzer) applyMemberStep(f *batchFacts, s *step) bool {
	g := f.g
	switch s.kind {
	case stMemberMeta:
		f.become(s.typ)
		a.applyMemberMeta(f, s)
	case stMemberMetaTomb:
		if m := g.members[s.member]; m != nil {
			f.remember(m, s.pos)
			delete(g.members, s.member)
			g.ownersDirty = true
		}
	case stTarget:
		f.become(s.typ)
		if m := g.members[s.member]; m != nil {
			m.target = s.items
		} else {
			// A target for a member whose metadata is not (yet) in the log.
			m := &memberModel{id: s.member, protocol: s.typ, sessionTimeoutMs: -1, rebalanceTimeoutMs: -1, target: s.items, joined: s.pos, lastSeen: s.pos}
			g.members[s.member] = m
		}
	case stTargetTomb:
		if m := g.members[s.member]; m != nil {
			f.remember(m, s.pos)
			m.target = nil
		}
	case stCurrent:
		f.become(s.typ)
		m := g.members[s.member]
		if m == nil {
			m = &memberModel{id: s.member, protocol: s.typ, sessionTimeoutMs: -1, rebalanceTimeoutMs: -1, joined: s.pos}
			g.members[s.member] = m
		}
		f.snapshotCurrent(m)
		m.hasCurrent, m.epoch, m.prevEpoch, m.state = true, s.epoch, s.prev, s.state
		m.assigned, m.pending = s.items, s.pending
		m.lastSeen = s.pos
		ownBefore, hadOwn := m.lastOwn, m.ownSet
		f.own(m, s.pos)
		m.revoking = unrevokedState(s.typ, s.state)
		if m.revoking {
			m.revokingAt = s.pos
		}
		if s.epoch == -2 {
			if m.awayAt == nil {
				p := s.pos
				m.awayAt = &p
				// The leave does not restart the session timer: it runs from the member's
				// last heartbeat, no earlier than its own record before this one.
				m.awayFrom = p
				if hadOwn {
					m.awayFrom = ownBefore
				}
				f.leaves = append(f.leaves, m)
			}
		} else {
			m.awayAt = nil
		}
		g.ownersDirty = true
	case stCurrentTomb:
		if m := g.members[s.member]; m != nil {
			f.remember(m, s.pos)
			m.hasCurrent, m.assigned, m.pending = false, nil, nil
			g.ownersDirty = true
		}
	default:
		return false
	}
	return true
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (a *Analyzer) applyMemberMeta(f *batchFacts, s *step) {
	g := f.g
	nm := s.meta
	m := g.members[nm.id]
	if m != nil && m.clientID == "" && m.protocol != "" && !m.hasCurrent {
		m = nil // a placeholder from a target record: this is its join
		delete(g.members, nm.id)
	}
	if m != nil {
		var what []string
		if m.subscription != nm.subscription {
			what = append(what, "subscription "+orNone(m.subscription)+" -> "+orNone(nm.subscription))
		}
		if m.clientID != nm.clientID {
			what = append(what, "client id "+m.clientID+" -> "+nm.clientID)
		}
		if m.host != nm.host {
			what = append(what, "host "+m.host+" -> "+nm.host)
		}
		if m.protocol != nm.protocol {
			what = append(what, "protocol "+m.protocol+" -> "+nm.protocol)
		}
		m.clientID, m.host, m.instanceID, m.processID, m.protocol = nm.clientID, nm.host, nm.instanceID, nm.processID, nm.protocol
		m.subscription, m.rebalanceTimeoutMs, m.sessionTimeoutMs = nm.subscription, nm.rebalanceTimeoutMs, nm.sessionTimeoutMs
		m.lastSeen = s.pos
		f.own(m, s.pos)
		if len(what) > 0 {
			if _, joinedHere := f.replaced[m.id]; !joinedHere && !slices.Contains(f.joined, m) {
				f.updates = append(f.updates, memberUpdate{m, strings.Join(what, ", ")})
			}
		}
		return
	}
	m = nm
	m.joined, m.lastSeen = s.pos, s.pos
	f.own(m, s.pos)
	if old := g.members[m.id]; old != nil {
		m.target = old.target
	}
	g.members[m.id] = m
	g.ownersDirty = true
	switch {
	case f.classicBefore != nil && f.classicBefore[m.id] != nil:
		// Carried over by an upgrade: the classic member continues in the consumer group.
		old := f.classicBefore[m.id]
		m.joined, m.lastSeen = old.joined, s.pos
		m.lastOwn, m.ownSet = old.lastOwn, old.ownSet // the upgrade is the joining member's request
		f.carried = append(f.carried, m)
		delete(f.removed, m.id)
	case m.static():
		for _, id := range f.removedOrder {
			r := f.removed[id]
			if r != nil && r.m.static() && *r.m.instanceID == *m.instanceID {
				f.replaced[m.id] = r.m
				delete(f.removed, id)
				return
			}
		}
		f.joined = append(f.joined, m)
	default:
		f.joined = append(f.joined, m)
	}
}

// applyClassic applies a GroupMetadata value: a classic group's new generation, its creation,
// a static member's replacement, or the end of a downgrade.
func (a *Analyzer) applyClassic(f *batchFacts, s *step) {
	g := f.g
	cs := s.classic
	downgrade := f.modernTmb && f.typBefore != typeClassic && f.typBefore != ""
	prev := g.members
	prevGen, hadGen := g.epoch, g.exists && g.typ == typeClassic && g.hasEpoch
	if !(g.exists && g.typ == typeClassic) {
		prev = nil
	}
	// Members the new generation keeps keep what the log showed of them; a new generation is
	// every member's own record (each rejoined for it), the same generation only the
	// members' it adds.
	sameGen := g.exists && g.typ == typeClassic && g.hasEpoch && cs.generation == g.epoch
	for id, m := range cs.members {
		if old := prev[id]; old != nil {
			m.joined, m.lastSeen = old.joined, old.lastSeen
			if sameGen {
				m.lastOwn, m.ownSet = old.lastOwn, old.ownSet
			}
		}
		if r := f.removed[id]; downgrade && r != nil {
			m.joined = r.m.joined
		}
		if s.pos.Timestamp > m.lastSeen.Timestamp {
			m.lastSeen = s.pos
		}
	}
	g.typ, g.exists, g.protocolType = typeClassic, true, cs.protocolType
	g.members = cs.members
	g.epoch, g.hasEpoch = cs.generation, true
	g.ownersDirty = true
	if len(cs.members) == 0 && cs.protocolType != "" && (g.emptySince == nil || len(prev) > 0) {
		p := s.pos
		g.emptySince = &p
	} else if len(cs.members) > 0 {
		g.emptySince = nil
	}
	if downgrade {
		g.afterDowngrade = true
		f.converted = f.typBefore
		f.convEpoch = cs.generation
		for _, id := range sortedKeys(cs.members) {
			f.carried = append(f.carried, cs.members[id])
			delete(f.removed, id)
		}
		return
	}
	if prev == nil && (len(cs.members) == 0 || cs.generation > 1) {
		// A new group, or the first record of a group whose earlier records this log does
		// not hold (compacted away, or before its start).
		if !a.opts.MarkedOnly {
			a.emit(&Event{Kind: KindGroupCreated, Group: g.id, GroupType: typeClassic, At: s.pos,
				Rebalance: &Rebalance{Epoch: cs.generation, DurationMs: -1}})
		}
		return
	}
	causes := a.classicMembership(f, g, cs, prev, s.pos, hadGen && cs.generation != prevGen)
	if hadGen && cs.generation == prevGen {
		return // the same generation: a replacement or a rewrite, no rebalance
	}
	a.classicGeneration(g, cs, prev, causes, s.pos, hadGen, prevGen)
}

// classicMembership explains who a classic group's new record adds, removes or replaces
// (rebalance: the generation changed), and returns them as the rebalance's causes.
func (a *Analyzer) classicMembership(f *batchFacts, g *groupModel, cs *classicStep, prev map[string]*memberModel, at Position, rebalance bool) []Cause {
	// Who joined, who went, who was replaced by a new member id of the same instance.
	var joined, gone []*memberModel
	for _, id := range sortedKeys(cs.members) {
		if prev[id] == nil {
			joined = append(joined, cs.members[id])
		}
	}
	for _, id := range sortedKeys(prev) {
		if cs.members[id] == nil {
			gone = append(gone, prev[id])
		}
	}
	var causes []Cause
	for _, n := range joined {
		if n.static() {
			if i := slices.IndexFunc(gone, func(o *memberModel) bool { return o.static() && *o.instanceID == *n.instanceID }); i >= 0 {
				old := gone[i]
				gone = slices.Delete(gone, i, i+1)
				n.joined = at
				a.replacement(f, old, n, at, rebalance)
				if rebalance {
					causes = append(causes, Cause{Kind: "member-replaced", Member: memberPtr(g.ref(n)), Detail: "static member " + *n.instanceID + " restarted"})
				}
				continue
			}
		}
		causes = append(causes, Cause{Kind: "member-joined", Member: memberPtr(g.ref(n))})
		a.joinEvent(g, n, at)
	}
	for _, o := range gone {
		rm, d := a.classifyRemoval(g, o, at)
		causes = append(causes, removalCause(rm))
		a.removalEvent(g, rm, d, at)
	}
	return causes
}

// classicGeneration explains a classic group's new generation: its causes and what the
// assignment moved, as one completed rebalance.
func (a *Analyzer) classicGeneration(g *groupModel, cs *classicStep, prev map[string]*memberModel, causes []Cause, at Position, hadGen bool, prevGen int32) {
	owner := map[item]string{}
	for _, id := range sortedKeys(prev) {
		for _, it := range prev[id].assigned {
			owner[it] = id
		}
	}
	after := map[string]items{}
	var assigned items
	for id, m := range cs.members {
		after[id] = m.assigned
		assigned = append(assigned, m.assigned...)
	}
	assigned = assigned.normalize()
	var given items // what no member owns any more
	for it := range owner {
		if !assigned.contains(it) {
			given = append(given, it)
		}
	}
	switch {
	case len(causes) > 0:
	case g.afterDowngrade:
		causes = append(causes, Cause{Kind: "group-converted", Detail: "the rebalance that follows the conversion back to a classic group"})
	case len(g.revoked) > 0 && len(g.revoked.minus(assigned)) == 0:
		causes = append(causes, Cause{Kind: "cooperative-second-round", Detail: "the second round of a cooperative rebalance: what generation " +
			itoa(int64(prevGen)) + " took away is assigned"})
	default:
		causes = append(causes, Cause{Kind: "rejoin", Detail: "the members rejoined with no member joining or leaving (a subscription or " +
			"metadata change, or a rebalance asked for by the leader or an admin)"})
	}
	g.afterDowngrade = false
	g.revoked = given.normalize()
	name := func(id string) string {
		if m := cs.members[id]; m != nil {
			return g.ref(m).Name
		}
		if m := prev[id]; m != nil {
			return g.ref(m).Name
		}
		return "member " + shortID(id, "")
	}
	r := &Rebalance{Epoch: cs.generation, PreviousEpoch: prevGen, Causes: causes, Moves: a.moves(owner, after, name),
		Start: at, DurationMs: -1, Outcome: "completed"}
	if !hadGen {
		r.PreviousEpoch = 0
	}
	end := at
	r.End = &end
	a.emit(&Event{Kind: KindRebalanceEnd, Group: g.id, GroupType: typeClassic, At: at, Rebalance: r})
}

func memberPtr(m Member) *Member { return &m }

// nameOf names member id as the batch knows it: a member, one the batch removed, or one of
// the classic group an upgrade replaced.
func (f *batchFacts) nameOf(id string) string {
	g := f.g
	if m := g.members[id]; m != nil {
		return g.ref(m).Name
	}
	if r := f.removed[id]; r != nil {
		return g.ref(r.m).Name
	}
	if m := f.classicBefore[id]; m != nil {
		return g.ref(m).Name
	}
	return "member " + shortID(id, "")
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// canonical names topic-id items by topic name where the name is known, so that assignments
// given by id (consumer groups) and by name (classic groups) compare.
func (a *Analyzer) canonical(s items) items {
	var out items
	changed := false
	for _, it := range s {
		if it.space == spaceTopicID {
			if n := a.names[it.name]; n != "" {
				it = item{space: spaceTopic, name: n, part: it.part}
				changed = true
			}
		}
		out = append(out, it)
	}
	if changed {
		return out.normalize()
	}
	return out
}

// moves is what changed owner between owner (item -> member id, before) and after (member id
// -> items), grouped by (from, to).
func (a *Analyzer) moves(owner map[item]string, after map[string]items, name func(id string) string) []Move {
	canonOwner := map[item]string{}
	for it, id := range owner {
		for _, c := range a.canonical(items{it}) {
			canonOwner[c] = id
		}
	}
	type pair struct{ from, to string }
	byPair := map[pair]items{}
	newOwner := map[item]string{}
	for _, id := range sortedKeys(after) {
		for _, it := range a.canonical(after[id]) {
			newOwner[it] = id
			if from := canonOwner[it]; from != id {
				byPair[pair{from, id}] = append(byPair[pair{from, id}], it)
			}
		}
	}
	for it, from := range canonOwner {
		if _, ok := newOwner[it]; !ok {
			byPair[pair{from, ""}] = append(byPair[pair{from, ""}], it)
		}
	}
	pairs := make([]pair, 0, len(byPair))
	for p := range byPair {
		pairs = append(pairs, p)
	}
	slices.SortFunc(pairs, func(x, y pair) int {
		if c := strings.Compare(x.from, y.from); c != 0 {
			return c
		}
		return strings.Compare(x.to, y.to)
	})
	var out []Move
	for _, p := range pairs {
		for _, as := range byPair[p].normalize().assignments(a.names) {
			mv := Move{Assignment: as, From: p.from, To: p.to}
			if p.from != "" {
				mv.FromName = name(p.from)
			}
			if p.to != "" {
				mv.ToName = name(p.to)
			}
			out = append(out, mv)
		}
	}
	return out
}
