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
func (e *Engine) dispatch(rec recordcodec.Record, offset, producerID int64) error {
	s, k := e.state, rec.Key
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
		return s.ReplayGroupMetadata(k.Group, classicGroupValue(v))
	case *recordcodec.ConsumerGroupMetadataValue:
		return s.ReplayConsumerGroupMetadata(k.Group, groupstate.ConsumerGroupMetadataValue{Epoch: v.Epoch, MetadataHash: v.MetadataHash})
	case *recordcodec.ConsumerGroupPartitionMetadataValue:
		return s.ReplayConsumerGroupPartitionMetadata(k.Group, groupstate.ConsumerGroupPartitionMetadataValue{Topics: topicMetadata(v.Topics)})
	case *recordcodec.ConsumerGroupMemberMetadataValue:
		return s.ReplayConsumerGroupMemberMetadata(k.Group, k.Member, consumerMember(v))
	case *recordcodec.ConsumerGroupTargetAssignmentMetadataValue:
		return s.ReplayConsumerGroupTargetAssignmentMetadata(k.Group, groupstate.TargetAssignmentMetadataValue{AssignmentEpoch: v.AssignmentEpoch, AssignmentTimestamp: v.AssignmentTimestamp})
	case *recordcodec.ConsumerGroupTargetAssignmentMemberValue:
		return s.ReplayConsumerGroupTargetAssignmentMember(k.Group, k.Member, topicPartitions(v.TopicPartitions))
	case *recordcodec.ConsumerGroupCurrentMemberAssignmentValue:
		return s.ReplayConsumerGroupCurrentMemberAssignment(k.Group, k.Member, groupstate.ConsumerCurrentAssignmentValue{
			MemberEpoch: v.MemberEpoch, PreviousMemberEpoch: v.PreviousMemberEpoch, State: v.State,
			AssignedPartitions:          topicPartitionsWithEpochs(v.AssignedPartitions),
			PartitionsPendingRevocation: topicPartitionsWithEpochs(v.PartitionsPendingRevocation),
		})
	case *recordcodec.ConsumerGroupRegularExpressionValue:
		return s.ReplayConsumerGroupRegularExpression(k.Group, k.Regex, groupstate.RegularExpressionValue{Topics: v.Topics, Version: v.ResolvedVersion, Timestamp: v.Timestamp})

	case *recordcodec.ShareGroupPartitionMetadataValue:
		return s.ReplayShareGroupPartitionMetadata(k.Group, groupstate.ConsumerGroupPartitionMetadataValue{Topics: topicMetadata(v.Topics)})
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
		return s.ReplayShareGroupTargetAssignmentMember(k.Group, k.Member, topicPartitions(v.TopicPartitions))
	case *recordcodec.ShareGroupCurrentMemberAssignmentValue:
		return s.ReplayShareGroupCurrentMemberAssignment(k.Group, k.Member, groupstate.ShareCurrentAssignmentValue{
			MemberEpoch: v.MemberEpoch, PreviousMemberEpoch: v.PreviousMemberEpoch, State: v.State,
			AssignedPartitions: topicPartitions(v.AssignedPartitions),
		})
	case *recordcodec.ShareGroupStatePartitionMetadataValue:
		return s.ReplayShareGroupStatePartitionMetadata(k.Group, groupstate.ShareStatePartitionMetadataValue{
			InitializingTopics: topicPartitionsInfo(v.InitializingTopics),
			InitializedTopics:  topicPartitionsInfo(v.InitializedTopics),
			DeletingTopics:     topicInfo(v.DeletingTopics),
		})
	case *recordcodec.ShareGroupStatePartitionMetadataValue40:
		return s.ReplayShareGroupStatePartitionMetadata(k.Group, groupstate.ShareStatePartitionMetadataValue{
			InitializedTopics: topicPartitionsInfo(v.InitializedTopics),
			DeletingTopics:    topicInfo(v.DeletingTopics),
		})

	case *recordcodec.StreamsGroupMetadataValue:
		sv := groupstate.StreamsGroupMetadataValue{
			Epoch: v.Epoch, MetadataHash: v.MetadataHash, ValidatedTopologyEpoch: v.ValidatedTopologyEpoch,
			StoredDescriptionTopologyEpoch: v.StoredDescriptionTopologyEpoch, FailedDescriptionTopologyEpoch: v.FailedDescriptionTopologyEpoch,
		}
		for _, c := range v.LastAssignmentConfigs {
			sv.LastAssignmentConfigs = append(sv.LastAssignmentConfigs, groupstate.KeyValue{Key: c.Key, Value: c.Value})
		}
		return s.ReplayStreamsGroupMetadata(k.Group, sv)
	case *recordcodec.StreamsGroupMemberMetadataValue:
		m := groupstate.StreamsMemberMetadata{
			InstanceID: v.InstanceId, RackID: v.RackId, ClientID: v.ClientId, ClientHost: v.ClientHost,
			RebalanceTimeoutMs: v.RebalanceTimeoutMs, TopologyEpoch: v.TopologyEpoch, ProcessID: v.ProcessId,
			ClientTags: keyValues(v.ClientTags),
		}
		if v.UserEndpoint != nil {
			m.UserEndpoint = &groupstate.StreamsEndpoint{Host: v.UserEndpoint.Host, Port: v.UserEndpoint.Port}
		}
		return s.ReplayStreamsGroupMemberMetadata(k.Group, k.Member, m)
	case *recordcodec.StreamsGroupTargetAssignmentMetadataValue:
		return s.ReplayStreamsGroupTargetAssignmentMetadata(k.Group, groupstate.TargetAssignmentMetadataValue{AssignmentEpoch: v.AssignmentEpoch, AssignmentTimestamp: v.AssignmentTimestamp})
	case *recordcodec.StreamsGroupTargetAssignmentMemberValue:
		return s.ReplayStreamsGroupTargetAssignmentMember(k.Group, k.Member, groupstate.StreamsTargetAssignmentValue{
			ActiveTasks: taskIDs(v.ActiveTasks), StandbyTasks: taskIDs(v.StandbyTasks), WarmupTasks: taskIDs(v.WarmupTasks),
		})
	case *recordcodec.StreamsGroupCurrentMemberAssignmentValue:
		return s.ReplayStreamsGroupCurrentMemberAssignment(k.Group, k.Member, groupstate.StreamsCurrentAssignmentValue{
			MemberEpoch: v.MemberEpoch, PreviousMemberEpoch: v.PreviousMemberEpoch, State: v.State,
			ActiveTasks: taskIDsWithEpochs(v.ActiveTasks), StandbyTasks: taskIDsWithEpochs(v.StandbyTasks), WarmupTasks: taskIDsWithEpochs(v.WarmupTasks),
			ActiveTasksPendingRevocation:  taskIDsWithEpochs(v.ActiveTasksPendingRevocation),
			StandbyTasksPendingRevocation: taskIDsWithEpochs(v.StandbyTasksPendingRevocation),
			WarmupTasksPendingRevocation:  taskIDsWithEpochs(v.WarmupTasksPendingRevocation),
		})
	case *recordcodec.StreamsGroupTopologyValue:
		return s.ReplayStreamsGroupTopology(k.Group, streamsTopology(v))
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

// classicGroupValue converts record 2. Members of protocol type "consumer" also get their
// subscribed topics and assigned partitions decoded, for display; the raw bytes stay.
func classicGroupValue(v *recordcodec.GroupMetadataValue) groupstate.ClassicGroupValue {
	g := groupstate.ClassicGroupValue{
		ProtocolType: v.ProtocolType, Generation: v.Generation, Protocol: v.Protocol, Leader: v.Leader,
		CurrentStateTimestamp: v.CurrentStateTimestamp,
	}
	for _, m := range v.Members {
		cm := groupstate.ClassicMember{
			MemberID: m.MemberId, GroupInstanceID: m.GroupInstanceId, ClientID: m.ClientId, ClientHost: m.ClientHost,
			RebalanceTimeoutMs: m.RebalanceTimeout, SessionTimeoutMs: m.SessionTimeout,
			Subscription: m.Subscription, Assignment: m.Assignment,
		}
		if v.ProtocolType == recordcodec.ConsumerProtocolType {
			sub, serr := recordcodec.DecodeConsumerSubscriptionLenient(m.Subscription)
			asg, aerr := recordcodec.DecodeConsumerAssignmentLenient(m.Assignment)
			if serr == nil && aerr == nil {
				cm.ProtocolDecoded = true
				cm.SubscribedTopics = sortedSet(sub.Topics)
				for _, tp := range asg.AssignedPartitions {
					cm.AssignedPartitions = append(cm.AssignedPartitions, groupstate.NamedTopicPartitions{Topic: tp.Topic, Partitions: tp.Partitions})
				}
				cm.AssignedPartitions = mergeNamed(cm.AssignedPartitions)
			}
		}
		g.Members = append(g.Members, cm)
	}
	return g
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

func consumerMember(v *recordcodec.ConsumerGroupMemberMetadataValue) groupstate.ConsumerMemberMetadataValue {
	m := groupstate.ConsumerMemberMetadataValue{
		InstanceID: v.InstanceId, RackID: v.RackId, ClientID: v.ClientId, ClientHost: v.ClientHost,
		SubscribedTopicNames: v.SubscribedTopicNames, SubscribedTopicRegex: v.SubscribedTopicRegex,
		RebalanceTimeoutMs: v.RebalanceTimeoutMs, ServerAssignor: v.ServerAssignor,
	}
	if c := v.ClassicMemberMetadata; c != nil {
		cm := &groupstate.ClassicMemberMetadata{SessionTimeoutMs: c.SessionTimeoutMs}
		for _, p := range c.SupportedProtocols {
			cm.SupportedProtocols = append(cm.SupportedProtocols, groupstate.ClassicProtocol{Name: p.Name, Metadata: p.Metadata})
		}
		m.ClassicMemberMetadata = cm
	}
	return m
}

func topicMetadata(in []recordcodec.TopicMetadata) []groupstate.TopicMetadata {
	var out []groupstate.TopicMetadata
	for _, t := range in {
		out = append(out, groupstate.TopicMetadata{TopicID: groupstate.Uuid(t.TopicId), TopicName: t.TopicName, NumPartitions: t.NumPartitions})
	}
	return out
}

func topicPartitions(in []recordcodec.TopicPartitions) []groupstate.TopicPartitions {
	var out []groupstate.TopicPartitions
	for _, t := range in {
		out = append(out, groupstate.TopicPartitions{TopicID: groupstate.Uuid(t.TopicId), Partitions: t.Partitions})
	}
	return out
}

func topicPartitionsWithEpochs(in []recordcodec.TopicPartitionsWithEpochs) []groupstate.TopicPartitionsWithEpochs {
	var out []groupstate.TopicPartitionsWithEpochs
	for _, t := range in {
		out = append(out, groupstate.TopicPartitionsWithEpochs{TopicID: groupstate.Uuid(t.TopicId), Partitions: t.Partitions, AssignmentEpochs: t.AssignmentEpochs})
	}
	return out
}

func topicPartitionsInfo(in []recordcodec.TopicPartitionsInfo) []groupstate.TopicPartitionsInfo {
	var out []groupstate.TopicPartitionsInfo
	for _, t := range in {
		out = append(out, groupstate.TopicPartitionsInfo{TopicID: groupstate.Uuid(t.TopicId), TopicName: t.TopicName, Partitions: t.Partitions})
	}
	return out
}

func topicInfo(in []recordcodec.TopicInfo) []groupstate.TopicInfo {
	var out []groupstate.TopicInfo
	for _, t := range in {
		out = append(out, groupstate.TopicInfo{TopicID: groupstate.Uuid(t.TopicId), TopicName: t.TopicName})
	}
	return out
}

func keyValues(in []recordcodec.KeyValue) []groupstate.KeyValue {
	var out []groupstate.KeyValue
	for _, kv := range in {
		out = append(out, groupstate.KeyValue{Key: kv.Key, Value: kv.Value})
	}
	return out
}

func taskIDs(in []recordcodec.TaskIds) []groupstate.TaskIDs {
	var out []groupstate.TaskIDs
	for _, t := range in {
		out = append(out, groupstate.TaskIDs{SubtopologyID: t.SubtopologyId, Partitions: t.Partitions})
	}
	return out
}

func taskIDsWithEpochs(in []recordcodec.TaskIdsWithEpochs) []groupstate.TaskIDsWithEpochs {
	var out []groupstate.TaskIDsWithEpochs
	for _, t := range in {
		out = append(out, groupstate.TaskIDsWithEpochs{SubtopologyID: t.SubtopologyId, Partitions: t.Partitions, AssignmentEpochs: t.AssignmentEpochs})
	}
	return out
}

func streamsTopicInfos(in []recordcodec.StreamsTopicInfo) []groupstate.StreamsTopicInfo {
	var out []groupstate.StreamsTopicInfo
	for _, t := range in {
		out = append(out, groupstate.StreamsTopicInfo{Name: t.Name, Partitions: t.Partitions, ReplicationFactor: t.ReplicationFactor, TopicConfigs: keyValues(t.TopicConfigs)})
	}
	return out
}

func streamsTopology(v *recordcodec.StreamsGroupTopologyValue) groupstate.StreamsTopology {
	t := groupstate.StreamsTopology{Epoch: v.Epoch}
	for _, s := range v.Subtopologies {
		st := groupstate.Subtopology{
			SubtopologyID: s.SubtopologyId, SourceTopics: s.SourceTopics, SourceTopicRegex: s.SourceTopicRegex,
			StateChangelogTopics: streamsTopicInfos(s.StateChangelogTopics), RepartitionSinkTopics: s.RepartitionSinkTopics,
			RepartitionSourceTopics: streamsTopicInfos(s.RepartitionSourceTopics),
		}
		for _, c := range s.CopartitionGroups {
			st.CopartitionGroups = append(st.CopartitionGroups, groupstate.CopartitionGroup{
				SourceTopics: c.SourceTopics, SourceTopicRegex: c.SourceTopicRegex, RepartitionSourceTopics: c.RepartitionSourceTopics,
			})
		}
		t.Subtopologies = append(t.Subtopologies, st)
	}
	return t
}
