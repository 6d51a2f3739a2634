package consumer_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/recordcodec"
)

// TestTimerFenceErrorIsReported: a session timeout whose fence fails (the downgrade to a
// classic group cannot encode the remaining classic member's assignment: its subscription's
// version is -1) writes nothing, as in Kafka, and the error is the TimerResult's Err, which
// the scenario runner prints; the timer is disarmed and the next Tick goes on.
func TestTimerFenceErrorIsReported(t *testing.T) {
	var out bytes.Buffer
	r, _ := newEngineRunner(&out)
	for _, cmd := range []string{"config interval=0", "topic in 4", "subscribe in",
		"classicgroup 3 k1=in:0,1 k2=in:2,3", "join n1"} {
		require.NoError(t, r.Exec(cmd), cmd)
	}
	// k1's classic metadata becomes a subscription no version of which can be read.
	v := recordcodec.NewConsumerGroupMemberMetadataValue()
	v.ClientId, v.ClientHost, v.SubscribedTopicNames, v.RebalanceTimeoutMs = "client-k1", "/127.0.0.1", []string{"in"}, 300000
	regex := ""
	v.SubscribedTopicRegex = &regex
	v.ClassicMemberMetadata = &recordcodec.ClassicMemberMetadata{SessionTimeoutMs: 45000,
		SupportedProtocols: []recordcodec.ClassicProtocol{{Name: "cooperative-sticky", Metadata: []byte{0xff, 0xff}}}}
	require.NoError(t, r.Append([]recordcodec.Record{{Key: recordcodec.Key{Type: recordcodec.ConsumerGroupMemberMetadata, Group: "cg", Member: "k1"}, Value: v}}))
	// The classic members heartbeat later than n1 joined: n1's session expires first.
	for _, cmd := range []string{"clock +40000", "chb k1", "chb k2", "clock +5001"} {
		require.NoError(t, r.Exec(cmd), cmd)
	}
	next := r.Log.NextOffset()
	res, ok := r.Coord.Tick(r.Log.State(), r.Soft, r.Meta, r.Now)
	require.True(t, ok)
	require.Equal(t, coordinator.TimerSession, res.Kind)
	require.Equal(t, "n1", res.Member)
	require.NotNil(t, res.Err, "the failed fence's error")
	require.Equal(t, coordinator.ErrGroupIDNotFound, res.Err.Code)
	require.Contains(t, res.Err.Message, "Cannot downgrade the classic group cg")
	require.Empty(t, res.Records)
	for _, tm := range r.Soft.Timers() {
		require.False(t, tm.Member == "n1" && tm.Kind == coordinator.TimerSession, "the fired timer is disarmed")
	}

	// Through the runner, the timer armed again: the error is printed, nothing appended.
	r.Soft.Groups["cg"].Members["n1"].SessionDeadline = r.Now
	out.Reset()
	require.NoError(t, r.Tick())
	require.Contains(t, out.String(), "  timer session-timeout cg n1\n  < error=69 \"Cannot downgrade the classic group cg")
	require.Equal(t, next, r.Log.NextOffset())
}
