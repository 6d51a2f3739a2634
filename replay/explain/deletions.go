package explain

import "slices"

// Who deleted committed offsets, by the rules of what Kafka writes for each cause (doc.go's
// rule table). Each cause is a hypothesis the batch's tombstones and the partition's state
// either fit or rule out:
//
//   - DeleteGroups (group-deletion): every offset of the group, then its group tombstone; only
//     for a group without members.
//   - OffsetDelete (offset-delete): some offsets of one group, no group tombstone; refused for
//     a topic the group's members subscribe to.
//   - topic deletion (topic-deletion, onPartitionsDeleted): the deleted partitions' offsets of
//     every group of the partition, no group tombstone; no group keeps one of them.
//   - expiry (cleanupGroupMetadata, every offsets.retention.check.interval.ms): in one batch,
//     every offset of every group that is old enough (since its commit; a classic group's since
//     it became empty) and that the group may lose (an empty group, or a topic no member
//     subscribes to), then the tombstone of each empty group left without offsets. So every
//     removed offset is at least offsets.retention.minutes (1 minute or more) old, and every
//     offset that could have expired and stayed is younger: the two ages bound the retention.
//   - cleanup: the same task deletes an empty group without offsets.

// minRetentionMs is the smallest offsets.retention.minutes Kafka accepts (1).
const minRetentionMs = 60_000

// splitBatchRecords is a batch size past which a cleanup may have been split over several
// batches (the coordinator splits a write past the topic's max.message.bytes, 1 MiB by
// default, tens of thousands of tombstones): a group tombstone may then come in the next batch.
const splitBatchRecords = 1000

// maxScanOffsets bounds the offsets the expiry and topic-deletion checks read per batch: past
// it a check is not made (and the diagnosis says so).
const maxScanOffsets = 4 << 20

// delGroup is one group's deletions in a batch.
type delGroup struct {
	g       *groupModel
	d       *Deletion
	acc     *tombAcc
	deleted bool
	typ     string   // the group's type (before its deletion)
	tombAt  Position // its group tombstone, when deleted
}

// batchScan is what the whole partition says about a batch's deletions, computed once.
type batchScan struct {
	// tombstones is how many offset tombstones the batch holds.
	tombstones int
	done       bool
	// keptAgeMs is the oldest age (as expiry counts it) of an offset that could have expired
	// and stayed, -1 when there is none; skipped when the partition was too large to scan.
	keptAgeMs int64
	keptGroup string
	skipped   bool
}

// diagnoseDeletions names the cause of each group's deletions in the batch, with its
// certainty, and the bound on the retention when it is expiry.
// groups is how many of them lost offsets; at is the batch's time.
func (a *Analyzer) diagnoseDeletions(dels []delGroup, groups int, at int64) []diagnosis {
	var scan batchScan
	for _, x := range dels {
		scan.tombstones += len(x.d.Offsets)
	}
	out := make([]diagnosis, len(dels))
	for i, x := range dels {
		out[i] = a.diagnoseDeletion(x, groups, at, &scan)
	}
	return out
}

// hypothesis is one cause with why it is ruled out ("" when it is not).
type hypothesis struct {
	cause, ruledOut string
	settle          string
}

func (a *Analyzer) diagnoseDeletion(x delGroup, groups int, at int64, scan *batchScan) diagnosis {
	g, d := x.g, x.d
	n := len(d.Offsets)
	d.RetentionAtMostMs, d.RetentionOverMs = -1, -1
	if n == 0 {
		// An empty group without offsets: DeleteGroups, or the periodic cleanup.
		d.Cause = "group-deletion"
		d.Alternatives = []string{"cleanup"}
		return diagnosis{certainty: CertaintyOneOfSeveral, evidence: []string{"the group had no members and no offsets: DeleteGroups and the coordinator's periodic cleanup (offsets.retention.check.interval.ms) both delete such a group"},
			alternatives: []Alternative{{Cause: "cleanup", Settle: "the broker's log (\"Generated N tombstone records while cleaning up group metadata\")"},
				{Cause: "group-deletion", Settle: "the broker's request log (DeleteGroups) or its log (\"The following groups were deleted\")"}}}
	}
	hs := []hypothesis{
		{cause: "group-deletion", settle: "the broker's request log (DeleteGroups) or its log (\"The following groups were deleted\")"},
		{cause: "expiry", settle: "offsets.retention.minutes on the brokers"},
		{cause: "offset-delete", settle: "the broker's request log (OffsetDelete)"},
		{cause: "topic-deletion", settle: "the controller's log, or whether the topic still exists (kafka-topics --describe)"},
	}
	rule := func(cause, why string) {
		for i := range hs {
			if hs[i].cause == cause && hs[i].ruledOut == "" {
				hs[i].ruledOut = why
			}
		}
	}
	left := g.offsets.len()
	if x.deleted {
		rule("offset-delete", "the group's tombstone is in the batch, which OffsetDelete never writes")
		rule("topic-deletion", "the group's tombstone is in the batch, which a topic's deletion never writes")
		if left > 0 {
			rule("group-deletion", "the group keeps "+plural(left, "offset", "offsets")+", which DeleteGroups would have deleted")
		}
	} else {
		rule("group-deletion", "no group tombstone follows, which DeleteGroups writes")
		if left == 0 && len(g.members) == 0 && g.typ != "" && scan.tombstones < splitBatchRecords {
			rule("expiry", "the group is left empty without offsets and not deleted, which the expiry task does in the same batch")
		}
	}
	if sub := g.subscribedAmong(d.Offsets); sub != "" {
		rule("offset-delete", "members of the group subscribe to "+sub+", for which OffsetDelete is refused (GROUP_SUBSCRIBED_TO_TOPIC)")
		rule("expiry", "members of the group subscribe to "+sub+", whose offsets do not expire")
	}
	a.expiryRules(d, at, scan, rule)
	a.topicRules(g, d, scan, rule)
	return conclude(d, hs, groups)
}

