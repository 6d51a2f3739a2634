package consumertest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/coordinator/consumer"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// ClassicClient is the simulated state of a consumer that speaks the classic protocol, as the
// Java client's ConsumerCoordinator keeps it.
type ClassicClient struct {
	// Generation is the generation of its last JoinGroup (-1 before one, or after losing it).
	Generation int32
	// Protocols are the assignors it offers, preferred first; Protocol the one its last
	// JoinGroup returned.
	Protocols []string
	Protocol  string
	// SessionTimeoutMs and RebalanceTimeoutMs go into its JoinGroups (default 45000, 300000:
	// the Java client's).
	SessionTimeoutMs, RebalanceTimeoutMs int32
	// Owned is what its last SyncGroup assigned, by topic name.
	Owned map[string][]int32
	// Rejoin is set when it must send a JoinGroup (told REBALANCE_IN_PROGRESS, lost its
	// generation, or gave partitions up under a cooperative protocol); Synced once it sent
	// the SyncGroup of its generation.
	Rejoin, Synced bool
}

// eager reports whether a client offering protocols (preferred first) revokes eagerly (range,
// roundrobin): it then gives up everything before it joins and reports owning nothing.
// Cooperative-sticky reports what it owns and gives up only what a new assignment leaves out.
func eager(protocols []string) bool {
	return len(protocols) > 0 && (protocols[0] == "range" || protocols[0] == "roundrobin")
}

func newClassicClient() *ClassicClient {
	return &ClassicClient{Generation: -1, Protocols: []string{"cooperative-sticky"}, SessionTimeoutMs: 45000, RebalanceTimeoutMs: 300000}
}

// classicClient returns client id, turned into a classic-protocol client if it was not one
// (a JoinGroup switches a client's protocol).
func (r *Runner) classicClient(id string) *Client {
	c := r.client(id)
	if c.Classic == nil {
		c.Classic = newClassicClient()
	}
	return c
}

// classicState is a client's classic state for a SyncGroup or Heartbeat: a consumer-protocol
// client sends them at its epoch without switching protocols (the coordinator refuses them).
func (r *Runner) classicState(id string) (*Client, *ClassicClient) {
	c := r.client(id)
	if c.Classic != nil {
		return c, c.Classic
	}
	cc := newClassicClient()
	cc.Generation = c.Epoch
	return c, cc
}

// notConsumerGroup prints the answer to a request this coordinator does not decide.
func (r *Runner) notConsumerGroup(err error) error {
	if errors.Is(err, consumer.ErrNotConsumerGroup) {
		r.Printf("  < not a consumer group with members: the classic group coordinator decides\n")
		return nil
	}
	return err
}

func (r *Runner) printError(err *coordinator.Error, extra string) {
	msg := ""
	if err != nil {
		msg = err.Message
	}
	r.Printf("  < error=%d%s %q\n", err.Code, extra, msg)
}

// owned lists a classic client's partitions as a subscription's owned partitions.
func (c *ClassicClient) ownedPartitions() []recordcodec.OwnedPartition {
	out := []recordcodec.OwnedPartition{}
	for _, t := range slices.Sorted(maps.Keys(c.Owned)) {
		out = append(out, recordcodec.OwnedPartition{Topic: t, Partitions: slices.Sorted(slices.Values(c.Owned[t]))})
	}
	return out
}

