package explain

import (
	"slices"

	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// commitAcc gathers a batch's plain offset commits of one group.
type commitAcc struct {
	first, last  Position
	changes      []OffsetChange
	n            int
	rewound      int
	withoutOwner int
	owners       []string
	whileEmpty   bool
	simple       bool
}

// tombAcc gathers a batch's offset tombstones of one group.
type tombAcc struct {
	first   Position
	changes []OffsetChange
	ages    []int64 // per change: its age as expiry measures it (-1 unknown)
}

// txnAcc gathers a batch's transactional offset writes of one group.
type txnAcc struct {
	first   Position
	pid     int64
	changes []OffsetChange
}

type txnWrite struct {
	key   offKey
	topic string
	part  int32
	off   int64
	pos   Position
}

type txnGroup struct {
	start  Position
	writes []txnWrite
}

type txnState struct {
	groups map[*groupModel]*txnGroup
	order  []*groupModel
}

func ptr(v int64) *int64 { return &v }

// change describes an offset moving from prev (had: there was one) to off.
func change(topic string, part int32, prev offState, had bool, off int64, meta string) OffsetChange {
	c := OffsetChange{Topic: topic, Partition: part, Offset: off, Metadata: meta}
	if had {
		c.Previous, c.Delta = ptr(prev.offset), ptr(off-prev.offset)
		c.Rewind = off < prev.offset
	}
	return c
}

// commit applies a plain (non-transactional) offset commit of group g; topicID is the
// record's topic id (zero when it has none).
func (a *Analyzer) commit(g *groupModel, topic string, topicID recordcodec.UUID, part int32, off int64, meta string, pos Position) {
	k := offKey{g.topic(topic), part}
	prev, had := g.offsets.get(k)
	rewind := had && off < prev.offset
	st := offState{offset: off, ts: pos.Timestamp, rec: pos.Offset, owner: -1}
	var owner *memberModel
	if len(g.members) > 0 {
		if had && prev.ownersGen == g.ownersGen && !g.ownersDirty {
			st.owner = prev.owner // the owners have not changed since the last commit
		} else {
			idIdx := int64(-1)
			if topicID != (recordcodec.UUID{}) {
				idIdx = g.topicIndex(a.idString(topicID))
			}
			st.owner = g.owner(a.names, k.topic, idIdx, part)
		}
		st.ownersGen = g.ownersGen
		if st.owner >= 0 {
			owner = g.ownerList[st.owner]
			if pos.Offset > owner.lastSeen.Offset {
				owner.lastSeen = pos
			}
		}
	}
	g.offsets.put(k, st)
	acc := g.commits
	if acc == nil {
		acc = a.newCommitAcc(pos, g.simple())
		g.commits = acc
		a.touch(g)
	}
	acc.last = pos
	acc.n++
	whileEmpty := len(g.members) == 0 && !acc.simple
	withoutOwner := len(g.members) > 0 && owner == nil
	if whileEmpty {
		acc.whileEmpty = true
	}
	if withoutOwner {
		acc.withoutOwner++
	}
	if owner != nil && (len(acc.owners) == 0 || acc.owners[len(acc.owners)-1] != owner.id) && !slices.Contains(acc.owners, owner.id) {
		acc.owners = append(acc.owners, owner.id)
	}
	if rewind {
		acc.rewound++
	}
	if !a.opts.MarkedOnly || rewind || whileEmpty || withoutOwner {
		acc.changes = append(acc.changes, change(g.topicNames[k.topic], part, prev, had, off, cloneMeta(meta)))
	}
}

func cloneMeta(s string) string {
	if s == "" {
		return ""
	}
	return string([]byte(s))
}

// newCommitAcc returns an empty accumulator, reusing a spent one.
func (a *Analyzer) newCommitAcc(first Position, simple bool) *commitAcc {
	n := len(a.spentAccs)
	if n == 0 {
		return &commitAcc{first: first, simple: simple}
	}
	acc := a.spentAccs[n-1]
	a.spentAccs = a.spentAccs[:n-1]
	*acc = commitAcc{first: first, simple: simple, owners: acc.owners[:0]}
	return acc
}

// finishCommits turns the batch's commits into one event per group.
func (a *Analyzer) finishCommits() {
	for _, g := range a.touched {
		acc := g.commits
		if acc == nil {
			continue
		}
		g.commits = nil
		if a.opts.MarkedOnly && !acc.whileEmpty && acc.withoutOwner == 0 && acc.rewound == 0 {
			a.spentAccs = append(a.spentAccs, acc) // nothing to tell: no event built
			continue
		}
		w := Writer{Members: []Member{}}
		var marks []Mark
		switch {
		case acc.whileEmpty:
			w.Kind = "empty-group"
			w.EmptySince = g.emptySince
			marks = append(marks, MarkWhileEmpty)
		case acc.simple || len(acc.owners) == 0 && acc.withoutOwner == 0:
			w.Kind = "no-group-members"
		case acc.withoutOwner == acc.n:
			w.Kind = "without-owner"
		case len(acc.owners) == 1:
			w.Kind = "owner"
		default:
			w.Kind = "owners"
		}
		for _, id := range acc.owners {
			if m := g.members[id]; m != nil {
				w.Members = append(w.Members, g.ref(m))
			}
		}
		if acc.withoutOwner > 0 {
			marks = append(marks, MarkWithoutOwner)
		}
		if acc.rewound > 0 {
			marks = append([]Mark{MarkRewind}, marks...)
		}
		at := acc.first
		at.LastOffset = acc.last.Offset
		e := &Event{Kind: KindOffsetsCommitted, Group: g.id, GroupType: g.typ, At: at, Marks: marks,
			Offsets: &Offsets{Writer: w, Changes: acc.changes, Committed: acc.n, Rewound: acc.rewound}}
		if len(marks) > 0 {
			e.Next = offsetsNext(g.id, e)
		}
		writerDiagnosis(w.Kind).set(e)
		a.emit(e)
	}
}

// writerDiagnosis is how sure the log is of who wrote offsets: an OffsetCommit record names
// no writer, so a write while the group was empty, or by no owner, is one of several.
func writerDiagnosis(kind string) diagnosis {
	switch kind {
	case "empty-group":
		return diagnosis{certainty: CertaintyOneOfSeveral,
			evidence: []string{"the group had no members when they were written, and an OffsetCommit record names no writer"},
			alternatives: []Alternative{
				{Cause: "admin-tool", Settle: "the broker's request log (the OffsetCommit's client id: adminclient-N for the Admin API and kafka-consumer-groups)"},
				{Cause: "standalone-consumer", Settle: "the broker's request log (the OffsetCommit's client id), or which application uses this group.id with assign()"}}}
	case "without-owner":
		return diagnosis{certainty: CertaintyOneOfSeveral,
			evidence: []string{"no member of the group owned the partitions when they were written, and an OffsetCommit record names no writer"},
			alternatives: []Alternative{
				{Cause: "stale-member", Settle: "the client's log (a commit after its partitions were revoked)"},
				{Cause: "standalone-consumer", Settle: "the broker's request log (the OffsetCommit's client id)"}}}
	}
	return diagnosis{}
}

// offsetTombstone notes the deletion of a committed offset of g.
func (a *Analyzer) offsetTombstone(g *groupModel, topic string, part int32, pos Position) {
	k := offKey{g.topic(topic), part}
	prev, had := g.offsets.get(k)
	if had {
		g.offsets.del(k)
	}
	acc := g.tombs
	if acc == nil {
		acc = &tombAcc{first: pos}
		g.tombs = acc
		a.touch(g)
	}
	c := OffsetChange{Topic: g.topicNames[k.topic], Partition: part, CommittedAt: -1}
	age := int64(-1)
	if had {
		c.Offset, c.Previous, c.CommittedAt = prev.offset, ptr(prev.offset), prev.ts
		base := prev.ts
		if g.typ == typeClassic && g.protocolType != "" && g.emptySince != nil && g.emptySince.Timestamp > base {
			// KIP-211: a classic group's offsets expire once it has been empty that long
			// (ClassicGroup.offsetExpirationCondition); other groups' count from the commit.
			base = g.emptySince.Timestamp
		}
		if base >= 0 && pos.Timestamp >= 0 {
			age = pos.Timestamp - base
		}
	}
	acc.changes = append(acc.changes, c)
	acc.ages = append(acc.ages, age)
}

type groupTomb struct {
	at  Position
	typ string
}

// groupDeleted notes that the batch deleted g (the event goes out with the batch's offset
// tombstones).
func (a *Analyzer) groupDeleted(g *groupModel, at Position, typ string, open *Rebalance) {
	if open != nil {
		g.open = open
		a.endRebalance(g, typ, "group-deleted", at, 0)
	}
	if g.tombs == nil {
		g.tombs = &tombAcc{first: at}
	}
	g.deleted = &groupTomb{at, typ}
	g.emptySince = nil
	g.typ = ""
}

// finishTombstones explains the batch's deletions, telling their causes apart as far as the
// batch and the partition's state allow (deletions.go).
func (a *Analyzer) finishTombstones() {
	var dels []delGroup
	at := int64(-1)
	for _, g := range a.touched {
		acc := g.tombs
		if acc == nil {
			continue
		}
		g.tombs = nil
		gt, deleted := g.deleted, g.deleted != nil
		g.deleted = nil
		d := &Deletion{Offsets: acc.changes, GroupDeleted: deleted, YoungestAgeMs: -1}
		for _, age := range acc.ages {
			if age >= 0 && (d.YoungestAgeMs < 0 || age < d.YoungestAgeMs) {
				d.YoungestAgeMs = age
			}
		}
		if acc.first.Timestamp >= 0 {
			at = acc.first.Timestamp
		}
		x := delGroup{g: g, d: d, acc: acc, deleted: deleted}
		if deleted {
			x.typ, x.tombAt = gt.typ, gt.at
		} else {
			x.typ = g.typ
		}
		dels = append(dels, x)
	}
	if len(dels) == 0 {
		return
	}
	withOffsets := 0
	for _, x := range dels {
		if len(x.d.Offsets) > 0 {
			withOffsets++
		}
	}
	diags := a.diagnoseDeletions(dels, withOffsets, at)
	for i, x := range dels {
		d := x.d
		if len(d.Offsets) > 0 {
			d.OtherGroups = withOffsets - 1
		}
		kind, at := KindOffsetsDeleted, x.acc.first
		if x.deleted {
			kind = KindGroupDeleted
			if len(d.Offsets) == 0 {
				at = x.tombAt
			}
		}
		e := &Event{Kind: kind, Group: x.g.id, GroupType: x.typ, At: at, Deletion: d}
		diags[i].set(e)
		if len(d.Offsets) > 0 {
			// Committed offsets are gone: worth a look (a group deleted without offsets
			// loses nothing a consumer resumes from).
			e.Marks, e.Next = []Mark{MarkDeleted}, deletionNext(x.g.id, d, at)
		}
		a.emit(e)
	}
}

// txnWrite notes a transactional offset commit of g (pending until the producer's marker).
func (a *Analyzer) txnWrite(g *groupModel, topic string, part int32, off int64, pos Position) {
	pid := pos.ProducerID
	t := a.txns[pid]
	if t == nil {
		t = &txnState{groups: map[*groupModel]*txnGroup{}}
		a.txns[pid] = t
	}
	tg := t.groups[g]
	if tg == nil {
		tg = &txnGroup{start: pos}
		t.groups[g] = tg
		t.order = append(t.order, g)
	}
	k := offKey{g.topic(topic), part}
	topic = g.topicNames[k.topic]
	if len(g.members) > 0 {
		// The producer writes for a task or partition a member owns (Kafka Streams, a
		// consumer-producer loop): a sign of that member's life.
		if i := g.owner(a.names, k.topic, -1, part); i >= 0 {
			if m := g.ownerList[i]; pos.Offset > m.lastSeen.Offset {
				m.lastSeen = pos
			}
		}
	}
	w := txnWrite{key: k, topic: topic, part: part, off: off, pos: pos}
	if i := slices.IndexFunc(tg.writes, func(x txnWrite) bool { return x.topic == topic && x.part == part }); i >= 0 {
		tg.writes[i] = w
	} else {
		tg.writes = append(tg.writes, w)
	}
	if a.opts.MarkedOnly {
		return
	}
	acc := g.txnWrites
	if acc == nil {
		acc = &txnAcc{first: pos, pid: pid}
		g.txnWrites = acc
		a.touch(g)
	}
	prev, had := g.offsets.get(k)
	acc.changes = append(acc.changes, change(topic, part, prev, had, off, ""))
}

func (a *Analyzer) finishTxnWrites() {
	for _, g := range a.touched {
		acc := g.txnWrites
		if acc == nil {
			continue
		}
		g.txnWrites = nil
		tg := a.txns[acc.pid].groups[g]
		a.emit(&Event{Kind: KindTransactionOffsets, Group: g.id, GroupType: g.typ, At: acc.first,
			Transaction: &Transaction{ProducerID: acc.pid, Start: tg.start, Result: "pending", DurationMs: -1, Offsets: acc.changes}})
	}
}

// marker ends a transaction: its offsets of the tracked groups become committed (unless a
// newer record already set them, as Kafka applies them) or are dropped.
func (a *Analyzer) marker(m *replay.Marker, pos Position) {
	t := a.txns[m.ProducerID]
	if t == nil {
		return
	}
	delete(a.txns, m.ProducerID)
	for _, g := range t.order {
		tg := t.groups[g]
		tr := &Transaction{ProducerID: m.ProducerID, Start: tg.start, Result: "aborted", DurationMs: -1}
		if tg.start.Timestamp >= 0 && pos.Timestamp >= 0 {
			tr.DurationMs = pos.Timestamp - tg.start.Timestamp
		}
		rewound := 0
		for _, w := range tg.writes {
			k := w.key
			prev, had := g.offsets.get(k)
			c := change(w.topic, w.part, prev, had, w.off, "")
			if m.Commit && (!had || prev.rec < w.pos.Offset) {
				g.offsets.put(k, offState{offset: w.off, ts: w.pos.Timestamp, rec: w.pos.Offset, owner: -1})
				if c.Rewind {
					rewound++
				}
			} else {
				c.Rewind = false
			}
			tr.Offsets = append(tr.Offsets, c)
		}
		if m.Commit {
			tr.Result = "committed"
		}
		var marks []Mark
		if rewound > 0 {
			marks = append(marks, MarkRewind)
		}
		if tr.DurationMs > a.opts.LongTransactionMs {
			marks = append(marks, MarkSlow)
		}
		e := &Event{Kind: KindTransactionEnd, Group: g.id, GroupType: g.typ, At: pos, Transaction: tr, Marks: marks}
		switch {
		case rewound > 0:
			e.Next = timelineCmd(g.id, "--topic", shellArg(tr.Offsets[0].Topic)) + " for the commits around it; then the " +
				"transactional producer (producer id " + itoa(m.ProducerID) + "): a restart that reprocessed from an older position"
		case len(marks) > 0:
			e.Next = txnNext(m.ProducerID)
		}
		a.emit(e)
	}
}

// openTransactions explains the transactions still open at the end of the log.
func (a *Analyzer) openTransactions() {
	pids := make([]int64, 0, len(a.txns))
	for pid := range a.txns {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	for _, pid := range pids {
		t := a.txns[pid]
		for _, g := range t.order {
			tg := t.groups[g]
			tr := &Transaction{ProducerID: pid, Start: tg.start, Result: "open", DurationMs: -1}
			if tg.start.Timestamp >= 0 && a.lastPos.Timestamp >= 0 {
				tr.DurationMs = a.lastPos.Timestamp - tg.start.Timestamp
			}
			for _, w := range tg.writes {
				prev, had := g.offsets.get(w.key)
				tr.Offsets = append(tr.Offsets, change(w.topic, w.part, prev, had, w.off, ""))
			}
			var marks []Mark
			next := ""
			if tr.DurationMs > a.opts.LongTransactionMs {
				marks = append(marks, MarkSlow)
				next = txnNext(pid)
			}
			a.emit(&Event{Kind: KindTransactionOpen, Group: g.id, GroupType: g.typ, At: a.lastPos, Transaction: tr, Marks: marks, Next: next})
		}
	}
}
