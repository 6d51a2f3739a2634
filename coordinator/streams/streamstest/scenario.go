package streamstest

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/coordinator/streams"
)

// Scenario language (one command per line, '#' starts a comment; Run also reads datadriven test
// files, whose directives are these commands):
//
//	config key=value...        session, heartbeat, maxsize, standby, delay, interval,
//	                           taskoffset, warmups, lag, assignor, topology-updates, tags (a,b)
//	group NAME                 the group the next commands address (default "app")
//	topic NAME PARTITIONS      create or resize a topic (bumps the metadata version)
//	deltopic NAME              delete a topic
//	sub ID source=a,b changelog=c,d repsource=x[:n] repsink=y copart=s0,r0[;s1,s2]
//	                           add a subtopology to the topology members join with
//	topology-epoch N           epoch of that topology (default 0)
//	join M [instance=I] [process=P] [rack=R] [endpoint=H:PORT] [tags=k:v,..] [timeout=MS] [version=1]
//	     [topology-epoch=N] [shutdown]
//	hb M [epoch=N] [owned=none|keep] [active=S:P,P/S:P] [standby=..] [warmup=..] [process=P]
//	     [rack=R] [endpoint=H:PORT] [tags=..] [offsets=S:P=O,..] [endoffsets=..] [epi=N] [shutdown] [version=1]
//	leave M [static] [shutdown]
//	clock +MS | clock =MS
//	tick                       fire every due timer (each is one batch; one whose write
//	                           fails prints its error and appends nothing)
//	converge [N]               heartbeat every member until nothing changes (at most N rounds)
//	describe                   print StreamsGroupDescribe of the group
//	state                      print the group view
//
// Simulated clients behave like the Java client: they report the tasks of their last
// assignment as owned (revoking at once) and rejoin with epoch 0 after a fencing error.

// Client is the simulated state of one streams client.
type Client struct {
	MemberID string
	Instance *string
	Epoch    int32
	Active   []kmsg.TaskIDs
	Standby  []kmsg.TaskIDs
	Warmup   []kmsg.TaskIDs
	EPI      int32
	Joined   bool
}

// Log is where a Runner appends the coordinator's decisions and reads the state it decides
// on (coordinator.Log; *replay.Engine satisfies it).
type Log = coordinator.Log

// Runner executes scenarios through a streams Coordinator and appends every decision to Log
// (the log, clock, metadata, group and transcript are the coordinator.ScenarioRunner's).
type Runner struct {
	coordinator.ScenarioRunner
	Coord   *streams.Coordinator
	Cfg     streams.Config
	Soft    *streams.Soft
	Clients map[string]*Client

	subs       []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology
	topoEpoch  int32
	instanceOf map[string]string
}

// NewRunner prepares a runner that appends to log and writes its transcript to out (nil: no
// transcript); Coord.Config is set to return r.Cfg.
func NewRunner(log Log, out io.Writer) *Runner {
	r := &Runner{ScenarioRunner: coordinator.NewScenarioRunner(log, out, "app"), Cfg: streams.DefaultConfig(),
		Soft: streams.NewSoft(), Clients: map[string]*Client{}}
	r.Coord = &streams.Coordinator{Config: func(string) streams.Config { return r.Cfg }}
	return r
}

// Run executes a whole script: one command per line, '#' starts a comment; a datadriven test
// file (the coordinator's testdata) runs as well, its expected-output blocks skipped (see
// coordinator.RunScript).
func (r *Runner) Run(script io.Reader) error { return r.RunScript(script, r.Exec) }

func atoi32(s string) int32 { n, _ := strconv.ParseInt(s, 10, 32); return int32(n) }

// ParseTasks reads "S:P,P/S:P" into task lists; "" is an empty (non-null) list.
func ParseTasks(s string) []kmsg.TaskIDs {
	out := []kmsg.TaskIDs{}
	if s == "null" {
		return nil
	}
	if s == "" {
		return out
	}
	for _, part := range strings.Split(s, "/") {
		sub, ps, _ := strings.Cut(part, ":")
		t := kmsg.TaskIDs{SubtopologyID: sub}
		for _, p := range strings.Split(ps, ",") {
			if p != "" {
				t.Partitions = append(t.Partitions, atoi32(p))
			}
		}
		out = append(out, t)
	}
	return out
}

