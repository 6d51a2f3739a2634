package explain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// render says what e is about in one sentence (without its position). It reads only the
// event, so that anyone holding the event (JSON included) can say the same.
func render(e *Event) string {
	switch e.Kind {
	case KindGroupCreated:
		return groupCreatedText(e)
	case KindGroupConverted:
		return conversionText(e.Conversion)
	case KindGroupDeleted, KindOffsetsDeleted:
		return deletionText(e)
	case KindMemberJoined:
		return e.Member.Name + " joined" + memberDetail(e.Member, e.GroupType)
	case KindMemberUpdated:
		return e.Member.Name + " changed its metadata: " + e.Rebalance.Causes[0].Detail
	case KindMemberReplaced:
		r := e.Replacement
		s := "static member " + deref(r.Member.InstanceID) + " restarted: " + r.Member.Name + " (member " + r.Member.ID +
			") replaces " + r.Previous.Name + " (member " + r.Previous.ID + ")"
		if r.Rebalance {
			return s + " in a rebalance"
		}
		return s + " and keeps " + assignmentsLabel(r.Owned) + ", without a rebalance"
	case KindMemberTemporaryLeave:
		r := e.Reconcile
		return e.Member.Name + " (static member " + deref(e.Member.InstanceID) + ") left temporarily (epoch -2): " +
			assignmentsLabel(r.Owned) + " stay assigned to it until it rejoins with the same instance id or its session times out"
	case KindMemberLeft, KindMemberFenced:
		return removalText(e)
	case KindRebalance:
		r := e.Rebalance
		s := "rebalance to epoch " + itoa(int64(r.Epoch)) + ": " + causesText(r.Causes)
		if len(r.Moves) > 0 {
			s += "; target: " + movesText(r.Moves)
		}
		return s
	case KindTargetAssignment:
		return "target assignment of epoch " + itoa(int64(e.Rebalance.Epoch)) + ": " + movesText(e.Rebalance.Moves)
	case KindReconcile:
		return reconcileText(e.Reconcile)
	case KindRebalanceEnd:
		return rebalanceEndText(e.Rebalance, e.GroupType)
	case KindOffsetsCommitted:
		return offsetsText(e.Offsets)
	case KindTransactionOffsets:
		t := e.Transaction
		return "producer " + itoa(t.ProducerID) + " wrote " + changesText(t.Offsets, false) +
			" in a transaction (pending until it ends)"
	case KindTransactionEnd, KindTransactionOpen:
		return transactionText(e.Transaction)
	}
	return e.Text
}

func groupCreatedText(e *Event) string {
	r := e.Rebalance
	word := "epoch "
	if e.GroupType == typeClassic {
		word = "generation "
		if r.Epoch == 0 {
			return "classic group created (generation 0, no members yet)"
		}
	}
	s := e.GroupType + " group first seen at " + word + itoa(int64(r.Epoch))
	if len(r.Causes) > 0 {
		s += " with " + memberNames(causeMembers(r.Causes))
	} else if e.GroupType == typeClassic {
		s += ", no members"
	}
	return s + " (its earlier records are not in this log: compacted away, or before its start)"
}

func causeMembers(cs []Cause) []Member {
	var out []Member
	for _, c := range cs {
		if c.Member != nil {
			out = append(out, *c.Member)
		}
	}
	return out
}