// ClassicJoin sends a JoinGroup of client id (cjoin; see the language in scenario.go). The
// arguments apply to this request; the client remembers its topics, protocols, timeouts and
// instance id once a JoinGroup with them succeeds.
func (r *Runner) ClassicJoin(id string, args map[string]string) (consumer.JoinGroupResult, bool, error) {
	c := r.classicClient(id)
	cc := c.Classic
	j := kmsg.NewPtrJoinGroupRequest()
	j.Version, j.Group, j.MemberID, j.InstanceID = 9, r.Group, c.MemberID, c.Instance
	j.ProtocolType = recordcodec.ConsumerProtocolType
	j.SessionTimeoutMillis, j.RebalanceTimeoutMillis = cc.SessionTimeoutMs, cc.RebalanceTimeoutMs
	protocols, topics := cc.Protocols, c.Topics
	if topics == nil {
		topics = slices.Clone(r.subscribe)
	}
	if v, ok := args["instance"]; ok {
		j.InstanceID = &v
	}
	if v, ok := args["protocols"]; ok {
		protocols = splitList(v)
	}
	if v, ok := args["topics"]; ok {
		topics = splitList(v)
	}
	version := int32(j.Version)
	if err := int32Args(args, intArg{"session", &j.SessionTimeoutMillis}, intArg{"timeout", &j.RebalanceTimeoutMillis}, intArg{"version", &version}); err != nil {
		return consumer.JoinGroupResult{}, false, err
	}
	j.Version = int16(version)
	metadata, err := cc.subscription(protocols, topics, args)
	if err != nil {
		return consumer.JoinGroupResult{}, false, err
	}
	for _, p := range protocols {
		j.Protocols = append(j.Protocols, kmsg.JoinGroupRequestProtocol{Name: p, Metadata: metadata})
	}
	if v, ok := args["type"]; ok {
		j.ProtocolType = v
	}
	if v, ok := args["member"]; ok {
		j.MemberID = v
	}
	clientID, clientHost := r.connection(c, id)
	res, err := r.Coord.JoinGroup(r.Log.State(), r.Soft, r.Meta, consumer.JoinGroupRequest{Join: j, ClientID: clientID, ClientHost: clientHost}, r.Now)
	if err != nil {
		return res, false, r.notConsumerGroup(err)
	}
	resp := res.Response
	switch resp.ErrorCode {
	case coordinator.ErrNone:
		protocol := ""
		if resp.Protocol != nil {
			protocol = *resp.Protocol
		}
		r.Printf("  < member=%s generation=%d protocol=%s\n", resp.MemberID, resp.Generation, protocol)
		c.MemberID, c.Instance, c.Joined, c.Topics = resp.MemberID, j.InstanceID, true, topics
		cc.Generation, cc.Protocol, cc.Rejoin, cc.Synced = resp.Generation, protocol, false, false
		cc.Protocols, cc.SessionTimeoutMs, cc.RebalanceTimeoutMs = protocols, j.SessionTimeoutMillis, j.RebalanceTimeoutMillis
	case coordinator.ErrMemberIDRequired:
		r.printError(res.Error, " member="+resp.MemberID)
		c.MemberID = resp.MemberID // the client rejoins with it
	default:
		r.printError(res.Error, "")
		r.classicLost(c, cc, resp.ErrorCode)
	}
	if err := r.Append(res.Records); err != nil {
		return res, true, err
	}
	return res, true, r.resolveRegexes(res.RegexResolution)
}

// subscription is the consumer-protocol subscription a JoinGroup carries: the topics, the
// partitions the client owns (none under an eager protocol) and its generation, as the
// arguments rack=, owned= and generation= change them; metadata= gives bytes that are not a
// subscription instead.
func (cc *ClassicClient) subscription(protocols, topics []string, args map[string]string) ([]byte, error) {
	sub := recordcodec.NewConsumerProtocolSubscription()
	sub.Topics = slices.Sorted(slices.Values(topics))
	sub.OwnedPartitions = cc.ownedPartitions()
	if eager(protocols) {
		sub.OwnedPartitions = []recordcodec.OwnedPartition{}
	}
	sub.GenerationId = cc.Generation
	if v, ok := args["rack"]; ok {
		sub.RackId = &v
	}
	if v, ok := args["owned"]; ok {
		sub.OwnedPartitions = []recordcodec.OwnedPartition{}
		if v != "none" {
			names, ps, err := parsePartitions(v)
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				sub.OwnedPartitions = append(sub.OwnedPartitions, recordcodec.OwnedPartition{Topic: n, Partitions: ps[n]})
			}
		}
	}
	if err := int32Args(args, intArg{"generation", &sub.GenerationId}); err != nil {
		return nil, err
	}
	if v, ok := args["metadata"]; ok {
		return []byte(v), nil
	}
	return recordcodec.EncodeConsumerSubscription(sub)
}

// classicLost is what the Java client does on an error answer: it forgets its member id and
// generation (UNKNOWN_MEMBER_ID) or its generation and partitions (ILLEGAL_GENERATION), rejoins when told
// (REBALANCE_IN_PROGRESS), and stops on FENCED_INSTANCE_ID. A consumer-protocol client that
// sent a classic request keeps its state.
func (r *Runner) classicLost(c *Client, cc *ClassicClient, code int16) {
	if c.Classic == nil {
		return
	}
	switch code {
	case coordinator.ErrRebalanceInProgress:
		cc.Rejoin = true
	case coordinator.ErrUnknownMemberID:
		c.MemberID = "" // static members too: they rejoin with their instance id
		cc.Generation, cc.Owned, cc.Rejoin = -1, nil, true
	case coordinator.ErrIllegalGeneration:
		cc.Generation, cc.Owned, cc.Rejoin = -1, nil, true
	case coordinator.ErrFencedInstanceID:
		c.Joined = false
	}
}

