package consumer_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/coordinator/consumer"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// realConversion is the recording of a real Kafka 4.4.0 broker (fixtures/real/conversion):
// classic group convert (cooperative-sticky members k1, k2 on topic s3-in, 4 partitions) is
// upgraded by the consumer-protocol join of n1; k1 and k2 leave and n2, n3 join; classic k3
// joins the consumer group; n1, n2 and n3 leave, and the last leave downgrades the group back
// to a classic group; classic k4 then joins the classic group.
const realConversion = "../../fixtures/real/conversion/__consumer_offsets-0"

// TestConversionMatchesRealBroker drives the coordinator, batch by batch, from the state the
// recording replays to just before each decision of the consumer group's life, with the
// request the batch implies, and requires Kafka's records: the upgrade (GroupMetadata
// tombstone, the classic members as consumer group records, then the joining member's
// records), the JoinGroups of classic members inside the consumer group, their LeaveGroups,
// the heartbeats, joins and leaves of consumer-protocol members, and the downgrade (every
// consumer record tombstoned, then GroupMetadata at the group epoch with the remaining classic
// member, its subscription and its target assignment as ConsumerProtocolAssignment bytes).
//
// The requests are inferred from the log, only where the log forces them: a batch opening with
// the GroupMetadata tombstone of a classic group with members is the join of the consumer
// member whose record 5 it holds; a batch opening with a record 5 carrying classic metadata is
// a JoinGroup (version 9) of that member with its session timeout, rebalance timeout, client
// and protocols (whose subscription bytes hold the owned partitions); a batch of member
// tombstones of a classic member is its LeaveGroup (version 5); a conversion back is the leave
// of the member the GroupMetadata record leaves out; the rest as in TestDecisionsMatchRealBroker.
//
// Decisions that write no records are checked where the log implies them: a JoinGroup of a
// member not yet in the group is preceded by one without a member id, answered
// MEMBER_ID_REQUIRED with the member id the recording shows (the id generator returns it); a
// classic member joins again only after a Heartbeat answered REBALANCE_IN_PROGRESS; and the
// SyncGroup after a JoinGroup answers the partitions that member then reports owning in its
// next JoinGroup's subscription, at the generation that subscription names (the Java client's
// cooperative-sticky protocol reports exactly what it was given). The classic group's own
// decisions (GroupMetadata records of its rebalances) and offset commits are not this
// coordinator's and are skipped.
//
// Normalised, as in TestDecisionsMatchRealBroker: record 6's assignment timestamp, the order of
// topics and partitions inside records 7 and 8; and GroupMetadata's currentStateTimestamp (Kafka
// reads its clock at the conversion, 2 ms before the batch's timestamp, coordlog's now). Kafka's
// configuration of the recording: assignment interval 0 (fixtures/kafka/record.sh); the
// session timeouts do not show in these records.
func TestConversionMatchesRealBroker(t *testing.T) {
	in, batches := readRecording(t, realConversion)
	full := replay.New(0, replay.Options{Mode: eventlog.Strict})
	require.NoError(t, full.Run(context.Background(), in, 1<<62))
	md := &coordinator.Metadata{Topics: map[string]coordinator.TopicMetadata{}, Version: 1}
	for tid, name := range full.State().TopicNames() {
		if name == "s3-in" {
			md.Topics[name] = coordinator.TopicMetadata{ID: tid, Partitions: 4}
		}
	}
	require.Len(t, md.Topics, 1, "offset commits name s3-in")
	cfg := consumer.DefaultConfig()
	cfg.AssignmentIntervalMs = 0
	nextID := ""
	coord := &consumer.Coordinator{Config: func(string) consumer.Config { return cfg },
		NewMemberID: func(string, int64) string { return nextID }}

	// expected sync answers: member -> the partitions and generation its next JoinGroup's
	// subscription must report.
	type synced struct {
		owned      []string
		generation int32
	}
	expect := map[string]synced{}
	eng := replay.New(0, replay.Options{Mode: eventlog.Strict})
	kinds, skipped := map[string]int{}, map[string]int{}
	for _, b := range batches {
		recs := decodeBatch(t, b)
		now := b.BaseTimestamp
		st := eng.State()
		soft := consumer.NewSoft()
		soft.Restore(st, func(string) consumer.Config { return cfg }, now)
		check := func(kind string, got []recordcodec.Record) {
			t.Helper()
			require.Equal(t, renderRecords(recs), renderRecords(got), "offset %d: %s", b.BaseOffset, kind)
			kinds[kind]++
		}
		switch kind, arg := inferConversion(st, recs); kind {
		case "upgrade", "consumer join":
			v := arg.(*recordcodec.Record)
			req := consumerJoin(v)
			res := coord.Heartbeat(st, soft, md, req, now)
			require.Zero(t, res.Response.ErrorCode, "offset %d: %v", b.BaseOffset, res.Response.ErrorMessage)
			check(kind, res.Records)
		case "classic join":
			rec := arg.(*recordcodec.Record)
			v := rec.Value.(*recordcodec.ConsumerGroupMemberMetadataValue)
			id := rec.Key.Member
			g, _ := st.ConsumerGroup(rec.Key.Group)
			known := slices.ContainsFunc(g.Members, func(m groupstate.ConsumerMember) bool { return m.MemberID == id })
			join := classicJoinRequest(rec.Key.Group, id, v)
			if !known {
				// The member's first JoinGroup carried no member id.
				first := *join.Join
				first.MemberID = ""
				nextID = id
				res, err := coord.JoinGroup(st, soft, md, consumer.JoinGroupRequest{Join: &first, ClientID: join.ClientID, ClientHost: join.ClientHost}, now)
				require.NoError(t, err)
				require.Equal(t, coordinator.ErrMemberIDRequired, res.Response.ErrorCode, "offset %d", b.BaseOffset)
				require.Equal(t, id, res.Response.MemberID)
				require.Empty(t, res.Records)
				kinds["member id required"]++
			} else {
				m := g.Members[slices.IndexFunc(g.Members, func(m groupstate.ConsumerMember) bool { return m.MemberID == id })]
				hb, err := coord.ClassicHeartbeat(st, soft, md, &kmsg.HeartbeatRequest{Version: 4, Group: rec.Key.Group, MemberID: id, Generation: m.MemberEpoch}, now)
				require.NoError(t, err)
				require.Equal(t, coordinator.ErrRebalanceInProgress, hb.Response.ErrorCode, "offset %d: %s rejoins", b.BaseOffset, id)
				kinds["heartbeat rebalance in progress"]++
			}
			if want, ok := expect[id]; ok {
				sub, err := recordcodec.DecodeConsumerSubscription(v.ClassicMemberMetadata.SupportedProtocols[0].Metadata)
				require.NoError(t, err)
				require.Equal(t, want.owned, ownedNames(sub), "offset %d: %s owns what its SyncGroup answered", b.BaseOffset, id)
				require.Equal(t, want.generation, sub.GenerationId, "offset %d: %s's generation", b.BaseOffset, id)
				kinds["sync group"]++
			}
			res, err := coord.JoinGroup(st, soft, md, join, now)
			require.NoError(t, err)
			require.Zero(t, res.Response.ErrorCode, "offset %d: %v", b.BaseOffset, res.Error)
			check(kind, res.Records)
			// The SyncGroup that follows, on the state the join wrote.
			require.NoError(t, eng.Run(context.Background(), in, b.LastOffset+1))
			sync := kmsg.NewPtrSyncGroupRequest()
			sync.Version, sync.Group, sync.MemberID, sync.Generation = 5, rec.Key.Group, id, res.Response.Generation
			pt := "consumer"
			sync.ProtocolType, sync.Protocol = &pt, res.Response.Protocol
			sres, err := coord.SyncGroup(eng.State(), soft, md, sync, now)
			require.NoError(t, err)
			require.Zero(t, sres.Response.ErrorCode, "offset %d: %v", b.BaseOffset, sres.Error)
			a, err := recordcodec.DecodeConsumerAssignment(sres.Response.MemberAssignment)
			require.NoError(t, err)
			expect[id] = synced{owned: assignedNames(a), generation: res.Response.Generation}
			continue
		case "classic leave":
			id := arg.(string)
			leave := kmsg.NewPtrLeaveGroupRequest()
			leave.Version, leave.Group = 5, recs[0].Key.Group
			leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: id}}
			res, err := coord.LeaveGroup(st, soft, md, leave, now)
			require.NoError(t, err)
			require.Zero(t, res.Response.ErrorCode)
			require.Len(t, res.Response.Members, 1)
			require.Zero(t, res.Response.Members[0].ErrorCode)
			check(kind, res.Records)
			delete(expect, id)
		case "downgrade":
			m := arg.(*groupstate.ConsumerMember)
			hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch, hb.InstanceID = 1, recs[0].Key.Group, m.MemberID, coordinator.LeaveEpoch, m.InstanceID
			res := coord.Heartbeat(st, soft, md, consumer.Request{Heartbeat: hb}, now)
			require.Zero(t, res.Response.ErrorCode, "offset %d: %v", b.BaseOffset, res.Response.ErrorMessage)
			check(kind, res.Records)
		case "consumer":
			if k, req := inferRequest(st, recs); req != nil {
				res := coord.Heartbeat(st, soft, md, *req, now)
				require.Zero(t, res.Response.ErrorCode, "offset %d (%s): %v", b.BaseOffset, k, res.Response.ErrorMessage)
				check("consumer "+k, res.Records)
			}
		default:
			skipped[kind]++
		}
		require.NoError(t, eng.Run(context.Background(), in, b.LastOffset+1))
	}
	t.Logf("decisions equal to Kafka's: %v; not this coordinator's: %v", kinds, skipped)
	require.Equal(t, 1, kinds["upgrade"])
	require.Equal(t, 1, kinds["downgrade"])
	require.Equal(t, 7, kinds["classic join"])
	require.Equal(t, 2, kinds["classic leave"])
	require.Equal(t, 1, kinds["member id required"])
	require.Equal(t, 6, kinds["heartbeat rebalance in progress"])
	require.Equal(t, 4, kinds["sync group"])
	require.Equal(t, 2, kinds["consumer join"])
	require.Equal(t, 2, kinds["consumer leave"])
	require.Positive(t, kinds["consumer heartbeat"])
	require.Equal(t, 7, skipped["classic group decision"])
}

