package consumer_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/coordinator/consumer"
	"github.com/coordlog/coordlog/coordinator/consumer/consumertest"
	"github.com/coordlog/coordlog/recordcodec"
)

// classicFixture: consumer group cg (consumer member n1, classic member k1 at epoch 3 on
// topic in), an empty streams group, a streams group with a member and a share group with a
// member, written as records.
func classicFixture(t *testing.T) *consumertest.Runner {
	t.Helper()
	r, _ := newEngineRunner(nil)
	for _, cmd := range []string{"config interval=0", "topic in 4", "subscribe in", "join n1", "cjoin k1", "csync k1"} {
		require.NoError(t, r.Exec(cmd))
	}
	streams := recordcodec.NewStreamsGroupMetadataValue()
	share := recordcodec.NewShareGroupMetadataValue()
	recs := []recordcodec.Record{
		{Key: recordcodec.Key{Type: recordcodec.StreamsGroupMetadata, Group: "streams-empty"}, Value: streams},
		{Key: recordcodec.Key{Type: recordcodec.StreamsGroupMetadata, Group: "streams"}, Value: streams},
		{Key: recordcodec.Key{Type: recordcodec.StreamsGroupMemberMetadata, Group: "streams", Member: "s"}, Value: recordcodec.NewStreamsGroupMemberMetadataValue()},
		{Key: recordcodec.Key{Type: recordcodec.ShareGroupMetadata, Group: "share"}, Value: share},
		{Key: recordcodec.Key{Type: recordcodec.ShareGroupMemberMetadata, Group: "share", Member: "s"}, Value: recordcodec.NewShareGroupMemberMetadataValue()},
	}
	_, err := coordinator.AppendDecision(r.Log, 0, r.Now, recs, nil)
	require.NoError(t, err)
	return r
}

func joinRequest(version int16, group, member string, session int32) *kmsg.JoinGroupRequest {
	j := kmsg.NewPtrJoinGroupRequest()
	j.Version, j.Group, j.MemberID, j.SessionTimeoutMillis, j.RebalanceTimeoutMillis = version, group, member, session, 60000
	j.ProtocolType = "consumer"
	sub := recordcodec.NewConsumerProtocolSubscription()
	sub.Topics = []string{"in"}
	b, _ := recordcodec.EncodeConsumerSubscription(sub)
	j.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "cooperative-sticky", Metadata: b}}
	return j
}

