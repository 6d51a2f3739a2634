package audit

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/eventlogtest"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/internal/testcorpus"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
)

var topicID = recordcodec.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// join writes member m of consumer group g joining at epoch, owning partitions of topic t (by
// id, as Kafka writes them), as Kafka's heartbeat does: metadata, group epoch, target,
// current assignment.
func join(group, m, client string, epoch int32, parts ...int32) []recordcodec.Record {
	md := recordcodec.NewConsumerGroupMemberMetadataValue()
	md.ClientId, md.ClientHost, md.SubscribedTopicNames, md.RebalanceTimeoutMs = client, "/10.0.0.7", []string{"t"}, 300_000
	gm := recordcodec.NewConsumerGroupMetadataValue()
	gm.Epoch = epoch
	tm := recordcodec.NewConsumerGroupTargetAssignmentMemberValue()
	tm.TopicPartitions = []recordcodec.TopicPartitions{{TopicId: topicID, Partitions: parts}}
	ta := recordcodec.NewConsumerGroupTargetAssignmentMetadataValue()
	ta.AssignmentEpoch = epoch
	cur := recordcodec.NewConsumerGroupCurrentMemberAssignmentValue()
	cur.MemberEpoch, cur.PreviousMemberEpoch = epoch, 0
	cur.AssignedPartitions = []recordcodec.TopicPartitionsWithEpochs{{TopicId: topicID, Partitions: parts, AssignmentEpochs: make([]int32, len(parts))}}
	return []recordcodec.Record{
		{Key: key(recordcodec.ConsumerGroupMemberMetadata, group, m), Value: md},
		{Key: key(recordcodec.ConsumerGroupMetadata, group, ""), Value: gm},
		{Key: key(recordcodec.ConsumerGroupTargetAssignmentMember, group, m), Value: tm},
		{Key: key(recordcodec.ConsumerGroupTargetAssignmentMetadata, group, ""), Value: ta},
		{Key: key(recordcodec.ConsumerGroupCurrentMemberAssignment, group, m), Value: cur},
	}
}

// leave writes member m's removal and the group epoch bump, as Kafka writes both a leave and a
// timeout.
func leave(group, m string, epoch int32) []recordcodec.Record {
	gm := recordcodec.NewConsumerGroupMetadataValue()
	gm.Epoch = epoch
	return []recordcodec.Record{
		{Key: key(recordcodec.ConsumerGroupCurrentMemberAssignment, group, m)},
		{Key: key(recordcodec.ConsumerGroupTargetAssignmentMember, group, m)},
		{Key: key(recordcodec.ConsumerGroupMemberMetadata, group, m)},
		{Key: key(recordcodec.ConsumerGroupMetadata, group, ""), Value: gm},
	}
}

func commitID(group string, partition int32, offset int64) recordcodec.Record {
	r := offsetCommit(group, "t", partition, offset)
	r.Value.(*recordcodec.OffsetCommitValue).TopicId = topicID
	return r
}

func (lb *logBuilder) marker(pid int64, commit bool) {
	typ := recordcodec.ControlAbort
	if commit {
		typ = recordcodec.ControlCommit
	}
	key := recordcodec.ControlKey{Type: typ}.AppendTo(nil)
	val := recordcodec.EndTxnMarker{}.AppendTo(nil)
	lb.log = append(lb.log, &eventlog.Batch{Partition: lb.p, BaseOffset: lb.next, LastOffset: lb.next, Magic: 2, ProducerID: pid,
		BaseSequence: -1, Attributes: eventlog.AttrTransactional | eventlog.AttrControl, NumRecords: 1,
		Records: []eventlog.Record{{Offset: lb.next, Timestamp: lb.ts, Key: key, Value: val}}})
	lb.next++
}