func parseOffsets(s string) []kmsg.TaskOffset {
	out := []kmsg.TaskOffset{}
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		tp, off, _ := strings.Cut(part, "=")
		sub, p, _ := strings.Cut(tp, ":")
		o, _ := strconv.ParseInt(off, 10, 64)
		out = append(out, kmsg.TaskOffset{SubtopologyID: sub, Partition: atoi32(p), Offset: o})
	}
	return out
}

// Exec runs one command.
func (r *Runner) Exec(text string) error {
	fields := strings.Fields(text)
	args, pos := coordinator.ScriptArgs(fields[1:])
	switch fields[0] {
	case "config":
		return r.config(args)
	case "group":
		// A new group starts with a new topology and new clients.
		r.Group, r.subs, r.topoEpoch, r.Clients = pos[0], nil, 0, map[string]*Client{}
	case "topic":
		r.SetTopic(pos[0], coordinator.ScenarioTopicID(pos[0]), atoi32(pos[1]))
	case "deltopic":
		r.DeleteTopic(pos[0])
	case "sub":
		r.subs = append(r.subs, subtopology(pos[0], args))
	case "topology-epoch":
		r.topoEpoch = atoi32(pos[0])
	case "clock":
		return r.SetClock(pos[0])
	case "tick":
		return r.Tick()
	case "join", "hb", "leave":
		return r.heartbeat(fields[0], pos[0], args, slices.Contains(pos, "static"), slices.Contains(pos, "shutdown") || args["shutdown"] == "true")
	case "converge":
		n := 50
		if len(pos) > 0 {
			n = int(atoi32(pos[0]))
		}
		_, err := r.Converge(n)
		return err
	case "describe":
		resp := r.Coord.Describe(r.Log.State(), r.Soft, &kmsg.StreamsGroupDescribeRequest{Version: 1, Groups: []string{r.Group}})
		b, _ := json.Marshal(resp.Groups)
		r.Printf("  %s\n", b)
	case "state":
		v, _ := r.Log.State().StreamsGroup(r.Group)
		b, _ := json.Marshal(v)
		r.Printf("  %s\n", b)
	default:
		return fmt.Errorf("unknown command %q", fields[0])
	}
	return nil
}

// config is the command config key=value...
func (r *Runner) config(args map[string]string) error {
	int32s := map[string]*int32{"session": &r.Cfg.SessionTimeoutMs, "heartbeat": &r.Cfg.HeartbeatIntervalMs,
		"maxsize": &r.Cfg.MaxSize, "standby": &r.Cfg.NumStandbyReplicas, "delay": &r.Cfg.InitialRebalanceDelayMs,
		"interval": &r.Cfg.AssignmentIntervalMs, "taskoffset": &r.Cfg.TaskOffsetIntervalMs, "warmups": &r.Cfg.NumWarmupReplicas}
	for k, v := range args {
		if dst, ok := int32s[k]; ok {
			*dst = atoi32(v)
			continue
		}
		switch k {
		case "lag":
			n, _ := strconv.ParseInt(v, 10, 64)
			r.Cfg.AcceptableRecoveryLag = n
		case "assignor":
			r.Cfg.Assignor = v
		case "topology-updates":
			r.Cfg.TopologyUpdates = v == "true"
		case "tags":
			r.Cfg.RackAwareAssignmentTags = strings.Split(v, ",")
		default:
			return fmt.Errorf("unknown config %q", k)
		}
	}
	return r.Cfg.Validate()
}

// subtopology is the command sub ID source=a,b changelog=c,d repsource=x[:n] repsink=y
// copart=s0,r0[;s1,s2] [regex=R].
func subtopology(id string, args map[string]string) kmsg.StreamsGroupHeartbeatRequestTopologySubtopology {
	s := kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{SubtopologyID: id}
	split := func(k string) []string {
		if args[k] == "" {
			return []string{}
		}
		return strings.Split(args[k], ",")
	}
	s.SourceTopics = split("source")
	s.RepartitionSinkTopics = split("repsink")
	s.StateChangelogTopics = []kmsg.TopicInfo{}
	s.RepartitionSourceTopics = []kmsg.TopicInfo{}
	for _, c := range split("changelog") {
		name, n, _ := strings.Cut(c, ":")
		s.StateChangelogTopics = append(s.StateChangelogTopics, kmsg.TopicInfo{Topic: name, NumPartitions: atoi32(n)})
	}
	for _, c := range split("repsource") {
		name, n, _ := strings.Cut(c, ":")
		s.RepartitionSourceTopics = append(s.RepartitionSourceTopics, kmsg.TopicInfo{Topic: name, NumPartitions: atoi32(n)})
	}
	s.CopartitionGroups = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup{}
	if cp := args["copart"]; cp != "" {
		for _, grp := range strings.Split(cp, ";") {
			cg := kmsg.StreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup{SourceTopics: []int16{}, SourceTopicRegex: []int16{}, RepartitionSourceTopics: []int16{}}
			for _, ix := range strings.Split(grp, ",") {
				n := int16(atoi32(ix[1:]))
				if ix[0] == 's' {
					cg.SourceTopics = append(cg.SourceTopics, n)
				} else {
					cg.RepartitionSourceTopics = append(cg.RepartitionSourceTopics, n)
				}
			}
			s.CopartitionGroups = append(s.CopartitionGroups, cg)
		}
	}
	if rx := args["regex"]; rx != "" {
		s.SourceTopicRegex = []string{rx}
	}
	return s
}