// TestClassicRequestValidation: the checks of Kafka's service and KafkaApis in front of the
// classic requests, the answers for groups of other types, and the version-dependent shapes of
// the responses, which the scenario runner (versions 4, 5 and 9, group ids never empty) does
// not reach.
func TestClassicRequestValidation(t *testing.T) {
	r := classicFixture(t)
	st, soft, md, now := r.Log.State(), r.Soft, r.Meta, r.Now
	join := func(j *kmsg.JoinGroupRequest) consumer.JoinGroupResult {
		t.Helper()
		res, err := r.Coord.JoinGroup(st, soft, md, consumer.JoinGroupRequest{Join: j, ClientID: "c", ClientHost: "/h"}, now)
		require.NoError(t, err)
		return res
	}

	// An empty group id: INVALID_GROUP_ID, the member id echoed.
	res := join(joinRequest(9, "", "m", 10000))
	require.Equal(t, coordinator.ErrInvalidGroupID, res.Response.ErrorCode)
	require.Equal(t, "m", res.Response.MemberID)
	require.Equal(t, int32(-1), res.Response.Generation)
	require.Nil(t, res.Response.Protocol) // version 7+: null
	require.Empty(t, res.Records)
	// Before version 7 the protocol name is an empty string, not null.
	res = join(joinRequest(6, "", "m", 10000))
	require.NotNil(t, res.Response.Protocol)
	require.Equal(t, "", *res.Response.Protocol)

	// A non-empty streams group, a share group: INCONSISTENT_GROUP_PROTOCOL; an empty streams
	// group becomes a classic group (the classic coordinator's).
	for _, g := range []string{"streams", "share"} {
		res = join(joinRequest(9, g, "m", 10000))
		require.Equal(t, coordinator.ErrInconsistentGroupProto, res.Response.ErrorCode, g)
		require.Equal(t, "", res.Response.MemberID)
	}
	_, err := r.Coord.JoinGroup(st, soft, md, consumer.JoinGroupRequest{Join: joinRequest(9, "streams-empty", "", 10000)}, now)
	require.ErrorIs(t, err, consumer.ErrNotConsumerGroup)

	// Before version 4 a dynamic member without a member id joins at once with a new one;
	// version 0 takes the session timeout as its rebalance timeout (the sync timer's).
	res = join(joinRequest(3, "cg", "", 10000))
	require.Zero(t, res.Response.ErrorCode)
	require.NotEmpty(t, res.Response.MemberID)
	require.NotEmpty(t, res.Records)
	j0 := joinRequest(0, "cg", "v0", 10000)
	j0.RebalanceTimeoutMillis = -1
	res = join(j0)
	require.Zero(t, res.Response.ErrorCode)
	var rec5 *recordcodec.ConsumerGroupMemberMetadataValue
	for _, rec := range res.Records {
		if v, ok := rec.Value.(*recordcodec.ConsumerGroupMemberMetadataValue); ok && rec.Key.Member == "v0" {
			rec5 = v
		}
	}
	require.NotNil(t, rec5)
	require.Equal(t, int32(10000), rec5.RebalanceTimeoutMs)
	require.Equal(t, now+10000, soft.Groups["cg"].Members["v0"].SyncDeadline)

	// SyncGroup: version 5 must name the protocol type and name (KafkaApis); an empty group id.
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.MemberID, sync.Generation = 5, "cg", "k1", 3
	sres, err := r.Coord.SyncGroup(st, soft, md, sync, now)
	require.NoError(t, err)
	require.Equal(t, coordinator.ErrInconsistentGroupProto, sres.Response.ErrorCode)
	sync.Version = 4
	sres, err = r.Coord.SyncGroup(st, soft, md, sync, now)
	require.NoError(t, err)
	require.Zero(t, sres.Response.ErrorCode, "%v", sres.Error)
	sync.Group = ""
	sres, err = r.Coord.SyncGroup(st, soft, md, sync, now)
	require.NoError(t, err)
	require.Equal(t, coordinator.ErrInvalidGroupID, sres.Response.ErrorCode)
	for _, g := range []string{"streams", "share"} {
		sync.Group = g
		sres, err = r.Coord.SyncGroup(st, soft, md, sync, now)
		require.NoError(t, err)
		require.Equal(t, coordinator.ErrUnknownMemberID, sres.Response.ErrorCode, g)
	}

	// Heartbeat: an empty group id; another type.
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "", "k1", 3
	hres, err := r.Coord.ClassicHeartbeat(st, soft, md, hb, now)
	require.NoError(t, err)
	require.Equal(t, coordinator.ErrInvalidGroupID, hres.Response.ErrorCode)
	hb.Group = "share"
	hres, err = r.Coord.ClassicHeartbeat(st, soft, md, hb, now)
	require.NoError(t, err)
	require.Equal(t, coordinator.ErrUnknownMemberID, hres.Response.ErrorCode)

	// LeaveGroup before version 3: one member by id, its error as the top-level error.
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group, leave.MemberID = 2, "cg", "nobody"
	lres, err := r.Coord.LeaveGroup(st, soft, md, leave, now)
	require.NoError(t, err)
	require.Equal(t, coordinator.ErrUnknownMemberID, lres.Response.ErrorCode)
	require.Nil(t, lres.Response.Members)
	require.Empty(t, lres.Records)
	leave.MemberID = "k1"
	lres, err = r.Coord.LeaveGroup(st, soft, md, leave, now)
	require.NoError(t, err)
	require.Zero(t, lres.Response.ErrorCode)
	require.NotEmpty(t, lres.Records)
	leave.Group = ""
	lres, err = r.Coord.LeaveGroup(st, soft, md, leave, now)
	require.NoError(t, err)
	require.Equal(t, coordinator.ErrInvalidGroupID, lres.Response.ErrorCode)
	// A group of another type: every member UNKNOWN_MEMBER_ID (top-level NONE from version 3).
	leave.Version, leave.Group = 5, "streams"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "s"}, {MemberID: "t"}}
	lres, err = r.Coord.LeaveGroup(st, soft, md, leave, now)
	require.NoError(t, err)
	require.Zero(t, lres.Response.ErrorCode)
	require.Len(t, lres.Response.Members, 2)
	for _, m := range lres.Response.Members {
		require.Equal(t, coordinator.ErrUnknownMemberID, m.ErrorCode)
	}
}
