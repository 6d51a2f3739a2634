package explain

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Filter selects events: by topic (and partition), by member, by kind or mark. A zero
// Filter selects every event.
type Filter struct {
	// Topics selects events about these topics; TopicPartitions about these partitions of a
	// topic (topic -> partitions). An event is about a partition when it commits, deletes or
	// moves it, or a member waits for or revokes it.
	Topics          []string
	TopicPartitions map[string]map[int32]bool
	// Member selects events naming a member with this member id, client id, instance id or
	// host.
	Member string
	// Kinds selects events of these kinds; a family (rebalance, member, offsets,
	// transaction) stands for its kinds, a mark (rewind, while-empty, without-owner, fenced,
	// slow, deleted) for the events that carry it.
	Kinds []string
}

// kindFamilies are the names a Filter accepts for several kinds.
var kindFamilies = map[string][]Kind{
	"rebalance":   {KindRebalance, KindTargetAssignment, KindRebalanceEnd},
	"member":      {KindMemberJoined, KindMemberUpdated, KindMemberReplaced, KindMemberTemporaryLeave, KindMemberLeft, KindMemberFenced},
	"group":       {KindGroupCreated, KindGroupConverted, KindGroupDeleted},
	"offsets":     {KindOffsetsCommitted, KindOffsetsDeleted},
	"transaction": {KindTransactionOffsets, KindTransactionEnd, KindTransactionOpen},
}

var allMarks = []Mark{MarkRewind, MarkWhileEmpty, MarkWithoutOwner, MarkFenced, MarkSlow, MarkDeleted}

// KindNames lists what Filter.Kinds accepts.
func KindNames() []string {
	var out []string
	for _, k := range Kinds {
		out = append(out, string(k))
	}
	for f := range kindFamilies {
		out = append(out, f)
	}
	for _, m := range allMarks {
		out = append(out, string(m))
	}
	slices.Sort(out)
	return slices.Compact(out) // "rebalance" is a kind and a family
}

// Validate reports a kind Filter.Kinds does not know, with the names it is close to.
func (f *Filter) Validate() error {
	names := KindNames()
	for _, k := range f.Kinds {
		if slices.Contains(names, k) {
			continue
		}
		var close []string
		for _, n := range names {
			if len(k) >= 3 && (strings.HasPrefix(n, k) || strings.HasPrefix(k, n) || strings.Contains(n, k)) {
				close = append(close, n)
			}
		}
		msg := fmt.Sprintf("unknown kind %q: give a family (rebalance, member, group, offsets, transaction), a mark "+
			"(rewind, while-empty, without-owner, fenced, slow, deleted) or a kind as the JSON names it", k)
		if len(close) > 0 {
			msg += "; did you mean " + strings.Join(close, " or ") + "?"
		}
		return errors.New(msg)
	}
	return nil
}

// Match reports whether f selects e.
func (f *Filter) Match(e *Event) bool {
	if len(f.Kinds) > 0 && !f.matchKind(e) {
		return false
	}
	if f.Member != "" && !f.matchMember(e) {
		return false
	}
	if len(f.Topics) > 0 || len(f.TopicPartitions) > 0 {
		return f.matchTopic(e)
	}
	return true
}

func (f *Filter) matchKind(e *Event) bool {
	for _, k := range f.Kinds {
		if Kind(k) == e.Kind || slices.Contains(kindFamilies[k], e.Kind) || e.HasMark(Mark(k)) {
			return true
		}
	}
	return false
}

func (f *Filter) memberIs(m *Member) bool {
	if m == nil {
		return false
	}
	return m.ID == f.Member || m.ClientID == f.Member || m.Host == f.Member || (m.InstanceID != nil && *m.InstanceID == f.Member)
}

func (f *Filter) matchMember(e *Event) bool {
	found := f.memberIs(e.Member)
	check := func(m *Member) { found = found || f.memberIs(m) }
	if r := e.Rebalance; r != nil {
		for i := range r.Causes {
			check(r.Causes[i].Member)
		}
		for _, mv := range r.Moves {
			found = found || mv.From == f.Member || mv.To == f.Member ||
				strings.HasPrefix(mv.FromName, f.Member+" (") || mv.FromName == f.Member ||
				strings.HasPrefix(mv.ToName, f.Member+" (") || mv.ToName == f.Member
		}
		for i := range r.Waits {
			check(&r.Waits[i].Member)
			check(r.Waits[i].Holder)
		}
	}
	if r := e.Reconcile; r != nil {
		check(&r.Member)
		for i := range r.Others {
			check(&r.Others[i])
		}
	}
	if r := e.Removal; r != nil {
		check(&r.Member)
	}
	if r := e.Replacement; r != nil {
		check(&r.Previous)
		check(&r.Member)
	}
	if o := e.Offsets; o != nil {
		for i := range o.Writer.Members {
			check(&o.Writer.Members[i])
		}
	}
	if c := e.Conversion; c != nil {
		for i := range c.Members {
			check(&c.Members[i])
		}
		check(c.Trigger)
	}
	return found
}

func (f *Filter) wantPartition(topic string, part int32) bool {
	if slices.Contains(f.Topics, topic) {
		return true
	}
	return f.TopicPartitions[topic][part]
}

func (f *Filter) matchTopic(e *Event) bool {
	changes := func(cs []OffsetChange) bool {
		for _, c := range cs {
			if f.wantPartition(c.Topic, c.Partition) {
				return true
			}
		}
		return false
	}
	assignments := func(as []Assignment) bool {
		for _, a := range as {
			for _, p := range a.Partitions {
				if a.Topic != "" && f.wantPartition(a.Topic, p) {
					return true
				}
			}
		}
		return false
	}
	switch {
	case e.Offsets != nil:
		return changes(e.Offsets.Changes)
	case e.Deletion != nil:
		return changes(e.Deletion.Offsets)
	case e.Transaction != nil:
		return changes(e.Transaction.Offsets)
	case e.Reconcile != nil:
		return assignments(e.Reconcile.Items)
	case e.Rebalance != nil:
		for _, mv := range e.Rebalance.Moves {
			if assignments([]Assignment{mv.Assignment}) {
				return true
			}
		}
		for _, w := range e.Rebalance.Waits {
			if assignments(w.Items) {
				return true
			}
		}
	}
	return false
}