func (r *Runner) topology() *kmsg.StreamsGroupHeartbeatRequestTopology {
	return &kmsg.StreamsGroupHeartbeatRequestTopology{Epoch: r.topoEpoch, Subtopologies: slices.Clone(r.subs)}
}

// Tick fires due timers until none is left (coordinator.ScenarioRunner.FireTimers).
func (r *Runner) Tick() error {
	return r.FireTimers(func(now int64) (streams.TimerResult, bool) {
		return r.Coord.Tick(r.Log.State(), r.Soft, r.Meta, now)
	})
}

func (r *Runner) client(id string) *Client {
	c := r.Clients[id]
	if c == nil {
		c = &Client{MemberID: id}
		r.Clients[id] = c
	}
	return c
}

// Heartbeat sends one heartbeat of a simulated client with default behaviour.
func (r *Runner) Heartbeat(id string) (streams.Result, error) {
	return r.heartbeatRes("hb", id, map[string]string{}, false, false)
}

// Join sends the join heartbeat (epoch 0, the current topology) of a simulated client.
func (r *Runner) Join(id string) (streams.Result, error) {
	return r.heartbeatRes("join", id, map[string]string{}, false, false)
}

func (r *Runner) heartbeat(cmd, id string, args map[string]string, static, shutdown bool) error {
	_, err := r.heartbeatRes(cmd, id, args, static, shutdown)
	return err
}

func (r *Runner) heartbeatRes(cmd, id string, args map[string]string, static, shutdown bool) (streams.Result, error) {
	c := r.client(id)
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID = r.Group, c.MemberID
	if v, ok := args["version"]; ok {
		req.Version = int16(atoi32(v))
	}
	req.EndpointInformationEpoch = c.EPI
	if v, ok := args["epi"]; ok {
		req.EndpointInformationEpoch = atoi32(v)
	}
	req.RebalanceTimeoutMillis = -1
	req.InstanceID = c.Instance
	if v, ok := args["instance"]; ok {
		req.InstanceID = &v // remembered once a heartbeat with it succeeds
	}
	switch cmd {
	case "join":
		req.MemberEpoch = 0
		req.RebalanceTimeoutMillis = 30000
		if v, ok := args["timeout"]; ok {
			req.RebalanceTimeoutMillis = atoi32(v)
		}
		req.Topology = r.topology()
		if v, ok := args["topology-epoch"]; ok {
			req.Topology.Epoch = atoi32(v)
		}
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		p := id
		req.ProcessID = &p
		req.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
	case "hb":
		req.MemberEpoch = c.Epoch
		if args["owned"] != "none" {
			req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = orEmpty(c.Active), orEmpty(c.Standby), orEmpty(c.Warmup)
		}
	case "leave":
		req.MemberEpoch = -1
		if static {
			req.MemberEpoch = -2
		}
	}
	if v, ok := args["epoch"]; ok {
		req.MemberEpoch = atoi32(v)
	}
	for k, dst := range map[string]*[]kmsg.TaskIDs{"active": &req.ActiveTasks, "standby": &req.StandbyTasks, "warmup": &req.WarmupTasks} {
		if v, ok := args[k]; ok {
			*dst = ParseTasks(v)
		}
	}
	if v, ok := args["process"]; ok {
		req.ProcessID = &v
	}
	if v, ok := args["rack"]; ok {
		req.RackID = &v
	}
	if v, ok := args["endpoint"]; ok {
		h, p, _ := strings.Cut(v, ":")
		port, _ := strconv.Atoi(p)
		req.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: h, Port: uint16(port)}
	}
	if v, ok := args["tags"]; ok {
		req.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
		for _, t := range strings.Split(v, ",") {
			if k, val, ok := strings.Cut(t, ":"); ok {
				req.ClientTags = append(req.ClientTags, kmsg.StreamsGroupHeartbeatRequestClientTag{Key: k, Value: val})
			}
		}
	}
	if v, ok := args["offsets"]; ok {
		req.TaskOffsets = parseOffsets(v)
	}
	if v, ok := args["endoffsets"]; ok {
		req.TaskEndOffsets = parseOffsets(v)
	}
	req.ShutdownApplication = shutdown
	res := r.Coord.Heartbeat(r.Log.State(), r.Soft, r.Meta, streams.Request{Heartbeat: req, ClientID: "client-" + id, ClientHost: "/127.0.0.1", StateOffset: r.Log.NextOffset()}, r.Now)
	r.printResponse(res)
	if err := r.Append(res.Records); err != nil {
		return res, err
	}
	resp := res.Response
	switch resp.ErrorCode {
	case coordinator.ErrNone:
		c.Epoch, c.EPI, c.Instance, c.Joined = resp.MemberEpoch, resp.EndpointInformationEpoch, req.InstanceID, true
		if resp.ActiveTasks != nil {
			c.Active, c.Standby, c.Warmup = resp.ActiveTasks, resp.StandbyTasks, resp.WarmupTasks
		}
		if resp.MemberEpoch < 0 {
			delete(r.Clients, id) // a client that left joins again with "join"
		}
	case coordinator.ErrFencedMemberEpoch, coordinator.ErrUnknownMemberID:
		c.Epoch, c.Active, c.Standby, c.Warmup = 0, nil, nil, nil
	}
	return res, nil
}

