package consumer_test

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/coordinator/consumer"
	"github.com/coordlog/coordlog/coordinator/consumer/consumertest"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// realConsumer is the recording of a real Kafka 4.4.0 broker (fixtures/real/consumer): group
// consumer-848 (topic s2-in, 6 partitions) with scale out, a static member, scale in, a
// member fenced by its session timeout, a static temporary leave and restart.
const realConsumer = "../../fixtures/real/consumer/__consumer_offsets-0"

// TestDecisionsMatchRealBroker drives the coordinator, batch by batch, from the state the
// recording replays to just before each heartbeat decision of groups consumer-848 and
// consumer-regex (a regex subscription with the range assignor), with the request that
// decision implies, and requires Kafka's records; the two regex resolutions (records 16 and
// 3, one after topic s2-rx-c was created) as well. The requests are not recorded
// (the harness has no request log yet): they are inferred from the log, and the inference is
// only trusted where it is forced: a join is the member's record 5 (its subscription,
// rebalance timeout, instance and client id), a heartbeat reports the member's epoch and
// assigned partitions as owned (a Java client revokes before it heartbeats), a leave or a
// session fence is epoch -1, a static temporary leave epoch -2, a static restart a join with
// the instance id. The group configs are the recording's (session 3000 ms, heartbeat 500 ms,
// assignment interval 0). Normalised: the assignment timestamp of record 6 (Kafka reads its
// clock again when the assignor finishes), record 16's metadata version and timestamp, and the
// order of topics and partitions inside records 7 and 8 (Kafka lists them in HashMap order).
func TestDecisionsMatchRealBroker(t *testing.T) {
	in, batches := readRecording(t, realConsumer)

	// The topics' ids are the ones the recording's offset commits give them; the partition
	// counts are the driver's. s2-rx-c is created while the regex group runs: it is in the
	// metadata from the first batch that names it.
	full := replay.New(0, replay.Options{Mode: eventlog.Strict})
	require.NoError(t, full.Run(context.Background(), in, 1<<62))
	partitions := map[string]int32{"s2-in": 6, "s2-rx-a": 2, "s2-rx-b": 2, "s2-rx-c": 1}
	ids := map[string][16]byte{}
	for tid, name := range full.State().TopicNames() {
		if _, ok := partitions[name]; ok {
			ids[name] = tid
		}
	}
	require.Len(t, ids, len(partitions), "offset commits name %v", ids)
	md := &coordinator.Metadata{Topics: map[string]coordinator.TopicMetadata{}, Version: 1}
	for _, n := range []string{"s2-in", "s2-rx-a", "s2-rx-b"} {
		md.Topics[n] = coordinator.TopicMetadata{ID: ids[n], Partitions: partitions[n]}
	}
	cfg := consumer.DefaultConfig()
	cfg.SessionTimeoutMs, cfg.HeartbeatIntervalMs, cfg.AssignmentIntervalMs = 3000, 500, 0
	coord := &consumer.Coordinator{Config: func(string) consumer.Config { return cfg }}

	eng := replay.New(0, replay.Options{Mode: eventlog.Strict})
	checked, kinds := 0, map[string]int{}
	for _, b := range batches {
		recs := decodeBatch(t, b)
		if _, ok := md.Topics["s2-rx-c"]; !ok && strings.Contains(strings.Join(renderRecords(recs), ""), "s2-rx-c") {
			md.Topics["s2-rx-c"] = coordinator.TopicMetadata{ID: ids["s2-rx-c"], Partitions: partitions["s2-rx-c"]}
			md.Version++
		}
		if len(recs) > 0 && recs[0].Key.Type == recordcodec.ConsumerGroupRegularExpression && recs[0].Value != nil {
			// A resolution (Kafka's executor): schedule it as a heartbeat would have, run it.
			soft := consumer.NewSoft()
			g := recs[0].Key.Group
			soft.Groups[g] = &consumer.GroupSoft{GroupSoft: coordinator.NewGroupSoft[consumer.MemberSoft](), RegexResolution: &consumer.RegexResolution{Group: g, Regexes: []string{recs[0].Key.Regex}}}
			got, ok := coord.ResolveRegexes(eng.State(), soft, md, g, b.BaseTimestamp)
			require.True(t, ok)
			require.Equal(t, renderRecords(recs), renderRecords(got), "offset %d: regex resolution", b.BaseOffset)
			checked++
			kinds["regex resolution"]++
		} else if kind, req := inferRequest(eng.State(), recs); req != nil {
			soft := consumer.NewSoft()
			soft.Restore(eng.State(), func(string) consumer.Config { return cfg }, b.BaseTimestamp)
			res := coord.Heartbeat(eng.State(), soft, md, *req, b.BaseTimestamp)
			require.Zero(t, res.Response.ErrorCode, "offset %d (%s): %v", b.BaseOffset, kind, res.Response.ErrorMessage)
			require.Equal(t, renderRecords(recs), renderRecords(res.Records), "offset %d: %s of %s", b.BaseOffset, kind, req.Heartbeat.MemberID)
			checked++
			kinds[kind]++
		}
		require.NoError(t, eng.Run(context.Background(), in, b.LastOffset+1))
	}
	t.Logf("%d decisions equal to Kafka's: %v", checked, kinds)
	require.GreaterOrEqual(t, checked, 20)
	require.Positive(t, kinds["join"])
	require.Positive(t, kinds["heartbeat"])
	require.Positive(t, kinds["leave"])
	require.Positive(t, kinds["static leave"])
	require.Positive(t, kinds["static restart"])
	require.Equal(t, 2, kinds["regex resolution"])
}

