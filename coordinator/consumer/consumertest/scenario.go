package consumertest

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
	"github.com/coordlog/coordlog/coordinator/consumer"
	"github.com/coordlog/coordlog/recordcodec"
)

// Scenario language (one command per line, '#' starts a comment; Run also reads datadriven
// test files, whose directives are these commands):
//
//	config key=value...     session, heartbeat, maxsize, assignors (a,b), migration,
//	                        interval, regexrefresh, classicmaxsize (group.max.size),
//	                        classicsession=MIN-MAX (group.min/max.session.timeout.ms)
//	group NAME              the group the next commands address (default "cg")
//	topic NAME PARTITIONS [id=BASE64]
//	                        create or resize a topic (bumps the metadata version); its id is
//	                        id=, else the one the state's offset commits give the name, else
//	                        derived from the name
//	deltopic NAME           delete a topic
//	join M [topics=a,b] [regex=R] [instance=I] [rack=R] [assignor=A] [timeout=MS] [version=0|1]
//	                        join with epoch 0 (default: subscribed to every topic named in
//	                        the last `subscribe`, or none)
//	subscribe a,b           the topic names later joins subscribe to by default
//	hb M [epoch=N] [owned=keep|none|null|t:0,1/u:2] [topics=a,b] [regex=R] [assignor=A]
//	     [rack=R] [timeout=MS] [full]
//	                        a heartbeat of a joined client; it reports the partitions of its
//	                        last assignment as owned (it revokes at once)
//	leave M [static]        epoch -1, or -2 for a static member's temporary leave
//
// Classic-protocol clients (JoinGroup, SyncGroup, Heartbeat, LeaveGroup; a client that joins
// with one protocol and later with the other switches protocols):
//
//	classicgroup GEN [M=t:0,1/u:2 ...] [protocol=P] [topics=a,b] [session=MS] [timeout=MS]
//	     [static=M:I,...] [userdata=M,...] [garbage=M,...]
//	                        write the GroupMetadata record of a classic group at generation
//	                        GEN (what a classic coordinator would have written; coordlog has
//	                        none) whose members M own those partitions (M= none); without
//	                        members an empty classic group. userdata: a custom assignor's user
//	                        data in those members' assignments; garbage: assignment bytes that
//	                        do not decode. Its members become classic clients
//	cjoin M [topics=a,b] [instance=I] [protocols=p,q] [session=MS] [timeout=MS] [rack=R]
//	     [owned=t:0,1|none] [generation=N] [version=V] [member=ID] [type=T] [metadata=BYTES]
//	                        JoinGroup (v9, protocol type consumer, cooperative-sticky, session
//	                        45000, rebalance timeout 300000 unless given) with a subscription
//	                        reporting what the client owns (nothing under an eager protocol:
//	                        range, roundrobin) and its generation. Its member id is its name
//	                        (a client the group does not know joins with it) unless member=
//	                        gives another; member= (empty) is a real client's first join, which
//	                        MEMBER_ID_REQUIRED answers with the id it then joins with
//	csync M [generation=N] [protocol=P] [type=T] [member=ID] [instance=I]
//	                        SyncGroup (v5) of its generation; it then owns the assignment (and
//	                        under cooperative-sticky rejoins if it lost partitions)
//	chb M [generation=N] [member=ID] [instance=I]
//	                        Heartbeat (v4)
//	cleave M... [admin] [instance=I]
//	                        one LeaveGroup (v5) for the clients (admin: by instance id only;
//	                        instance: the first one's instance id)
//
// The arguments of a classic request apply to it alone; a client remembers its topics,
// protocols, timeouts and instance id once a JoinGroup with them succeeds. On an error answer
// a client does what the Java client does: it forgets its member id (UNKNOWN_MEMBER_ID) or its
// generation and partitions (ILLEGAL_GENERATION), rejoins when told
// (REBALANCE_IN_PROGRESS), and stops on FENCED_INSTANCE_ID.
//
// Time, timers and the rest:
//
//	clock +MS | clock =MS   advance the clock, or set it
//	tick                    fire every due timer (each is one batch; one whose write
//	                        fails prints its error and appends nothing)
//	timers                  print the armed timers
//	restart                 fail over: the soft state is lost and rebuilt from the state
//	                        (Soft.Restore, Kafka's onLoaded)
//	converge [N]            heartbeat every joined client until nothing changes (a classic
//	                        client joins and syncs when it must, else heartbeats)
//	commit M t:0@10,1@20/u:0@5 [epoch=N] [version=V] [member=ID] [retention=MS]
//	                        OffsetCommit of client M (default: its member id and epoch, v9)
//	fetch M [t:0,1/u:0] [epoch=N] [stable]
//	                        OffsetFetch (v9) for client M ("-": null member id, epoch -1);
//	                        without partitions, every committed offset
//	deloffsets t:0,1        OffsetDelete
//	delete                  DeleteGroups of the group
//	describe                ConsumerGroupDescribe of the group
//	state                   print the group view
//
// A regex resolution that a heartbeat schedules runs right after that heartbeat's batch, in a
// batch of its own ("  regex resolution" line), as Kafka's executor would a moment later.
// Simulated clients rejoin with epoch 0 after FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID. A
// client the script has not joined but that is a member of the group in the state (a dump
// replayed before the scenario) is adopted: its member id, instance id, epoch, subscription
// and assigned partitions; a classic-protocol member of a consumer group, or a member of a
// classic group, as a classic client that synced its generation. A request to a group this
// coordinator does not decide (a classic group) prints "not a consumer group with members".

