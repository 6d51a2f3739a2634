package query

import (
	"iter"
	"slices"
	"strings"

	"github.com/coordlog/coordlog/groupstate"
)

// OffsetSelection selects the committed offsets an offsets listing shows: those of one group
// (Group) or of every group, kept by Filter (topics and topic-partitions of the groups' own
// topics). States hold millions of offsets: a listing reads them one group at a time (Groups,
// Offsets, All), never all at once.
type OffsetSelection struct {
	Group  string // "": every group with committed offsets
	Filter OffsetFilter
}

// Groups returns the ids of the groups whose offsets the selection lists in st, sorted.
func (s OffsetSelection) Groups(st groupstate.View) []string {
	if s.Group != "" {
		return []string{s.Group}
	}
	return st.OffsetGroupIDs()
}

// Offsets returns the committed offsets of group in st that the filter keeps, sorted by topic
// and partition.
func (s OffsetSelection) Offsets(st groupstate.View, group string) []groupstate.CommittedOffset {
	offs := st.Offsets(group)
	if s.Filter.Empty() {
		return offs
	}
	return slices.DeleteFunc(offs, func(o groupstate.CommittedOffset) bool { return !s.Filter.Keep(o.Topic, o.Partition) })
}

// All yields the selected offsets of st group by group, in order: one group's offsets are
// held at a time.
func (s OffsetSelection) All(st groupstate.View) iter.Seq[groupstate.CommittedOffset] {
	return func(yield func(groupstate.CommittedOffset) bool) {
		for _, g := range s.Groups(st) {
			for _, o := range s.Offsets(st, g) {
				if !yield(o) {
					return
				}
			}
		}
	}
}

// Count is the number of selected offsets in st.
func (s OffsetSelection) Count(st groupstate.View) int {
	n := 0
	for _, g := range s.Groups(st) {
		n += len(s.Offsets(st, g))
	}
	return n
}

// Missing returns the topics and topic-partitions the filter names that no offset of the
// selected groups has in any of states ("orders", "orders:3"), so that a typo is said instead
// of listing nothing; none without a filter.
func (s OffsetSelection) Missing(states []groupstate.View) []string {
	if s.Filter.Empty() {
		return nil
	}
	var all []groupstate.CommittedOffset
	for _, st := range states {
		for _, g := range s.Groups(st) {
			all = append(all, st.Offsets(g)...)
		}
	}
	return s.Filter.Missing(all)
}

// Pending returns st's open transactions with only the offsets the selection keeps (of the
// group, and that the filter keeps); transactions left with none are left out.
func (s OffsetSelection) Pending(st groupstate.View) []groupstate.PendingTransaction {
	out := []groupstate.PendingTransaction{}
	for _, pt := range st.PendingTransactions() {
		var kept []groupstate.CommittedOffset
		for _, o := range pt.Offsets {
			if (s.Group == "" || o.GroupID == s.Group) && s.Filter.Keep(o.Topic, o.Partition) {
				kept = append(kept, o)
			}
		}
		if len(kept) > 0 {
			out = append(out, groupstate.PendingTransaction{ProducerID: pt.ProducerID, Offsets: kept})
		}
	}
	return out
}

// Topics returns the distinct topics of the selected offsets in states, sorted: the topics
// whose log end offsets a lag needs.
func (s OffsetSelection) Topics(states []groupstate.View) []string {
	var topics []string
	for _, st := range states {
		for _, g := range s.Groups(st) {
			for _, o := range s.Offsets(st, g) {
				if len(topics) == 0 || topics[len(topics)-1] != o.Topic {
					topics = append(topics, o.Topic)
				}
			}
		}
	}
	slices.Sort(topics)
	return slices.Compact(topics)
}

// ResetSet is what a reset file holds: the selected committed offsets of every partition,
// sorted by group, topic and partition, with each group's type (what Kafka's reset tool
// needs to know: kafka-consumer-groups or kafka-streams-groups) and the number of the
// groups' offsets that are pending in open transactions (not committed, so not in the file).
type ResetSet struct {
	Offsets []groupstate.CommittedOffset
	Types   map[string]groupstate.GroupType
	Pending int
}

// ForReset collects the reset set of states. A group whose offsets outlive it (deleted) is a
// simple classic group again, as Kafka treats it. Pending counts the offsets of the
// selection's group (or of every group) in open transactions, whatever the filter.
func (s OffsetSelection) ForReset(states []groupstate.View) ResetSet {
	rs := ResetSet{Types: map[string]groupstate.GroupType{}}
	for _, st := range states {
		for _, g := range s.Groups(st) {
			offs := s.Offsets(st, g)
			if len(offs) == 0 {
				continue
			}
			rs.Offsets = append(rs.Offsets, offs...)
			t, ok := st.GroupType(g)
			if !ok {
				t = groupstate.GroupTypeClassic
			}
			rs.Types[g] = t
		}
		for _, pt := range st.PendingTransactions() {
			for _, o := range pt.Offsets {
				if s.Group == "" || o.GroupID == s.Group {
					rs.Pending++
				}
			}
		}
	}
	slices.SortFunc(rs.Offsets, func(a, b groupstate.CommittedOffset) int {
		if c := strings.Compare(a.GroupID, b.GroupID); c != 0 {
			return c
		}
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return rs
}

// LogEnds are where the partitions of the groups' topics end now (cluster.TopicLogs, read
// from a live cluster, is one).
type LogEnds interface {
	// LogEnd returns the log end offset of topic's partition, or why there is none (missing,
	// non-empty: the topic or the partition is not on the cluster).
	LogEnd(topic string, partition int32) (end int64, missing string)
}

// LagRow is one committed offset with its partition's log end offset and the lag, as
// kafka-consumer-groups --describe prints them (CURRENT-OFFSET, LOG-END-OFFSET, LAG).
type LagRow struct {
	groupstate.CommittedOffset
	// LogEnd is the partition's log end offset; nil when there is none (Missing says why).
	LogEnd *int64
	// Lag is LogEnd - CommittedOffset, never below 0 (nil without LogEnd).
	Lag     *int64
	Missing string
}

// Lag joins committed offsets with the logs' end offsets.
func Lag(offs []groupstate.CommittedOffset, ends LogEnds) []LagRow {
	out := make([]LagRow, 0, len(offs))
	for _, o := range offs {
		r := LagRow{CommittedOffset: o}
		if end, missing := ends.LogEnd(o.Topic, o.Partition); missing != "" {
			r.Missing = missing
		} else {
			lag := max(end-o.CommittedOffset, 0)
			r.LogEnd, r.Lag = &end, &lag
		}
		out = append(out, r)
	}
	return out
}

// GroupOffsets returns the selected group's committed offsets in states that the filter
// keeps (what a restore commits back), and the group's type there: a group that no longer
// exists is a simple classic group, as Kafka treats its offsets.
func (s OffsetSelection) GroupOffsets(states []groupstate.View) ([]groupstate.CommittedOffset, groupstate.GroupType) {
	var offs []groupstate.CommittedOffset
	t := groupstate.GroupTypeClassic
	for _, st := range states {
		offs = append(offs, s.Offsets(st, s.Group)...)
		if gt, ok := st.GroupType(s.Group); ok {
			t = gt
		}
	}
	return offs, t
}
