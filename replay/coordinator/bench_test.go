package coordinator

import (
	"fmt"
	"testing"

	"github.com/coordlog/coordlog/recordcodec"
	"github.com/twmb/franz-go/pkg/kmsg"
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
	st := r.State()
	rq := Request{Heartbeat: req, ClientID: "client-a", ClientHost: "/127.0.0.1", StateOffset: r.NextOff()}
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
	st := r.State()
	rq := Request{Heartbeat: req, ClientID: "client-a", ClientHost: "/127.0.0.1"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Coord.Heartbeat(st, r.Soft, r.Meta, rq, r.Now)
	}
}

// BenchmarkFullAssignment assigns 10,000 tasks (100 stateful subtopologies x 100 partitions)
// over 1,000 members on 1,000 processes with one standby, from scratch.
func BenchmarkFullAssignment(b *testing.B) {
	var subs []configuredSubtopology
	for i := range 100 {
		subs = append(subs, configuredSubtopology{id: fmt.Sprintf("s%03d", i), numTasks: 100, stateful: true})
	}
	members := make([]assignMember, 1000)
	for i := range members {
		members[i] = assignMember{id: fmt.Sprintf("m%04d", i), processID: fmt.Sprintf("p%04d", i)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := stickyAssign(members, subs, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTargetRecords is the whole target computation of the same group as records:
// the assignor plus 1,000 record-21 values and record 20.
func BenchmarkTargetRecords(b *testing.B) {
	g := newGroup("app")
	ct := &configuredTopology{byID: map[string]*configuredSubtopology{}}
	for i := range 100 {
		ct.subtopologies = append(ct.subtopologies, configuredSubtopology{id: fmt.Sprintf("s%03d", i), numTasks: 100, stateful: true})
	}
	for i := range 1000 {
		m := newDefaultMember(fmt.Sprintf("m%04d", i))
		m.processID = fmt.Sprintf("p%04d", i)
		g.members[m.id] = m
	}
	g.epoch = 2
	c := &Coordinator{}
	cfg := DefaultConfig()
	cfg.NumStandbyReplicas = 1
	cfgs := cfg.assignmentConfigs()
	gs := &GroupSoft{Members: map[string]*MemberSoft{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var records []recordcodec.Record
		if _, _, _, err := c.maybeUpdateTarget(g, gs, 2, ct, cfgs, cfg, 1000, &records); err != nil {
			b.Fatal(err)
		}
	}
}
