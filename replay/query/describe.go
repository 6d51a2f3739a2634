package query

import (
	"iter"
	"slices"
	"strings"

	"github.com/coordlog/coordlog/groupstate"
)

// DescribeFilter selects what a description shows: one group (its offsets, and the open
// transactions holding any of them) or every group, of some types or of all.
type DescribeFilter struct {
	Group string
	Types map[groupstate.GroupType]bool // nil: every type
}

// Description is what describe shows of the states of several partitions: each partition's
// groups, the committed offsets of groups that no longer exist, the open transactions, and
// the names the log gives topic ids (read across every partition: ids are the cluster's).
type Description struct {
	Partitions []PartitionDescription
	Names      map[string]string // topic id (its string) -> name
}

// PartitionDescription is one partition's part of a Description.
type PartitionDescription struct {
	View   groupstate.View
	filter DescribeFilter
	// TopicNames are the names this partition's records give topic ids, by id.
	TopicNames []TopicName
	// OrphanOffsets are committed offsets whose group no longer exists, and
	// PendingTransactions the open transactions (every one, or those holding an offset of the
	// group); both only when no type is selected.
	OrphanOffsets       []groupstate.CommittedOffset
	PendingTransactions []groupstate.PendingTransaction
}

// TopicName is a topic id with the name the log gives it.
type TopicName struct {
	TopicID string `json:"topicId"`
	Name    string `json:"name"`
}

// Describe describes the states of views.
func Describe(views []groupstate.View, f DescribeFilter) Description {
	d := Description{Names: map[string]string{}}
	for _, st := range views {
		pd := PartitionDescription{View: st, filter: f}
		for id, n := range st.TopicNames() {
			pd.TopicNames = append(pd.TopicNames, TopicName{TopicID: id.String(), Name: n})
			d.Names[id.String()] = n
		}
		slices.SortFunc(pd.TopicNames, func(a, b TopicName) int { return strings.Compare(a.TopicID, b.TopicID) })
		if f.Types == nil {
			for _, gid := range st.OffsetGroupIDs() {
				if _, ok := st.GroupType(gid); ok || f.Group != "" && gid != f.Group {
					continue
				}
				pd.OrphanOffsets = append(pd.OrphanOffsets, st.Offsets(gid)...)
			}
			for _, pt := range st.PendingTransactions() {
				if f.Group == "" || slices.ContainsFunc(pt.Offsets, func(o groupstate.CommittedOffset) bool { return o.GroupID == f.Group }) {
					pd.PendingTransactions = append(pd.PendingTransactions, pt)
				}
			}
		}
		d.Partitions = append(d.Partitions, pd)
	}
	return d
}

// Groups yields the selected groups by id, each read from the state when its turn comes, so
// that only one is held at a time (read its offsets with View.Offsets then).
func (p *PartitionDescription) Groups() iter.Seq[groupstate.Group] {
	return func(yield func(groupstate.Group) bool) {
		for _, id := range p.View.GroupIDs() {
			if p.filter.Group != "" && id != p.filter.Group {
				continue
			}
			if t, _ := p.View.GroupType(id); p.filter.Types != nil && !p.filter.Types[t] {
				continue
			}
			g, _ := p.View.Group(id)
			if !yield(g) {
				return
			}
		}
	}
}
