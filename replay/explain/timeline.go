package explain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// Kind says what an event is about.
type Kind string

const (
	// KindRecord is a record of the group: its explanation says what it changed.
	KindRecord Kind = "record"
	// KindTombstone is a tombstone of the group.
	KindTombstone Kind = "tombstone"
	// KindTransactionEnd is a COMMIT or ABORT marker of a transaction that wrote offsets of
	// the group.
	KindTransactionEnd Kind = "transaction-end"
)

// Event is one explained record or marker.
type Event struct {
	Partition int32
	Offset    int64
	// BatchBase is the base offset of the record's batch; ProducerID the batch's producer
	// (-1: not transactional).
	BatchBase  int64
	ProducerID int64
	Timestamp  int64
	Kind       Kind
	// Type is the record type (-1 for a marker).
	Type recordcodec.RecordType
	// Group is the group the event belongs to; Member, Topic and TopicPartition name the
	// member or the committed partition the record keys, when it does.
	Group          string
	Member         string
	Topic          string
	TopicPartition int32
	// Explanation is what the record did, in one sentence (without the position).
	Explanation string
	// Violation is the replay rule the record broke (it was not applied), "" if none.
	Violation string
	// Skipped says why the record was not applied: "unknown-type" or "control", "" if it was.
	Skipped string
}

// Text is the explanation with the violation or skip noted after it, as the timeline prints it.
func (e *Event) Text() string {
	s := e.Explanation
	if e.Violation != "" {
		s += " -- VIOLATION: " + e.Violation
	}
	if e.Skipped != "" {
		s += " -- skipped (" + e.Skipped + ")"
	}
	return s
}

// Timeline explains the records of one group in one partition as they replay. Use it as the
// engine's observer; Emit receives every event.
type Timeline struct {
	group     string
	partition int32
	emit      func(*Event)
	epochs    map[string]int32   // "generation", "group", "assignment" -> last seen
	txn       map[int64][]string // producer id -> topic-partitions it wrote for the group
	members   map[string]bool    // members with a metadata record
	batchBase int64
	targets   int // target-assignment member records of the group in the current batch
}

// NewTimeline returns the timeline of group in partition p; emit is called for every event,
// during the engine's callback (the event is the caller's to keep).
func NewTimeline(group string, p int32, emit func(*Event)) *Timeline {
	return &Timeline{group: group, partition: p, emit: emit, epochs: map[string]int32{}, txn: map[int64][]string{}, members: map[string]bool{}}
}

// Observe implements replay.Observer.
func (t *Timeline) Observe(ev *replay.Event, _ groupstate.View) {
	b := ev.Batch
	if b.BaseOffset != t.batchBase {
		t.batchBase, t.targets = b.BaseOffset, 0
	}
	out := Event{Partition: t.partition, Offset: ev.Offset, BatchBase: b.BaseOffset, ProducerID: b.ProducerID, Timestamp: ev.Timestamp, Type: -1, Skipped: ev.Skipped}
	if ev.Violation != nil {
		out.Violation = ev.Violation.Err.Error()
	}
	switch {
	case ev.Marker != nil:
		tps, ok := t.txn[ev.Marker.ProducerID]
		if !ok {
			return
		}
		delete(t.txn, ev.Marker.ProducerID)
		out.Kind, out.Group = KindTransactionEnd, t.group
		if ev.Marker.Commit {
			out.Explanation = fmt.Sprintf("transaction of producer %d committed: its offsets for %s are now committed (unless a newer record already set them)", ev.Marker.ProducerID, strings.Join(tps, ", "))
		} else {
			out.Explanation = fmt.Sprintf("transaction of producer %d aborted: its pending offsets for %s are dropped", ev.Marker.ProducerID, strings.Join(tps, ", "))
		}
	case ev.Record.Key.Group != t.group:
		return
	default:
		k := ev.Record.Key
		out.Kind, out.Type, out.Group = KindRecord, k.Type, t.group
		out.Member, out.Topic, out.TopicPartition = strings.Clone(k.Member), strings.Clone(k.Topic), k.Partition
		if ev.Record.Value == nil {
			out.Kind = KindTombstone
		}
		out.Explanation = t.explain(ev)
	}
	t.emit(&out)
}

func (t *Timeline) epochChange(key string, v int32, what string) string {
	old, ok := t.epochs[key]
	t.epochs[key] = v
	switch {
	case !ok:
		return fmt.Sprintf("%s %d", what, v)
	case old == v:
		return fmt.Sprintf("%s %d (unchanged)", what, v)
	}
	return fmt.Sprintf("%s %d -> %d", what, old, v)
}

