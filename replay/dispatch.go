package replay

import (
	"errors"
	"slices"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// errNoReplayRule is a record type (or value schema) that dispatch has no case for: a bug,
// which TestEveryRecordTypeHasAReplayRule catches for every type the schema declares.
var errNoReplayRule = errors.New("no replay rule")

// dispatch applies one decoded record to the state: GroupCoordinatorShard.replay. It and the
// switches the generator writes from the schema (zz_dispatch.go: dispatchValue,
// dispatchTombstone and the conversions) are the only place in coordlog that changes a state:
// every record comes through here (engine.go's replay), whichever path decoded it.
//
// The record's strings may alias the batch and its value is reused for the next record of its
// type (applyRecord): the conversions fill the engine's reused groupstate inputs (cv), whose
// slices point into the record, and the mutators copy what they keep. A streams assignment
// record whose every task list the cache holds (tasklists.go) is applied from the lists the
// state stored for them instead (dispatchStored).
func (e *Engine) dispatch(rec *recordcodec.Record, offset, producerID int64) error {
	if rec.Value == nil {
		return dispatchTombstone(e.state, &rec.Key)
	}
	return e.dispatchValue(rec, offset, producerID)
}

// dispatchOffsetCommit is dispatchValue's case of an offset commit (record 1), small enough
// to inline: offset commits are most of any real log, and their path (applyOffsetCommit)
// calls it without the switches, which cost a commit's replay a few percent.
func (e *Engine) dispatchOffsetCommit(k *recordcodec.Key, v *recordcodec.OffsetCommitValue, offset, producerID int64) error {
	return e.state.ReplayOffsetCommit(offset, producerID, k.Group, k.Topic, k.Partition, e.cv.offsetCommitValue(v))
}

// dispatchStored applies a record 21 or 22 from the task lists the state stored for its
// encoded lists (the cache's hit, c.hitTarget or c.hitCurrent, with the record's fixed
// fields in c.spans): the state changes as the record's own lists would change it.
func (e *Engine) dispatchStored(k *recordcodec.Key) error {
	c := &e.lists
	if k.Type == recordcodec.StreamsGroupTargetAssignmentMember {
		return e.state.ReplayStreamsGroupTargetAssignmentMemberStored(k.Group, k.Member, c.hitTarget)
	}
	sp := &c.spans
	return e.state.ReplayStreamsGroupCurrentMemberAssignmentStored(k.Group, k.Member, sp.MemberEpoch, sp.PreviousMemberEpoch, sp.State, c.hitCurrent)
}

// fill fills *buf with in, each element converted in place by f (which may keep memory in
// the element: its own lists), and returns it; nil for an empty in, as the mutators' inputs
// have always been. The buffer keeps its capacity from record to record.
func fill[E, F any](buf *[]F, in []E, f func(*F, *E)) []F {
	if len(in) == 0 {
		return nil
	}
	out := (*buf)[:cap(*buf)]
	if len(out) < len(in) {
		out = append(out, make([]F, len(in)-len(out))...)
	}
	out = out[:len(in)]
	for i := range in {
		f(&out[i], &in[i])
	}
	*buf = out
	return out
}

// decodeConsumerProtocol decodes a consumer-protocol member's subscription and assignment:
// subscribed topics sorted and deduplicated, assigned partitions merged by topic.
func decodeConsumerProtocol(cm *groupstate.ClassicMember) {
	sub, serr := recordcodec.DecodeConsumerSubscriptionLenient(cm.Subscription)
	asg, aerr := recordcodec.DecodeConsumerAssignmentLenient(cm.Assignment)
	if serr != nil || aerr != nil {
		return
	}
	cm.ProtocolDecoded = true
	cm.SubscribedTopics = sortedSet(sub.Topics)
	var named []groupstate.NamedTopicPartitions
	for _, tp := range asg.AssignedPartitions {
		named = append(named, groupstate.NamedTopicPartitions{Topic: tp.Topic, Partitions: tp.Partitions})
	}
	cm.AssignedPartitions = mergeNamed(named)
}

func sortedSet(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// mergeNamed sorts by topic and merges repeated topics, with sorted, deduplicated partitions.
func mergeNamed(in []groupstate.NamedTopicPartitions) []groupstate.NamedTopicPartitions {
	if len(in) == 0 {
		return nil
	}
	byTopic := map[string][]int32{}
	var topics []string
	for _, tp := range in {
		if _, ok := byTopic[tp.Topic]; !ok {
			topics = append(topics, tp.Topic)
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partitions...)
	}
	slices.Sort(topics)
	out := make([]groupstate.NamedTopicPartitions, 0, len(topics))
	for _, t := range topics {
		ps := slices.Clone(byTopic[t])
		slices.Sort(ps)
		out = append(out, groupstate.NamedTopicPartitions{Topic: t, Partitions: slices.Compact(ps)})
	}
	return out
}
