package audit

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
)

// Finding kinds.
const (
	KindViolation             = "violation"
	KindDamagedInput          = "damaged-input"
	KindTargetAssignmentSplit = "target-assignment-split"
	KindMemberEpochAhead      = "member-epoch-ahead"
	KindTaskTwiceOnProcess    = "task-twice-on-process"
	KindOpenTransaction       = "open-transaction"
	KindOffsetsOfDeletedGroup = "offsets-of-deleted-group"
	KindWrongPartition        = "wrong-partition"
	// KindUnknownRecordType: records of a type the replayed Kafka version's loader does not
	// know, skipped as it skips them (one finding per partition and type, with the count).
	KindUnknownRecordType = "unknown-record-type"
	// KindControlDataKey: a record of a control batch whose key is not a 4-byte version-0
	// control key (a data record in a control batch); Kafka reads its first four bytes as the
	// control type and ignores the rest (one finding per partition, with the count).
	KindControlDataKey = "control-batch-data-key"
)

// Finding is one thing worth an operator's look.
type Finding struct {
	Partition int32
	// Offset is the record's offset, or -1 for a finding about the state at the end of the log.
	Offset int64
	Kind   string
	Detail string
	// Time is the record's timestamp in Unix milliseconds (-1: none, or the end of the log).
	Time int64
	// Group is the group the finding is about ("" when it is not about one group).
	Group string
	// Next says what to look at next; INPUT stands for the command's input.
	Next string
	// Event is the explained event behind the finding (replay/explain), when there is one;
	// Episode the writes an offsets-written-while-empty finding sums up.
	Event   *explain.Event
	Episode *Episode

	// Severity ranks the finding (severity.go); Certainty, Evidence and Alternatives say how
	// sure its cause is: the explained event's, or proved by the records or the state the
	// finding names when it states no cause of its own.
	Severity     Severity
	Certainty    explain.Certainty
	Evidence     []string
	Alternatives []explain.Alternative
	// Count is how many things the finding tells (1, or the members a members-fenced finding
	// folds, from First to Last).
	Count       int
	First, Last explain.Position
	longestLife int64
}

// Audit collects the findings of a replay. Give Observer(p) to partition p's engine, replay,
// then call Finish with the engines. Partitions may replay concurrently.
type Audit struct {
	mu        sync.Mutex
	opts      Options
	findings  []Finding
	batches   map[int32]*batchAudit
	explained map[int32]*explained
}

// New returns an empty audit with the default thresholds.
func New() *Audit { return NewWith(Options{}) }

// NewWith returns an empty audit with opts.
func NewWith(opts Options) *Audit {
	return &Audit{opts: opts, batches: map[int32]*batchAudit{}, explained: map[int32]*explained{}}
}

// Observer returns the observer that audits partition p's records as they replay.
func (a *Audit) Observer(p int32) replay.Observer {
	b := &batchAudit{partition: p, base: -1, members: map[string]int{}, meta: map[string]bool{}, groups: map[string]string{}, unknown: map[recordcodec.RecordType]*oddRecords{}}
	x := newExplained(p, a.opts.Explain)
	a.mu.Lock()
	a.batches[p] = b
	a.explained[p] = x
	a.mu.Unlock()
	return observers{b, x}
}

// Finish audits the end state of every replayed engine, adds what the input's report says was
// damaged (report may be nil) and checks the partition placement of every group against
// numPartitions (0: not checked). It returns every finding, sorted.
func (a *Audit) Finish(engines []*replay.Engine, report *eventlog.Report, numPartitions int32) []Finding {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := slices.Clone(a.findings)
	for _, b := range a.batches {
		b.flush()
		out = append(out, b.findings...)
		out = append(out, b.oddFindings()...)
	}
	for _, x := range a.explained {
		out = append(out, x.findings()...)
	}
	if report != nil {
		for _, p := range report.Problems() {
			if p.Kind.Damage() {
				out = append(out, Finding{Partition: p.Partition, Offset: p.Offset, Kind: KindDamagedInput, Detail: p.Error(), Time: -1})
			}
		}
	}
	for _, e := range engines {
		p := e.Partition()
		out = append(out, StateFindings(p, e.State())...)
		if b := a.batches[p]; b != nil && numPartitions > 0 {
			groups := make(map[string]bool, len(b.groups))
			for g := range b.groups {
				groups[g] = true
			}
			out = append(out, Placement(p, groups, numPartitions)...)
		}
	}
	return finish(out)
}