// Client is the simulated state of one consumer.
type Client struct {
	MemberID string
	Instance *string
	Epoch    int32
	Owned    []kmsg.ConsumerGroupHeartbeatRequestTopic
	Joined   bool
	// Topics and Regex are the subscription of the last join, which a rejoin repeats.
	Topics []string
	Regex  *string
	// ClientID and ClientHost are what the broker sees of the connection (default
	// "client-M" and "/127.0.0.1"; an adopted member's are kept).
	ClientID, ClientHost string
	// Classic is set for a client that speaks the classic protocol (classic.go).
	Classic *ClassicClient
}

// Runner executes scenarios through a consumer Coordinator and appends every decision to Log
// (the log, clock, metadata, group and transcript are the coordinator.ScenarioRunner's).
type Runner struct {
	coordinator.ScenarioRunner
	Coord   *consumer.Coordinator
	Cfg     consumer.Config
	Soft    *consumer.Soft
	Clients map[string]*Client

	subscribe []string
}

// NewRunner prepares a runner that appends to log and writes its transcript to out (nil: no
// transcript); Coord.Config returns r.Cfg.
func NewRunner(log coordinator.Log, out io.Writer) *Runner {
	r := &Runner{ScenarioRunner: coordinator.NewScenarioRunner(log, out, "cg"), Cfg: consumer.DefaultConfig(),
		Soft: consumer.NewSoft(), Clients: map[string]*Client{}}
	r.Coord = &consumer.Coordinator{Config: func(string) consumer.Config { return r.Cfg }}
	return r
}

// Run executes a whole script (see coordinator.RunScript).
func (r *Runner) Run(script io.Reader) error { return r.RunScript(script, r.Exec) }

func atoi32(s string) (int32, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	return int32(n), err
}

// TopicID is the id the runner gives topic name: its bytes, padded, with the length last
// (coordinator.ScenarioTopicID).
func TopicID(name string) [16]byte { return coordinator.ScenarioTopicID(name) }

// intArg is a number argument of a command and where it goes.
type intArg struct {
	key string
	dst *int32
}

// int32Args sets each argument args holds, in order; a value that is not a number is an
// error naming its key.
func int32Args(args map[string]string, as ...intArg) error {
	for _, a := range as {
		if v, ok := args[a.key]; ok {
			n, err := atoi32(v)
			if err != nil {
				return fmt.Errorf("%s: %w", a.key, err)
			}
			*a.dst = n
		}
	}
	return nil
}