// TestExplainedFindings: what the log's explanation marks becomes findings, each with its
// offset, time, group, wording and what to look at next.
func TestExplainedFindings(t *testing.T) {
	type want struct {
		offset int64
		kind   string
		detail string
	}
	cases := []struct {
		name  string
		build func(*logBuilder)
		want  []want
	}{{
		name: "a member's own commit moves back",
		build: func(lb *logBuilder) {
			lb.batch(-1, join("g", "m1", "c1", 2, 0, 1)...)
			lb.batch(-1, commitID("g", 0, 100), commitID("g", 1, 100))
			lb.batch(-1, commitID("g", 0, 40), commitID("g", 1, 120))
		},
		want: []want{{7, KindOffsetRewind, "t-0 100 -> 40 (-60) moved back (1 of the 2 partitions the commit wrote), committed while c1 (member m1, host 10.0.0.7) owned it"}},
	}, {
		name: "writes while the group is empty: one finding for the run, with the values",
		build: func(lb *logBuilder) {
			lb.batch(-1, join("g", "m1", "c1", 2, 0)...)
			lb.batch(-1, commitID("g", 0, 134))
			lb.batch(-1, leave("g", "m1", 3)...)
			for _, o := range []int64{54, 4, 18, 3} {
				lb.ts += 1000
				lb.batch(-1, commitID("g", 0, o))
			}
		},
		want: []want{{10, KindOffsetsWhileEmpty, "4 commits to 1 partition between offset 10 and 13 (until 1970-01-01T00:00:04.000Z) while the group had no members (since 1970-01-01T00:00:00.000Z): an admin tool (kafka-consumer-groups --reset-offsets) or a standalone consumer with this group.id wrote them. t-0: 134 -> 54 -> 4 -> 18 -> 3. 3 moves back, the largest t-0 134 -> 54 (-80)."}},
	}, {
		name: "a commit of a partition no member owns",
		build: func(lb *logBuilder) {
			lb.batch(-1, join("g", "m1", "c1", 2, 0)...)
			lb.batch(-1, commitID("g", 1, 7))
		},
		want: []want{{5, KindCommitWithoutOwner, "t-1 7, committed while no member of the group owned them"}},
	}, {
		name: "a member silent for its session timeout is fenced, one removed at once left",
		build: func(lb *logBuilder) {
			lb.batch(-1, join("g", "m1", "c1", 2, 0)...)
			lb.batch(-1, join("g", "m2", "c2", 3, 1)...)
			lb.ts += 100
			lb.batch(-1, leave("g", "m2", 4)...) // 100 ms after its join: a leave
			lb.ts += 45_000
			lb.batch(-1, leave("g", "m1", 5)...) // 45.1 s after its last record: the session timeout
		},
		want: []want{{14, KindMemberFenced, "c1 was fenced by its 45 s session timeout (likely: nothing from it for 45.1 s after its own last record (offset 4)"}},
	}, {
		name: "a rebalance that has not converged a minute later",
		build: func(lb *logBuilder) {
			lb.batch(-1, join("g", "m1", "c1", 2, 0, 1)...)
			recs := join("g", "m2", "c2", 3, 1)
			cur := recs[4].Value.(*recordcodec.ConsumerGroupCurrentMemberAssignmentValue)
			cur.AssignedPartitions, cur.State = nil, 2 // waits for t-1, which m1 still owns
			lb.batch(-1, recs...)
			lb.ts += 90_000
			lb.batch(-1, commitID("g", 0, 1))
		},
		want: []want{{6, KindSlowRebalance, "epoch 3: c2 joined; not converged at the end of the log, 1m30s after it started; c2 waits for c1 to revoke t:1, since 1970-01-01T00:00:00.000Z"}},
	}, {
		name: "a transaction open for two minutes",
		build: func(lb *logBuilder) {
			lb.batch(9, offsetCommit("g", "t", 0, 10))
			lb.ts += 120_000
			lb.marker(9, true)
		},
		want: []want{{1, KindLongTransaction, "transaction of producer 9 committed after 2m00s: t-0 10"}},
	}, {
		name: "offsets deleted, the group staying",
		build: func(lb *logBuilder) {
			lb.batch(-1, offsetCommit("g", "t", 0, 10), offsetCommit("g", "t", 1, 10))
			lb.ts += 1000
			lb.batch(-1, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit, Group: "g", Topic: "t", Partition: 0}})
		},
		want: []want{{2, KindOffsetsDeleted, "offsets deleted (t-0 was 10), the group stays: OffsetDelete (kafka-consumer-groups --delete-offsets) (proved: not DeleteGroups: no group tombstone follows, which DeleteGroups writes; not expiry by offsets.retention.minutes: the youngest deleted offset was 1 s old, and offsets.retention.minutes is at least 1; not the topic's deletion: the group keeps offsets of other partitions of t"}},
	}, {
		name: "more than 20 rewinds of one group: the rest counted",
		build: func(lb *logBuilder) {
			for i := range 25 {
				lb.batch(-1, offsetCommit("g", "t", 0, 100))
				lb.batch(-1, offsetCommit("g", "t", 0, int64(i)))
			}
		},
		want: func() []want {
			var w []want
			for i := range 20 {
				w = append(w, want{int64(2*i + 1), KindOffsetRewind, "t-0 100 -> "})
			}
			return append(w, want{49, KindMoreFindings, "5 more offset-rewind findings of this group, the last at offset 49"})
		}(),
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lb := &logBuilder{t: t}
			c.build(lb)
			a := New()
			e := lb.replay(a)
			got := a.Finish([]*replay.Engine{e}, nil, 0)
			require.Len(t, got, len(c.want), "%v", got)
			for i, w := range c.want {
				require.Equal(t, w.offset, got[i].Offset, "%d: %v", i, got[i])
				require.Equal(t, w.kind, got[i].Kind)
				require.Contains(t, got[i].Detail, w.detail)
				require.Equal(t, "g", got[i].Group)
				require.NotEmpty(t, got[i].Next, "a finding says what to look at next")
				require.GreaterOrEqual(t, got[i].Time, int64(0))
			}
		})
	}
}