// atEnd orders end-of-log findings (offset -1) after the records'.
func atEnd(o int64) int64 {
	if o < 0 {
		return math.MaxInt64
	}
	return o
}

// batchAudit checks Kafka's write atomicity of target assignments while the log replays, and
// remembers the groups that have records in the partition.
type batchAudit struct {
	partition int32
	base      int64
	baseTime  int64           // the timestamp of the batch's first record
	members   map[string]int  // group -> target member values minus tombstones in the current batch
	meta      map[string]bool // group -> target metadata value in the current batch
	findings  []Finding
	groups    map[string]string // groups with records in this partition (each its own key)
	last      string            // the group of the previous record (a key of groups)
	unknown   map[recordcodec.RecordType]*oddRecords
	dataKeys  oddRecords // control records with data keys
}

// oddRecords counts records worth one finding, however many there are.
type oddRecords struct {
	count       int64
	first, last int64 // offsets
	firstTime   int64 // the first one's timestamp (Unix ms)
	keyLen      int   // the first one's key length (control records)
}

func (o *oddRecords) add(offset, timestamp int64) {
	if o.count == 0 {
		o.first, o.firstTime = offset, timestamp
	}
	o.count++
	o.last = offset
}

// oddFindings returns the findings for unknown record types and control data keys.
func (a *batchAudit) oddFindings() []Finding {
	var out []Finding
	types := make([]recordcodec.RecordType, 0, len(a.unknown))
	for t := range a.unknown {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		o := a.unknown[t]
		out = append(out, Finding{Partition: a.partition, Offset: o.first, Kind: KindUnknownRecordType, Time: o.firstTime,
			Detail: fmt.Sprintf("%d record(s) of type %d, unknown to the replayed Kafka version's loader, at offsets %d to %d: skipped, as Kafka skips them (a newer Kafka's records, or damage?)", o.count, int16(t), o.first, o.last),
			Next:   fmt.Sprintf("`replay decode INPUT --partition %d --from-offset %d --to-offset %d` shows them; a newer --kafka-version may know the type", a.partition, o.first, o.first)})
	}
	if o := a.dataKeys; o.count > 0 {
		out = append(out, Finding{Partition: a.partition, Offset: o.first, Kind: KindControlDataKey, Time: o.firstTime,
			Detail: fmt.Sprintf("%d record(s) of control batches at offsets %d to %d have keys that are not 4-byte version-0 control keys (the first is %d bytes): data records in a control batch? Kafka reads their first 4 bytes as the control type", o.count, o.first, o.last, o.keyLen),
			Next:   fmt.Sprintf("`replay decode INPUT --partition %d --from-offset %d --to-offset %d` shows the batch", a.partition, o.first, o.first)})
	}
	return out
}

func (a *batchAudit) flush() {
	groups := make([]string, 0, len(a.members))
	for g := range a.members {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		n := a.members[g]
		// A static member's replacement moves one target from the old member id to the new
		// one (a tombstone and a value, no metadata record): only a surplus of values needs
		// the metadata record.
		if n > 0 && !a.meta[g] {
			a.findings = append(a.findings, Finding{Partition: a.partition, Offset: a.base, Kind: KindTargetAssignmentSplit, Time: a.baseTime, Group: g,
				Detail: fmt.Sprintf("group %s: %d target-assignment member record(s) in the batch at offset %d without the target-assignment metadata record", g, n, a.base)})
		}
	}
	clear(a.members)
	clear(a.meta)
}