func splitList(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

// needs is how many positional arguments a command needs.
var needs = map[string]int{"group": 1, "subscribe": 1, "topic": 2, "deltopic": 1, "clock": 1,
	"cjoin": 1, "csync": 1, "chb": 1, "join": 1, "hb": 1, "leave": 1}

// Exec runs one command.
func (r *Runner) Exec(text string) error {
	fields := strings.Fields(text)
	cmd := fields[0]
	args, pos := coordinator.ScriptArgs(fields[1:])
	if n := needs[cmd]; len(pos) < n {
		return fmt.Errorf("%s needs %d argument(s)", cmd, n)
	}
	switch cmd {
	case "config":
		return r.config(args)
	case "group":
		r.Group, r.Clients = pos[0], map[string]*Client{}
	case "subscribe":
		r.subscribe = splitList(pos[0])
	case "topic":
		return r.topic(pos[0], pos[1], args["id"])
	case "deltopic":
		r.DeleteTopic(pos[0])
	case "clock":
		return r.SetClock(pos[0])
	case "tick":
		return r.Tick()
	case "timers":
		for _, t := range r.Soft.Timers() {
			r.Printf("  timer %s %s %s at %d\n", t.Kind, t.Group, t.Member, t.At)
		}
	case "restart":
		r.Soft = consumer.NewSoft()
		r.Soft.Restore(r.Log.State(), r.Coord.Config, r.Now)
	case "classicgroup":
		return r.classicGroup(pos, args)
	case "cjoin", "csync", "chb", "cleave":
		return r.classicCommand(cmd, pos, args)
	case "join", "hb", "leave":
		_, err := r.Heartbeat(cmd, pos[0], args, slices.Contains(pos, "static"), slices.Contains(pos, "full"))
		return err
	case "converge":
		return r.converge(pos)
	case "commit", "fetch", "deloffsets", "delete", "describe":
		return r.offsets(cmd, pos, args)
	case "state":
		r.printState()
	default:
		return fmt.Errorf("unknown command %q", cmd)
	}
	return nil
}

// config is the command config key=value...
func (r *Runner) config(args map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(args)) {
		v := args[k]
		var err error
		switch k {
		case "session":
			r.Cfg.SessionTimeoutMs, err = atoi32(v)
		case "heartbeat":
			r.Cfg.HeartbeatIntervalMs, err = atoi32(v)
		case "maxsize":
			r.Cfg.MaxSize, err = atoi32(v)
		case "assignors":
			r.Cfg.Assignors = splitList(v)
		case "migration":
			r.Cfg.MigrationPolicy = v
		case "interval":
			r.Cfg.AssignmentIntervalMs, err = atoi32(v)
		case "regexrefresh":
			r.Cfg.RegexRefreshIntervalMs, err = strconv.ParseInt(v, 10, 64)
		case "classicmaxsize":
			r.Cfg.ClassicMaxSize, err = atoi32(v)
		case "classicsession":
			lo, hi, ok := strings.Cut(v, "-")
			if !ok {
				return fmt.Errorf("config classicsession=%s: want MIN-MAX", v)
			}
			if r.Cfg.ClassicMinSessionTimeoutMs, err = atoi32(lo); err == nil {
				r.Cfg.ClassicMaxSessionTimeoutMs, err = atoi32(hi)
			}
		default:
			return fmt.Errorf("unknown config %q (session, heartbeat, maxsize, assignors, migration, interval, regexrefresh, classicmaxsize, classicsession)", k)
		}
		if err != nil {
			return fmt.Errorf("config %s=%s: %w", k, v, err)
		}
	}
	return r.Cfg.Validate()
}

// topic is the command topic NAME PARTITIONS [id=BASE64].
func (r *Runner) topic(name, partitions, id string) error {
	n, err := atoi32(partitions)
	if err != nil || n < 1 {
		return fmt.Errorf("topic %s: partitions %q must be a positive number", name, partitions)
	}
	tid, err := r.topicID(name, id)
	if err != nil {
		return err
	}
	r.SetTopic(name, tid, n)
	return nil
}