func (t *Timeline) explain(ev *replay.Event) string {
	k := ev.Record.Key
	name := fmt.Sprintf("[%d %s] ", int16(k.Type), k.Type)
	if ev.Record.Value == nil {
		return name + t.tombstone(k)
	}
	switch v := ev.Record.Value.(type) {
	case *recordcodec.LegacyOffsetCommitValue:
		return name + fmt.Sprintf("offset for %s-%d committed: %d (legacy record)", k.Topic, k.Partition, v.Offset)
	case *recordcodec.OffsetCommitValue:
		tp := fmt.Sprintf("%s-%d", k.Topic, k.Partition)
		if pid := ev.Batch.ProducerID; pid >= 0 {
			if !slices.Contains(t.txn[pid], tp) {
				t.txn[pid] = append(t.txn[pid], tp)
			}
			return name + fmt.Sprintf("offset for %s written by the transaction of producer %d: %d (pending until its COMMIT or ABORT marker)", tp, pid, v.Offset)
		}
		return name + fmt.Sprintf("offset for %s committed: %d (leader epoch %d, metadata %q)", tp, v.Offset, v.LeaderEpoch, v.Metadata)
	case *recordcodec.GroupMetadataValue:
		ids := make([]string, len(v.Members))
		for i, m := range v.Members {
			ids[i] = m.MemberId
		}
		what := fmt.Sprintf("classic group %s, protocol type %q, protocol %s, leader %s, %d members",
			t.epochChange("generation", v.Generation, "generation"), v.ProtocolType, strp(v.Protocol), strp(v.Leader), len(v.Members))
		if len(ids) > 0 {
			what += " [" + strings.Join(ids, ", ") + "]"
		}
		return name + what
	case *recordcodec.ConsumerGroupMetadataValue:
		return name + "consumer group: " + t.epochChange("group", v.Epoch, "group epoch")
	case *recordcodec.ShareGroupMetadataValue:
		return name + "share group: " + t.epochChange("group", v.Epoch, "group epoch")
	case *recordcodec.StreamsGroupMetadataValue:
		return name + fmt.Sprintf("streams group: %s, validated topology epoch %d", t.epochChange("group", v.Epoch, "group epoch"), v.ValidatedTopologyEpoch)
	case *recordcodec.ConsumerGroupPartitionMetadataValue:
		return name + fmt.Sprintf("subscription metadata of %d topics (legacy record)", len(v.Topics))
	case *recordcodec.ConsumerGroupMemberMetadataValue:
		return name + t.memberJoin(k.Member, fmt.Sprintf("client %s at %s, subscribed to [%s]%s", v.ClientId, v.ClientHost,
			strings.Join(v.SubscribedTopicNames, ","), regexNote(v.SubscribedTopicRegex)))
	case *recordcodec.ShareGroupMemberMetadataValue:
		return name + t.memberJoin(k.Member, fmt.Sprintf("client %s at %s, subscribed to [%s]", v.ClientId, v.ClientHost, strings.Join(v.SubscribedTopicNames, ",")))
	case *recordcodec.StreamsGroupMemberMetadataValue:
		return name + t.memberJoin(k.Member, fmt.Sprintf("process %s, client %s at %s, topology epoch %d", v.ProcessId, v.ClientId, v.ClientHost, v.TopologyEpoch))
	case *recordcodec.ConsumerGroupTargetAssignmentMetadataValue:
		return name + t.targetMeta(v.AssignmentEpoch, ev)
	case *recordcodec.ShareGroupTargetAssignmentMetadataValue:
		return name + t.targetMeta(v.AssignmentEpoch, ev)
	case *recordcodec.StreamsGroupTargetAssignmentMetadataValue:
		return name + t.targetMeta(v.AssignmentEpoch, ev)
	case *recordcodec.ConsumerGroupTargetAssignmentMemberValue:
		t.targets++
		return name + fmt.Sprintf("target assignment of member %s: %d topics, %d partitions", k.Member, len(v.TopicPartitions), countPartitions(v.TopicPartitions))
	case *recordcodec.ShareGroupTargetAssignmentMemberValue:
		t.targets++
		return name + fmt.Sprintf("target assignment of member %s: %d topics, %d partitions", k.Member, len(v.TopicPartitions), countPartitions(v.TopicPartitions))
	case *recordcodec.StreamsGroupTargetAssignmentMemberValue:
		t.targets++
		return name + fmt.Sprintf("target assignment of member %s: active %s, standby %s, warm-up %s", k.Member,
			tasksLabel(v.ActiveTasks, rcTask), tasksLabel(v.StandbyTasks, rcTask), tasksLabel(v.WarmupTasks, rcTask))
	case *recordcodec.ConsumerGroupCurrentMemberAssignmentValue:
		return name + fmt.Sprintf("member %s at epoch %d (previous %d), state %s, owns %d partitions, %d pending revocation", k.Member,
			v.MemberEpoch, v.PreviousMemberEpoch, groupstate.ConsumerMemberStateName(v.State), countPartitionsE(v.AssignedPartitions), countPartitionsE(v.PartitionsPendingRevocation))
	case *recordcodec.ShareGroupCurrentMemberAssignmentValue:
		return name + fmt.Sprintf("member %s at epoch %d (previous %d), state %s, owns %d partitions", k.Member,
			v.MemberEpoch, v.PreviousMemberEpoch, groupstate.ConsumerMemberStateName(v.State), countPartitions(v.AssignedPartitions))
	case *recordcodec.StreamsGroupCurrentMemberAssignmentValue:
		return name + fmt.Sprintf("member %s at epoch %d (previous %d), state %s, active %s, standby %s, warm-up %s, pending revocation %s", k.Member,
			v.MemberEpoch, v.PreviousMemberEpoch, groupstate.StreamsMemberStateName(v.State), tasksLabel(v.ActiveTasks, rcTaskE),
			tasksLabel(v.StandbyTasks, rcTaskE), tasksLabel(v.WarmupTasks, rcTaskE), tasksLabel(v.ActiveTasksPendingRevocation, rcTaskE))
	case *recordcodec.ConsumerGroupRegularExpressionValue:
		return name + fmt.Sprintf("regex %q resolved to [%s]", k.Regex, strings.Join(v.Topics, ","))
	case *recordcodec.ShareGroupStatePartitionMetadataValue:
		return name + fmt.Sprintf("share state: %d topics initializing, %d initialized, %d deleting", len(v.InitializingTopics), len(v.InitializedTopics), len(v.DeletingTopics))
	case *recordcodec.StreamsGroupTopologyValue:
		return name + fmt.Sprintf("topology epoch %d with %d subtopologies", v.Epoch, len(v.Subtopologies))
	}
	return name + fmt.Sprintf("value v%d", ev.Record.Value.ValueVersion())
}