// readRecording opens a recording's partition and reads all its batches.
func readRecording(t *testing.T, dir string) (*input.Input, []*eventlog.Batch) {
	t.Helper()
	in, err := input.Open(dir, eventlog.Strict)
	require.NoError(t, err)
	t.Cleanup(func() { in.Close() })
	it, err := in.Batches(0, 0)
	require.NoError(t, err)
	var batches []*eventlog.Batch
	for it.Next() {
		batches = append(batches, it.Batch().Clone())
	}
	require.NoError(t, it.Err())
	it.Close()
	return in, batches
}

func decodeBatch(t *testing.T, b *eventlog.Batch) []recordcodec.Record {
	var out []recordcodec.Record
	for _, r := range b.Records {
		rec, err := recordcodec.Decode(r.Key, r.Value)
		require.NoError(t, err)
		out = append(out, rec)
	}
	return out
}

var (
	assignmentTimestamp = regexp.MustCompile(`"assignmentTimestamp":\d+`)
	// GroupMetadata's currentStateTimestamp: Kafka reads its clock when it converts, a few ms
	// before the batch's timestamp (coordlog's now).
	currentStateTimestamp = regexp.MustCompile(`"currentStateTimestamp":\d+`)
	// Record 16's metadata image version (Kafka's image offset, which coordlog's metadata
	// does not have) and its timestamp (the resolution's start).
	regexVersion = regexp.MustCompile(`"version":\d+,"timestamp":\d+`)
)

// renderRecords renders records as dump-log JSON, normalised (see the test's doc): topics
// sorted by id and partitions sorted (with their assignment epochs) inside records 7 and 8.
func renderRecords(recs []recordcodec.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		switch v := r.Value.(type) {
		case *recordcodec.ConsumerGroupTargetAssignmentMemberValue:
			c := *v
			c.TopicPartitions = slices.Clone(v.TopicPartitions)
			for j := range c.TopicPartitions {
				c.TopicPartitions[j].Partitions = slices.Sorted(slices.Values(c.TopicPartitions[j].Partitions))
			}
			slices.SortFunc(c.TopicPartitions, func(a, b recordcodec.TopicPartitions) int { return bytes.Compare(a.TopicId[:], b.TopicId[:]) })
			r.Value = &c
		case *recordcodec.ConsumerGroupCurrentMemberAssignmentValue:
			c := *v
			c.AssignedPartitions, c.PartitionsPendingRevocation = consumertest.SortedWithEpochs(v.AssignedPartitions), consumertest.SortedWithEpochs(v.PartitionsPendingRevocation)
			r.Value = &c
		}
		line := recordcodec.AppendDumpLogKey(nil, r.Key)
		line = append(line, ' ')
		line = recordcodec.AppendDumpLogPayload(line, r.Value)
		s := assignmentTimestamp.ReplaceAllString(string(line), `"assignmentTimestamp":T`)
		s = currentStateTimestamp.ReplaceAllString(s, `"currentStateTimestamp":T`)
		out[i] = regexVersion.ReplaceAllString(s, `"version":V,"timestamp":T`)
	}
	return out
}

