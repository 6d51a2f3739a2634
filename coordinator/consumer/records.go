package consumer

import (
	"maps"
	"slices"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/recordcodec"
)

// Records are written as Kafka 4.4 writes them (GroupCoordinatorRecordHelpers), value version
// 0 everywhere; record 5's names and record 16's topics sorted, as Kafka sorts them. One
// deliberate difference, in order only: topics and partitions inside records 7 and 8 are
// sorted (Kafka lists them in the iteration order of the HashMap or HashSet it built them in,
// which depends on the history of that map).

func memberMetadataRecord(g string, m *member) recordcodec.Record {
	v := recordcodec.NewConsumerGroupMemberMetadataValue()
	v.InstanceId, v.RackId = m.instanceID, m.rackID
	v.ClientId, v.ClientHost = m.clientID, m.clientHost
	v.SubscribedTopicNames = javaSorted(m.names)
	if v.SubscribedTopicNames == nil {
		v.SubscribedTopicNames = []string{}
	}
	regex := m.regex
	v.SubscribedTopicRegex = &regex
	v.RebalanceTimeoutMs = m.rebalanceTimeoutMs
	v.ServerAssignor = m.serverAssignor
	// The generated default of this nullable tagged struct is an empty struct, which the
	// encoder writes; a consumer-protocol member has none (Kafka: null, tag absent).
	v.ClassicMemberMetadata = nil
	if c := m.classic; c != nil {
		cm := &recordcodec.ClassicMemberMetadata{SessionTimeoutMs: c.SessionTimeoutMs, SupportedProtocols: []recordcodec.ClassicProtocol{}}
		for _, p := range c.SupportedProtocols {
			cm.SupportedProtocols = append(cm.SupportedProtocols, recordcodec.ClassicProtocol{Name: p.Name, Metadata: p.Metadata})
		}
		v.ClassicMemberMetadata = cm
	}
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.ConsumerGroupMemberMetadata, Group: g, Member: m.id}, Value: v}
}

func groupMetadataRecord(g string, epoch int32, hash int64) recordcodec.Record {
	v := recordcodec.NewConsumerGroupMetadataValue()
	v.Epoch, v.MetadataHash = epoch, hash
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.ConsumerGroupMetadata, Group: g}, Value: v}
}

func targetMemberRecord(g, m string, t []TopicPartitions) recordcodec.Record {
	v := recordcodec.NewConsumerGroupTargetAssignmentMemberValue()
	v.TopicPartitions = make([]recordcodec.TopicPartitions, 0, len(t))
	for _, tp := range t {
		v.TopicPartitions = append(v.TopicPartitions, recordcodec.TopicPartitions{TopicId: recordcodec.UUID(tp.Topic), Partitions: slices.Clone(tp.Partitions)})
	}
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.ConsumerGroupTargetAssignmentMember, Group: g, Member: m}, Value: v}
}

func targetMetadataRecord(g string, epoch int32, ts int64) recordcodec.Record {
	v := recordcodec.NewConsumerGroupTargetAssignmentMetadataValue()
	v.AssignmentEpoch, v.AssignmentTimestamp = epoch, ts
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.ConsumerGroupTargetAssignmentMetadata, Group: g}, Value: v}
}

func currentAssignmentRecord(g string, m *member) recordcodec.Record {
	v := recordcodec.NewConsumerGroupCurrentMemberAssignmentValue()
	v.MemberEpoch, v.PreviousMemberEpoch, v.State = m.epoch, m.prevEpoch, m.state
	v.AssignedPartitions = toRecordPartitions(m.assigned)
	v.PartitionsPendingRevocation = toRecordPartitions(m.pending)
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.ConsumerGroupCurrentMemberAssignment, Group: g, Member: m.id}, Value: v}
}

func toRecordPartitions(p partitions) []recordcodec.TopicPartitionsWithEpochs {
	out := make([]recordcodec.TopicPartitionsWithEpochs, 0, len(p))
	for _, t := range sortedTopics(p) {
		ps := slices.Sorted(maps.Keys(p[t]))
		es := make([]int32, len(ps))
		for i, n := range ps {
			es[i] = p[t][n]
		}
		out = append(out, recordcodec.TopicPartitionsWithEpochs{TopicId: recordcodec.UUID(t), Partitions: ps, AssignmentEpochs: es})
	}
	return out
}

func sortedTopics[V any](m map[Uuid]V) []Uuid {
	ts := slices.Collect(maps.Keys(m))
	slices.SortFunc(ts, func(a, b Uuid) int { return a.Compare(b) })
	return ts
}

func regexRecord(g, regex string, topics []string, version, ts int64) recordcodec.Record {
	v := recordcodec.NewConsumerGroupRegularExpressionValue()
	v.Topics = javaSorted(topics)
	if v.Topics == nil {
		v.Topics = []string{}
	}
	v.ResolvedVersion, v.Timestamp = version, ts
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.ConsumerGroupRegularExpression, Group: g, Regex: regex}, Value: v}
}

// javaSorted is Collections.sort over a copy of names (String.compareTo order).
func javaSorted(names []string) []string {
	out := slices.Clone(names)
	slices.SortFunc(out, coordinator.JavaStringCompare)
	return out
}

func tombstone(t recordcodec.RecordType, g, m string) recordcodec.Record {
	return recordcodec.Record{Key: recordcodec.Key{Type: t, Group: g, Member: m}}
}

func regexTombstone(g, regex string) recordcodec.Record {
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.ConsumerGroupRegularExpression, Group: g, Regex: regex}}
}

// removeMemberRecords are the member tombstones in Kafka's order: 8, 7, 5.
func removeMemberRecords(g, m string) []recordcodec.Record {
	return []recordcodec.Record{
		tombstone(recordcodec.ConsumerGroupCurrentMemberAssignment, g, m),
		tombstone(recordcodec.ConsumerGroupTargetAssignmentMember, g, m),
		tombstone(recordcodec.ConsumerGroupMemberMetadata, g, m),
	}
}
