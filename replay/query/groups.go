package query

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// Activity is a replay observer that remembers, per group, the last record that touched it
// and, for groups that no longer exist, the record that deleted them. A state holds neither:
// it knows what exists, not when it last moved nor what was removed. One Activity watches one
// partition (observers are not shared between parallel engines).
type Activity struct {
	groups map[string]*activityEntry
	// groups whose pending transactional offsets a producer holds: its marker touches them.
	txn map[int64]map[string]bool
	// recent is the entry of the last record's group: the records of one batch, and of a
	// run of batches, are usually one group's.
	recent *activityEntry
	// askAlways turns the shortcuts off (tests: the reference the shortcuts must agree with).
	askAlways bool
}

type activityEntry struct {
	id      string // the map's key: the Activity's own copy of the group id
	last    RecordRef
	typ     groupstate.GroupType // the type the group had when it was last seen existing
	present bool
	deleted *Deletion
}

// Deletion is the record that removed a group: a tombstone of its group metadata (or of the
// last record that kept it), with the type the group had.
type Deletion struct {
	Offset    int64                `json:"offset"`
	Timestamp int64                `json:"timestamp"`
	Record    string               `json:"record"` // e.g. "GroupMetadata tombstone"
	Type      groupstate.GroupType `json:"type"`
}

// ObservesKeysOnly makes Activity a replay.KeysObserver: it reads a record's key and whether it
// is a tombstone, never its value, so the engine need not decode values for it.
func (a *Activity) ObservesKeysOnly() {}

// NewActivity returns an empty Activity.
func NewActivity() *Activity {
	return &Activity{groups: map[string]*activityEntry{}, txn: map[int64]map[string]bool{}}
}

// Observe implements replay.Observer. Most records are values for a group already seen
// existing, of its own type (offset commits, or a streams group's own records): a value never
// deletes a group, and one of the group's own type does not change its type, so those cost a
// comparison with the previous record's group (or one map lookup) and the state is asked only
// for new groups, other record types and tombstones.
func (a *Activity) Observe(ev *replay.Event, st groupstate.View) {
	b := ev.Batch
	r := RecordRef{Offset: ev.Offset, Timestamp: ev.Timestamp, TimestampType: timestampKind(b), BatchBase: b.BaseOffset, Control: b.Attributes.Control()}
	if b.Magic == 0 {
		r.Timestamp = -1
	} else if b.Attributes.TimestampType() == eventlog.LogAppendTime {
		r.Timestamp = b.MaxTimestamp
	}
	if ev.Marker != nil {
		for g := range a.txn[ev.Marker.ProducerID] {
			a.groups[g].last = r
		}
		delete(a.txn, ev.Marker.ProducerID)
		return
	}
	k := &ev.Record.Key
	if k.Group == "" {
		return
	}
	e, seen := a.recent, true
	if e == nil || e.id != k.Group || a.askAlways {
		e, seen = a.groups[k.Group]
	}
	if !seen {
		// The event's strings alias the batch: the map keys are copies.
		e = &activityEntry{id: strings.Clone(k.Group)}
		a.groups[e.id] = e
	}
	a.recent = e
	g := e.id
	e.last = r
	if b.ProducerID != groupstate.NoProducerID && !b.Attributes.Control() {
		set := a.txn[b.ProducerID]
		if set == nil {
			set = map[string]bool{}
			a.txn[b.ProducerID] = set
		}
		set[g] = true
	}
	tomb := ev.Record.Tombstone()
	if seen && e.present && !tomb && !a.askAlways && (k.Type == recordcodec.OffsetCommit || k.Type == recordcodec.LegacyOffsetCommit || groupstate.RecordGroupType(int16(k.Type)) == e.typ) {
		return
	}
	typ, exists := st.GroupType(g)
	existed, prev := e.present, e.typ
	if !existed && tomb {
		// A group metadata tombstone for a group the log no longer shows being created
		// (compaction removed its records): still the record that deleted it.
		prev, existed = metadataTombstone[k.Type]
	}
	switch {
	case exists:
		e.present, e.typ, e.deleted = true, typ, nil
	case existed && ev.Violation == nil:
		what := k.Type.String()
		if tomb {
			what += " tombstone"
		}
		e.present, e.deleted = false, &Deletion{Offset: r.Offset, Timestamp: r.Timestamp, Record: what, Type: prev}
	}
}