// classicCommand runs cjoin, csync, chb and cleave.
func (r *Runner) classicCommand(cmd string, pos []string, args map[string]string) error {
	var err error
	switch cmd {
	case "cjoin":
		_, _, err = r.ClassicJoin(pos[0], args)
	case "csync":
		_, _, err = r.ClassicSync(pos[0], args)
	case "chb":
		_, _, err = r.ClassicHeartbeat(pos[0], args)
	default:
		ids := slices.DeleteFunc(slices.Clone(pos), func(s string) bool { return s == "admin" })
		if len(ids) == 0 {
			return fmt.Errorf("cleave needs at least one client")
		}
		var inst *string
		if v, ok := args["instance"]; ok {
			inst = &v
		}
		err = r.ClassicLeave(ids, slices.Contains(pos, "admin"), inst)
	}
	return err
}

// converge is the command converge [N].
func (r *Runner) converge(pos []string) error {
	n := 50
	if len(pos) > 0 {
		v, err := atoi32(pos[0])
		if err != nil {
			return fmt.Errorf("converge: %w", err)
		}
		n = int(v)
	}
	_, err := r.Converge(n)
	return err
}

// printState prints the group view: the classic group's, else the consumer group's.
func (r *Runner) printState() {
	var v any
	if cg, ok := r.Log.State().ClassicGroup(r.Group); ok {
		v = cg
	} else {
		v, _ = r.Log.State().ConsumerGroup(r.Group)
	}
	b, _ := json.Marshal(v)
	r.Printf("  %s\n", b)
}

// Tick fires due timers until none is left (coordinator.ScenarioRunner.FireTimers).
func (r *Runner) Tick() error {
	return r.FireTimers(func(now int64) (consumer.TimerResult, bool) {
		return r.Coord.Tick(r.Log.State(), r.Soft, r.Meta, now)
	})
}

func (r *Runner) topicName(id [16]byte) string {
	for n, t := range r.Meta.Topics {
		if t.ID == id {
			return n
		}
	}
	return fmt.Sprintf("%x", id)
}

// parseOwned reads "t:0,1/u:2" into owned partitions; "" is an empty (non-null) list and
// "null" none.
func (r *Runner) parseOwned(s string) ([]kmsg.ConsumerGroupHeartbeatRequestTopic, error) {
	if s == "null" {
		return nil, nil
	}
	out := []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if s == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, "/") {
		name, ps, _ := strings.Cut(part, ":")
		t := kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: TopicID(name), Partitions: []int32{}}
		for _, p := range splitList(ps) {
			n, err := atoi32(p)
			if err != nil {
				return nil, fmt.Errorf("owned %q: %w", s, err)
			}
			t.Partitions = append(t.Partitions, n)
		}
		out = append(out, t)
	}
	return out, nil
}

// topicID is the id of a topic the script declares: given, kept from the metadata, named by
// the state's offset commits, or derived from the name.
func (r *Runner) topicID(name, given string) ([16]byte, error) {
	if given != "" {
		u, err := recordcodec.ParseUUID(given)
		if err != nil {
			return [16]byte{}, fmt.Errorf("topic %s: id %q: %w", name, given, err)
		}
		return u, nil
	}
	if t, ok := r.Meta.Topics[name]; ok {
		return t.ID, nil
	}
	for id, n := range r.Log.State().TopicNames() {
		if n == name {
			return id, nil
		}
	}
	return TopicID(name), nil
}

func (r *Runner) client(id string) *Client {
	c := r.Clients[id]
	if c != nil {
		return c
	}
	c = &Client{MemberID: id}
	if g, ok := r.Log.State().ConsumerGroup(r.Group); ok {
		for i, m := range g.Members {
			if m.MemberID != id || m.MemberEpoch < 0 {
				continue
			}
			c.Instance, c.Epoch, c.Joined = m.InstanceID, m.MemberEpoch, true
			c.ClientID, c.ClientHost = m.ClientID, m.ClientHost
			c.Topics, c.Regex = m.SubscribedTopicNames, m.SubscribedTopicRegex
			if c.Topics == nil {
				c.Topics = []string{}
			}
			for _, tp := range m.AssignedPartitions {
				c.Owned = append(c.Owned, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: tp.TopicID, Partitions: slices.Clone(tp.Partitions)})
			}
			if m.ClassicMemberMetadata != nil {
				r.adoptClassic(c, &g.Members[i])
			}
		}
	}
	if g, ok := r.Log.State().ClassicGroup(r.Group); ok {
		for i := range g.Members {
			if g.Members[i].MemberID == id {
				adoptClassicGroupMember(c, &g, &g.Members[i])
			}
		}
	}
	r.Clients[id] = c
	return c
}