// Observe implements replay.Observer.
func (a *batchAudit) Observe(ev *replay.Event, _ groupstate.View) {
	if ev.Batch.BaseOffset != a.base {
		a.flush()
		a.base, a.baseTime = ev.Batch.BaseOffset, ev.Timestamp
	}
	if ev.Violation != nil {
		a.findings = append(a.findings, Finding{Partition: a.partition, Offset: ev.Offset, Kind: KindViolation, Detail: ev.Violation.Error(),
			Time: ev.Timestamp, Group: strings.Clone(ev.Record.Key.Group)})
	}
	if ev.Batch.Attributes.Control() {
		a.controlKey(ev)
	}
	if ev.Skipped == "unknown-type" {
		o := a.unknown[ev.Record.Key.Type]
		if o == nil {
			o = &oddRecords{}
			a.unknown[ev.Record.Key.Type] = o
		}
		o.add(ev.Offset, ev.Timestamp)
	}
	k := ev.Record.Key
	if ev.Marker != nil || ev.Skipped != "" {
		return
	}
	if k.Group != a.last || a.last == "" {
		// Records come in runs of one group: the map is asked once per run.
		own, ok := a.groups[k.Group]
		if !ok {
			own = strings.Clone(k.Group) // the event's strings alias the batch
			a.groups[own] = own
		}
		a.last = own
	}
	// The maps keep a.last, the group's own copy: k.Group aliases the batch, whose buffer the
	// reader reuses before flush reads the maps.
	tomb := ev.Record.Value == nil
	switch k.Type {
	case recordcodec.ConsumerGroupTargetAssignmentMember, recordcodec.ShareGroupTargetAssignmentMember, recordcodec.StreamsGroupTargetAssignmentMember:
		// a.last, not k.Group: a map key must not alias the batch, whose bytes the source
		// may reuse once the batch is applied.
		if tomb {
			a.members[a.last]--
		} else {
			a.members[a.last]++
		}
		return
	}
	if tomb {
		return
	}
	switch k.Type {
	case recordcodec.ConsumerGroupTargetAssignmentMetadata, recordcodec.ShareGroupTargetAssignmentMetadata, recordcodec.StreamsGroupTargetAssignmentMetadata:
		a.meta[a.last] = true
	}
}

// controlKey counts a control record whose key is not a version-0 control key of 4 bytes.
func (a *batchAudit) controlKey(ev *replay.Event) {
	for i := range ev.Batch.Records {
		r := &ev.Batch.Records[i]
		if r.Offset != ev.Offset {
			continue
		}
		if len(r.Key) != 4 || r.Key[0] != 0 || r.Key[1] != 0 {
			if a.dataKeys.count == 0 {
				a.dataKeys.keyLen = len(r.Key)
			}
			a.dataKeys.add(ev.Offset, ev.Timestamp)
		}
		return
	}
}

// Placement reports the groups (with records in partition p) that Kafka maps to another of
// numPartitions partitions.
func Placement(p int32, groups map[string]bool, numPartitions int32) []Finding {
	ids := make([]string, 0, len(groups))
	for g := range groups {
		ids = append(ids, g)
	}
	sort.Strings(ids)
	var out []Finding
	for _, g := range ids {
		if want := recordcodec.PartitionFor(g, numPartitions); want != p {
			out = append(out, Finding{Partition: p, Offset: -1, Kind: KindWrongPartition, Time: -1, Group: g,
				Detail: fmt.Sprintf("group %q has records in partition %d but maps to partition %d of %d", g, p, want, numPartitions)})
		}
	}
	return out
}

// PartitionCount returns the partition count when parts look like a whole __consumer_offsets
// topic (0..n-1 all present, at least two), 0 otherwise.
func PartitionCount(parts []int32) int32 {
	if len(parts) < 2 {
		return 0
	}
	for i, p := range parts {
		if p != int32(i) {
			return 0
		}
	}
	return int32(len(parts))
}

// StateFindings audits the state of partition p at the end of its log. It reads the groups
// one at a time (a copy of each, not of the whole state).
func StateFindings(p int32, st groupstate.View) []Finding {
	var out []Finding
	add := func(kind, group, format string, args ...any) {
		out = append(out, Finding{Partition: p, Offset: -1, Kind: kind, Detail: fmt.Sprintf(format, args...), Time: -1, Group: group})
	}
	owners := map[ownedTask]int{} // reused from group to group
	for _, id := range st.GroupIDs() {
		switch typ, _ := st.GroupType(id); typ {
		case groupstate.GroupTypeConsumer:
			g, _ := st.ConsumerGroup(id)
			for _, m := range g.Members {
				if m.MemberEpoch > g.GroupEpoch {
					add(KindMemberEpochAhead, id, "consumer group %s: member %s at epoch %d, group epoch %d", id, m.MemberID, m.MemberEpoch, g.GroupEpoch)
				}
			}
		case groupstate.GroupTypeShare:
			g, _ := st.ShareGroup(id)
			for _, m := range g.Members {
				if m.MemberEpoch > g.GroupEpoch {
					add(KindMemberEpochAhead, id, "share group %s: member %s at epoch %d, group epoch %d", id, m.MemberID, m.MemberEpoch, g.GroupEpoch)
				}
			}
		case groupstate.GroupTypeStreams:
			s, _ := st.StreamsGroup(id)
			for _, m := range s.Members {
				if m.MemberEpoch != nil && *m.MemberEpoch > s.GroupEpoch {
					add(KindMemberEpochAhead, id, "streams group %s: member %s at epoch %d, group epoch %d", id, m.MemberID, *m.MemberEpoch, s.GroupEpoch)
				}
			}
			out = append(out, tasksOwnedTwice(p, &s, owners)...)
		}
	}
	for _, pt := range st.PendingTransactions() {
		var tps []string
		for _, o := range pt.Offsets {
			tps = append(tps, fmt.Sprintf("%s/%s-%d", o.GroupID, o.Topic, o.Partition))
		}
		add(KindOpenTransaction, "", "producer %d has a transaction open at the end of the log with %d pending offsets: %s", pt.ProducerID, len(pt.Offsets), strings.Join(tps, ", "))
	}
	for _, gid := range st.OffsetGroupIDs() {
		if _, ok := st.GroupType(gid); !ok {
			add(KindOffsetsOfDeletedGroup, gid, "group %s does not exist but has %d committed offsets", gid, len(st.Offsets(gid)))
		}
	}
	return out
}

