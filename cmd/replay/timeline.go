package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

type timelineFlags struct {
	replayFlags
	group string
}

func newTimelineCmd(stdout, stderr io.Writer) *cobra.Command {
	var f timelineFlags
	cmd := &cobra.Command{
		Use:   "timeline <segments-dir|db> --group G",
		Short: "Every record that touched a group, in log order, each explained in one line",
		Long: `timeline replays the log and prints every record of one group in log order, with a one-line
explanation: members joining and leaving, epoch changes, target assignments (with the number of
members written in the same batch), current assignments, topologies, offsets committed directly
or by a transaction, and the transaction markers that made pending offsets visible or dropped
them.`,
		Args: argsError(1, "one input: a __consumer_offsets-N directory, a log directory or a coordlog database"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.group == "" {
				return usageError{fmt.Errorf("timeline needs --group")}
			}
			return runTimeline(cmd, args[0], &f, stdout, stderr)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&f.group, "group", "", "the group id (required)")
	return cmd
}

func runTimeline(cmd *cobra.Command, path string, f *timelineFlags, stdout, stderr io.Writer) error {
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	found := 0
	obs := func(p int32) replay.Observer {
		tl := &timeline{group: f.group, w: out, partition: p, epochs: map[string]int32{}, txn: map[int64][]string{}, members: map[string]bool{}}
		return replay.ObserverFunc(func(ev *replay.Event, st groupstate.View) {
			if tl.event(ev, st) {
				found++
			}
		})
	}
	r, err := replayInput(cmd, path, &f.replayFlags, obs, stderr)
	if err != nil {
		return err
	}
	defer r.close()
	if found == 0 {
		fmt.Fprintf(out, "no record of group %q in the log\n", f.group)
	}
	return nil
}

// timeline explains the records of one group. It remembers what it has seen (epochs, members,
// pending transactional offsets) to say what changed.
type timeline struct {
	group     string
	w         io.Writer
	partition int32
	epochs    map[string]int32   // "group", "assignment", "topology" -> last seen
	txn       map[int64][]string // producer id -> topic-partitions it wrote for the group
	members   map[string]bool    // members with a metadata record
	batchBase int64
	targets   int // target-assignment member records of the group in the current batch
}

func (t *timeline) event(ev *replay.Event, st groupstate.View) bool {
	b := ev.Batch
	if b.BaseOffset != t.batchBase {
		t.batchBase, t.targets = b.BaseOffset, 0
	}
	var line string
	switch {
	case ev.Marker != nil:
		tps, ok := t.txn[ev.Marker.ProducerID]
		if !ok {
			return false
		}
		delete(t.txn, ev.Marker.ProducerID)
		if ev.Marker.Commit {
			line = fmt.Sprintf("transaction of producer %d committed: its offsets for %s are now committed (unless a newer record already set them)", ev.Marker.ProducerID, strings.Join(tps, ", "))
		} else {
			line = fmt.Sprintf("transaction of producer %d aborted: its pending offsets for %s are dropped", ev.Marker.ProducerID, strings.Join(tps, ", "))
		}
	case ev.Record.Key.Group != t.group:
		return false
	default:
		line = t.explain(ev, st)
	}
	if ev.Violation != nil {
		line += " -- VIOLATION: " + ev.Violation.Err.Error()
	}
	if ev.Skipped != "" {
		line += " -- skipped (" + ev.Skipped + ")"
	}
	txn := ""
	if b.ProducerID >= 0 {
		txn = fmt.Sprintf(" pid %d", b.ProducerID)
	}
	fmt.Fprintf(t.w, "p%d offset %d [batch %d%s] %s  %s\n", t.partition, ev.Offset, b.BaseOffset, txn, msTime(ev.Timestamp), line)
	return true
}

func (t *timeline) epochChange(key string, v int32, what string) string {
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

func (t *timeline) explain(ev *replay.Event, st groupstate.View) string {
	k := ev.Record.Key
	name := fmt.Sprintf("[%d %s] ", int16(k.Type), k.Type)
	if ev.Record.Value == nil {
		return name + t.tombstone(k, ev)
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

func (t *timeline) memberJoin(member, detail string) string {
	if t.members[member] {
		return fmt.Sprintf("member %s metadata updated: %s", member, detail)
	}
	t.members[strings.Clone(member)] = true
	return fmt.Sprintf("member %s joined: %s", member, detail)
}

func (t *timeline) targetMeta(epoch int32, ev *replay.Event) string {
	n := t.targets
	t.targets = 0 // one batch can hold several target assignments (a conversion, then a join)
	return fmt.Sprintf("target %s written (%d member records before it in the batch at offset %d)",
		t.epochChange("assignment", epoch, "assignment epoch"), n, ev.Batch.BaseOffset)
}

func (t *timeline) tombstone(k recordcodec.Key, ev *replay.Event) string {
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

func rcTask(t recordcodec.TaskIds) (string, []int32)            { return t.SubtopologyId, t.Partitions }
func rcTaskE(t recordcodec.TaskIdsWithEpochs) (string, []int32) { return t.SubtopologyId, t.Partitions }