// connection is what the broker sees of client c (id): its client id and host.
func (r *Runner) connection(c *Client, id string) (string, string) {
	if c.ClientID != "" {
		return c.ClientID, c.ClientHost
	}
	return "client-" + id, "/127.0.0.1"
}

// resolveRegexes runs the resolution a decision scheduled, as a batch of its own.
func (r *Runner) resolveRegexes(job *consumer.RegexResolution) error {
	if job == nil {
		return nil
	}
	recs, _ := r.Coord.ResolveRegexes(r.Log.State(), r.Soft, r.Meta, job.Group, r.Now)
	r.Printf("  regex resolution %s\n", strings.Join(job.Regexes, " "))
	return r.Append(recs)
}

// Heartbeat sends one request of a simulated client: cmd is join, hb or leave.
func (r *Runner) Heartbeat(cmd, id string, args map[string]string, static, full bool) (consumer.Result, error) {
	c := r.client(id)
	req := r.heartbeatRequest(cmd, c, args, static, full)
	if err := r.heartbeatArgs(req, args); err != nil {
		return consumer.Result{}, err
	}
	clientID, clientHost := r.connection(c, id)
	res := r.Coord.Heartbeat(r.Log.State(), r.Soft, r.Meta, consumer.Request{Heartbeat: req, ClientID: clientID, ClientHost: clientHost, StateOffset: r.Log.NextOffset()}, r.Now)
	r.printResponse(res)
	if err := r.Append(res.Records); err != nil {
		return res, err
	}
	r.learn(c, id, req, res.Response)
	return res, r.resolveRegexes(res.RegexResolution)
}