// metadataTombstone is the group type whose metadata record each type is: its tombstone
// deletes the group.
var metadataTombstone = map[recordcodec.RecordType]groupstate.GroupType{
	recordcodec.GroupMetadata:         groupstate.GroupTypeClassic,
	recordcodec.ConsumerGroupMetadata: groupstate.GroupTypeConsumer,
	recordcodec.ShareGroupMetadata:    groupstate.GroupTypeShare,
	recordcodec.StreamsGroupMetadata:  groupstate.GroupTypeStreams,
}

// LastRecord returns the last record that touched group g (a record keyed by it, or the marker
// that ended a transaction holding its offsets).
func (a *Activity) LastRecord(g string) (RecordRef, bool) {
	if e, ok := a.groups[g]; ok {
		return e.last, true
	}
	return RecordRef{}, false
}

// Deleted returns the record that deleted group g, when g existed and no longer does.
func (a *Activity) Deleted(g string) (Deletion, bool) {
	if e, ok := a.groups[g]; ok && e.deleted != nil {
		return *e.deleted, true
	}
	return Deletion{}, false
}

// DeletedIDs returns the ids of the deleted groups, sorted.
func (a *Activity) DeletedIDs() []string {
	var out []string
	for g, e := range a.groups {
		if e.deleted != nil {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// KnownIDs returns every group id a record named, existing or not, sorted.
func (a *Activity) KnownIDs() []string {
	var out []string
	for g := range a.groups {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// PartitionState is one replayed partition as the queries read it: its state and, when the
// replay was observed, its Activity.
type PartitionState struct {
	Partition int32
	View      groupstate.View
	Activity  *Activity // nil: not observed (no last-record times, no deleted groups)
}

// GroupRow is one line of the group list.
type GroupRow struct {
	GroupID string               `json:"groupId"`
	Type    groupstate.GroupType `json:"type"`
	// ProtocolType is what Kafka's ListGroups reports as the protocol: the classic group's
	// protocol type ("consumer", "connect", "" for a simple group), or consumer, share,
	// streams for the modern types.
	ProtocolType string `json:"protocolType"`
	// Assignor is the classic group's chosen protocol (range, cooperative-sticky, ...) or the
	// server assignor the consumer group's members ask for; "" when the log does not say.
	Assignor  string `json:"assignor"`
	State     string `json:"state"` // Kafka's state names; "Dead" for a deleted group
	Simple    bool   `json:"simple"`
	Partition int32  `json:"partition"`
	Members   int    `json:"members"`
	// Generation is a classic group's; GroupEpoch and AssignmentEpoch a modern group's;
	// TopologyEpoch a streams group's (nil: no topology record).
	Generation      *int32 `json:"generation,omitempty"`
	GroupEpoch      *int32 `json:"groupEpoch,omitempty"`
	AssignmentEpoch *int32 `json:"assignmentEpoch,omitempty"`
	TopologyEpoch   *int32 `json:"topologyEpoch,omitempty"`
	// Offsets is the number of committed offsets; PendingOffsets those in open transactions.
	Offsets        int `json:"committedOffsets"`
	PendingOffsets int `json:"pendingOffsets"`
	// LastRecord is the last record that touched the group (nil when not observed).
	LastRecord *RecordRef `json:"lastRecord,omitempty"`
	// Deleted is set for a deleted group (listed only with GroupFilter.IncludeDeleted).
	Deleted *Deletion `json:"deleted,omitempty"`
}

// GroupFilter selects rows: by type, by state (case-insensitive), by a shell-style name
// pattern (path.Match: *, ?, [...]), and whether deleted groups are listed.
type GroupFilter struct {
	Types          map[groupstate.GroupType]bool
	States         []string
	Pattern        string
	IncludeDeleted bool
}

// ValidStates are the state names a filter can ask for (Kafka's, plus Dead for deleted groups).
var ValidStates = []string{"Empty", "Stable", "Assigning", "Reconciling", "NotReady", "PreparingRebalance", "CompletingRebalance", "Dead"}

// Validate reports a bad pattern or an unknown state name.
func (f GroupFilter) Validate() error {
	if f.Pattern != "" {
		if _, err := path.Match(f.Pattern, ""); err != nil {
			return badf("--pattern %q: %v", f.Pattern, err)
		}
	}
	for _, s := range f.States {
		if !slices.ContainsFunc(ValidStates, func(v string) bool { return strings.EqualFold(v, s) }) {
			return badf("--state %q: want one of %s", s, strings.Join(ValidStates, ", "))
		}
	}
	return nil
}

func (f GroupFilter) keep(r *GroupRow) bool {
	if f.Types != nil && !f.Types[r.Type] {
		return false
	}
	if len(f.States) > 0 && !slices.ContainsFunc(f.States, func(s string) bool { return strings.EqualFold(s, r.State) }) {
		return false
	}
	if f.Pattern != "" {
		if ok, _ := path.Match(f.Pattern, r.GroupID); !ok {
			return false
		}
	}
	return true
}

// ListGroups lists the groups of every partition, sorted by group id (then partition), as
// Kafka's ListGroups would at that point, with what a state knows of each: type, protocol,
// state, members, epochs, offsets, and from the Activity the last record and deletions.
func ListGroups(parts []PartitionState, f GroupFilter) []GroupRow {
	var rows []GroupRow
	for _, ps := range parts {
		st := ps.View
		pending := map[string]int{}
		for _, pt := range st.PendingTransactions() {
			for _, o := range pt.Offsets {
				pending[o.GroupID]++
			}
		}
		for _, id := range st.GroupIDs() {
			g, _ := st.GroupSummary(id)
			r := groupRow(g)
			r.Partition = ps.Partition
			r.Offsets = st.NumGroupOffsets(id)
			r.PendingOffsets = pending[g.GroupID]
			if ps.Activity != nil {
				if l, ok := ps.Activity.LastRecord(g.GroupID); ok {
					r.LastRecord = &l
				}
			}
			if f.keep(&r) {
				rows = append(rows, r)
			}
		}
		if !f.IncludeDeleted || ps.Activity == nil {
			continue
		}
		for _, id := range ps.Activity.DeletedIDs() {
			d, _ := ps.Activity.Deleted(id)
			r := GroupRow{GroupID: id, Type: d.Type, State: "Dead", Partition: ps.Partition, Deleted: &d,
				Offsets: st.NumGroupOffsets(id), PendingOffsets: pending[id]}
			if l, ok := ps.Activity.LastRecord(id); ok {
				r.LastRecord = &l
			}
			if f.keep(&r) {
				rows = append(rows, r)
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b GroupRow) int {
		if c := strings.Compare(a.GroupID, b.GroupID); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return rows
}

func groupRow(g groupstate.GroupSummary) GroupRow {
	r := GroupRow{GroupID: g.GroupID, Type: g.Type, State: g.State, ProtocolType: g.ProtocolType, Simple: g.Simple,
		Members: g.Members, Assignor: g.Protocol, Generation: g.Generation,
		GroupEpoch: g.GroupEpoch, AssignmentEpoch: g.AssignmentEpoch, TopologyEpoch: g.TopologyEpoch}
	if g.Type == groupstate.GroupTypeConsumer {
		r.Assignor = g.ServerAssignor
	}
	return r
}

// EpochLabel renders a row's epochs in one cell: "generation 4", "7 (assignment 7)",
// "3 (assignment 3, topology 0)".
func (r *GroupRow) EpochLabel() string {
	switch {
	case r.Deleted != nil:
		return "-"
	case r.Generation != nil:
		return fmt.Sprintf("generation %d", *r.Generation)
	case r.GroupEpoch == nil:
		return "-"
	}
	s := fmt.Sprintf("%d (assignment %d", *r.GroupEpoch, *r.AssignmentEpoch)
	if r.TopologyEpoch != nil {
		s += fmt.Sprintf(", topology %d", *r.TopologyEpoch)
	}
	return s + ")"
}