// TestThresholds: the audit's thresholds are the explanation's.
func TestThresholds(t *testing.T) {
	lb := &logBuilder{t: t}
	lb.batch(9, offsetCommit("g", "t", 0, 10))
	lb.ts += 5_000
	lb.marker(9, true)
	a := NewWith(Options{Explain: explain.Options{LongTransactionMs: 1_000}})
	got := a.Finish([]*replay.Engine{lb.replay(a)}, nil, 0)
	require.Equal(t, []string{KindLongTransaction}, kinds(got))
	a = New()
	require.Empty(t, a.Finish([]*replay.Engine{lb.replay(a)}, nil, 0), "5 s is no long transaction by default")
}

// TestMashaKosherReset: the public dump MashaKosher-Internship holds a real reset. Group
// adminService's committed offset of jwtCheckAnswer-0 fell 134 -> 54 -> 4 -> 18 -> 3 while the
// group had no members (after generation 265 emptied it); the audit tells it as one run of
// writes while empty, with the values, how often it moved back and who can have written it.
func TestMashaKosherReset(t *testing.T) {
	dir := filepath.Join(testcorpus.Found(t), "MashaKosher-Internship", "kafka", "data", "__consumer_offsets-10")
	src, err := segment.Open(dir, segment.Options{Mode: eventlog.Forensic})
	require.NoError(t, err)
	a := New()
	e := replay.New(10, replay.Options{Mode: eventlog.Forensic, Observer: a.Observer(10)})
	require.NoError(t, e.Run(context.Background(), src, math.MaxInt64))
	got := a.Finish([]*replay.Engine{e}, nil, 0)
	require.Equal(t, []string{KindOffsetsWhileEmpty, KindOffsetsDeleted, KindOffsetsDeleted}, kinds(got))
	f := got[0]
	require.Equal(t, "adminService", f.Group)
	require.Equal(t, int64(394), f.Offset, "the first write after the group emptied at offset 393")
	require.Equal(t, int64(1743714209885), f.Time)
	require.Contains(t, f.Detail, "28 commits to 1 partition between offset 394 and 421")
	require.Contains(t, f.Detail, "while the group had no members (since 2025-04-03T20:57:31.036Z)")
	require.Contains(t, f.Detail, "an admin tool (kafka-consumer-groups --reset-offsets) or a standalone consumer")
	require.Contains(t, f.Detail, "jwtCheckAnswer-0: 134 -> 54 -> 4 -> 18 -> 3 -> ")
	require.Contains(t, f.Detail, "14 moves back, the largest jwtCheckAnswer-0 151 -> 11 (-140)")
	require.Equal(t, 28, f.Episode.Commits)
	require.Equal(t, []int64{134, 54, 4, 18, 3}, f.Episode.Values["jwtCheckAnswer-0"][:5])
	require.Equal(t, int64(393), f.Episode.EmptySince.Offset)
	// The offsets deleted one topic at a time afterwards, the group staying.
	require.Equal(t, []int64{422, 423}, []int64{got[1].Offset, got[2].Offset})
	require.Equal(t, "offset-delete", got[1].Event.Deletion.Cause)
}

// TestFindingsDoNotAliasBatches: check on every recording gives the same findings from
// batches that are overwritten as soon as the engine moves past them
// (eventlogtest.Scribbling), so nothing the audit keeps aliases a source's read buffer.
func TestFindingsDoNotAliasBatches(t *testing.T) {
	for _, sc := range []string{"classic", "compaction", "consumer", "conversion", "deletions", "share", "streams", "transactions"} {
		run := func(scribble bool) []Finding {
			var src eventlog.Source
			src, err := segment.Open(filepath.Join(testcorpus.Recordings(), sc, "__consumer_offsets-0"), segment.Options{})
			require.NoError(t, err)
			if scribble {
				src = eventlogtest.Scribbling(src)
			}
			a := NewWith(Options{Explain: explain.Options{SessionTimeoutMs: 3000}})
			e := replay.New(0, replay.Options{Mode: eventlog.Forensic, Observer: a.Observer(0)})
			require.NoError(t, e.Run(context.Background(), src, math.MaxInt64))
			return a.Finish([]*replay.Engine{e}, nil, 1)
		}
		plain, scribbled := run(false), run(true)
		require.Equal(t, len(plain), len(scribbled), sc)
		for i := range plain {
			p, s := plain[i], scribbled[i]
			require.Equal(t, [5]any{p.Offset, p.Kind, p.Group, p.Detail, p.Next}, [5]any{s.Offset, s.Kind, s.Group, s.Detail, s.Next}, sc)
		}
	}
}