// heartbeatRequest is what client c sends for cmd as the Java client would: a join (epoch 0)
// with its subscription, a heartbeat at its epoch reporting its partitions as owned (and, with
// full, every field), or a leave (epoch -1, or -2 for a static member's temporary leave).
func (r *Runner) heartbeatRequest(cmd string, c *Client, args map[string]string, static, full bool) *kmsg.ConsumerGroupHeartbeatRequest {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID = r.Group, c.MemberID
	req.RebalanceTimeoutMillis = -1
	req.InstanceID = c.Instance
	if v, ok := args["instance"]; ok {
		req.InstanceID = &v // remembered once a heartbeat with it succeeds
	}
	switch cmd {
	case "join":
		c.Classic = nil // a classic client that joins with this protocol switches to it
		req.MemberEpoch = 0
		req.RebalanceTimeoutMillis = 30000
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		switch {
		case c.Topics != nil || c.Regex != nil:
			req.SubscribedTopicNames, req.SubscribedTopicRegex = slices.Clone(c.Topics), c.Regex
		case args["regex"] == "":
			req.SubscribedTopicNames = slices.Clone(r.subscribe)
			if req.SubscribedTopicNames == nil {
				req.SubscribedTopicNames = []string{}
			}
		}
	case "hb":
		req.MemberEpoch = c.Epoch
		req.Topics = slices.Clone(c.Owned)
		if req.Topics == nil {
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		if full {
			req.RebalanceTimeoutMillis = 30000
			req.SubscribedTopicNames = slices.Clone(r.subscribe)
		}
	case "leave":
		req.MemberEpoch = coordinator.LeaveEpoch
		if static {
			req.MemberEpoch = coordinator.StaticLeaveEpoch
		}
	}
	return req
}

// heartbeatArgs applies a command's arguments to its request: version, epoch, timeout,
// topics, regex, assignor, rack, member and owned.
func (r *Runner) heartbeatArgs(req *kmsg.ConsumerGroupHeartbeatRequest, args map[string]string) error {
	version := int32(req.Version)
	if err := int32Args(args, intArg{"version", &version}, intArg{"epoch", &req.MemberEpoch}, intArg{"timeout", &req.RebalanceTimeoutMillis}); err != nil {
		return err
	}
	req.Version = int16(version)
	if v, ok := args["topics"]; ok {
		req.SubscribedTopicNames = splitList(v)
	}
	for k, dst := range map[string]**string{"regex": &req.SubscribedTopicRegex, "assignor": &req.ServerAssignor, "rack": &req.RackID} {
		if v, ok := args[k]; ok {
			*dst = &v
		}
	}
	if v, ok := args["member"]; ok {
		req.MemberID = v
	}
	if v, ok := args["owned"]; ok && v != "keep" {
		if v == "none" {
			v = ""
		}
		var err error
		if req.Topics, err = r.parseOwned(v); err != nil {
			return err
		}
	}
	return nil
}

// learn is what client c (id) learns from the response to req: on success its member id,
// epoch, instance id, subscription and assignment (a client that left is forgotten); fenced
// or unknown, it rejoins with epoch 0 and nothing owned.
func (r *Runner) learn(c *Client, id string, req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) {
	switch resp.ErrorCode {
	case coordinator.ErrNone:
		c.Epoch, c.Instance, c.Joined = resp.MemberEpoch, req.InstanceID, true
		if req.SubscribedTopicNames != nil || req.SubscribedTopicRegex != nil {
			c.Topics, c.Regex = req.SubscribedTopicNames, req.SubscribedTopicRegex
		}
		if resp.MemberID != nil {
			c.MemberID = *resp.MemberID
		}
		if resp.Assignment != nil {
			c.Owned = nil
			for _, t := range resp.Assignment.Topics {
				c.Owned = append(c.Owned, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t.TopicID, Partitions: slices.Clone(t.Partitions)})
			}
		}
		if resp.MemberEpoch < 0 {
			delete(r.Clients, id) // a client that left joins again with "join"
		}
	case coordinator.ErrFencedMemberEpoch, coordinator.ErrUnknownMemberID:
		c.Epoch, c.Owned = 0, nil
	}
}

func (r *Runner) fmtAssignment(a *kmsg.ConsumerGroupHeartbeatResponseAssignment) string {
	if a == nil {
		return "null"
	}
	var parts []string
	for _, t := range a.Topics {
		var ps []string
		for _, p := range t.Partitions {
			ps = append(ps, strconv.Itoa(int(p)))
		}
		parts = append(parts, r.topicName(t.TopicID)+":"+strings.Join(ps, ","))
	}
	slices.Sort(parts)
	return "[" + strings.Join(parts, "/") + "]"
}

func (r *Runner) printResponse(res consumer.Result) {
	resp := res.Response
	if resp.ErrorCode != coordinator.ErrNone {
		r.PrintError(resp.ErrorCode, resp.ErrorMessage)
		return
	}
	id := ""
	if resp.MemberID != nil {
		id = *resp.MemberID
	}
	r.Printf("  < member=%s epoch=%d assignment=%s\n", id, resp.MemberEpoch, r.fmtAssignment(resp.Assignment))
}

// Converge polls every joined client (sorted) until a full round writes no record and
// returns no new assignment; it reports the number of rounds.
func (r *Runner) Converge(maxRounds int) (int, error) {
	return r.PollRounds(maxRounds, maps.Keys(r.Clients), r.Poll)
}