// inferConversion names the decision a batch of the conversion recording records and what its
// request needs (see TestConversionMatchesRealBroker).
func inferConversion(st groupstate.View, recs []recordcodec.Record) (string, any) {
	if len(recs) == 0 || recs[0].Key.Type == recordcodec.OffsetCommit {
		return "offset commit", nil
	}
	first := recs[0]
	gid := first.Key.Group
	typ, _ := st.GroupType(gid)
	if first.Key.Type == recordcodec.GroupMetadata {
		if cg, ok := st.ClassicGroup(gid); first.Value == nil && ok && len(cg.Members) > 0 {
			for i := range recs {
				if v, ok := recs[i].Value.(*recordcodec.ConsumerGroupMemberMetadataValue); ok && v.ClassicMemberMetadata == nil {
					return "upgrade", &recs[i]
				}
			}
		}
		return "classic group decision", nil
	}
	if typ != groupstate.GroupTypeConsumer {
		return "other", nil
	}
	g, _ := st.ConsumerGroup(gid)
	member := func(id string) *groupstate.ConsumerMember {
		for i := range g.Members {
			if g.Members[i].MemberID == id {
				return &g.Members[i]
			}
		}
		return nil
	}
	if v, ok := first.Value.(*recordcodec.ConsumerGroupMemberMetadataValue); ok && v.ClassicMemberMetadata != nil {
		return "classic join", &recs[0]
	}
	if last := recs[len(recs)-1]; last.Key.Type == recordcodec.GroupMetadata && last.Value != nil {
		stay := map[string]bool{}
		for _, m := range last.Value.(*recordcodec.GroupMetadataValue).Members {
			stay[m.MemberId] = true
		}
		for i := range g.Members {
			if !stay[g.Members[i].MemberID] {
				return "downgrade", &g.Members[i]
			}
		}
	}
	if first.Key.Type == recordcodec.ConsumerGroupCurrentMemberAssignment && first.Value == nil {
		if m := member(first.Key.Member); m != nil && m.ClassicMemberMetadata != nil {
			return "classic leave", m.MemberID
		}
	}
	return "consumer", nil
}

