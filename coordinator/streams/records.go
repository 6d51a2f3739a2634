package streams

import (
	"github.com/coordlog/coordlog/recordcodec"
)

func memberMetadataRecord(g string, m *member) recordcodec.Record {
	v := recordcodec.NewStreamsGroupMemberMetadataValue()
	v.InstanceId, v.RackId = m.instanceID, m.rackID
	v.ClientId, v.ClientHost = m.clientID, m.clientHost
	v.RebalanceTimeoutMs, v.TopologyEpoch, v.ProcessId = m.rebalanceTimeoutMs, m.topologyEpoch, m.processID
	if m.endpoint != nil {
		v.UserEndpoint = &recordcodec.Endpoint{Host: m.endpoint.Host, Port: m.endpoint.Port}
	}
	v.ClientTags = make([]recordcodec.KeyValue, len(m.clientTags))
	for i, t := range m.clientTags {
		v.ClientTags[i] = recordcodec.KeyValue{Key: t.k, Value: t.v}
	}
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupMemberMetadata, Group: g, Member: m.id}, Value: v}
}

func groupMetadataRecord(g *group, epoch int32, hash int64, validated int32, cfgs []kv) recordcodec.Record {
	v := recordcodec.NewStreamsGroupMetadataValue()
	v.Epoch, v.MetadataHash, v.ValidatedTopologyEpoch = epoch, hash, validated
	v.LastAssignmentConfigs = make([]recordcodec.KeyValue, len(cfgs))
	for i, c := range cfgs {
		v.LastAssignmentConfigs[i] = recordcodec.KeyValue{Key: c.k, Value: c.v}
	}
	v.StoredDescriptionTopologyEpoch, v.FailedDescriptionTopologyEpoch = g.storedDescEpoch, g.failedDescEpoch
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupMetadata, Group: g.id}, Value: v}
}

func targetMemberRecord(g, m string, t tuple) recordcodec.Record {
	v := recordcodec.NewStreamsGroupTargetAssignmentMemberValue()
	v.ActiveTasks, v.StandbyTasks, v.WarmupTasks = toRecordTasks(t.active), toRecordTasks(t.standby), toRecordTasks(t.warmup)
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupTargetAssignmentMember, Group: g, Member: m}, Value: v}
}

func targetMetadataRecord(g string, epoch int32, ts int64) recordcodec.Record {
	v := recordcodec.NewStreamsGroupTargetAssignmentMetadataValue()
	v.AssignmentEpoch, v.AssignmentTimestamp = epoch, ts
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupTargetAssignmentMetadata, Group: g}, Value: v}
}

func currentAssignmentRecord(g string, m *member) recordcodec.Record {
	v := recordcodec.NewStreamsGroupCurrentMemberAssignmentValue()
	v.MemberEpoch, v.PreviousMemberEpoch, v.State = m.epoch, m.prevEpoch, m.state
	v.ActiveTasks = toRecordTasksWithEpochs(m.assigned.active, true)
	v.StandbyTasks = toRecordTasksWithEpochs(m.assigned.standby, false)
	v.WarmupTasks = toRecordTasksWithEpochs(m.assigned.warmup, false)
	v.ActiveTasksPendingRevocation = toRecordTasksWithEpochs(m.pending.active, true)
	v.StandbyTasksPendingRevocation = toRecordTasksWithEpochs(m.pending.standby, false)
	v.WarmupTasksPendingRevocation = toRecordTasksWithEpochs(m.pending.warmup, false)
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupCurrentMemberAssignment, Group: g, Member: m.id}, Value: v}
}

func tombstone(t recordcodec.RecordType, g, m string) recordcodec.Record {
	return recordcodec.Record{Key: recordcodec.Key{Type: t, Group: g, Member: m}}
}

// removeMemberRecords are the member tombstones in Kafka's order: 22, 21, 19.
func removeMemberRecords(g, m string) []recordcodec.Record {
	return []recordcodec.Record{
		tombstone(recordcodec.StreamsGroupCurrentMemberAssignment, g, m),
		tombstone(recordcodec.StreamsGroupTargetAssignmentMember, g, m),
		tombstone(recordcodec.StreamsGroupMemberMetadata, g, m),
	}
}