// Poll is one step of joined client id's poll loop, printed as the commands it sends: a
// consumer-protocol client heartbeats (or joins, after losing its epoch); a classic client
// joins and syncs when it must, otherwise heartbeats, and waits while the group is a classic
// group (the classic coordinator's). changed reports records written, a new assignment or a
// join.
func (r *Runner) Poll(id string) (changed bool, err error) {
	c := r.Clients[id]
	if c == nil || !c.Joined {
		return false, nil
	}
	if c.Classic != nil {
		if _, ok := r.Log.State().ConsumerGroup(r.Group); !ok {
			return false, nil
		}
		return r.classicSteps(id)
	}
	cmd := r.PollCommand(id, c.Epoch)
	res, err := r.Heartbeat(cmd, id, map[string]string{}, false, false)
	if err != nil {
		return false, err
	}
	return len(res.Records) > 0 || (res.Response.Assignment != nil && cmd == "hb"), nil
}

// parseCommits reads "t:0@10,1@20/u:0@5" into OffsetCommit topics.
func parseCommits(s string) ([]kmsg.OffsetCommitRequestTopic, error) {
	var out []kmsg.OffsetCommitRequestTopic
	for _, part := range strings.Split(s, "/") {
		name, ps, _ := strings.Cut(part, ":")
		t := kmsg.OffsetCommitRequestTopic{Topic: name}
		for _, po := range splitList(ps) {
			p, o, ok := strings.Cut(po, "@")
			pn, err1 := atoi32(p)
			on, err2 := strconv.ParseInt(o, 10, 64)
			if !ok || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("commit %q: want topic:partition@offset,...", s)
			}
			tp := kmsg.NewOffsetCommitRequestTopicPartition()
			tp.Partition, tp.Offset = pn, on
			t.Partitions = append(t.Partitions, tp)
		}
		out = append(out, t)
	}
	return out, nil
}

// parsePartitions reads "t:0,1/u:0" into topic -> partitions, in order.
func parsePartitions(s string) ([]string, map[string][]int32, error) {
	var names []string
	out := map[string][]int32{}
	for _, part := range strings.Split(s, "/") {
		name, ps, _ := strings.Cut(part, ":")
		names = append(names, name)
		for _, p := range splitList(ps) {
			n, err := atoi32(p)
			if err != nil {
				return nil, nil, fmt.Errorf("partitions %q: %w", s, err)
			}
			out[name] = append(out[name], n)
		}
	}
	return names, out, nil
}

// offsets runs the offset and group commands: commit, fetch, deloffsets, delete, describe.
func (r *Runner) offsets(cmd string, pos []string, args map[string]string) error {
	switch cmd {
	case "commit":
		return r.commit(pos, args)
	case "fetch":
		return r.fetch(pos, args)
	case "deloffsets":
		return r.deleteOffsets(pos)
	case "delete":
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{r.Group}
		res := r.Coord.DeleteGroups(r.Log.State(), r.Soft, req)
		for _, g := range res.Response.Groups {
			r.Printf("  < %s error=%d\n", g.Group, g.ErrorCode)
		}
		return r.Append(res.Records)
	default: // describe
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Version, req.Groups = 1, []string{r.Group}
		resp := r.Coord.Describe(r.Log.State(), r.Meta, req)
		b, _ := json.Marshal(resp.Groups)
		r.Printf("  %s\n", b)
		return nil
	}
}

// requester is the member id and epoch an offset request of client pos[0] carries: its own,
// or member= and epoch=.
func (r *Runner) requester(cmd string, pos []string, args map[string]string) (string, int32, error) {
	if len(pos) == 0 {
		return "", 0, fmt.Errorf("%s needs a client", cmd)
	}
	c := r.client(pos[0])
	id, epoch := c.MemberID, c.Epoch
	if v, ok := args["member"]; ok {
		id = v
	}
	if v, ok := args["epoch"]; ok {
		n, err := atoi32(v)
		if err != nil {
			return "", 0, fmt.Errorf("epoch: %w", err)
		}
		epoch = n
	}
	return id, epoch, nil
}