// ClassicSync sends the SyncGroup of client id's generation (csync).
func (r *Runner) ClassicSync(id string, args map[string]string) (consumer.SyncGroupResult, bool, error) {
	c, cc := r.classicState(id)
	s := kmsg.NewPtrSyncGroupRequest()
	s.Version, s.Group, s.MemberID, s.InstanceID, s.Generation = 5, r.Group, c.MemberID, c.Instance, cc.Generation
	pt, p := recordcodec.ConsumerProtocolType, cc.Protocol
	s.ProtocolType, s.Protocol = &pt, &p
	if v, ok := args["protocol"]; ok {
		s.Protocol = &v
	}
	if v, ok := args["type"]; ok {
		s.ProtocolType = &v
	}
	if err := identityArgs(args, &s.Generation, &s.MemberID, &s.InstanceID); err != nil {
		return consumer.SyncGroupResult{}, false, err
	}
	res, err := r.Coord.SyncGroup(r.Log.State(), r.Soft, r.Meta, s, r.Now)
	if err != nil {
		return res, false, r.notConsumerGroup(err)
	}
	if r.refused(c, cc, res.Response.ErrorCode, res.Error) {
		return res, true, nil
	}
	a, err := recordcodec.DecodeConsumerAssignment(res.Response.MemberAssignment)
	if err != nil {
		return res, true, fmt.Errorf("SyncGroup assignment of %s: %w", id, err)
	}
	owned := map[string][]int32{}
	var parts []string
	for _, tp := range a.AssignedPartitions {
		owned[tp.Topic] = append(owned[tp.Topic], tp.Partitions...)
	}
	for _, t := range slices.Sorted(maps.Keys(owned)) {
		ps := slices.Sorted(slices.Values(owned[t]))
		owned[t] = ps
		var s []string
		for _, p := range ps {
			s = append(s, strconv.Itoa(int(p)))
		}
		parts = append(parts, t+":"+strings.Join(s, ","))
	}
	r.Printf("  < assignment=[%s]\n", strings.Join(parts, "/"))
	// A cooperative client revokes what it lost, then rejoins to report it.
	for t, ps := range cc.Owned {
		for _, p := range ps {
			if !slices.Contains(owned[t], p) && !eager(cc.Protocols) {
				cc.Rejoin = true
			}
		}
	}
	cc.Owned, cc.Synced = owned, true
	return res, true, nil
}

// identityArgs applies generation=, member= and instance= to a SyncGroup's or Heartbeat's
// fields.
func identityArgs(args map[string]string, generation *int32, memberID *string, instanceID **string) error {
	if err := int32Args(args, intArg{"generation", generation}); err != nil {
		return err
	}
	if v, ok := args["member"]; ok {
		*memberID = v
	}
	if v, ok := args["instance"]; ok {
		*instanceID = &v
	}
	return nil
}

// refused reports whether a classic answer is an error (code): then it is printed and the
// client does what the Java client does about it (classicLost).
func (r *Runner) refused(c *Client, cc *ClassicClient, code int16, err *coordinator.Error) bool {
	if code == coordinator.ErrNone {
		return false
	}
	r.printError(err, "")
	r.classicLost(c, cc, code)
	return true
}

// ClassicHeartbeat sends a Heartbeat of client id (chb).
func (r *Runner) ClassicHeartbeat(id string, args map[string]string) (consumer.ClassicHeartbeatResult, bool, error) {
	c, cc := r.classicState(id)
	h := kmsg.NewPtrHeartbeatRequest()
	h.Version, h.Group, h.MemberID, h.InstanceID, h.Generation = 4, r.Group, c.MemberID, c.Instance, cc.Generation
	if err := identityArgs(args, &h.Generation, &h.MemberID, &h.InstanceID); err != nil {
		return consumer.ClassicHeartbeatResult{}, false, err
	}
	res, err := r.Coord.ClassicHeartbeat(r.Log.State(), r.Soft, r.Meta, h, r.Now)
	if err != nil {
		return res, false, r.notConsumerGroup(err)
	}
	if r.refused(c, cc, res.Response.ErrorCode, res.Error) {
		return res, true, nil
	}
	r.Printf("  < ok\n")
	return res, true, nil
}

