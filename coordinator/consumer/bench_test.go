package consumer_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator/consumer"
)

// BenchmarkHeartbeatNoChange is a steady-state heartbeat of a stable member of a 3-member
// group on 6 partitions (no records, no assignment in the response), with the group model
// cached by state offset (Request.StateOffset), the response written into the caller's
// (Request.Into, as a server reusing one per connection does); cached-new-response allocates
// the response; uncached copies and converts the group view on every call.
func BenchmarkHeartbeatNoChange(b *testing.B) {
	b.Run("cached", func(b *testing.B) { benchNoChange(b, true, true) })
	b.Run("cached-new-response", func(b *testing.B) { benchNoChange(b, true, false) })
	b.Run("uncached", func(b *testing.B) { benchNoChange(b, false, false) })
}

func benchNoChange(b *testing.B, cached, into bool) {
	r, _ := newEngineRunner(nil)
	r.Cfg.AssignmentIntervalMs = 0
	for _, cmd := range []string{"topic in 6", "subscribe in", "join a", "join b", "join c"} {
		if err := r.Exec(cmd); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := r.Converge(20); err != nil {
		b.Fatal(err)
	}
	c := r.Clients["a"]
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = 1, "cg", "a", c.Epoch, -1
	req.Topics = c.Owned
	st := r.Log.State()
	rq := consumer.Request{Heartbeat: req, ClientID: "client-a", ClientHost: "/127.0.0.1"}
	if cached {
		rq.StateOffset = r.Log.NextOffset()
	}
	if into {
		rq.Into = kmsg.NewPtrConsumerGroupHeartbeatResponse()
	}
	if res := r.Coord.Heartbeat(st, r.Soft, r.Meta, rq, r.Now); len(res.Records) != 0 || res.Response.ErrorCode != 0 || res.Response.Assignment != nil {
		b.Fatalf("not a no-change heartbeat: %+v", res)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Coord.Heartbeat(st, r.Soft, r.Meta, rq, r.Now)
	}
}

// TestHeartbeatNoChangeAllocatesNothing: with the group model cached and the response written
// into the caller's (Request.Into), a heartbeat that changes nothing allocates nothing; the
// reused response is reset first (an assignment left in it by an earlier answer is gone) and
// equals a freshly allocated one.
func TestHeartbeatNoChangeAllocatesNothing(t *testing.T) {
	r, _ := newEngineRunner(nil)
	r.Cfg.AssignmentIntervalMs = 0
	for _, cmd := range []string{"topic in 6", "subscribe in", "join a", "join b", "join c"} {
		require.NoError(t, r.Exec(cmd))
	}
	_, err := r.Converge(20)
	require.NoError(t, err)
	c := r.Clients["a"]
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = 1, "cg", "a", c.Epoch, -1
	req.Topics = c.Owned
	rq := consumer.Request{Heartbeat: req, ClientID: "client-a", ClientHost: "/127.0.0.1", StateOffset: r.Log.NextOffset()}
	fresh := r.Coord.Heartbeat(r.Log.State(), r.Soft, r.Meta, rq, r.Now)
	require.Empty(t, fresh.Records)
	require.Nil(t, fresh.Response.Assignment)

	rq.Into = kmsg.NewPtrConsumerGroupHeartbeatResponse()
	rq.Into.Assignment = &kmsg.ConsumerGroupHeartbeatResponseAssignment{}
	rq.Into.ErrorCode = 99
	res := r.Coord.Heartbeat(r.Log.State(), r.Soft, r.Meta, rq, r.Now)
	require.Same(t, rq.Into, res.Response)
	require.Equal(t, fresh.Response, res.Response)

	st := r.Log.State()
	allocs := testing.AllocsPerRun(100, func() { r.Coord.Heartbeat(st, r.Soft, r.Meta, rq, r.Now) })
	require.Zero(t, allocs)
}