// ownedTask is a task on a process.
type ownedTask struct {
	process, subtopology string
	partition            int32
}

// tasksOwnedTwice reports the tasks of a streams group that more than one role owns on one
// process (an active and a standby, or two of a kind). Counting comes first (owners is
// scratch, emptied here); the roles of the few tasks owned twice are listed afterwards.
func tasksOwnedTwice(p int32, s *groupstate.StreamsGroup, owners map[ownedTask]int) []Finding {
	clear(owners)
	each := func(f func(t ownedTask, role string)) {
		for _, m := range s.Members {
			if m.Metadata == nil || m.AssignedTasks == nil {
				continue
			}
			proc := m.Metadata.ProcessID
			for _, t := range m.AssignedTasks.ActiveTasks {
				for _, part := range t.Partitions {
					f(ownedTask{proc, t.SubtopologyID, part}, "active on "+m.MemberID)
				}
			}
			for _, list := range [][]groupstate.TaskIDs{m.AssignedTasks.StandbyTasks, m.AssignedTasks.WarmupTasks} {
				for _, t := range list {
					for _, part := range t.Partitions {
						f(ownedTask{proc, t.SubtopologyID, part}, "standby/warm-up on "+m.MemberID)
					}
				}
			}
		}
	}
	twice := 0
	for _, m := range s.Members { // the counting pass, without the role strings
		if m.Metadata == nil || m.AssignedTasks == nil {
			continue
		}
		proc := m.Metadata.ProcessID
		for _, list := range [][]groupstate.TaskIDs{m.AssignedTasks.StandbyTasks, m.AssignedTasks.WarmupTasks} {
			for _, t := range list {
				for _, part := range t.Partitions {
					if owners[ownedTask{proc, t.SubtopologyID, part}]++; owners[ownedTask{proc, t.SubtopologyID, part}] == 2 {
						twice++
					}
				}
			}
		}
		for _, t := range m.AssignedTasks.ActiveTasks {
			for _, part := range t.Partitions {
				if owners[ownedTask{proc, t.SubtopologyID, part}]++; owners[ownedTask{proc, t.SubtopologyID, part}] == 2 {
					twice++
				}
			}
		}
	}
	if twice == 0 {
		return nil
	}
	roles := map[string][]string{} // "process|subtopology|partition" -> roles, in member order
	each(func(t ownedTask, role string) {
		if owners[t] > 1 {
			key := fmt.Sprintf("%s|%s|%d", t.process, t.subtopology, t.partition)
			roles[key] = append(roles[key], role)
		}
	})
	keys := make([]string, 0, len(roles))
	for k := range roles {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []Finding
	for _, k := range keys {
		parts := strings.SplitN(k, "|", 3)
		out = append(out, Finding{Partition: p, Offset: -1, Kind: KindTaskTwiceOnProcess, Time: -1, Group: s.GroupID, Detail: fmt.Sprintf("streams group %s: task %s_%s is owned %d times on process %s (%s)", s.GroupID, parts[1], parts[2], len(roles[k]), parts[0], strings.Join(roles[k], ", "))})
	}
	return out
}
