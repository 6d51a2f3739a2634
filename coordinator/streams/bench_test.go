package streams_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator/streams"
)

// BenchmarkHeartbeatNoChange is a steady-state heartbeat of a stable member of a 3-member
// group (no records, no assignment in the response).
func BenchmarkHeartbeatNoChange(b *testing.B) {
	r, _ := newEngineRunner(nil)
	r.Cfg.InitialRebalanceDelayMs, r.Cfg.AssignmentIntervalMs = 0, 0
	for _, cmd := range []string{"topic in 6", "sub 0 source=in", "join a", "join b", "join c"} {
		if err := r.Exec(cmd); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := r.Converge(20); err != nil {
		b.Fatal(err)
	}
	c := r.Clients["a"]
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "app", "a", c.Epoch, -1
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = c.Active, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	st := r.Log.State()
	rq := streams.Request{Heartbeat: req, ClientID: "client-a", ClientHost: "/127.0.0.1", StateOffset: r.Log.NextOffset()}
	if res := r.Coord.Heartbeat(st, r.Soft, r.Meta, rq, r.Now); len(res.Records) != 0 || res.Response.ErrorCode != 0 {
		b.Fatalf("not a no-change heartbeat: %+v", res)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Coord.Heartbeat(st, r.Soft, r.Meta, rq, r.Now)
	}
}

// BenchmarkHeartbeatNoChangeUncached is the same heartbeat without Request.StateOffset: the
// group view is copied from groupstate and converted on every call.
func BenchmarkHeartbeatNoChangeUncached(b *testing.B) {
	r, _ := newEngineRunner(nil)
	r.Cfg.InitialRebalanceDelayMs, r.Cfg.AssignmentIntervalMs = 0, 0
	for _, cmd := range []string{"topic in 6", "sub 0 source=in", "join a", "join b", "join c"} {
		if err := r.Exec(cmd); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := r.Converge(20); err != nil {
		b.Fatal(err)
	}
	c := r.Clients["a"]
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "app", "a", c.Epoch, -1
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = c.Active, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	st := r.Log.State()
	rq := streams.Request{Heartbeat: req, ClientID: "client-a", ClientHost: "/127.0.0.1"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Coord.Heartbeat(st, r.Soft, r.Meta, rq, r.Now)
	}
}