// SummaryText is the one line `timeline --summary` prints for a rebalance-end event: the
// epoch, its causes, what moved and how long the group took to converge.
func SummaryText(e *Event) string {
	r := e.Rebalance
	if r == nil {
		return e.Text
	}
	word := "epoch "
	if e.GroupType == typeClassic {
		word = "generation "
	}
	s := word + itoa(int64(r.Epoch)) + ": " + causesText(r.Causes)
	if len(r.Moves) > 0 {
		s += "; " + movesText(r.Moves)
	}
	if e.GroupType == typeClassic {
		return s // recorded when it completed: no duration to tell
	}
	return s + "; " + outcomeText(r, e.GroupType)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func memberDetail(m *Member, groupType string) string {
	var parts []string
	parts = append(parts, "member "+m.ID)
	if m.ProcessID != "" {
		parts = append(parts, "process "+m.ProcessID)
	}
	if m.Host != "" {
		parts = append(parts, "host "+m.Host)
	}
	if m.InstanceID != nil && *m.InstanceID != "" {
		parts = append(parts, "static, instance "+*m.InstanceID)
	}
	if m.Protocol == typeClassic && groupType == typeConsumer {
		parts = append(parts, "classic protocol")
	}
	s := " (" + strings.Join(parts, ", ") + ")"
	switch {
	case m.Protocol == typeStreams && m.Subscription != "":
		s += ", " + m.Subscription
	case m.Subscription != "":
		s += ", subscribed to " + strings.TrimSpace(m.Subscription)
	}
	return s
}

func conversionText(c *Conversion) string {
	names := memberNames(c.Members)
	if c.From == typeClassic {
		s := "converted from a classic group to a " + c.To + " group at epoch " + itoa(int64(c.Epoch)) + " (online upgrade, KIP-848)"
		if c.Trigger != nil {
			s += ": " + c.Trigger.Name + " joined with the " + c.To + " protocol"
		}
		if names != "" {
			s += "; " + names + " carry on as classic-protocol members"
		}
		return s
	}
	s := "converted back from a " + c.From + " group to a classic group at generation " + itoa(int64(c.Epoch)) + " (online downgrade)"
	if c.Trigger != nil {
		s += ": " + c.Trigger.Name + " left and"
	} else {
		s += ":"
	}
	if names != "" {
		return s + " only classic-protocol members remain (" + names + ")"
	}
	return s + " no member remains"
}

func memberNames(ms []Member) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return strings.Join(out, ", ")
}

func removalText(e *Event) string {
	r := e.Removal
	n := r.Member.Name
	var s string
	switch r.Cause {
	case "left":
		s = n + " left"
	case "expired-after-temporary-leave":
		s = n + " (static member " + deref(r.Member.InstanceID) + ") did not come back: its session expired after its temporary leave"
	case "fenced-rebalance-timeout":
		s = n + " was fenced by its " + Duration(int64(r.RebalanceTimeoutMs)) + " rebalance timeout before it revoked what it was asked to"
	case "fenced-session-timeout":
		s = n + " was fenced by its " + Duration(int64(r.SessionTimeoutMs)) + " session timeout"
	default:
		s = n + " left or was fenced"
	}
	return s + certaintyText(e)
}

// CertaintyNote is how sure e's cause is, as the texts of removals and deletions end with it
// (" (likely: ...; else ...)"): for a picture's rows of the events whose text does not carry it
// (offsets written while empty or by no owner). "" for an event that states no cause.
func CertaintyNote(e *Event) string { return certaintyText(e) }

// certaintyText says how sure an event's cause is: " (proved: EVIDENCE)", " (likely:
// EVIDENCE; else CAUSE)", " (one of several: EVIDENCE; or CAUSE, which SETTLE would tell)".
func certaintyText(e *Event) string {
	if e.Certainty == "" {
		return ""
	}
	s := " (" + strings.ReplaceAll(string(e.Certainty), "-", " ")
	if len(e.Evidence) > 0 {
		s += ": " + strings.Join(e.Evidence, "; ")
	}
	for i, a := range e.Alternatives {
		switch {
		case e.Certainty == CertaintyOneOfSeveral:
			s += "; or " + CauseWords(a.Cause) + ", which " + a.Settle + " would tell"
		case i == 0:
			s += "; else " + CauseWords(a.Cause)
		default:
			s += " or " + CauseWords(a.Cause)
		}
	}
	return s + ")"
}

