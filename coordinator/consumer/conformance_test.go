package consumer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/coordinator/consumer"
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
// recording replays to just before each of group consumer-848's heartbeat decisions, with the
// request that decision implies, and requires Kafka's records. The requests are not recorded
// (the harness has no request log yet): they are inferred from the log, and the inference is
// only trusted where it is forced: a join is the member's record 5 (its subscription,
// rebalance timeout, instance and client id), a heartbeat reports the member's epoch and
// assigned partitions as owned (a Java client revokes before it heartbeats), a leave or a
// session fence is epoch -1, a static temporary leave epoch -2, a static restart a join with
// the instance id. The group configs are the recording's (session 3000 ms, heartbeat 500 ms,
// assignment interval 0). Normalised: the assignment timestamp of record 6 (Kafka reads its
// clock again when the assignor finishes) and the order of partitions inside records 7 and 8
// (Kafka lists them in HashMap order).
func TestDecisionsMatchRealBroker(t *testing.T) {
	in, err := input.Open(realConsumer, eventlog.Strict)
	require.NoError(t, err)
	defer in.Close()
	it, err := in.Batches(0, 0)
	require.NoError(t, err)
	var batches []*eventlog.Batch
	for it.Next() {
		batches = append(batches, it.Batch().Clone())
	}
	require.NoError(t, it.Err())
	it.Close()

	// The topic's id is the one the recording's offset commits give s2-in.
	full := replay.New(0, replay.Options{Mode: eventlog.Strict})
	require.NoError(t, full.Run(context.Background(), in, 1<<62))
	var id [16]byte
	for tid, name := range full.State().TopicNames() {
		if name == "s2-in" {
			id = tid
		}
	}
	require.NotZero(t, id, "no offset commit names s2-in")
	md := &coordinator.Metadata{Topics: map[string]coordinator.TopicMetadata{"s2-in": {ID: id, Partitions: 6}}, Version: 1}
	cfg := consumer.DefaultConfig()
	cfg.SessionTimeoutMs, cfg.HeartbeatIntervalMs, cfg.AssignmentIntervalMs = 3000, 500, 0
	coord := &consumer.Coordinator{Config: func(string) consumer.Config { return cfg }}

	eng := replay.New(0, replay.Options{Mode: eventlog.Strict})
	checked, kinds := 0, map[string]int{}
	for _, b := range batches {
		recs := decodeBatch(t, b)
		if kind, req := inferRequest(eng.State(), recs); req != nil {
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
	partitionList       = regexp.MustCompile(`"partitions":\[[0-9,]*\],"assignmentEpochs":\[[0-9,-]*\]|"partitions":\[[0-9,]*\]`)
)

// renderRecords renders records as dump-log JSON, normalised (see the test's doc).
func renderRecords(recs []recordcodec.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		line := recordcodec.AppendDumpLogKey(nil, r.Key)
		line = append(line, ' ')
		line = recordcodec.AppendDumpLogPayload(line, r.Value)
		s := assignmentTimestamp.ReplaceAllString(string(line), `"assignmentTimestamp":T`)
		out[i] = partitionList.ReplaceAllStringFunc(s, sortPartitions)
	}
	return out
}

// sortPartitions sorts a "partitions":[...] list, with its parallel assignment epochs.
func sortPartitions(s string) string {
	var v struct {
		Partitions []int32  `json:"partitions"`
		Epochs     *[]int32 `json:"assignmentEpochs"`
	}
	if err := json.Unmarshal([]byte("{"+s+"}"), &v); err != nil {
		return s
	}
	idx := make([]int, len(v.Partitions))
	for i := range idx {
		idx[i] = i
	}
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && v.Partitions[idx[j]] < v.Partitions[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	ps := make([]string, len(idx))
	es := make([]string, len(idx))
	for k, i := range idx {
		ps[k] = fmt.Sprint(v.Partitions[i])
		if v.Epochs != nil {
			es[k] = fmt.Sprint((*v.Epochs)[i])
		}
	}
	out := `"partitions":[` + strings.Join(ps, ",") + `]`
	if v.Epochs != nil {
		out += `,"assignmentEpochs":[` + strings.Join(es, ",") + `]`
	}
	return out
}

// inferRequest returns the request a batch of group consumer-848 answers (nil for any other
// batch: offsets, the regex group, or a decision whose request is not forced by the log).
func inferRequest(st groupstate.View, recs []recordcodec.Record) (string, *consumer.Request) {
	if len(recs) == 0 || recs[0].Key.Group != "consumer-848" || recs[0].Key.Type == recordcodec.OffsetCommit {
		return "", nil
	}
	g, _ := st.ConsumerGroup("consumer-848")
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
	hb.Version, hb.Group, hb.RebalanceTimeoutMillis = 1, "consumer-848", -1
	req := &consumer.Request{Heartbeat: hb}
	join := func(v *recordcodec.ConsumerGroupMemberMetadataValue, id string) {
		hb.MemberID, hb.MemberEpoch, hb.InstanceID = id, 0, v.InstanceId
		hb.RebalanceTimeoutMillis, hb.SubscribedTopicNames = v.RebalanceTimeoutMs, v.SubscribedTopicNames
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