// expiryRules rules expiry out by the removed offsets' ages, and bounds the retention.
func (a *Analyzer) expiryRules(d *Deletion, at int64, scan *batchScan, rule func(cause, why string)) {
	y := d.YoungestAgeMs
	switch {
	case y < 0:
		return // their commits are not in the log (compacted, or before its start): no age to judge by
	case y < minRetentionMs:
		rule("expiry", "the youngest deleted offset was "+Duration(y)+" old, and offsets.retention.minutes is at least 1")
		return
	case a.opts.OffsetsRetentionMs > 0 && y < a.opts.OffsetsRetentionMs:
		rule("expiry", "the youngest deleted offset was "+Duration(y)+" old, younger than the given retention ("+Duration(a.opts.OffsetsRetentionMs)+")")
		return
	}
	if !scan.done {
		a.scanKept(at, scan)
	}
	d.RetentionAtMostMs = y
	if scan.keptAgeMs >= y {
		rule("expiry", "group "+scan.keptGroup+" kept an offset "+Duration(scan.keptAgeMs)+" old that could have expired, older than the youngest deleted one ("+Duration(y)+"): an expiry removes every such offset at once")
		d.RetentionAtMostMs = -1
		return
	}
	d.RetentionOverMs = scan.keptAgeMs
}

// topicRules rules a topic's deletion out when the topic's partitions stay elsewhere.
func (a *Analyzer) topicRules(g *groupModel, d *Deletion, scan *batchScan, rule func(cause, why string)) {
	topics := topicsDeleted(d.Offsets)
	for _, t := range topics {
		if ti := g.topicIndex(t); ti >= 0 && g.offsets.hasTopic(uint32(ti)) {
			rule("topic-deletion", "the group keeps offsets of other partitions of "+t+", which a topic's deletion removes with the rest")
			return
		}
	}
	if scan.tombstones >= splitBatchRecords {
		return // a deletion split over several batches may remove them in the next
	}
	total := 0
	for _, o := range a.groups {
		total += len(topics)
		if total > maxScanOffsets {
			return
		}
		if o == g {
			continue
		}
		for _, c := range d.Offsets {
			if ti := o.topicIndex(c.Topic); ti >= 0 {
				if _, ok := o.offsets.get(offKey{uint32(ti), c.Partition}); ok {
					rule("topic-deletion", "group "+o.id+" keeps its offset of "+c.Topic+"-"+itoa(int64(c.Partition))+", which a topic's deletion removes from every group")
					return
				}
			}
		}
	}
}