// CauseWords names a cause (of a removal, a deletion or a write while empty) in words.
func CauseWords(cause string) string {
	switch cause {
	case "left":
		return "it left"
	case "fenced-session-timeout":
		return "a session timeout"
	case "fenced-rebalance-timeout":
		return "a rebalance timeout"
	case "expired-after-temporary-leave":
		return "its session expiring after its temporary leave"
	case "group-deletion":
		return "DeleteGroups"
	case "offset-delete":
		return "OffsetDelete"
	case "topic-deletion":
		return "the topic's deletion"
	case "expiry":
		return "expiry by offsets.retention.minutes"
	case "cleanup":
		return "the periodic deletion of an empty group without offsets"
	case "admin-tool":
		return "an admin tool (kafka-consumer-groups --reset-offsets, Admin alterConsumerGroupOffsets)"
	case "standalone-consumer":
		return "a standalone consumer (assign() and commitSync with this group.id)"
	case "stale-member":
		return "a member committing partitions it no longer owned (after losing them in a rebalance)"
	}
	return cause
}

func causesText(cs []Cause) string {
	var parts []string
	for _, c := range cs {
		switch c.Kind {
		case "member-joined":
			parts = append(parts, c.Member.Name+" joined")
		case "member-left":
			if c.Detail == "unknown" {
				parts = append(parts, c.Member.Name+" left or was fenced")
			} else {
				parts = append(parts, c.Member.Name+" left")
			}
		case "member-fenced":
			parts = append(parts, c.Member.Name+" was fenced")
		case "member-replaced":
			parts = append(parts, c.Member.Name+" replaced a static member ("+c.Detail+")")
		case "subscription-changed":
			parts = append(parts, c.Member.Name+" changed its "+c.Detail)
		default:
			parts = append(parts, c.Detail)
		}
	}
	return strings.Join(parts, ", ")
}

