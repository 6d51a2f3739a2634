package replay

import (
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// typeCase is one record type on the replay path: a record, another value of the same key
// (changed), and the records that make its state (setup, replayed first).
type typeCase struct {
	name         string
	version      groupstate.KafkaVersion
	setup        []recordcodec.Record
	rec, changed recordcodec.Record
}

func sp(s string) *string { return &s }

func tasks(sub string, ps ...int32) recordcodec.TaskIds {
	return recordcodec.TaskIds{SubtopologyId: sub, Partitions: ps}
}

func tasksE(epoch int32, sub string, ps ...int32) recordcodec.TaskIdsWithEpochs {
	eps := make([]int32, len(ps))
	for i := range eps {
		eps[i] = epoch
	}
	return recordcodec.TaskIdsWithEpochs{SubtopologyId: sub, Partitions: ps, AssignmentEpochs: eps}
}

var (
	topicA = recordcodec.UUID{0xa}
	topicB = recordcodec.UUID{0xb}
)

// typeCases builds a realistic record of every record type the replay path has (the newest
// value version; ids 9 and 15's 4.0 layout under Kafka 4.0), a changed value of it, and its
// tombstone where Kafka writes one.
func typeCases() []typeCase {
	key := func(t recordcodec.RecordType) recordcodec.Key {
		return recordcodec.Key{Type: t, Group: "orders-app", Topic: "orders", Partition: 7, Member: "member-3f9a2c71-b0d4-4d4e-9c55-0d1e2f3a4b5c", Regex: "orders\\..*"}
	}
	rec := func(t recordcodec.RecordType, v recordcodec.Value) recordcodec.Record {
		return recordcodec.Record{Key: key(t), Value: v}
	}
	var cs []typeCase
	add := func(name string, setup []recordcodec.Record, a, b recordcodec.Value) {
		t := a.RecordType()
		cs = append(cs, typeCase{name: name, version: groupstate.Kafka44, setup: setup, rec: rec(t, a), changed: rec(t, b)})
	}
	tomb := func(name string, setup []recordcodec.Record, t recordcodec.RecordType) {
		cs = append(cs, typeCase{name: name, version: groupstate.Kafka44, setup: setup, rec: recordcodec.Record{Key: key(t)}})
	}

	// Offsets.
	oc := func(off int64) recordcodec.Value {
		v := recordcodec.NewOffsetCommitValue()
		v.Offset, v.LeaderEpoch, v.Metadata, v.CommitTimestamp, v.TopicId = off, 5, "", 1_760_000_000_000, topicA
		return v
	}
	loc := func(off int64) recordcodec.Value {
		v := recordcodec.NewLegacyOffsetCommitValue()
		v.Offset, v.CommitTimestamp = off, 1_760_000_000_000
		return v
	}
	add("OffsetCommit", nil, oc(100), oc(101))
	add("LegacyOffsetCommit", nil, loc(100), loc(101))
	tomb("OffsetCommit/tombstone", nil, recordcodec.OffsetCommit)

	// Classic group (record 2), consumer protocol, three members.
	gm := func(gen int32) recordcodec.Value {
		v := recordcodec.NewGroupMetadataValue()
		v.ProtocolType, v.Generation, v.Protocol, v.Leader, v.CurrentStateTimestamp = "consumer", gen, sp("range"), sp("m-1"), 1_760_000_000_000
		for _, id := range []string{"m-1", "m-2", "m-3"} {
			v.Members = append(v.Members, recordcodec.MemberMetadata{MemberId: id, ClientId: "client-" + id, ClientHost: "/10.0.0.7",
				RebalanceTimeout: 300000, SessionTimeout: 45000, Subscription: churnSubscription, Assignment: churnAssignment})
		}
		return v
	}
	add("GroupMetadata", nil, gm(7), gm(8))

	// Consumer group (KIP-848).
	cgm := func(e int32) recordcodec.Value {
		v := recordcodec.NewConsumerGroupMetadataValue()
		v.Epoch, v.MetadataHash = e, 0x5eed
		return v
	}
	cmm := func(rack string) recordcodec.Value {
		v := recordcodec.NewConsumerGroupMemberMetadataValue()
		v.RackId, v.ClientId, v.ClientHost, v.SubscribedTopicNames, v.RebalanceTimeoutMs, v.ServerAssignor =
			sp(rack), "orders-consumer-1", "/10.0.0.7", []string{"orders", "payments"}, 300000, sp("uniform")
		v.ClassicMemberMetadata = nil // as Kafka writes it for members of the new protocol
		return v
	}
	cpm := func(n int32) recordcodec.Value {
		v := recordcodec.NewConsumerGroupPartitionMetadataValue()
		v.Topics = []recordcodec.TopicMetadata{{TopicId: topicA, TopicName: "orders", NumPartitions: n}}
		return v
	}
	cta := func(e int32) recordcodec.Value {
		v := recordcodec.NewConsumerGroupTargetAssignmentMetadataValue()
		v.AssignmentEpoch, v.AssignmentTimestamp = e, 1_760_000_000_000
		return v
	}
	ctm := func(ps ...int32) recordcodec.Value {
		v := recordcodec.NewConsumerGroupTargetAssignmentMemberValue()
		v.TopicPartitions = []recordcodec.TopicPartitions{{TopicId: topicA, Partitions: ps}, {TopicId: topicB, Partitions: []int32{0, 1}}}
		return v
	}
	ccm := func(e int32, ps ...int32) recordcodec.Value {
		v := recordcodec.NewConsumerGroupCurrentMemberAssignmentValue()
		v.MemberEpoch, v.PreviousMemberEpoch, v.State = e, e-1, 0
		eps := make([]int32, len(ps))
		for i := range eps {
			eps[i] = 3
		}
		v.AssignedPartitions = []recordcodec.TopicPartitionsWithEpochs{{TopicId: topicA, Partitions: ps, AssignmentEpochs: eps}}
		return v
	}
	crx := func(ver int64) recordcodec.Value {
		v := recordcodec.NewConsumerGroupRegularExpressionValue()
		v.Topics, v.ResolvedVersion, v.Timestamp = []string{"orders.eu", "orders.us"}, ver, 1_760_000_000_000
		return v
	}
	consumer := []recordcodec.Record{rec(recordcodec.ConsumerGroupMetadata, cgm(4)), rec(recordcodec.ConsumerGroupMemberMetadata, cmm("rack-a"))}
	add("ConsumerGroupMetadata", consumer, cgm(4), cgm(5))
	add("ConsumerGroupPartitionMetadata", consumer, cpm(8), cpm(16))
	add("ConsumerGroupMemberMetadata", consumer, cmm("rack-a"), cmm("rack-b"))
	add("ConsumerGroupTargetAssignmentMetadata", consumer, cta(4), cta(5))
	add("ConsumerGroupTargetAssignmentMember", consumer, ctm(0, 1, 2, 3, 4, 5, 6, 7), ctm(0, 1, 2, 3, 4, 5))
	add("ConsumerGroupCurrentMemberAssignment", consumer, ccm(4, 0, 1, 2, 3, 4, 5, 6, 7), ccm(5, 0, 1, 2, 3, 4, 5))
	add("ConsumerGroupRegularExpression", consumer, crx(3), crx(4))
	tomb("ConsumerGroupCurrentMemberAssignment/tombstone", consumer, recordcodec.ConsumerGroupCurrentMemberAssignment)
	tomb("ConsumerGroupTargetAssignmentMember/tombstone", consumer, recordcodec.ConsumerGroupTargetAssignmentMember)

	// Share group.
	sgm := func(e int32) recordcodec.Value {
		v := recordcodec.NewShareGroupMetadataValue()
		v.Epoch, v.MetadataHash = e, 0x5eed
		return v
	}
	smm := func(host string) recordcodec.Value {
		v := recordcodec.NewShareGroupMemberMetadataValue()
		v.ClientId, v.ClientHost, v.SubscribedTopicNames = "share-consumer-1", host, []string{"orders"}
		return v
	}
	sta := func(e int32) recordcodec.Value {
		v := recordcodec.NewShareGroupTargetAssignmentMetadataValue()
		v.AssignmentEpoch, v.AssignmentTimestamp = e, 1_760_000_000_000
		return v
	}
	stm := func(ps ...int32) recordcodec.Value {
		v := recordcodec.NewShareGroupTargetAssignmentMemberValue()
		v.TopicPartitions = []recordcodec.TopicPartitions{{TopicId: topicA, Partitions: ps}}
		return v
	}
	scm := func(e int32, ps ...int32) recordcodec.Value {
		v := recordcodec.NewShareGroupCurrentMemberAssignmentValue()
		v.MemberEpoch, v.PreviousMemberEpoch = e, e-1
		v.AssignedPartitions = []recordcodec.TopicPartitions{{TopicId: topicA, Partitions: ps}}
		return v
	}
	ssp := func(ps ...int32) recordcodec.Value {
		v := recordcodec.NewShareGroupStatePartitionMetadataValue()
		v.InitializedTopics = []recordcodec.TopicPartitionsInfo{{TopicId: topicA, TopicName: "orders", Partitions: ps}}
		return v
	}
	share := []recordcodec.Record{rec(recordcodec.ShareGroupMetadata, sgm(2)), rec(recordcodec.ShareGroupMemberMetadata, smm("/10.0.0.7"))}
	add("ShareGroupMetadata", share, sgm(2), sgm(3))
	add("ShareGroupMemberMetadata", share, smm("/10.0.0.7"), smm("/10.0.0.8"))
	add("ShareGroupTargetAssignmentMetadata", share, sta(2), sta(3))
	add("ShareGroupTargetAssignmentMember", share, stm(0, 1, 2, 3), stm(0, 1))
	add("ShareGroupCurrentMemberAssignment", share, scm(2, 0, 1, 2, 3), scm(3, 0, 1))
	add("ShareGroupStatePartitionMetadata", share, ssp(0, 1, 2, 3), ssp(0, 1))

	// Streams group (KIP-1071): two subtopologies, one standby.
	stgm := func(e int32) recordcodec.Value {
		v := recordcodec.NewStreamsGroupMetadataValue()
		v.Epoch, v.MetadataHash, v.ValidatedTopologyEpoch = e, 0x5eed, 0
		v.LastAssignmentConfigs = []recordcodec.KeyValue{{Key: "num.standby.replicas", Value: "1"}}
		return v
	}
	stmm := func(epoch int32) recordcodec.Value {
		v := recordcodec.NewStreamsGroupMemberMetadataValue()
		v.ClientId, v.ClientHost, v.RebalanceTimeoutMs, v.TopologyEpoch, v.ProcessId =
			"orders-app-StreamThread-1-consumer", "/10.0.0.7", 300000, epoch, "5f8c0e3a-1b2d-4c6e-8f9a-0b1c2d3e4f5a"
		v.UserEndpoint = &recordcodec.Endpoint{Host: "10.0.0.7", Port: 8080}
		return v
	}
	stta := func(e int32) recordcodec.Value {
		v := recordcodec.NewStreamsGroupTargetAssignmentMetadataValue()
		v.AssignmentEpoch, v.AssignmentTimestamp = e, 1_760_000_000_000
		return v
	}
	sttm := func(ps ...int32) recordcodec.Value {
		v := recordcodec.NewStreamsGroupTargetAssignmentMemberValue()
		v.ActiveTasks = []recordcodec.TaskIds{tasks("0", ps...), tasks("1", ps...)}
		v.StandbyTasks = []recordcodec.TaskIds{tasks("0", 30, 31), tasks("1", 30, 31)}
		return v
	}
	stcm := func(e int32, ps ...int32) recordcodec.Value {
		v := recordcodec.NewStreamsGroupCurrentMemberAssignmentValue()
		v.MemberEpoch, v.PreviousMemberEpoch, v.State = e, e-1, 1
		v.ActiveTasks = []recordcodec.TaskIdsWithEpochs{tasksE(3, "0", ps...), tasksE(3, "1", ps...)}
		v.StandbyTasks = []recordcodec.TaskIdsWithEpochs{tasksE(3, "0", 30, 31), tasksE(3, "1", 30, 31)}
		return v
	}
	stt := func(epoch int32) recordcodec.Value {
		v := recordcodec.NewStreamsGroupTopologyValue()
		v.Epoch = epoch
		v.Subtopologies = []recordcodec.Subtopology{
			{SubtopologyId: "0", SourceTopics: []string{"orders"}, RepartitionSinkTopics: []string{"orders-app-by-customer-repartition"},
				StateChangelogTopics: []recordcodec.StreamsTopicInfo{{Name: "orders-app-store-changelog"}}},
			{SubtopologyId: "1", RepartitionSourceTopics: []recordcodec.StreamsTopicInfo{{Name: "orders-app-by-customer-repartition", Partitions: 32}}},
		}
		return v
	}
	streams := []recordcodec.Record{rec(recordcodec.StreamsGroupMetadata, stgm(4)), rec(recordcodec.StreamsGroupMemberMetadata, stmm(0)),
		rec(recordcodec.StreamsGroupTopology, stt(0))}
	add("StreamsGroupMetadata", streams, stgm(4), stgm(5))
	add("StreamsGroupMemberMetadata", streams, stmm(0), stmm(1))
	add("StreamsGroupTargetAssignmentMetadata", streams, stta(4), stta(5))
	add("StreamsGroupTargetAssignmentMember", streams, sttm(0, 2, 4, 6, 8, 10), sttm(0, 2, 4, 6))
	add("StreamsGroupCurrentMemberAssignment", streams, stcm(4, 0, 2, 4, 6, 8, 10), stcm(5, 0, 2, 4, 6))
	add("StreamsGroupTopology", streams, stt(0), stt(1))
	tomb("StreamsGroupCurrentMemberAssignment/tombstone", streams, recordcodec.StreamsGroupCurrentMemberAssignment)
	tomb("StreamsGroupTargetAssignmentMember/tombstone", streams, recordcodec.StreamsGroupTargetAssignmentMember)

	// Kafka 4.0's share-group partition metadata (record 9, layout 4.0).
	spm := func(n int32) recordcodec.Value {
		v := recordcodec.NewValue(recordcodec.RecordType(9), recordcodec.Layout40).(*recordcodec.ShareGroupPartitionMetadataValue)
		v.Topics = []recordcodec.TopicMetadata{{TopicId: topicA, TopicName: "orders", NumPartitions: n}}
		return v
	}
	sgm40 := recordcodec.NewValue(recordcodec.ShareGroupMetadata, recordcodec.Layout40)
	cs = append(cs, typeCase{name: "ShareGroupPartitionMetadata/4.0", version: groupstate.Kafka40,
		setup: []recordcodec.Record{rec(recordcodec.ShareGroupMetadata, sgm40)}, rec: rec(9, spm(8)), changed: rec(9, spm(16))})
	return cs
}

// caseEngine returns an engine that replayed c's setup and c.rec, and the batch of c.rec to
// apply again (apply moves its offsets forward).
func caseEngine(tb testing.TB, c typeCase, value recordcodec.Record) (*Engine, *eventlog.Batch) {
	tb.Helper()
	lb := &logBuilder{ts: 1_760_000_000_000}
	for _, r := range c.setup {
		lb.batch(r)
	}
	lb.batch(c.rec)
	e := New(0, Options{Version: c.version})
	for _, b := range lb.batches {
		if err := e.Apply(b); err != nil {
			tb.Fatalf("%s: %v", c.name, err)
		}
	}
	lb.batch(value)
	return e, lb.batches[len(lb.batches)-1]
}

// again moves a one-record batch to the next offset of e.
func again(e *Engine, b *eventlog.Batch) {
	b.BaseOffset, b.LastOffset = e.NextOffset(), e.NextOffset()
	b.Records[0].Offset = b.BaseOffset
}

// TestReplayAllocsPerRecordType: on the replay path (decode, convert, apply), a record of any
// type that the state already holds allocates nothing; a tombstone neither. (Allocation
// counts, not times: they do not depend on the machine.)
func TestReplayAllocsPerRecordType(t *testing.T) {
	for _, c := range typeCases() {
		e, b := caseEngine(t, c, c.rec)
		n := testing.AllocsPerRun(50, func() {
			again(e, b)
			if err := e.Apply(b); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Errorf("%s: %.1f allocations per record the state already holds, want 0", c.name, n)
		}
	}
}

// BenchmarkReplayRecordType replays one record of each type, from memory, on one core:
// "same" is a record the state already holds (nothing kept: 0 allocations), "changed"
// alternates between two values of the key (the state keeps each: what changed is copied,
// the rest kept). Report with -benchmem.
func BenchmarkReplayRecordType(b *testing.B) {
	for _, c := range typeCases() {
		b.Run(c.name+"/same", func(b *testing.B) {
			e, bt := caseEngine(b, c, c.rec)
			b.ReportAllocs()
			for b.Loop() {
				again(e, bt)
				if err := e.Apply(bt); err != nil {
					b.Fatal(err)
				}
			}
		})
		if c.changed.Value == nil {
			continue
		}
		b.Run(c.name+"/changed", func(b *testing.B) {
			e, bt := caseEngine(b, c, c.changed)
			_, bt0 := caseEngine(b, c, c.rec)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				x := bt
				if i++; i%2 == 0 {
					x = bt0
				}
				again(e, x)
				if err := e.Apply(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