// conclude turns the hypotheses left into the deletion's cause and certainty.
func conclude(d *Deletion, hs []hypothesis, groups int) diagnosis {
	var alive []hypothesis
	var ruled []string
	for _, h := range hs {
		if h.ruledOut == "" {
			alive = append(alive, h)
		} else {
			ruled = append(ruled, "not "+CauseWords(h.cause)+": "+h.ruledOut)
		}
	}
	bound := retentionText(d)
	if len(alive) == 0 {
		// Every rule says no: coalesced or split batches, or a log that lost records.
		d.Cause, d.Alternatives = "unknown", nil
		return diagnosis{certainty: CertaintyOneOfSeveral, evidence: ruled}
	}
	first := alive[0]
	// Expiry is the likely one when it fits and the ages separate what went from what stayed.
	if i := slices.IndexFunc(alive, func(h hypothesis) bool { return h.cause == "expiry" }); i > 0 && d.RetentionOverMs >= 0 {
		first = alive[i]
	}
	d.Cause = first.cause
	d.Alternatives = nil
	var alts []Alternative
	for _, h := range alive {
		if h.cause != first.cause {
			d.Alternatives = append(d.Alternatives, h.cause)
			alts = append(alts, Alternative{Cause: h.cause, Settle: h.settle})
		}
	}
	ev := ruled
	if bound != "" && slices.ContainsFunc(alive, func(h hypothesis) bool { return h.cause == "expiry" }) {
		ev = append([]string{"if expired, " + bound}, ev...)
		if first.cause == "expiry" {
			ev[0] = bound
		}
	}
	switch {
	case len(alive) == 1:
		return diagnosis{certainty: CertaintyProved, evidence: ev}
	case groups > 1 && first.cause == "offset-delete" && len(alive) == 2 && alive[1].cause == "topic-deletion":
		// Several groups lost the same partitions at once and no group kept one: a topic's
		// deletion; OffsetDelete names one group, so it would take requests for each group
		// coalesced into one batch.
		d.Cause, d.Alternatives = "topic-deletion", []string{"offset-delete"}
		ev = append([]string{itoa(int64(groups)) + " groups lost offsets in this batch and no group keeps one of those partitions: what a topic's deletion writes (OffsetDelete names one group: requests for each coalesced into one batch would be a coincidence)"}, ev...)
		return diagnosis{certainty: CertaintyLikely, evidence: ev, alternatives: []Alternative{{Cause: "offset-delete", Settle: alive[0].settle}}}
	case first.cause == "expiry" && d.RetentionOverMs >= 0 && (groups > 1 || d.GroupDeleted):
		ev = append([]string{"the deleted offsets are exactly the ones old enough to expire: offsets that could have expired and are younger stayed"}, ev...)
		return diagnosis{certainty: CertaintyLikely, evidence: ev, alternatives: alts}
	}
	alts = append([]Alternative{{Cause: first.cause, Settle: first.settle}}, alts...)
	return diagnosis{certainty: CertaintyOneOfSeveral, evidence: ev, alternatives: alts}
}

// retentionText is the bound an expiry puts on offsets.retention.minutes.
func retentionText(d *Deletion) string {
	if d.RetentionAtMostMs < 0 {
		return ""
	}
	s := "offsets.retention.minutes is at most " + Duration(d.RetentionAtMostMs) + " (the youngest deleted offset's age), going by this batch"
	if d.RetentionOverMs >= minRetentionMs {
		s += ", and more than " + Duration(d.RetentionOverMs) + " (an offset that old stayed)"
	}
	return s
}

func topicsDeleted(cs []OffsetChange) []string {
	var ts []string
	for _, c := range cs {
		if !slices.Contains(ts, c.Topic) {
			ts = append(ts, c.Topic)
		}
	}
	return ts
}

// subscribedAmong returns a topic of cs that a member of g subscribes to ("" for none, or
// when the records do not say).
func (g *groupModel) subscribedAmong(cs []OffsetChange) string {
	for _, m := range g.members {
		for _, c := range cs {
			if subscribes(m.subscription, c.Topic) {
				return c.Topic
			}
		}
	}
	return ""
}

// subscribes reports whether a member's subscription text (sorted topics joined by commas,
// then " /regex/") names topic.
func subscribes(sub, topic string) bool {
	for len(sub) > 0 {
		i := 0
		for i < len(sub) && sub[i] != ',' && sub[i] != ' ' {
			i++
		}
		if sub[:i] == topic {
			return true
		}
		if i == len(sub) || sub[i] == ' ' {
			return false
		}
		sub = sub[i+1:]
	}
	return false
}

// scanKept finds the oldest offset of the partition that could have expired at time at and
// stayed: an offset of an empty group (a classic group's counted from when it became empty)
// or of a simple group. Groups with members are left out (whether their offsets may expire
// depends on subscriptions the records do not always say).
func (a *Analyzer) scanKept(at int64, scan *batchScan) {
	scan.done, scan.keptAgeMs = true, -1
	total := 0
	for _, g := range a.groups {
		total += g.offsets.len()
	}
	if total > maxScanOffsets {
		scan.skipped = true
		return
	}
	for _, g := range a.groups {
		if len(g.members) > 0 || g.offsets.len() == 0 {
			continue
		}
		emptyBase := int64(-1)
		if g.typ == typeClassic && g.protocolType != "" && g.emptySince != nil {
			emptyBase = g.emptySince.Timestamp
		}
		g.offsets.each(func(st offState) {
			base := st.ts
			if emptyBase > base {
				base = emptyBase
			}
			if base < 0 {
				return
			}
			if age := at - base; age > scan.keptAgeMs {
				scan.keptAgeMs, scan.keptGroup = age, g.id
			}
		})
	}
}