// movesText says what moved, one clause per (from, to): "c1 gets s2-in:0-5",
// "s2-in:3-5 c1 -> c2", "c2 gives up s2-in:4".
func movesText(ms []Move) string {
	var parts []string
	for i := 0; i < len(ms); {
		j := i
		var as []Assignment
		for ; j < len(ms) && ms[j].From == ms[i].From && ms[j].To == ms[i].To; j++ {
			as = append(as, ms[j].Assignment)
		}
		m := ms[i]
		what := assignmentsLabel(as)
		switch {
		case m.From == "":
			parts = append(parts, m.ToName+" gets "+what)
		case m.To == "":
			parts = append(parts, m.FromName+" gives up "+what)
		default:
			parts = append(parts, what+" "+m.FromName+" -> "+m.ToName)
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

func reconcileText(r *Reconcile) string {
	n := r.Member.Name
	switch r.Step {
	case "waiting":
		s := n + " waits for " + assignmentsLabel(r.Items)
		if len(r.Others) > 0 {
			s += ", still owned by " + memberNames(r.Others)
		}
		return s + " (epoch " + itoa(int64(r.Epoch)) + ")"
	case "revoking":
		s := n + " must revoke " + assignmentsLabel(r.Items)
		if len(r.Others) > 0 {
			s += ", which " + memberNames(r.Others) + " wait"
			if len(r.Others) == 1 {
				s += "s"
			}
			s += " for"
		}
		return s
	case "revoked":
		s := n + " revoked " + assignmentsLabel(r.Items)
		if r.WaitedMs >= 0 {
			s += " after " + Duration(r.WaitedMs)
		}
		return s + "; owns " + assignmentsLabel(r.Owned) + " at epoch " + itoa(int64(r.Epoch))
	}
	if len(r.Items) > 0 && r.WaitedMs >= 0 {
		return n + " got " + assignmentsLabel(r.Items) + " after waiting " + Duration(r.WaitedMs) + "; owns " +
			assignmentsLabel(r.Owned) + " at epoch " + itoa(int64(r.Epoch))
	}
	return n + " owns " + assignmentsLabel(r.Owned) + " at epoch " + itoa(int64(r.Epoch))
}

func rebalanceEndText(r *Rebalance, groupType string) string {
	if groupType == typeClassic {
		s := "generation " + itoa(int64(r.Epoch)) + " (was " + itoa(int64(r.PreviousEpoch)) + "): " + causesText(r.Causes)
		if len(r.Moves) > 0 {
			s += "; " + movesText(r.Moves)
		}
		return s
	}
	return "epoch " + itoa(int64(r.Epoch)) + " " + outcomeText(r, groupType)
}

func outcomeText(r *Rebalance, groupType string) string {
	switch r.Outcome {
	case "converged":
		if r.DurationMs <= 0 {
			return "converged at once"
		}
		return "converged in " + Duration(r.DurationMs)
	case "completed":
		if groupType == typeClassic {
			return "completed"
		}
	case "superseded":
		return "superseded by epoch " + itoa(int64(r.SupersededBy)) + " after " + Duration(r.DurationMs) + ", before converging"
	case "group-deleted":
		return "ended by the group's deletion"
	case "group-converted":
		return "ended by the group's conversion"
	case "open":
		s := "not converged at the end of the log, " + Duration(r.DurationMs) + " after it started"
		for _, w := range r.Waits {
			s += "; " + waitText(w)
		}
		return s
	}
	return r.Outcome
}

func waitText(w Wait) string {
	since := w.Since.Time().Format("2006-01-02T15:04:05.000Z")
	if w.Revoking {
		return w.Member.Name + " has not revoked " + assignmentsLabel(w.Items) + ", since " + since
	}
	if w.Holder != nil {
		return w.Member.Name + " waits for " + w.Holder.Name + " to revoke " + assignmentsLabel(w.Items) + ", since " + since
	}
	return w.Member.Name + " waits for " + assignmentsLabel(w.Items) + ", since " + since
}

func offsetsText(o *Offsets) string {
	w := o.Writer
	changes := changesText(o.Changes, true)
	if o.Rewound > 0 && o.Committed > 1 {
		changes += " (" + strconv.Itoa(o.Rewound) + " of " + strconv.Itoa(o.Committed) + " moved back)"
	}
	switch w.Kind {
	case "owner", "owners":
		return memberNames(w.Members) + " committed " + changes
	case "empty-group":
		s := changes + ", committed while the group had no members"
		if w.EmptySince != nil {
			s += " (since " + w.EmptySince.Time().Format("2006-01-02T15:04:05.000Z") + ")"
		}
		return s + ": an admin tool or a standalone consumer"
	case "without-owner":
		return changes + ", committed while no member of the group owned them"
	}
	return changes + " committed (the group has no members: a standalone consumer or an admin tool)"
}

// changesText lists offset changes: "s2-in-0 26" (new or unchanged), "s2-in-1 9 -> 12", and a
// rewind "jwtCheckAnswer-0 134 -> 54 (-80, moved back)". Rewinds come first, then by topic
// and partition; a long list is cut after 8.
func changesText(cs []OffsetChange, rewindsFirst bool) string {
	cs = sortedChanges(cs)
	order := make([]OffsetChange, 0, len(cs))
	if rewindsFirst {
		for _, c := range cs {
			if c.Rewind {
				order = append(order, c)
			}
		}
		for _, c := range cs {
			if !c.Rewind {
				order = append(order, c)
			}
		}
	} else {
		order = cs
	}
	const max = 8
	var parts []string
	for i, c := range order {
		if i == max {
			parts = append(parts, "and "+strconv.Itoa(len(order)-max)+" more")
			break
		}
		parts = append(parts, changeText(c))
	}
	return strings.Join(parts, ", ")
}

// sortedChanges returns cs sorted by topic and partition.
func sortedChanges(cs []OffsetChange) []OffsetChange {
	cs = slices.Clone(cs)
	slices.SortStableFunc(cs, func(x, y OffsetChange) int {
		if c := strings.Compare(x.Topic, y.Topic); c != 0 {
			return c
		}
		return int(x.Partition) - int(y.Partition)
	})
	return cs
}

func changeText(c OffsetChange) string {
	s := c.Topic + "-" + strconv.Itoa(int(c.Partition)) + " "
	switch {
	case c.Previous == nil || *c.Previous == c.Offset:
		return s + itoa(c.Offset)
	case c.Offset > *c.Previous:
		return s + itoa(*c.Previous) + " -> " + itoa(c.Offset)
	}
	return s + itoa(*c.Previous) + " -> " + itoa(c.Offset) + " (" + itoa(c.Offset-*c.Previous) + ", moved back)"
}

func deletionText(e *Event) string {
	kind, groupType, d := e.Kind, e.GroupType, e.Deletion
	var s string
	if kind == KindGroupDeleted {
		s = "group deleted"
		if n := len(d.Offsets); n > 0 {
			s += " with its " + plural(n, "offset", "offsets") + " (" + deletedList(d.Offsets) + ")"
		}
	} else {
		s = "offsets deleted (" + deletedList(d.Offsets) + "), the group stays"
	}
	if d.OtherGroups > 0 {
		s += ", with those of " + plural(d.OtherGroups, "other group", "other groups") + " in the same batch"
	}
	if d.Cause == "unknown" {
		return s + ": no cause fits" + certaintyText(e)
	}
	return s + ": " + causeText(d.Cause, groupType, d) + certaintyText(e)
}

func causeText(cause, groupType string, d *Deletion) string {
	switch cause {
	case "group-deletion":
		switch groupType {
		case typeStreams:
			return "DeleteGroups (kafka-streams-groups --delete)"
		case typeShare:
			return "DeleteGroups (kafka-share-groups --delete)"
		}
		return "DeleteGroups (kafka-consumer-groups --delete)"
	case "cleanup":
		return "the coordinator's periodic cleanup of an empty group without offsets"
	case "expiry":
		return "expired (offsets.retention.minutes; the youngest was " + Duration(d.YoungestAgeMs) + " old)"
	case "topic-deletion":
		return "the deletion of " + topicsOf(d.Offsets)
	case "offset-delete":
		return "OffsetDelete (kafka-consumer-groups --delete-offsets)"
	}
	return cause
}

func topicsOf(cs []OffsetChange) string {
	var ts []string
	for _, c := range cs {
		if len(ts) == 0 || ts[len(ts)-1] != c.Topic {
			ts = append(ts, c.Topic)
		}
	}
	if len(ts) == 1 {
		return "topic " + ts[0]
	}
	return "topics " + strings.Join(ts, ", ")
}

func deletedList(cs []OffsetChange) string {
	cs = sortedChanges(cs)
	const max = 8
	var parts []string
	for i, c := range cs {
		if i == max {
			parts = append(parts, "and "+strconv.Itoa(len(cs)-max)+" more")
			break
		}
		s := c.Topic + "-" + strconv.Itoa(int(c.Partition))
		if c.Previous != nil {
			s += " was " + itoa(*c.Previous)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func transactionText(t *Transaction) string {
	p := "transaction of producer " + itoa(t.ProducerID)
	switch t.Result {
	case "committed":
		return p + " committed after " + Duration(t.DurationMs) + ": " + changesText(t.Offsets, true)
	case "aborted":
		return p + " aborted after " + Duration(t.DurationMs) + ": its offsets for " + tpList(sortedChanges(t.Offsets)) + " are dropped"
	}
	return p + " still open at the end of the log, " + Duration(t.DurationMs) + " after its first offset write: " +
		changesText(t.Offsets, false) + " pending"
}

func tpList(cs []OffsetChange) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.Topic+"-"+strconv.Itoa(int(c.Partition)))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Duration renders milliseconds as an operator reads them: "585 ms", "2.997 s", "4m23s",
// "12h05m", "3d04h".
func Duration(ms int64) string {
	if ms < 0 {
		return "an unknown time"
	}
	d := time.Duration(ms) * time.Millisecond
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + " ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + " s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}