// inferRequest returns the heartbeat a batch answers (nil for any other batch: offsets, or a
// decision whose request is not forced by the log).
func inferRequest(st groupstate.View, recs []recordcodec.Record) (string, *consumer.Request) {
	if len(recs) == 0 || recs[0].Key.Type == recordcodec.OffsetCommit {
		return "", nil
	}
	gid := recs[0].Key.Group
	g, _ := st.ConsumerGroup(gid)
	member := func(id string) *groupstate.ConsumerMember {
		for i := range g.Members {
			if g.Members[i].MemberID == id {
				return &g.Members[i]
			}
		}
		return nil
	}
	first := recs[0]
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Version, hb.Group, hb.RebalanceTimeoutMillis = 1, gid, -1
	req := &consumer.Request{Heartbeat: hb}
	join := func(v *recordcodec.ConsumerGroupMemberMetadataValue, id string) {
		hb.MemberID, hb.MemberEpoch, hb.InstanceID = id, 0, v.InstanceId
		hb.RebalanceTimeoutMillis, hb.ServerAssignor = v.RebalanceTimeoutMs, v.ServerAssignor
		if v.SubscribedTopicRegex != nil && *v.SubscribedTopicRegex != "" {
			hb.SubscribedTopicRegex = v.SubscribedTopicRegex // the Java client sends no names then
		} else {
			hb.SubscribedTopicNames = v.SubscribedTopicNames
		}
		hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		req.ClientID, req.ClientHost = v.ClientId, v.ClientHost
	}
	switch {
	case first.Key.Type == recordcodec.ConsumerGroupMemberMetadata && first.Value != nil && member(first.Key.Member) == nil:
		join(first.Value.(*recordcodec.ConsumerGroupMemberMetadataValue), first.Key.Member)
		return "join", req
	case first.Key.Type == recordcodec.ConsumerGroupCurrentMemberAssignment && first.Value == nil:
		old := member(first.Key.Member)
		if old == nil {
			return "", nil
		}
		// A static restart: the old id's tombstones, then the new id's records; the last
		// record 5 carries the restarted client's metadata.
		for i := len(recs) - 1; i > 0; i-- {
			if v, ok := recs[i].Value.(*recordcodec.ConsumerGroupMemberMetadataValue); ok && recs[i].Key.Member != old.MemberID {
				join(v, recs[i].Key.Member)
				return "static restart", req
			}
		}
		hb.MemberID, hb.MemberEpoch, hb.InstanceID = old.MemberID, coordinator.LeaveEpoch, old.InstanceID
		return "leave", req
	}
	// A heartbeat: of the member whose record 8 the batch carries.
	for _, r := range recs {
		if r.Key.Type != recordcodec.ConsumerGroupCurrentMemberAssignment || r.Value == nil {
			continue
		}
		m := member(r.Key.Member)
		if m == nil {
			return "", nil
		}
		hb.MemberID, hb.InstanceID = m.MemberID, m.InstanceID
		req.ClientID, req.ClientHost = m.ClientID, m.ClientHost
		if v := r.Value.(*recordcodec.ConsumerGroupCurrentMemberAssignmentValue); v.MemberEpoch == coordinator.StaticLeaveEpoch {
			hb.MemberEpoch = coordinator.StaticLeaveEpoch
			return "static leave", req
		}
		hb.MemberEpoch = m.MemberEpoch
		hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		for _, tp := range m.AssignedPartitions {
			hb.Topics = append(hb.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: tp.TopicID, Partitions: tp.Partitions})
		}
		return "heartbeat", req
	}
	return "", nil
}