// ClassicLeave sends one LeaveGroup for clients ids (cleave); admin leaves the member ids
// out (an administrative removal by instance id); instance, when not nil, is the first
// member's instance id.
func (r *Runner) ClassicLeave(ids []string, admin bool, instance *string) error {
	l := kmsg.NewPtrLeaveGroupRequest()
	l.Version, l.Group = 5, r.Group
	for i, id := range ids {
		c := r.client(id)
		m := kmsg.LeaveGroupRequestMember{MemberID: c.MemberID, InstanceID: c.Instance}
		if i == 0 && instance != nil {
			m.InstanceID = instance
		}
		if admin {
			m.MemberID = ""
		}
		l.Members = append(l.Members, m)
	}
	res, err := r.Coord.LeaveGroup(r.Log.State(), r.Soft, r.Meta, l, r.Now)
	if err != nil {
		return r.notConsumerGroup(err)
	}
	if res.Response.ErrorCode != coordinator.ErrNone {
		r.printError(res.Error, "")
	} else {
		var parts []string
		for i, m := range res.Response.Members {
			parts = append(parts, fmt.Sprintf("%s=%d", ids[i], m.ErrorCode))
			if m.ErrorCode == coordinator.ErrNone {
				delete(r.Clients, ids[i])
			}
		}
		r.Printf("  < %s\n", strings.Join(parts, " "))
	}
	return r.Append(res.Records)
}

