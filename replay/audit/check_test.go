package audit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
)

// logBuilder writes records into batches for an engine, at consecutive offsets.
type logBuilder struct {
	t    *testing.T
	p    int32
	next int64
	ts   int64 // the timestamp of the next batch's records (Unix ms)
	log  []*eventlog.Batch
}

// batch appends one batch of recs (header-only when there are none), transactional when
// pid >= 0.
func (lb *logBuilder) batch(pid int64, recs ...recordcodec.Record) {
	lb.t.Helper()
	b := &eventlog.Batch{Partition: lb.p, BaseOffset: lb.next, Magic: 2, ProducerID: pid, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1}
	if pid >= 0 {
		b.ProducerEpoch, b.Attributes = 0, eventlog.Attributes(0x10) // transactional
	}
	for _, r := range recs {
		k, v, err := recordcodec.Encode(r)
		require.NoError(lb.t, err)
		b.Records = append(b.Records, eventlog.Record{Offset: lb.next, Timestamp: lb.ts, Key: k, Value: v})
		lb.next++
	}
	if len(recs) == 0 { // a header-only batch (a compaction leftover) keeps one offset
		lb.next++
	}
	b.LastOffset, b.NumRecords = lb.next-1, int32(len(recs))
	lb.log = append(lb.log, b)
}

// replay applies the log to a forensic engine watched by a. Each batch is applied from a copy
// whose key and value bytes are overwritten once it is applied, as a source that reuses its
// read buffer does: what the audit keeps must not alias them.
func (lb *logBuilder) replay(a *Audit) *replay.Engine {
	lb.t.Helper()
	e := replay.New(lb.p, replay.Options{Mode: eventlog.Forensic, Observer: a.Observer(lb.p)})
	for _, b := range lb.log {
		c := b.Clone()
		require.NoError(lb.t, e.Apply(c))
		for i := range c.Records {
			for _, p := range [][]byte{c.Records[i].Key, c.Records[i].Value} {
				for j := range p {
					p[j] = 0xA5
				}
			}
		}
	}
	return e
}

func key(t recordcodec.RecordType, group, member string) recordcodec.Key {
	return recordcodec.Key{Type: t, Group: group, Member: member}
}

func offsetCommit(group, topic string, partition int32, offset int64) recordcodec.Record {
	v := recordcodec.NewOffsetCommitValue()
	v.Offset = offset
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit, Group: group, Topic: topic, Partition: partition}, Value: v}
}

func consumerEpoch(group string, epoch int32) recordcodec.Record {
	v := recordcodec.NewConsumerGroupMetadataValue()
	v.Epoch = epoch
	return recordcodec.Record{Key: key(recordcodec.ConsumerGroupMetadata, group, ""), Value: v}
}

func consumerMember(group, member string, epoch int32) recordcodec.Record {
	v := recordcodec.NewConsumerGroupCurrentMemberAssignmentValue()
	v.MemberEpoch = epoch
	return recordcodec.Record{Key: key(recordcodec.ConsumerGroupCurrentMemberAssignment, group, member), Value: v}
}

func kinds(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind)
	}
	return out
}