// commit is the command commit M t:0@10,1@20/u:0@5 [epoch=N] [version=V] [member=ID]
// [retention=MS].
func (r *Runner) commit(pos []string, args map[string]string) error {
	id, epoch, err := r.requester("commit", pos, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return fmt.Errorf("commit needs offsets: commit M t:0@10,1@20")
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 9, r.Group, id, epoch
	if v, ok := args["version"]; ok {
		n, err := atoi32(v)
		if err != nil {
			return fmt.Errorf("version: %w", err)
		}
		req.Version = int16(n)
	}
	if v, ok := args["retention"]; ok {
		if req.RetentionTimeMillis, err = strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("retention: %w", err)
		}
	}
	if req.Topics, err = parseCommits(pos[1]); err != nil {
		return err
	}
	res, err := r.Coord.OffsetCommit(r.Log.State(), r.Meta, req, r.Now)
	if err != nil {
		return err
	}
	for _, t := range res.Response.Topics {
		r.printPartitionErrors(t.Topic, len(t.Partitions), func(i int) (int32, int16) { return t.Partitions[i].Partition, t.Partitions[i].ErrorCode })
	}
	return r.Append(res.Records)
}

// printPartitionErrors prints a topic's n partitions with their error codes (at gives the
// i-th): `  < TOPIC P=CODE ...`.
func (r *Runner) printPartitionErrors(topic string, n int, at func(i int) (int32, int16)) {
	ps := make([]string, n)
	for i := range ps {
		p, code := at(i)
		ps[i] = fmt.Sprintf("%d=%d", p, code)
	}
	r.Printf("  < %s %s\n", topic, strings.Join(ps, " "))
}

// fetch is the command fetch M [t:0,1/u:0] [epoch=N] [stable].
func (r *Runner) fetch(pos []string, args map[string]string) error {
	id, epoch, err := r.requester("fetch", pos, args)
	if err != nil {
		return err
	}
	g := kmsg.OffsetFetchRequestGroup{Group: r.Group, MemberEpoch: epoch}
	if pos[0] == "-" {
		g.MemberEpoch = -1
	} else {
		g.MemberID = &id
	}
	if len(pos) > 1 && pos[1] != "stable" {
		names, ps, err := parsePartitions(pos[1])
		if err != nil {
			return err
		}
		for _, n := range names {
			g.Topics = append(g.Topics, kmsg.OffsetFetchRequestGroupTopic{Topic: n, Partitions: ps[n]})
		}
	}
	out, err := r.Coord.OffsetFetch(r.Log.State(), &g, slices.Contains(pos, "stable"))
	if err != nil {
		return err
	}
	if out.ErrorCode != 0 {
		r.Printf("  < error=%d\n", out.ErrorCode)
		return nil
	}
	for _, t := range out.Topics {
		var ps []string
		for _, p := range t.Partitions {
			e := ""
			if p.ErrorCode != 0 {
				e = fmt.Sprintf("(error=%d)", p.ErrorCode)
			}
			ps = append(ps, fmt.Sprintf("%d=%d%s", p.Partition, p.Offset, e))
		}
		r.Printf("  < %s %s\n", t.Topic, strings.Join(ps, " "))
	}
	return nil
}

// deleteOffsets is the command deloffsets t:0,1.
func (r *Runner) deleteOffsets(pos []string) error {
	if len(pos) == 0 {
		return fmt.Errorf("deloffsets needs partitions: deloffsets t:0,1")
	}
	names, ps, err := parsePartitions(pos[0])
	if err != nil {
		return err
	}
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = r.Group
	for _, n := range names {
		t := kmsg.OffsetDeleteRequestTopic{Topic: n}
		for _, p := range ps[n] {
			t.Partitions = append(t.Partitions, kmsg.OffsetDeleteRequestTopicPartition{Partition: p})
		}
		req.Topics = append(req.Topics, t)
	}
	res, err := r.Coord.OffsetDelete(r.Log.State(), req)
	if err != nil {
		return err
	}
	if res.Response.ErrorCode != 0 {
		r.Printf("  < error=%d\n", res.Response.ErrorCode)
	}
	for _, t := range res.Response.Topics {
		r.printPartitionErrors(t.Topic, len(t.Partitions), func(i int) (int32, int16) { return t.Partitions[i].Partition, t.Partitions[i].ErrorCode })
	}
	return r.Append(res.Records)
}
