package replay

import (
	"errors"
	"fmt"
	"slices"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// errNoReplayRule is a record type (or value schema) that dispatch has no case for: a bug,
// which TestEveryRecordTypeHasAReplayRule catches for every type the schema declares.
var errNoReplayRule = errors.New("no replay rule")

// dispatch applies one decoded record to the state: GroupCoordinatorShard.replay. This is the
// only place in coordlog that maps a record type to a state change.
//
// The record's strings may alias the batch and its value is reused for the next record of its
// type (applyRecord): the conversions below fill the engine's reused groupstate inputs (cv),
// whose slices point into the record, and the mutators copy what they keep.
func (e *Engine) dispatch(rec *recordcodec.Record, offset, producerID int64) error {
	s, k, c := e.state, rec.Key, &e.cv
	if rec.Value == nil {
		return dispatchTombstone(s, k)
	}
	switch v := rec.Value.(type) {
	case *recordcodec.LegacyOffsetCommitValue:
		// GroupCoordinatorShard.convertLegacyOffsetCommitValue.
		return s.ReplayOffsetCommit(offset, producerID, k.Group, k.Topic, k.Partition, groupstate.OffsetCommitValue{
			Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitTimestamp: v.CommitTimestamp, ExpireTimestamp: -1,
		})
	case *recordcodec.OffsetCommitValue:
		return s.ReplayOffsetCommit(offset, producerID, k.Group, k.Topic, k.Partition, groupstate.OffsetCommitValue{
			Offset: v.Offset, LeaderEpoch: v.LeaderEpoch, Metadata: v.Metadata, CommitTimestamp: v.CommitTimestamp,
			ExpireTimestamp: v.ExpireTimestamp, TopicID: groupstate.Uuid(v.TopicId),
		})
	case *recordcodec.GroupMetadataValue:
		return s.ReplayGroupMetadata(k.Group, e.classicGroupValue(v))
	case *recordcodec.ConsumerGroupMetadataValue:
		return s.ReplayConsumerGroupMetadata(k.Group, groupstate.ConsumerGroupMetadataValue{Epoch: v.Epoch, MetadataHash: v.MetadataHash})
	case *recordcodec.ConsumerGroupPartitionMetadataValue:
		return s.ReplayConsumerGroupPartitionMetadata(k.Group, groupstate.ConsumerGroupPartitionMetadataValue{Topics: convert(&c.topics, v.Topics, topicMetadata)})
	case *recordcodec.ConsumerGroupMemberMetadataValue:
		return s.ReplayConsumerGroupMemberMetadata(k.Group, k.Member, c.consumerMember(v))
	case *recordcodec.ConsumerGroupTargetAssignmentMetadataValue:
		return s.ReplayConsumerGroupTargetAssignmentMetadata(k.Group, groupstate.TargetAssignmentMetadataValue{AssignmentEpoch: v.AssignmentEpoch, AssignmentTimestamp: v.AssignmentTimestamp})
	case *recordcodec.ConsumerGroupTargetAssignmentMemberValue:
		return s.ReplayConsumerGroupTargetAssignmentMember(k.Group, k.Member, convert(&c.tps, v.TopicPartitions, topicPartitions))
	case *recordcodec.ConsumerGroupCurrentMemberAssignmentValue:
		return s.ReplayConsumerGroupCurrentMemberAssignment(k.Group, k.Member, groupstate.ConsumerCurrentAssignmentValue{
			MemberEpoch: v.MemberEpoch, PreviousMemberEpoch: v.PreviousMemberEpoch, State: v.State,
			AssignedPartitions:          convert(&c.tpes[0], v.AssignedPartitions, topicPartitionsWithEpochs),
			PartitionsPendingRevocation: convert(&c.tpes[1], v.PartitionsPendingRevocation, topicPartitionsWithEpochs),
		})
	case *recordcodec.ConsumerGroupRegularExpressionValue:
		return s.ReplayConsumerGroupRegularExpression(k.Group, k.Regex, groupstate.RegularExpressionValue{Topics: v.Topics, Version: v.ResolvedVersion, Timestamp: v.Timestamp})

	case *recordcodec.ShareGroupPartitionMetadataValue:
		return s.ReplayShareGroupPartitionMetadata(k.Group, groupstate.ConsumerGroupPartitionMetadataValue{Topics: convert(&c.topics, v.Topics, topicMetadata)})
	case *recordcodec.ShareGroupMemberMetadataValue:
		return s.ReplayShareGroupMemberMetadata(k.Group, k.Member, groupstate.ShareMemberMetadataValue{
			RackID: v.RackId, ClientID: v.ClientId, ClientHost: v.ClientHost, SubscribedTopicNames: v.SubscribedTopicNames,
		})
	case *recordcodec.ShareGroupMetadataValue:
		return s.ReplayShareGroupMetadata(k.Group, groupstate.ShareGroupMetadataValue{Epoch: v.Epoch, MetadataHash: v.MetadataHash})
	case *recordcodec.ShareGroupMetadataValue40:
		return s.ReplayShareGroupMetadata(k.Group, groupstate.ShareGroupMetadataValue{Epoch: v.Epoch})
	case *recordcodec.ShareGroupTargetAssignmentMetadataValue:
		return s.ReplayShareGroupTargetAssignmentMetadata(k.Group, groupstate.TargetAssignmentMetadataValue{AssignmentEpoch: v.AssignmentEpoch, AssignmentTimestamp: v.AssignmentTimestamp})
	case *recordcodec.ShareGroupTargetAssignmentMemberValue:
		return s.ReplayShareGroupTargetAssignmentMember(k.Group, k.Member, convert(&c.tps, v.TopicPartitions, topicPartitions))
	case *recordcodec.ShareGroupCurrentMemberAssignmentValue:
		return s.ReplayShareGroupCurrentMemberAssignment(k.Group, k.Member, groupstate.ShareCurrentAssignmentValue{
			MemberEpoch: v.MemberEpoch, PreviousMemberEpoch: v.PreviousMemberEpoch, State: v.State,
			AssignedPartitions: convert(&c.tps, v.AssignedPartitions, topicPartitions),
		})
	case *recordcodec.ShareGroupStatePartitionMetadataValue:
		return s.ReplayShareGroupStatePartitionMetadata(k.Group, groupstate.ShareStatePartitionMetadataValue{
			InitializingTopics: convert(&c.infos[0], v.InitializingTopics, topicPartitionsInfo),
			InitializedTopics:  convert(&c.infos[1], v.InitializedTopics, topicPartitionsInfo),
			DeletingTopics:     convert(&c.deleting, v.DeletingTopics, topicInfo),
		})
	case *recordcodec.ShareGroupStatePartitionMetadataValue40:
		return s.ReplayShareGroupStatePartitionMetadata(k.Group, groupstate.ShareStatePartitionMetadataValue{
			InitializedTopics: convert(&c.infos[1], v.InitializedTopics, topicPartitionsInfo),
			DeletingTopics:    convert(&c.deleting, v.DeletingTopics, topicInfo),
		})

	case *recordcodec.StreamsGroupMetadataValue:
		return s.ReplayStreamsGroupMetadata(k.Group, groupstate.StreamsGroupMetadataValue{
			Epoch: v.Epoch, MetadataHash: v.MetadataHash, ValidatedTopologyEpoch: v.ValidatedTopologyEpoch,
			StoredDescriptionTopologyEpoch: v.StoredDescriptionTopologyEpoch, FailedDescriptionTopologyEpoch: v.FailedDescriptionTopologyEpoch,
			LastAssignmentConfigs: convert(&c.kvs[0], v.LastAssignmentConfigs, keyValue),
		})
	case *recordcodec.StreamsGroupMemberMetadataValue:
		m := groupstate.StreamsMemberMetadata{
			InstanceID: v.InstanceId, RackID: v.RackId, ClientID: v.ClientId, ClientHost: v.ClientHost,
			RebalanceTimeoutMs: v.RebalanceTimeoutMs, TopologyEpoch: v.TopologyEpoch, ProcessID: v.ProcessId,
			ClientTags: convert(&c.kvs[0], v.ClientTags, keyValue),
		}
		if v.UserEndpoint != nil {
			c.endpoint = groupstate.StreamsEndpoint{Host: v.UserEndpoint.Host, Port: v.UserEndpoint.Port}
			m.UserEndpoint = &c.endpoint
		}
		return s.ReplayStreamsGroupMemberMetadata(k.Group, k.Member, m)
	case *recordcodec.StreamsGroupTargetAssignmentMetadataValue:
		return s.ReplayStreamsGroupTargetAssignmentMetadata(k.Group, groupstate.TargetAssignmentMetadataValue{AssignmentEpoch: v.AssignmentEpoch, AssignmentTimestamp: v.AssignmentTimestamp})
	case *recordcodec.StreamsGroupTargetAssignmentMemberValue:
		return s.ReplayStreamsGroupTargetAssignmentMember(k.Group, k.Member, groupstate.StreamsTargetAssignmentValue{
			ActiveTasks:  convert(&c.tasks[0], v.ActiveTasks, taskIDs),
			StandbyTasks: convert(&c.tasks[1], v.StandbyTasks, taskIDs),
			WarmupTasks:  convert(&c.tasks[2], v.WarmupTasks, taskIDs),
		})
	case *recordcodec.StreamsGroupCurrentMemberAssignmentValue:
		return s.ReplayStreamsGroupCurrentMemberAssignment(k.Group, k.Member, groupstate.StreamsCurrentAssignmentValue{
			MemberEpoch: v.MemberEpoch, PreviousMemberEpoch: v.PreviousMemberEpoch, State: v.State,
			ActiveTasks:                   convert(&c.tasksE[0], v.ActiveTasks, taskIDsWithEpochs),
			StandbyTasks:                  convert(&c.tasksE[1], v.StandbyTasks, taskIDsWithEpochs),
			WarmupTasks:                   convert(&c.tasksE[2], v.WarmupTasks, taskIDsWithEpochs),
			ActiveTasksPendingRevocation:  convert(&c.tasksE[3], v.ActiveTasksPendingRevocation, taskIDsWithEpochs),
			StandbyTasksPendingRevocation: convert(&c.tasksE[4], v.StandbyTasksPendingRevocation, taskIDsWithEpochs),
			WarmupTasksPendingRevocation:  convert(&c.tasksE[5], v.WarmupTasksPendingRevocation, taskIDsWithEpochs),
		})
	case *recordcodec.StreamsGroupTopologyValue:
		return s.ReplayStreamsGroupTopology(k.Group, c.streamsTopology(v))
	}
	return fmt.Errorf("%w for record type %d (%s) value %T", errNoReplayRule, int16(k.Type), k.Type, rec.Value)
}

func dispatchTombstone(s *groupstate.State, k recordcodec.Key) error {
	switch k.Type {
	case recordcodec.LegacyOffsetCommit, recordcodec.OffsetCommit:
		return s.ReplayOffsetCommitTombstone(k.Group, k.Topic, k.Partition)
	case recordcodec.GroupMetadata:
		return s.ReplayGroupMetadataTombstone(k.Group)
	case recordcodec.ConsumerGroupMetadata:
		return s.ReplayConsumerGroupMetadataTombstone(k.Group)
	case recordcodec.ConsumerGroupPartitionMetadata:
		return s.ReplayConsumerGroupPartitionMetadataTombstone(k.Group)
	case recordcodec.ConsumerGroupMemberMetadata:
		return s.ReplayConsumerGroupMemberMetadataTombstone(k.Group, k.Member)
	case recordcodec.ConsumerGroupTargetAssignmentMetadata:
		return s.ReplayConsumerGroupTargetAssignmentMetadataTombstone(k.Group)
	case recordcodec.ConsumerGroupTargetAssignmentMember:
		return s.ReplayConsumerGroupTargetAssignmentMemberTombstone(k.Group, k.Member)
	case recordcodec.ConsumerGroupCurrentMemberAssignment:
		return s.ReplayConsumerGroupCurrentMemberAssignmentTombstone(k.Group, k.Member)
	case recordcodec.ConsumerGroupRegularExpression:
		return s.ReplayConsumerGroupRegularExpressionTombstone(k.Group, k.Regex)
	case recordcodec.ShareGroupPartitionMetadata:
		return s.ReplayShareGroupPartitionMetadataTombstone(k.Group)
	case recordcodec.ShareGroupMemberMetadata:
		return s.ReplayShareGroupMemberMetadataTombstone(k.Group, k.Member)
	case recordcodec.ShareGroupMetadata:
		return s.ReplayShareGroupMetadataTombstone(k.Group)
	case recordcodec.ShareGroupTargetAssignmentMetadata:
		return s.ReplayShareGroupTargetAssignmentMetadataTombstone(k.Group)
	case recordcodec.ShareGroupTargetAssignmentMember:
		return s.ReplayShareGroupTargetAssignmentMemberTombstone(k.Group, k.Member)
	case recordcodec.ShareGroupCurrentMemberAssignment:
		return s.ReplayShareGroupCurrentMemberAssignmentTombstone(k.Group, k.Member)
	case recordcodec.ShareGroupStatePartitionMetadata:
		return s.ReplayShareGroupStatePartitionMetadataTombstone(k.Group)
	case recordcodec.StreamsGroupMetadata:
		return s.ReplayStreamsGroupMetadataTombstone(k.Group)
	case recordcodec.StreamsGroupMemberMetadata:
		return s.ReplayStreamsGroupMemberMetadataTombstone(k.Group, k.Member)
	case recordcodec.StreamsGroupTargetAssignmentMetadata:
		return s.ReplayStreamsGroupTargetAssignmentMetadataTombstone(k.Group)
	case recordcodec.StreamsGroupTargetAssignmentMember:
		return s.ReplayStreamsGroupTargetAssignmentMemberTombstone(k.Group, k.Member)
	case recordcodec.StreamsGroupCurrentMemberAssignment:
		return s.ReplayStreamsGroupCurrentMemberAssignmentTombstone(k.Group, k.Member)
	case recordcodec.StreamsGroupTopology:
		return s.ReplayStreamsGroupTopologyTombstone(k.Group)
	}
	return fmt.Errorf("%w for a tombstone of record type %d (%s)", errNoReplayRule, int16(k.Type), k.Type)
}

// converted is the engine's reused memory for the groupstate inputs that dispatch converts
// records into: each slice keeps its capacity from record to record, so that converting
// allocates nothing once the buffers have grown.
type converted struct {
	topics   []groupstate.TopicMetadata
	tps      []groupstate.TopicPartitions
	tpes     [2][]groupstate.TopicPartitionsWithEpochs
	infos    [2][]groupstate.TopicPartitionsInfo
	deleting []groupstate.TopicInfo
	kvs      [1][]groupstate.KeyValue
	tasks    [3][]groupstate.TaskIDs
	tasksE   [6][]groupstate.TaskIDsWithEpochs
	endpoint groupstate.StreamsEndpoint
	classic  []groupstate.ClassicMember
	classicM groupstate.ClassicMemberMetadata
	subs     []groupstate.Subtopology
}

// convert fills *buf with f of each element of in, reusing its memory; nil for an empty in, as
// the mutators' inputs have always been.
func convert[E, F any](buf *[]F, in []E, f func(*E) F) []F {
	if len(in) == 0 {
		return nil
	}
	out := (*buf)[:0]
	for i := range in {
		out = append(out, f(&in[i]))
	}
	*buf = out
	return out
}

// classicGroupValue converts record 2. Members of protocol type "consumer" also get their
// subscribed topics and assigned partitions decoded, for display (the raw bytes stay), by
// the mutator, which calls decodeConsumerProtocol for the members whose bytes changed.
func (e *Engine) classicGroupValue(v *recordcodec.GroupMetadataValue) groupstate.ClassicGroupValue {
	return groupstate.ClassicGroupValue{
		ProtocolType: v.ProtocolType, Generation: v.Generation, Protocol: v.Protocol, Leader: v.Leader,
		CurrentStateTimestamp: v.CurrentStateTimestamp, DecodeProtocol: decodeConsumerProtocol,
		Members: convert(&e.cv.classic, v.Members, func(m *recordcodec.MemberMetadata) groupstate.ClassicMember {
			return groupstate.ClassicMember{
				MemberID: m.MemberId, GroupInstanceID: m.GroupInstanceId, ClientID: m.ClientId, ClientHost: m.ClientHost,
				RebalanceTimeoutMs: m.RebalanceTimeout, SessionTimeoutMs: m.SessionTimeout,
				Subscription: m.Subscription, Assignment: m.Assignment,
			}
		}),
	}
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

func (c *converted) consumerMember(v *recordcodec.ConsumerGroupMemberMetadataValue) groupstate.ConsumerMemberMetadataValue {
	m := groupstate.ConsumerMemberMetadataValue{
		InstanceID: v.InstanceId, RackID: v.RackId, ClientID: v.ClientId, ClientHost: v.ClientHost,
		SubscribedTopicNames: v.SubscribedTopicNames, SubscribedTopicRegex: v.SubscribedTopicRegex,
		RebalanceTimeoutMs: v.RebalanceTimeoutMs, ServerAssignor: v.ServerAssignor,
	}
	if cm := v.ClassicMemberMetadata; cm != nil {
		c.classicM = groupstate.ClassicMemberMetadata{
			SessionTimeoutMs: cm.SessionTimeoutMs,
			SupportedProtocols: convert(&c.classicM.SupportedProtocols, cm.SupportedProtocols, func(p *recordcodec.ClassicProtocol) groupstate.ClassicProtocol {
				return groupstate.ClassicProtocol{Name: p.Name, Metadata: p.Metadata}
			}),
		}
		m.ClassicMemberMetadata = &c.classicM
	}
	return m
}

func topicMetadata(t *recordcodec.TopicMetadata) groupstate.TopicMetadata {
	return groupstate.TopicMetadata{TopicID: groupstate.Uuid(t.TopicId), TopicName: t.TopicName, NumPartitions: t.NumPartitions}
}

func topicPartitions(t *recordcodec.TopicPartitions) groupstate.TopicPartitions {
	return groupstate.TopicPartitions{TopicID: groupstate.Uuid(t.TopicId), Partitions: t.Partitions}
}

func topicPartitionsWithEpochs(t *recordcodec.TopicPartitionsWithEpochs) groupstate.TopicPartitionsWithEpochs {
	return groupstate.TopicPartitionsWithEpochs{TopicID: groupstate.Uuid(t.TopicId), Partitions: t.Partitions, AssignmentEpochs: t.AssignmentEpochs}
}

func topicPartitionsInfo(t *recordcodec.TopicPartitionsInfo) groupstate.TopicPartitionsInfo {
	return groupstate.TopicPartitionsInfo{TopicID: groupstate.Uuid(t.TopicId), TopicName: t.TopicName, Partitions: t.Partitions}
}

func topicInfo(t *recordcodec.TopicInfo) groupstate.TopicInfo {
	return groupstate.TopicInfo{TopicID: groupstate.Uuid(t.TopicId), TopicName: t.TopicName}
}

func keyValue(kv *recordcodec.KeyValue) groupstate.KeyValue {
	return groupstate.KeyValue{Key: kv.Key, Value: kv.Value}
}

func taskIDs(t *recordcodec.TaskIds) groupstate.TaskIDs {
	return groupstate.TaskIDs{SubtopologyID: t.SubtopologyId, Partitions: t.Partitions}
}

func taskIDsWithEpochs(t *recordcodec.TaskIdsWithEpochs) groupstate.TaskIDsWithEpochs {
	return groupstate.TaskIDsWithEpochs{SubtopologyID: t.SubtopologyId, Partitions: t.Partitions, AssignmentEpochs: t.AssignmentEpochs}
}

// streamsTopology converts record 23 into c.subs, whose elements keep their nested lists'
// memory too.
func (c *converted) streamsTopology(v *recordcodec.StreamsGroupTopologyValue) groupstate.StreamsTopology {
	t := groupstate.StreamsTopology{Epoch: v.Epoch}
	if len(v.Subtopologies) == 0 {
		return t
	}
	if cap(c.subs) < len(v.Subtopologies) {
		c.subs = append(c.subs[:cap(c.subs)], make([]groupstate.Subtopology, len(v.Subtopologies)-cap(c.subs))...)
	}
	c.subs = c.subs[:len(v.Subtopologies)]
	for i := range v.Subtopologies {
		s, st := &v.Subtopologies[i], &c.subs[i]
		st.SubtopologyID, st.SourceTopics, st.SourceTopicRegex, st.RepartitionSinkTopics = s.SubtopologyId, s.SourceTopics, s.SourceTopicRegex, s.RepartitionSinkTopics
		st.StateChangelogTopics = c.topicInfos(&st.StateChangelogTopics, s.StateChangelogTopics)
		st.RepartitionSourceTopics = c.topicInfos(&st.RepartitionSourceTopics, s.RepartitionSourceTopics)
		st.CopartitionGroups = convert(&st.CopartitionGroups, s.CopartitionGroups, func(g *recordcodec.CopartitionGroup) groupstate.CopartitionGroup {
			return groupstate.CopartitionGroup{SourceTopics: g.SourceTopics, SourceTopicRegex: g.SourceTopicRegex, RepartitionSourceTopics: g.RepartitionSourceTopics}
		})
	}
	t.Subtopologies = c.subs
	return t
}

// topicInfos converts into *buf, reusing the elements' config lists.
func (c *converted) topicInfos(buf *[]groupstate.StreamsTopicInfo, in []recordcodec.StreamsTopicInfo) []groupstate.StreamsTopicInfo {
	if len(in) == 0 {
		return nil
	}
	out := (*buf)[:cap(*buf)]
	if len(out) < len(in) {
		out = append(out, make([]groupstate.StreamsTopicInfo, len(in)-len(out))...)
	}
	out = out[:len(in)]
	for i := range in {
		t, o := &in[i], &out[i]
		o.Name, o.Partitions, o.ReplicationFactor = t.Name, t.Partitions, t.ReplicationFactor
		o.TopicConfigs = convert(&o.TopicConfigs, t.TopicConfigs, keyValue)
	}
	*buf = out
	return out
}