// TestFindings builds, for each kind of finding, a log that has it, and requires exactly the
// findings expected, with their position and wording.
func TestFindings(t *testing.T) {
	type want struct {
		offset int64
		kind   string
		detail string
	}
	cases := []struct {
		name  string
		p     int32
		build func(*logBuilder)
		parts int32
		want  []want
	}{{
		name:  "clean log",
		build: func(lb *logBuilder) { lb.batch(-1, consumerEpoch("g", 2), consumerMember("g", "m", 2)) },
	}, {
		name: "target member records without their metadata record",
		build: func(lb *logBuilder) {
			v := recordcodec.NewConsumerGroupTargetAssignmentMemberValue()
			lb.batch(-1, consumerEpoch("g", 2), recordcodec.Record{Key: key(recordcodec.ConsumerGroupTargetAssignmentMember, "g", "m"), Value: v})
			m := recordcodec.NewConsumerGroupTargetAssignmentMetadataValue()
			m.AssignmentEpoch = 2
			lb.batch(-1, recordcodec.Record{Key: key(recordcodec.ConsumerGroupTargetAssignmentMember, "g", "m"), Value: v},
				recordcodec.Record{Key: key(recordcodec.ConsumerGroupTargetAssignmentMetadata, "g", ""), Value: m})
		},
		want: []want{{0, KindTargetAssignmentSplit, "group g: 1 target-assignment member record(s) in the batch at offset 0 without the target-assignment metadata record"}},
	}, {
		name:  "member ahead of its group",
		build: func(lb *logBuilder) { lb.batch(-1, consumerEpoch("g", 2), consumerMember("g", "m", 5)) },
		want:  []want{{-1, KindMemberEpochAhead, "consumer group g: member m at epoch 5, group epoch 2"}},
	}, {
		name: "streams task twice on one process",
		build: func(lb *logBuilder) {
			var recs []recordcodec.Record
			for i, m := range []string{"a", "b"} {
				md := recordcodec.NewStreamsGroupMemberMetadataValue()
				md.ProcessId = "proc"
				cur := recordcodec.NewStreamsGroupCurrentMemberAssignmentValue()
				cur.MemberEpoch, cur.State = 1, 1
				tasks := []recordcodec.TaskIdsWithEpochs{{SubtopologyId: "0", Partitions: []int32{3}, AssignmentEpochs: []int32{1}}}
				if i == 0 {
					cur.ActiveTasks = tasks
				} else {
					cur.StandbyTasks = tasks
				}
				recs = append(recs, recordcodec.Record{Key: key(recordcodec.StreamsGroupMemberMetadata, "s", m), Value: md},
					recordcodec.Record{Key: key(recordcodec.StreamsGroupCurrentMemberAssignment, "s", m), Value: cur})
			}
			lb.batch(-1, recs...)
		},
		want: []want{{-1, KindTaskTwiceOnProcess, "streams group s: task 0_3 is owned 2 times on process proc (active on a, standby/warm-up on b)"}},
	}, {
		name:  "transaction open at the end",
		build: func(lb *logBuilder) { lb.batch(7, offsetCommit("g", "t", 0, 10)) },
		want:  []want{{-1, KindOpenTransaction, "producer 7 has a transaction open at the end of the log with 1 pending offsets: g/t-0"}},
	}, {
		name: "offsets of a deleted group",
		build: func(lb *logBuilder) {
			lb.batch(-1, offsetCommit("g", "t", 0, 10))
			lb.batch(-1, recordcodec.Record{Key: key(recordcodec.GroupMetadata, "g", "")})
		},
		want: []want{{-1, KindOffsetsOfDeletedGroup, "group g does not exist but has 1 committed offsets"}},
	}, {
		name:  "group in the wrong partition",
		p:     1,
		parts: 4,
		build: func(lb *logBuilder) { lb.batch(-1, offsetCommit("g", "t", 0, 10)) },
		want:  []want{{-1, KindWrongPartition, `group "g" has records in partition 1 but maps to partition 3 of 4`}},
	}, {
		name: "replay violation",
		build: func(lb *logBuilder) {
			lb.batch(-1, consumerEpoch("g", 2), consumerMember("g", "m", 2))
			lb.batch(-1, recordcodec.Record{Key: key(recordcodec.ConsumerGroupMetadata, "g", "")})
		},
		want: []want{{2, KindViolation, "partition 0 offset 2: record type 3 (ConsumerGroupMetadata) tombstone: "}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, int32(3), recordcodec.PartitionFor("g", 4), "the wrong-partition case assumes g maps to 3 of 4")
			lb := &logBuilder{t: t, p: c.p}
			c.build(lb)
			a := New()
			e := lb.replay(a)
			got := a.Finish([]*replay.Engine{e}, nil, c.parts)
			require.Len(t, got, len(c.want), "%v", got)
			for i, w := range c.want {
				require.Equal(t, c.p, got[i].Partition)
				require.Equal(t, w.offset, got[i].Offset)
				require.Equal(t, w.kind, got[i].Kind)
				require.Contains(t, got[i].Detail, w.detail)
			}
		})
	}
}

// TestDamagedInputAndOrder: damaged input in the report is a finding, and findings come sorted
// by severity, then partition, then offset (end-of-log findings last), whatever order
// partitions finished in.
func TestDamagedInputAndOrder(t *testing.T) {
	a := New()
	var engines []*replay.Engine
	for _, p := range []int32{2, 0} {
		lb := &logBuilder{t: t, p: p}
		lb.batch(-1, consumerEpoch("g", 2), consumerMember("g", "m", 5))
		engines = append(engines, lb.replay(a))
	}
	var rep eventlog.Report
	rep.Add(eventlog.Problem{Kind: eventlog.KindSuperseded, Partition: 0, Offset: 1})
	rep.Add(eventlog.Problem{Kind: eventlog.KindBadCRC, Partition: 2, Offset: 9, File: "x.log", Detail: "bad crc"})
	got := a.Finish(engines, &rep, 0)
	require.Equal(t, []string{KindDamagedInput, KindMemberEpochAhead, KindMemberEpochAhead}, kinds(got), "the high one first")
	require.Equal(t, []int32{2, 0, 2}, []int32{got[0].Partition, got[1].Partition, got[2].Partition})
	require.Equal(t, int64(9), got[0].Offset)
	require.Equal(t, []Severity{SeverityHigh, SeverityMedium, SeverityMedium}, []Severity{got[0].Severity, got[1].Severity, got[2].Severity})
	require.Equal(t, explain.CertaintyProved, got[1].Certainty)
	require.Equal(t, []string{"the state at the end of the log"}, got[1].Evidence)
	require.Equal(t, int32(3), PartitionCount([]int32{0, 1, 2}))
	require.Equal(t, int32(0), PartitionCount([]int32{0, 2}))
	require.Equal(t, int32(0), PartitionCount([]int32{0}))
}