// consumerJoin is the join of the consumer-protocol member whose record 5 rec is.
func consumerJoin(rec *recordcodec.Record) consumer.Request {
	v := rec.Value.(*recordcodec.ConsumerGroupMemberMetadataValue)
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch, hb.InstanceID = 1, rec.Key.Group, rec.Key.Member, 0, v.InstanceId
	hb.RebalanceTimeoutMillis, hb.ServerAssignor, hb.SubscribedTopicNames = v.RebalanceTimeoutMs, v.ServerAssignor, v.SubscribedTopicNames
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	return consumer.Request{Heartbeat: hb, ClientID: v.ClientId, ClientHost: v.ClientHost}
}

// classicJoinRequest is the JoinGroup (version 9, the Java client's) whose record 5 is v.
func classicJoinRequest(group, memberID string, v *recordcodec.ConsumerGroupMemberMetadataValue) consumer.JoinGroupRequest {
	j := kmsg.NewPtrJoinGroupRequest()
	j.Version, j.Group, j.MemberID, j.InstanceID = 9, group, memberID, v.InstanceId
	j.SessionTimeoutMillis, j.RebalanceTimeoutMillis = v.ClassicMemberMetadata.SessionTimeoutMs, v.RebalanceTimeoutMs
	j.ProtocolType = "consumer"
	for _, p := range v.ClassicMemberMetadata.SupportedProtocols {
		j.Protocols = append(j.Protocols, kmsg.JoinGroupRequestProtocol{Name: p.Name, Metadata: p.Metadata})
	}
	return consumer.JoinGroupRequest{Join: j, ClientID: v.ClientId, ClientHost: v.ClientHost}
}

func ownedNames(s *recordcodec.ConsumerProtocolSubscription) []string {
	out := []string{}
	for _, tp := range s.OwnedPartitions {
		for _, p := range tp.Partitions {
			out = append(out, fmt.Sprintf("%s-%d", tp.Topic, p))
		}
	}
	slices.Sort(out)
	return out
}

func assignedNames(a *recordcodec.ConsumerProtocolAssignment) []string {
	out := []string{}
	for _, tp := range a.AssignedPartitions {
		for _, p := range tp.Partitions {
			out = append(out, fmt.Sprintf("%s-%d", tp.Topic, p))
		}
	}
	slices.Sort(out)
	return out
}
