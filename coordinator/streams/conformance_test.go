package streams_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/coordinator/streams"
	"github.com/coordlog/coordlog/coordinator/streams/streamstest"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

const realStreams = "../../fixtures/real/streams/__consumer_offsets-0"

// realStreamsBatches reads the streams-group records (ids 17-23) of the real Kafka 4.4.0
// recording, one slice per batch that holds any.
func realStreamsBatches(t *testing.T) [][]recordcodec.Record {
	t.Helper()
	r, err := segment.Open(realStreams, segment.Options{Mode: eventlog.Strict})
	require.NoError(t, err)
	it, err := r.Batches(0, 0)
	require.NoError(t, err)
	defer it.Close()
	var out [][]recordcodec.Record
	for it.Next() {
		b := it.Batch()
		if b.Attributes.Control() {
			continue
		}
		var recs []recordcodec.Record
		for _, rec := range b.Records {
			d, err := recordcodec.Decode(rec.Key, rec.Value)
			require.NoError(t, err)
			if d.Key.Type >= recordcodec.StreamsGroupMetadata && d.Key.Type <= recordcodec.StreamsGroupTopology {
				recs = append(recs, d)
			}
		}
		if len(recs) > 0 {
			out = append(out, recs)
		}
	}
	require.NoError(t, it.Err())
	return out
}

// envSpecific removes what differs on every recording: assignment timestamps (wall clock).
var envSpecific = regexp.MustCompile(`"(assignmentTimestamp)":-?[0-9]+`)

func renderRecord(r recordcodec.Record) string {
	var b []byte
	b = recordcodec.AppendDumpLogKey(b, r.Key)
	b = append(b, ' ')
	b = recordcodec.AppendDumpLogPayload(b, r.Value)
	return envSpecific.ReplaceAllString(string(b), `"$1":X`)
}

