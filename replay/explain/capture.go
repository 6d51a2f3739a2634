package explain

import (
	"slices"
	"strconv"
	"strings"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// stepKind is what a group record does, as the batch interpreter reads it.
type stepKind uint8

const (
	stOther stepKind = iota
	stMemberMeta
	stMemberMetaTomb
	stTarget
	stTargetTomb
	stTargetMeta
	stTargetMetaTomb
	stCurrent
	stCurrentTomb
	stGroupMeta
	stGroupMetaTomb
	stClassic
	stClassicTomb
	stTopology
	stRegex
	stRegexTomb
	stShareState
)

// step is a group record reduced to what the explanation needs (copied: the engine reuses
// the record's value and buffers).
type step struct {
	kind   stepKind
	typ    string // the group type the record belongs to (consumer, share, streams; classic)
	pos    Position
	member string

	meta     *memberModel // stMemberMeta: the member's metadata fields
	items    items        // stTarget, stCurrent (assigned)
	pending  items        // stCurrent
	epoch    int32        // stTargetMeta, stCurrent, stGroupMeta
	prev     int32        // stCurrent
	state    int8         // stCurrent
	hash     int64        // stGroupMeta
	valid    int32        // stGroupMeta: streams validated topology epoch
	configs  string       // stGroupMeta: streams assignment configs
	classic  *classicStep // stClassic
	topology map[string][]string
	regex    string
	resolved string
}

type classicStep struct {
	protocolType string
	protocol     string
	generation   int32
	members      map[string]*memberModel
}

// recordGroupType is the model's name of the type of group whose records t's are (the
// schema's, groupstate.RecordGroupType); consumer for the others.
func recordGroupType(t recordcodec.RecordType) string {
	if typ := groupstate.RecordGroupType(int16(t)); typ != "" {
		return string(typ)
	}
	return typeConsumer
}

func captureStep(k recordcodec.Key, v recordcodec.Value, pos Position) step {
	s := step{typ: recordGroupType(k.Type), pos: pos, member: strings.Clone(k.Member)}
	if v == nil {
		captureTombstone(&s, k)
		return s
	}
	if captureMember(&s, v) {
		return s
	}
	captureGroup(&s, k, v)
	return s
}

// captureTombstone reduces a tombstone to its step kind.
func captureTombstone(s *step, k recordcodec.Key) {
	{
		switch k.Type {
		case recordcodec.ConsumerGroupMemberMetadata, recordcodec.ShareGroupMemberMetadata, recordcodec.StreamsGroupMemberMetadata:
			s.kind = stMemberMetaTomb
		case recordcodec.ConsumerGroupTargetAssignmentMember, recordcodec.ShareGroupTargetAssignmentMember, recordcodec.StreamsGroupTargetAssignmentMember:
			s.kind = stTargetTomb
		case recordcodec.ConsumerGroupTargetAssignmentMetadata, recordcodec.ShareGroupTargetAssignmentMetadata, recordcodec.StreamsGroupTargetAssignmentMetadata:
			s.kind = stTargetMetaTomb
		case recordcodec.ConsumerGroupCurrentMemberAssignment, recordcodec.ShareGroupCurrentMemberAssignment, recordcodec.StreamsGroupCurrentMemberAssignment:
			s.kind = stCurrentTomb
		case recordcodec.ConsumerGroupMetadata, recordcodec.ShareGroupMetadata, recordcodec.StreamsGroupMetadata:
			s.kind = stGroupMetaTomb
		case recordcodec.GroupMetadata:
			s.kind = stClassicTomb
		case recordcodec.ConsumerGroupRegularExpression:
			s.kind, s.regex = stRegexTomb, strings.Clone(k.Regex)
		}
	}
}

// captureMember reduces a member's record (metadata, target, current assignment) to a step;
// false for the others.
func captureMember(s *step, v recordcodec.Value) bool {
	switch v := v.(type) {
	case *recordcodec.ConsumerGroupMemberMetadataValue:
		m := &memberModel{id: s.member, clientID: strings.Clone(v.ClientId), host: strings.Clone(v.ClientHost),
			instanceID: cloneStrPtr(v.InstanceId), protocol: typeConsumer, rebalanceTimeoutMs: v.RebalanceTimeoutMs, sessionTimeoutMs: -1}
		topics := slices.Clone(v.SubscribedTopicNames)
		slices.Sort(topics)
		m.subscription = strings.Join(topics, ",")
		if v.SubscribedTopicRegex != nil && *v.SubscribedTopicRegex != "" {
			m.subscription += " /" + *v.SubscribedTopicRegex + "/"
		}
		m.subscription = strings.Clone(m.subscription)
		if v.ClassicMemberMetadata != nil {
			m.protocol = typeClassic
			m.sessionTimeoutMs = v.ClassicMemberMetadata.SessionTimeoutMs
		}
		s.kind, s.meta = stMemberMeta, m
	case *recordcodec.ShareGroupMemberMetadataValue:
		topics := slices.Clone(v.SubscribedTopicNames)
		slices.Sort(topics)
		s.kind, s.meta = stMemberMeta, &memberModel{id: s.member, clientID: strings.Clone(v.ClientId), host: strings.Clone(v.ClientHost),
			protocol: typeShare, subscription: strings.Clone(strings.Join(topics, ",")), rebalanceTimeoutMs: -1, sessionTimeoutMs: -1}
	case *recordcodec.StreamsGroupMemberMetadataValue:
		s.kind, s.meta = stMemberMeta, &memberModel{id: s.member, clientID: strings.Clone(v.ClientId), host: strings.Clone(v.ClientHost),
			instanceID: cloneStrPtr(v.InstanceId), processID: strings.Clone(v.ProcessId), protocol: typeStreams,
			subscription: "topology epoch " + strconv.Itoa(int(v.TopologyEpoch)), rebalanceTimeoutMs: v.RebalanceTimeoutMs, sessionTimeoutMs: -1}
	case *recordcodec.ConsumerGroupTargetAssignmentMemberValue:
		s.kind, s.items = stTarget, topicItems(v.TopicPartitions)
	case *recordcodec.ShareGroupTargetAssignmentMemberValue:
		s.kind, s.items = stTarget, topicItems(v.TopicPartitions)
	case *recordcodec.StreamsGroupTargetAssignmentMemberValue:
		it := itemsCap(countTasks(v.ActiveTasks) + countTasks(v.StandbyTasks) + countTasks(v.WarmupTasks))
		it = taskItems(it, roleActive, v.ActiveTasks)
		it = taskItems(it, roleStandby, v.StandbyTasks)
		it = taskItems(it, roleWarmup, v.WarmupTasks)
		s.kind, s.items = stTarget, it.normalize()
	case *recordcodec.ConsumerGroupTargetAssignmentMetadataValue:
		s.kind, s.epoch = stTargetMeta, v.AssignmentEpoch
	case *recordcodec.ShareGroupTargetAssignmentMetadataValue:
		s.kind, s.epoch = stTargetMeta, v.AssignmentEpoch
	case *recordcodec.StreamsGroupTargetAssignmentMetadataValue:
		s.kind, s.epoch = stTargetMeta, v.AssignmentEpoch
	case *recordcodec.ConsumerGroupCurrentMemberAssignmentValue:
		s.kind, s.epoch, s.prev, s.state = stCurrent, v.MemberEpoch, v.PreviousMemberEpoch, v.State
		s.items, s.pending = topicItemsE(v.AssignedPartitions), topicItemsE(v.PartitionsPendingRevocation)
	case *recordcodec.ShareGroupCurrentMemberAssignmentValue:
		s.kind, s.epoch, s.prev, s.state = stCurrent, v.MemberEpoch, v.PreviousMemberEpoch, v.State
		s.items = topicItems(v.AssignedPartitions)
	case *recordcodec.StreamsGroupCurrentMemberAssignmentValue:
		s.kind, s.epoch, s.prev, s.state = stCurrent, v.MemberEpoch, v.PreviousMemberEpoch, v.State
		it := itemsCap(countTasksE(v.ActiveTasks) + countTasksE(v.StandbyTasks) + countTasksE(v.WarmupTasks))
		pend := itemsCap(countTasksE(v.ActiveTasksPendingRevocation) + countTasksE(v.StandbyTasksPendingRevocation) + countTasksE(v.WarmupTasksPendingRevocation))
		it = taskItemsE(it, roleActive, v.ActiveTasks)
		it = taskItemsE(it, roleStandby, v.StandbyTasks)
		it = taskItemsE(it, roleWarmup, v.WarmupTasks)
		pend = taskItemsE(pend, roleActive, v.ActiveTasksPendingRevocation)
		pend = taskItemsE(pend, roleStandby, v.StandbyTasksPendingRevocation)
		pend = taskItemsE(pend, roleWarmup, v.WarmupTasksPendingRevocation)
		s.items, s.pending = it.normalize(), pend.normalize()
	default:
		return false
	}
	return true
}

// captureGroup reduces a group-level record (metadata, target metadata, classic group,
// topology, share state, regex) to a step.
func captureGroup(s *step, k recordcodec.Key, v recordcodec.Value) {
	switch v := v.(type) {
	case *recordcodec.ConsumerGroupMetadataValue:
		s.kind, s.epoch, s.hash, s.valid = stGroupMeta, v.Epoch, v.MetadataHash, -1
	case *recordcodec.ShareGroupMetadataValue:
		s.kind, s.epoch, s.hash, s.valid = stGroupMeta, v.Epoch, v.MetadataHash, -1
	case *recordcodec.StreamsGroupMetadataValue:
		s.kind, s.epoch, s.hash, s.valid = stGroupMeta, v.Epoch, v.MetadataHash, v.ValidatedTopologyEpoch
		var cfg []string
		for _, kv := range v.LastAssignmentConfigs {
			cfg = append(cfg, kv.Key+"="+kv.Value)
		}
		slices.Sort(cfg)
		s.configs = strings.Clone(strings.Join(cfg, ", "))
	case *recordcodec.GroupMetadataValue:
		cs := &classicStep{protocolType: strings.Clone(v.ProtocolType), generation: v.Generation, members: classicMembers(v, s.pos)}
		if v.Protocol != nil {
			cs.protocol = strings.Clone(*v.Protocol)
		}
		s.kind, s.classic = stClassic, cs
	case *recordcodec.StreamsGroupTopologyValue:
		t := map[string][]string{}
		for _, st := range v.Subtopologies {
			var src []string
			for _, x := range st.SourceTopics {
				src = append(src, strings.Clone(x))
			}
			for _, x := range st.RepartitionSourceTopics {
				src = append(src, strings.Clone(x.Name))
			}
			t[strings.Clone(st.SubtopologyId)] = src
		}
		s.kind, s.epoch, s.topology = stTopology, v.Epoch, t
	case *recordcodec.ShareGroupStatePartitionMetadataValue:
		var it items
		for _, t := range v.InitializedTopics {
			for _, p := range t.Partitions {
				it = append(it, item{space: spaceTopic, name: strings.Clone(t.TopicName), part: p})
			}
		}
		s.kind, s.items = stShareState, it.normalize()
	case *recordcodec.ConsumerGroupRegularExpressionValue:
		topics := slices.Clone(v.Topics)
		slices.Sort(topics)
		s.kind, s.regex, s.resolved = stRegex, strings.Clone(k.Regex), strings.Clone(strings.Join(topics, ","))
	}
}
