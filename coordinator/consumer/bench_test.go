package consumer_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator/consumer"
)

// BenchmarkHeartbeatNoChange is a steady-state heartbeat of a stable member of a 3-member
// group on 6 partitions (no records, no assignment in the response), with the group model
// cached by state offset (Request.StateOffset); Uncached copies and converts the group view
// on every call.
func BenchmarkHeartbeatNoChange(b *testing.B) {
	b.Run("cached", func(b *testing.B) { benchNoChange(b, true) })
	b.Run("uncached", func(b *testing.B) { benchNoChange(b, false) })
}

func benchNoChange(b *testing.B, cached bool) {
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
	if res := r.Coord.Heartbeat(st, r.Soft, r.Meta, rq, r.Now); len(res.Records) != 0 || res.Response.ErrorCode != 0 || res.Response.Assignment != nil {
		b.Fatalf("not a no-change heartbeat: %+v", res)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Coord.Heartbeat(st, r.Soft, r.Meta, rq, r.Now)
	}
}