// TestConformanceRealStreamsRecording replays the heartbeats that the real recording's
// driver sent (instance A joins, internal topics get created, B joins, the standby moves in
// place, B leaves) and requires the records Kafka 4.4.0 wrote, batch by batch, in Kafka's
// order.
func TestConformanceRealStreamsRecording(t *testing.T) {
	if _, err := os.Stat(realStreams); err != nil {
		t.Skipf("real recording not available: %v", err)
	}
	want := realStreamsBatches(t)
	require.GreaterOrEqual(t, len(want), 9)
	topo := want[0][1].Value.(*recordcodec.StreamsGroupTopologyValue)
	metaA := want[0][0].Value.(*recordcodec.StreamsGroupMemberMetadataValue)
	metaB := want[2][0].Value.(*recordcodec.StreamsGroupMemberMetadataValue)
	idA, idB := want[0][0].Key.Member, want[2][0].Key.Member

	reqTopo := &kmsg.StreamsGroupHeartbeatRequestTopology{Epoch: topo.Epoch}
	info := func(in []recordcodec.StreamsTopicInfo) []kmsg.TopicInfo {
		out := []kmsg.TopicInfo{}
		for _, ti := range in {
			k := kmsg.TopicInfo{Topic: ti.Name, NumPartitions: ti.Partitions, ReplicationFactor: ti.ReplicationFactor}
			for _, c := range ti.TopicConfigs {
				k.Configs = append(k.Configs, kmsg.TopicInfoConfig{Key: c.Key, Value: c.Value})
			}
			out = append(out, k)
		}
		return out
	}
	for _, s := range topo.Subtopologies {
		reqTopo.Subtopologies = append(reqTopo.Subtopologies, kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{
			SubtopologyID: s.SubtopologyId, SourceTopics: s.SourceTopics, SourceTopicRegex: s.SourceTopicRegex,
			StateChangelogTopics: info(s.StateChangelogTopics), RepartitionSinkTopics: s.RepartitionSinkTopics,
			RepartitionSourceTopics: info(s.RepartitionSourceTopics), CopartitionGroups: []kmsg.StreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup{},
		})
	}

	e := replay.New(0, replay.Options{Mode: eventlog.Strict})
	soft := streams.NewSoft()
	cfg := streams.DefaultConfig()
	cfg.NumStandbyReplicas = 1
	cfg.InitialRebalanceDelayMs, cfg.AssignmentIntervalMs = 0, 0 // record.sh's broker settings
	c := &streams.Coordinator{Config: func(string) streams.Config { return cfg }}
	// The broker's own topic ids (admin.json), so that the metadata hash is Kafka's.
	ids := realTopicIDs(t)
	md := &coordinator.Metadata{Topics: map[string]coordinator.TopicMetadata{"s4-in": {ID: ids["s4-in"], Partitions: 2}}, Version: 1}
	now := int64(1000)

	tasks := func(s string) []kmsg.TaskIDs { return streamstest.ParseTasks(s) }
	join := func(id string, meta *recordcodec.StreamsGroupMemberMetadataValue) (streams.Request, string) {
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = "streams-app", id, 0, meta.RebalanceTimeoutMs
		r.Topology = reqTopo
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		p := meta.ProcessId
		r.ProcessID = &p
		r.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
		return streams.Request{Heartbeat: r, ClientID: meta.ClientId, ClientHost: meta.ClientHost}, id
	}
	hb := func(id string, epoch int32, active, standby string) (streams.Request, string) {
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = "streams-app", id, epoch, -1
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = tasks(active), tasks(standby), []kmsg.TaskIDs{}
		meta := metaA
		if id == idB {
			meta = metaB
		}
		return streams.Request{Heartbeat: r, ClientID: meta.ClientId, ClientHost: meta.ClientHost}, id
	}
	leave := func(id string) (streams.Request, string) {
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = "streams-app", id, -1, -1
		return streams.Request{Heartbeat: r, ClientID: metaB.ClientId, ClientHost: metaB.ClientHost}, id
	}
	steps := []struct {
		name string
		req  func() (streams.Request, string)
		pre  func()
	}{
		{"A joins; internal topics missing", func() (streams.Request, string) { return join(idA, metaA) }, nil},
		{"internal topics created; A assigned everything", func() (streams.Request, string) { return hb(idA, 2, "", "") }, func() {
			md.Topics["streams-app-by-prefix-repartition"] = coordinator.TopicMetadata{ID: ids["streams-app-by-prefix-repartition"], Partitions: 2}
			md.Topics["streams-app-prefix-counts-changelog"] = coordinator.TopicMetadata{ID: ids["streams-app-prefix-counts-changelog"], Partitions: 2}
			md.Version++
		}},
		{"B joins", func() (streams.Request, string) { return join(idB, metaB) }, nil},
		{"B heartbeats, still unreleased", func() (streams.Request, string) { return hb(idB, 4, "", "1:0") }, nil},
		{"A revokes; active 1-1 becomes a standby in place", func() (streams.Request, string) { return hb(idA, 3, "0:0,1/1:0,1", "") }, nil},
		{"A acknowledges", func() (streams.Request, string) { return hb(idA, 3, "0:0/1:0", "1:1") }, nil},
		{"B gets its actives", func() (streams.Request, string) { return hb(idB, 4, "", "1:0") }, nil},
		{"B leaves", func() (streams.Request, string) { return leave(idB) }, nil},
		{"A takes everything back", func() (streams.Request, string) { return hb(idA, 4, "0:0/1:0", "1:1") }, nil},
	}
	for i, s := range steps {
		if s.pre != nil {
			s.pre()
		}
		req, _ := s.req()
		req.StateOffset = e.NextOffset()
		res := c.Heartbeat(e.State(), soft, md, req, now)
		require.Equal(t, coordinator.ErrNone, res.Response.ErrorCode, "%s: %v", s.name, res.Response.ErrorMessage)
		require.Equal(t, render(want[i]), render(res.Records), "step %d (%s)", i, s.name)
		b, err := coordinator.NewBatch(0, e.NextOffset(), now, res.Records)
		require.NoError(t, err)
		require.NoError(t, e.Apply(b))
		now += 100
	}
}

func render(recs []recordcodec.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = renderRecord(r)
	}
	return out
}

// realTopicIDs reads the topic ids of the streams recording's broker from its admin.json.
func realTopicIDs(t *testing.T) map[string][16]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(realStreams), "admin.json"))
	require.NoError(t, err)
	var doc struct {
		Topics map[string]struct {
			TopicID string `json:"topicId"`
		} `json:"topics"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	out := map[string][16]byte{}
	for name, tp := range doc.Topics {
		u, err := recordcodec.ParseUUID(tp.TopicID)
		require.NoError(t, err)
		out[name] = u
	}
	return out
}