// classicGroup writes the GroupMetadata record of a classic group (classicgroup): what a
// classic coordinator, which coordlog does not have, would have written after a rebalance,
// so that a scenario can start from a classic group and upgrade it. Its members become
// classic clients that synced at the generation.
func (r *Runner) classicGroup(pos []string, args map[string]string) error {
	if len(pos) < 1 {
		return fmt.Errorf("classicgroup needs a generation: classicgroup GEN [M=t:0,1/u:2 ...]")
	}
	gen, err := atoi32(pos[0])
	if err != nil {
		return fmt.Errorf("classicgroup generation %q: %w", pos[0], err)
	}
	protocol := "cooperative-sticky"
	if v, ok := args["protocol"]; ok {
		protocol = v
	}
	topics := slices.Clone(r.subscribe)
	if v, ok := args["topics"]; ok {
		topics = splitList(v)
	}
	session, timeout := int32(45000), int32(300000)
	for k, dst := range map[string]*int32{"session": &session, "timeout": &timeout} {
		if v, ok := args[k]; ok {
			if *dst, err = atoi32(v); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	static := map[string]string{}
	if v, ok := args["static"]; ok {
		for _, p := range splitList(v) {
			m, inst, ok := strings.Cut(p, ":")
			if !ok {
				return fmt.Errorf("static=%s: want member:instance,...", v)
			}
			static[m] = inst
		}
	}
	userData, garbage := splitList(args["userdata"]), splitList(args["garbage"])
	reserved := map[string]bool{"protocol": true, "topics": true, "session": true, "timeout": true, "static": true, "userdata": true, "garbage": true}
	var names []string
	for k := range args {
		if !reserved[k] {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	v := recordcodec.NewGroupMetadataValue()
	v.Version, v.ProtocolType, v.Generation, v.CurrentStateTimestamp = 3, recordcodec.ConsumerProtocolType, gen, r.Now
	if len(names) > 0 {
		leader := names[0]
		v.Protocol, v.Leader = &protocol, &leader
	}
	for _, name := range names {
		cc := newClassicClient()
		cc.Generation, cc.Protocols, cc.Protocol, cc.Synced = gen, []string{protocol}, protocol, true
		cc.SessionTimeoutMs, cc.RebalanceTimeoutMs, cc.Owned = session, timeout, map[string][]int32{}
		a := recordcodec.NewConsumerProtocolAssignment()
		a.AssignedPartitions = []recordcodec.AssignedPartition{}
		if args[name] != "" {
			ts, ps, err := parsePartitions(args[name])
			if err != nil {
				return err
			}
			for _, t := range ts {
				a.AssignedPartitions = append(a.AssignedPartitions, recordcodec.AssignedPartition{Topic: t, Partitions: ps[t]})
				cc.Owned[t] = ps[t]
			}
		}
		sub := recordcodec.NewConsumerProtocolSubscription()
		sub.Topics, sub.OwnedPartitions, sub.GenerationId = slices.Sorted(slices.Values(topics)), cc.ownedPartitions(), gen-1
		subBytes, err := recordcodec.EncodeConsumerSubscription(sub)
		if err != nil {
			return err
		}
		if slices.Contains(userData, name) {
			a.UserData = []byte("custom") // a custom assignor's
		}
		assignment, err := recordcodec.EncodeConsumerAssignment(a)
		if err != nil {
			return err
		}
		if slices.Contains(garbage, name) {
			assignment = []byte{0, 0, 0xff}
		}
		c := &Client{MemberID: name, Joined: true, Topics: topics, Classic: cc, ClientID: "client-" + name, ClientHost: "/127.0.0.1"}
		if inst, ok := static[name]; ok {
			c.Instance = &inst
		}
		r.Clients[name] = c
		v.Members = append(v.Members, recordcodec.MemberMetadata{MemberId: name, GroupInstanceId: c.Instance, ClientId: c.ClientID,
			ClientHost: c.ClientHost, RebalanceTimeout: timeout, SessionTimeout: session, Subscription: subBytes, Assignment: assignment})
	}
	return r.Append([]recordcodec.Record{{Key: recordcodec.Key{Type: recordcodec.GroupMetadata, Group: r.Group}, Value: v}})
}

// classicSteps moves a classic client one step, as its poll loop would: a JoinGroup (then
// its SyncGroup) when it must rejoin, the SyncGroup it still owes, or a Heartbeat (and a
// JoinGroup and SyncGroup if told to rejoin). changed reports records, a join or a new
// assignment.
func (r *Runner) classicSteps(id string) (changed bool, err error) {
	c := r.Clients[id]
	cc := c.Classic
	join := func() (bool, error) {
		r.Printf("> cjoin %s\n", id)
		res, decided, err := r.ClassicJoin(id, map[string]string{})
		if err != nil || !decided {
			return false, err
		}
		if res.Response.ErrorCode == coordinator.ErrMemberIDRequired {
			r.Printf("> cjoin %s\n", id)
			if res, decided, err = r.ClassicJoin(id, map[string]string{}); err != nil || !decided {
				return true, err
			}
		}
		if res.Response.ErrorCode != coordinator.ErrNone {
			return true, nil
		}
		r.Printf("> csync %s\n", id)
		_, _, err = r.ClassicSync(id, map[string]string{})
		return true, err
	}
	switch {
	case cc.Rejoin || cc.Generation < 0:
		return join()
	case !cc.Synced:
		r.Printf("> csync %s\n", id)
		_, _, err := r.ClassicSync(id, map[string]string{})
		return true, err
	}
	r.Printf("> chb %s\n", id)
	res, decided, err := r.ClassicHeartbeat(id, map[string]string{})
	if err != nil || !decided || res.Response.ErrorCode == coordinator.ErrNone {
		return false, err
	}
	return join()
}

// adoptClassic fills client c from member m of a consumer group that uses the classic
// protocol: its generation is its epoch, it synced, and it owns its assigned partitions.
func (r *Runner) adoptClassic(c *Client, m *groupstate.ConsumerMember) {
	cc := newClassicClient()
	cc.Generation, cc.Synced, cc.SessionTimeoutMs, cc.RebalanceTimeoutMs = m.MemberEpoch, true, m.ClassicMemberMetadata.SessionTimeoutMs, m.RebalanceTimeoutMs
	cc.Protocols = nil
	for _, p := range m.ClassicMemberMetadata.SupportedProtocols {
		cc.Protocols = append(cc.Protocols, p.Name)
	}
	if len(cc.Protocols) > 0 {
		cc.Protocol = cc.Protocols[0]
	}
	cc.Owned = map[string][]int32{}
	for _, tp := range m.AssignedPartitions {
		cc.Owned[r.topicName(tp.TopicID)] = slices.Clone(tp.Partitions)
	}
	c.Classic, c.Owned = cc, nil
}

// adoptClassicGroupMember fills client c from member m of classic group g (a dump's): its
// generation is the group's, and it owns its assignment.
func adoptClassicGroupMember(c *Client, g *groupstate.ClassicGroup, m *groupstate.ClassicMember) {
	cc := newClassicClient()
	cc.Generation, cc.Synced, cc.SessionTimeoutMs, cc.RebalanceTimeoutMs = g.Generation, true, m.SessionTimeoutMs, m.RebalanceTimeoutMs
	if g.Protocol != nil {
		cc.Protocols, cc.Protocol = []string{*g.Protocol}, *g.Protocol
	}
	cc.Owned = map[string][]int32{}
	for _, tp := range m.AssignedPartitions {
		cc.Owned[tp.Topic] = slices.Clone(tp.Partitions)
	}
	c.MemberID, c.Instance, c.Joined = m.MemberID, m.GroupInstanceID, true
	c.ClientID, c.ClientHost = m.ClientID, m.ClientHost
	c.Topics = slices.Clone(m.SubscribedTopics)
	c.Classic = cc
}