func regexNote(re *string) string {
	if re == nil || *re == "" {
		return ""
	}
	return fmt.Sprintf(" and regex %q", *re)
}

func (t *Timeline) memberJoin(member, detail string) string {
	if t.members[member] {
		return fmt.Sprintf("member %s metadata updated: %s", member, detail)
	}
	t.members[strings.Clone(member)] = true
	return fmt.Sprintf("member %s joined: %s", member, detail)
}

func (t *Timeline) targetMeta(epoch int32, ev *replay.Event) string {
	n := t.targets
	t.targets = 0 // one batch can hold several target assignments (a conversion, then a join)
	return fmt.Sprintf("target %s written (%d member records before it in the batch at offset %d)",
		t.epochChange("assignment", epoch, "assignment epoch"), n, ev.Batch.BaseOffset)
}

func (t *Timeline) tombstone(k recordcodec.Key) string {
	switch k.Type {
	case recordcodec.LegacyOffsetCommit, recordcodec.OffsetCommit:
		return fmt.Sprintf("offset for %s-%d deleted (tombstone; pending transactional offsets for it cancelled)", k.Topic, k.Partition)
	case recordcodec.GroupMetadata:
		return "classic group deleted (tombstone removes the group whatever its type)"
	case recordcodec.ConsumerGroupMetadata, recordcodec.ShareGroupMetadata, recordcodec.StreamsGroupMetadata:
		delete(t.epochs, "group")
		return "group deleted"
	case recordcodec.ConsumerGroupCurrentMemberAssignment, recordcodec.ShareGroupCurrentMemberAssignment, recordcodec.StreamsGroupCurrentMemberAssignment:
		return fmt.Sprintf("member %s leaves: current assignment tombstone (epoch -1, assignment cleared)", k.Member)
	case recordcodec.ConsumerGroupTargetAssignmentMember, recordcodec.ShareGroupTargetAssignmentMember, recordcodec.StreamsGroupTargetAssignmentMember:
		return fmt.Sprintf("member %s removed from the target assignment", k.Member)
	case recordcodec.ConsumerGroupMemberMetadata, recordcodec.ShareGroupMemberMetadata, recordcodec.StreamsGroupMemberMetadata:
		delete(t.members, k.Member)
		return fmt.Sprintf("member %s removed (metadata tombstone after its assignment tombstones: left or fenced)", k.Member)
	case recordcodec.ConsumerGroupTargetAssignmentMetadata, recordcodec.ShareGroupTargetAssignmentMetadata, recordcodec.StreamsGroupTargetAssignmentMetadata:
		return "target assignment metadata deleted"
	case recordcodec.ConsumerGroupRegularExpression:
		return fmt.Sprintf("regex %q resolution deleted", k.Regex)
	case recordcodec.StreamsGroupTopology:
		return "topology deleted"
	}
	return "tombstone"
}

func strp(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func countPartitions(tps []recordcodec.TopicPartitions) int {
	n := 0
	for _, tp := range tps {
		n += len(tp.Partitions)
	}
	return n
}

func countPartitionsE(tps []recordcodec.TopicPartitionsWithEpochs) int {
	n := 0
	for _, tp := range tps {
		n += len(tp.Partitions)
	}
	return n
}

// tasksLabel renders task lists as "0:1,2;1:0" ("-" when empty).
func tasksLabel[T any](ts []T, get func(T) (string, []int32)) string {
	if len(ts) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(ts))
	for _, t := range ts {
		id, ps := get(t)
		nums := make([]string, len(ps))
		for i, p := range ps {
			nums[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, id+":"+strings.Join(nums, ","))
	}
	return strings.Join(parts, ";")
}

func rcTask(t recordcodec.TaskIds) (string, []int32)            { return t.SubtopologyId, t.Partitions }
func rcTaskE(t recordcodec.TaskIdsWithEpochs) (string, []int32) { return t.SubtopologyId, t.Partitions }
