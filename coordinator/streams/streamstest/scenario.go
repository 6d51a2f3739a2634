package streamstest

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/coordinator/streams"
	"github.com/coordlog/coordlog/recordcodec"
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
//	tick                       fire every due timer (each is one batch)
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

// Runner executes scenarios through a streams Coordinator and appends every decision to Log.
type Runner struct {
	Coord     *streams.Coordinator
	Cfg       streams.Config
	Log       Log
	Partition int32
	Soft      *streams.Soft
	Meta      *coordinator.Metadata
	Now       int64
	Group     string
	Clients   map[string]*Client
	Out       io.Writer
	Batches   int
	Records   int

	subs       []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology
	topoEpoch  int32
	instanceOf map[string]string
}

// NewRunner prepares a runner that appends to log and writes its transcript to out (nil: no
// transcript); Coord.Config is set to return r.Cfg.
func NewRunner(log Log, out io.Writer) *Runner {
	r := &Runner{Cfg: streams.DefaultConfig(), Log: log, Soft: streams.NewSoft(),
		Meta: &coordinator.Metadata{Topics: map[string]coordinator.TopicMetadata{}}, Group: "app", Clients: map[string]*Client{}, Out: out, Now: 1000}
	r.Coord = &streams.Coordinator{Config: func(string) streams.Config { return r.Cfg }}
	return r
}

func (r *Runner) printf(format string, args ...any) {
	if r.Out != nil {
		fmt.Fprintf(r.Out, format, args...)
	}
}

// Run executes a whole script: one command per line, '#' starts a comment; a datadriven test
// file (the coordinator's testdata) runs as well, its expected-output blocks skipped (see
// coordinator.RunScript).
func (r *Runner) Run(script io.Reader) error {
	return coordinator.RunScript(script, func(cmd string) { r.printf("> %s\n", cmd) }, r.Exec)
}

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
		for k, v := range args {
			switch k {
			case "session":
				r.Cfg.SessionTimeoutMs = atoi32(v)
			case "heartbeat":
				r.Cfg.HeartbeatIntervalMs = atoi32(v)
			case "maxsize":
				r.Cfg.MaxSize = atoi32(v)
			case "standby":
				r.Cfg.NumStandbyReplicas = atoi32(v)
			case "delay":
				r.Cfg.InitialRebalanceDelayMs = atoi32(v)
			case "interval":
				r.Cfg.AssignmentIntervalMs = atoi32(v)
			case "taskoffset":
				r.Cfg.TaskOffsetIntervalMs = atoi32(v)
			case "warmups":
				r.Cfg.NumWarmupReplicas = atoi32(v)
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
	case "group":
		// A new group starts with a new topology and new clients.
		r.Group, r.subs, r.topoEpoch, r.Clients = pos[0], nil, 0, map[string]*Client{}
	case "topic":
		r.Meta.Topics[pos[0]] = coordinator.TopicMetadata{ID: topicID(pos[0]), Partitions: atoi32(pos[1])}
		r.Meta.Version++
	case "deltopic":
		delete(r.Meta.Topics, pos[0])
		r.Meta.Version++
	case "sub":
		s := kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{SubtopologyID: pos[0]}
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
		r.subs = append(r.subs, s)
	case "topology-epoch":
		r.topoEpoch = atoi32(pos[0])
	case "clock":
		v := pos[0]
		if strings.HasPrefix(v, "+") {
			n, _ := strconv.ParseInt(v[1:], 10, 64)
			r.Now += n
		} else {
			n, _ := strconv.ParseInt(strings.TrimPrefix(v, "="), 10, 64)
			r.Now = n
		}
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
		r.printf("  %s\n", b)
	case "state":
		v, _ := r.Log.State().StreamsGroup(r.Group)
		b, _ := json.Marshal(v)
		r.printf("  %s\n", b)
	default:
		return fmt.Errorf("unknown command %q", fields[0])
	}
	return nil
}

func topicID(name string) [16]byte {
	var id [16]byte
	copy(id[:], name)
	id[15] = byte(len(name))
	return id
}

func (r *Runner) topology() *kmsg.StreamsGroupHeartbeatRequestTopology {
	return &kmsg.StreamsGroupHeartbeatRequestTopology{Epoch: r.topoEpoch, Subtopologies: slices.Clone(r.subs)}
}

// Tick fires due timers until none is left.
func (r *Runner) Tick() error {
	for {
		res, ok := r.Coord.Tick(r.Log.State(), r.Soft, r.Meta, r.Now)
		if !ok {
			return nil
		}
		r.printf("  timer %s %s %s\n", res.Kind, res.Group, res.Member)
		if err := r.append(res.Records); err != nil {
			return err
		}
	}
}

func (r *Runner) append(recs []recordcodec.Record) error {
	n, err := coordinator.AppendDecision(r.Log, r.Partition, r.Now, recs, r.Out)
	if n > 0 {
		r.Batches++
		r.Records += n
	}
	return err
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
	if err := r.append(res.Records); err != nil {
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
		msg := ""
		if resp.ErrorMessage != nil {
			msg = *resp.ErrorMessage
		}
		r.printf("  < error=%d %q\n", resp.ErrorCode, msg)
		return
	}
	r.printf("  < member=%s epoch=%d active=%s standby=%s warmup=%s epi=%d\n", resp.MemberID, resp.MemberEpoch,
		fmtTasks(resp.ActiveTasks), fmtTasks(resp.StandbyTasks), fmtTasks(resp.WarmupTasks), resp.EndpointInformationEpoch)
	for _, s := range resp.Status {
		r.printf("  < status %d %s\n", s.StatusCode, s.StatusDetail)
	}
	for _, e := range resp.PartitionsByUserEndpoint {
		b, _ := json.Marshal(e)
		r.printf("  < endpoint %s\n", b)
	}
	for _, t := range res.InternalTopicsToCreate {
		r.printf("  < create %s partitions=%d rf=%d\n", t.Name, t.Partitions, t.ReplicationFactor)
	}
}

// Converge heartbeats every joined client (sorted) until a full round writes no record and
// returns no new assignment; it reports the number of rounds.
func (r *Runner) Converge(maxRounds int) (int, error) {
	for round := 1; round <= maxRounds; round++ {
		changed := false
		for _, id := range sortedKeys(r.Clients) {
			c := r.Clients[id]
			if !c.Joined {
				continue // never accepted: not a member to keep alive
			}
			cmd := "hb"
			if c.Epoch == 0 {
				cmd = "join"
			}
			r.printf("> %s %s\n", cmd, id)
			res, err := r.heartbeatRes(cmd, id, map[string]string{}, false, false)
			if err != nil {
				return round, err
			}
			if len(res.Records) > 0 || res.Response.ActiveTasks != nil && cmd == "hb" {
				changed = true
			}
		}
		if !changed {
			return round, nil
		}
	}
	return maxRounds, fmt.Errorf("no convergence after %d rounds", maxRounds)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// orEmpty reports a nil task list as an empty one, as the Java client sends it.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return slices.Clone(s)
}