func fmtTasks(t []kmsg.TaskIDs) string {
	if t == nil {
		return "null"
	}
	var parts []string
	for _, x := range t {
		var ps []string
		for _, p := range x.Partitions {
			ps = append(ps, strconv.Itoa(int(p)))
		}
		parts = append(parts, x.SubtopologyID+":"+strings.Join(ps, ","))
	}
	return "[" + strings.Join(parts, "/") + "]"
}

func (r *Runner) printResponse(res streams.Result) {
	resp := res.Response
	if resp.ErrorCode != coordinator.ErrNone {
		r.PrintError(resp.ErrorCode, resp.ErrorMessage)
		return
	}
	r.Printf("  < member=%s epoch=%d active=%s standby=%s warmup=%s epi=%d\n", resp.MemberID, resp.MemberEpoch,
		fmtTasks(resp.ActiveTasks), fmtTasks(resp.StandbyTasks), fmtTasks(resp.WarmupTasks), resp.EndpointInformationEpoch)
	for _, s := range resp.Status {
		r.Printf("  < status %d %s\n", s.StatusCode, s.StatusDetail)
	}
	for _, e := range resp.PartitionsByUserEndpoint {
		b, _ := json.Marshal(e)
		r.Printf("  < endpoint %s\n", b)
	}
	for _, t := range res.InternalTopicsToCreate {
		r.Printf("  < create %s partitions=%d rf=%d\n", t.Name, t.Partitions, t.ReplicationFactor)
	}
}

// Converge heartbeats every joined client (sorted) until a full round writes no record and
// returns no new assignment; it reports the number of rounds.
func (r *Runner) Converge(maxRounds int) (int, error) {
	return r.PollRounds(maxRounds, maps.Keys(r.Clients), r.poll)
}

// poll is one step of joined client id's poll loop, printed as the command it sends: a
// heartbeat, or a join after losing its epoch. changed reports records written or a new
// assignment.
func (r *Runner) poll(id string) (changed bool, err error) {
	c := r.Clients[id]
	if c == nil || !c.Joined {
		return false, nil // never accepted: not a member to keep alive
	}
	cmd := r.PollCommand(id, c.Epoch)
	res, err := r.heartbeatRes(cmd, id, map[string]string{}, false, false)
	if err != nil {
		return false, err
	}
	return len(res.Records) > 0 || res.Response.ActiveTasks != nil && cmd == "hb", nil
}

// orEmpty reports a nil task list as an empty one, as the Java client sends it.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return slices.Clone(s)
}
