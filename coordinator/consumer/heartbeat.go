package consumer

import (
	"encoding/base64"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zeebo/xxh3"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Request is one ConsumerGroupHeartbeat with what the broker adds from the connection.
type Request struct {
	Heartbeat  *kmsg.ConsumerGroupHeartbeatRequest
	ClientID   string
	ClientHost string
	// StateOffset, when positive, is the log end offset the state reflects (for example
	// replay.Engine.NextOffset()). Replay is deterministic, so the offset identifies the
	// state: the coordinator then reuses the group model it built at the same offset instead
	// of copying the group view again (the no-change heartbeat path). Zero disables the cache;
	// a caller that changes the state without moving the offset must pass zero.
	StateOffset int64
	// Into, when set, is filled with the response instead of a new one (it is reset first):
	// a server that reuses a response per connection once it is written allocates nothing for
	// a heartbeat that changes nothing.
	Into *kmsg.ConsumerGroupHeartbeatResponse
}

// newResponse is the response of a decision: req.Into reset, or a new one.
func (req *Request) newResponse() *kmsg.ConsumerGroupHeartbeatResponse {
	if req.Into == nil {
		return kmsg.NewPtrConsumerGroupHeartbeatResponse()
	}
	*req.Into = kmsg.NewConsumerGroupHeartbeatResponse()
	return req.Into
}

// Result is a decision: the response and the records to append, in order, as one atomic
// batch. Records is empty when the response is an error. RegexResolution is set when the
// heartbeat scheduled a resolution of the group's regular expressions (possibly with an error
// response, when a later step failed): Kafka runs it on a background executor and appends its
// result as a batch of its own; the caller runs it with Coordinator.ResolveRegexes (after
// appending Records).
type Result struct {
	Response        *kmsg.ConsumerGroupHeartbeatResponse
	Records         []recordcodec.Record
	RegexResolution *RegexResolution
}

// Coordinator decides for the consumer groups of one __consumer_offsets partition. It holds
// no state of its own: the replayed state and the soft state are passed to every call.
type Coordinator struct {
	// Config returns the effective configuration of a group; nil means DefaultConfig.
	Config func(groupID string) Config
	// NewMemberID generates the member id of a version-0 join without one (Kafka:
	// Uuid.randomUuid()); nil derives one deterministically from the group, the clock and
	// the group's size, so that runs are reproducible.
	NewMemberID func(groupID string, now int64) string
}

func (c *Coordinator) config(id string) Config {
	if c.Config == nil {
		return DefaultConfig()
	}
	cfg := c.Config(id)
	if len(cfg.Assignors) == 0 {
		cfg.Assignors = DefaultConfig().Assignors
	}
	return cfg
}

// Heartbeat decides one ConsumerGroupHeartbeat. st is read only; soft is updated (timers,
// metadata refresh deadline, regex resolution in flight). now is the coordinator's clock in ms.
func (c *Coordinator) Heartbeat(st groupstate.View, soft *Soft, md *coordinator.Metadata, req Request, now int64) Result {
	hb := req.Heartbeat
	cfg := c.config(hb.Group)
	soft.observeMetadata(md)
	var res Result
	var err *coordinator.Error
	if err = validateRequest(hb, cfg); err == nil {
		if hb.MemberEpoch == coordinator.LeaveEpoch || hb.MemberEpoch == coordinator.StaticLeaveEpoch {
			res, err = c.leave(st, soft, md, cfg, &req, now)
		} else {
			res, err = c.regular(st, soft, md, req, cfg, now)
		}
	}
	if err != nil {
		return Result{Response: errorResponse(&req, hb.Version, err), RegexResolution: res.RegexResolution}
	}
	return res
}

func errorResponse(req *Request, version int16, err *coordinator.Error) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := req.newResponse()
	resp.Version = version
	resp.ErrorCode = err.Code
	if err.Message != "" {
		m := err.Message
		resp.ErrorMessage = &m
	}
	return resp
}

// validateRequest is GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid.
func validateRequest(r *kmsg.ConsumerGroupHeartbeatRequest, cfg Config) *coordinator.Error {
	if (r.Version >= 1 || r.MemberEpoch > 0 || r.MemberEpoch == coordinator.LeaveEpoch) && strings.TrimSpace(r.MemberID) == "" {
		return coordinator.Errorf(coordinator.ErrInvalidRequest, "MemberId can't be empty.")
	}
	if err := coordinator.CheckIDs(r.Group, r.InstanceID, r.RackID); err != nil {
		return err
	}
	switch {
	case r.MemberEpoch == coordinator.JoinEpoch:
		if r.RebalanceTimeoutMillis == -1 {
			return coordinator.Errorf(coordinator.ErrInvalidRequest, "RebalanceTimeoutMs must be provided in first request.")
		}
		if r.Topics == nil || len(r.Topics) > 0 {
			return coordinator.Errorf(coordinator.ErrInvalidRequest, "TopicPartitions must be empty when (re-)joining.")
		}
		if r.SubscribedTopicNames == nil && r.SubscribedTopicRegex == nil {
			return coordinator.Errorf(coordinator.ErrInvalidRequest, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
		}
	case r.MemberEpoch == coordinator.StaticLeaveEpoch:
		if r.InstanceID == nil {
			return coordinator.Errorf(coordinator.ErrInvalidRequest, "InstanceId can't be null.")
		}
	case r.MemberEpoch < coordinator.StaticLeaveEpoch:
		return coordinator.Errorf(coordinator.ErrInvalidRequest, "MemberEpoch is invalid.")
	}
	if r.ServerAssignor != nil && !slices.Contains(cfg.Assignors, *r.ServerAssignor) {
		return coordinator.Errorf(coordinator.ErrUnsupportedAssignor, "ServerAssignor %s is not supported. Supported assignors: %s.", *r.ServerAssignor, strings.Join(cfg.Assignors, ", "))
	}
	return nil
}

// loadGroup is getOrMaybeCreateConsumerGroup: a join creates a missing group and replaces an
// empty classic group (whose tombstone then opens the records); a non-empty classic group is
// converted by the first consumer-protocol join, when the migration policy allows it
// (migration.go).
func (c *Coordinator) loadGroup(st groupstate.View, soft *Soft, id string, joining bool, cfg Config, md *coordinator.Metadata, now int64, records *[]recordcodec.Record) (*group, *coordinator.Error) {
	loaded, err := coordinator.LoadGroup(st, id, groupstate.GroupTypeConsumer, joining, true, records)
	switch {
	case err != nil:
		return nil, err
	case loaded == coordinator.LoadStored:
		g, _ := consumerGroupOf(st, id)
		return g, nil
	case loaded == coordinator.LoadClassic:
		cg, _ := st.ClassicGroup(id)
		return upgradeClassicGroup(&cg, soft, cfg, md, now, records)
	}
	return newGroup(id), nil
}

// newMemberID is the member id the coordinator generates (Kafka: Uuid.randomUuid()) for a
// version-0 heartbeat or a JoinGroup without one: Coordinator.NewMemberID, else
// defaultMemberID, salted with the client id of a JoinGroup (two classic clients may ask for an
// id at the same time, and the group's size does not change until they join).
func (c *Coordinator) newMemberID(g *group, now int64, clientID string) string {
	if c.NewMemberID != nil {
		return c.NewMemberID(g.id, now)
	}
	return defaultMemberID(g.id, now, len(g.members), clientID)
}

// defaultMemberID derives a member id (22 characters of base64url, like Uuid.toString) from
// the group, the clock, the group's size and salt.
func defaultMemberID(groupID string, now int64, n int, salt string) string {
	var b [16]byte
	seed := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64([]byte(groupID), uint64(now)), uint64(n))
	seed = append(seed, salt...)
	h := xxh3.Hash128(seed)
	binary.BigEndian.PutUint64(b[:8], h.Hi)
	binary.BigEndian.PutUint64(b[8:], h.Lo)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// heartbeat carries one member's update through the steps Kafka's consumerGroupHeartbeat and
// classicGroupJoinToConsumerGroup share: a regular ConsumerGroupHeartbeat (r set) or a
// JoinGroup of a classic-protocol member (r nil, classic.go).
type heartbeat struct {
	c        *Coordinator
	req      Request
	r        *kmsg.ConsumerGroupHeartbeatRequest // nil for a classic JoinGroup
	soft     *Soft
	md       *coordinator.Metadata
	cfg      Config
	now      int64
	memberID string
	// instanceID is the request's instance id; owned the partitions the member reports
	// owning (nil: not reported), from the heartbeat or from a JoinGroup's subscription.
	instanceID *string
	owned      []kmsg.ConsumerGroupHeartbeatRequestTopic
	records    []recordcodec.Record

	g        *group
	gs       *GroupSoft
	m        *member // the member as found (or new, or the static replacement)
	replaced *member // the static member m replaces, if any
	u        *member // m with the request's metadata

	namesChanged      bool
	regexStatus       regexStatus
	assignorChanged   bool
	groupEpoch        int32
	homogeneous       bool
	targetEpoch       int32
	target            []TopicPartitions
	updated           *member // u reconciled toward its target
	regexResolution   *RegexResolution
	subscriptionMoved bool // hasSubscriptionChanged: names or regex changed
}

// regular is GroupMetadataManager.consumerGroupHeartbeat (member epoch >= 0), step by step
// in Kafka's order. A failing step ends the decision with its error and no records.
func (c *Coordinator) regular(st groupstate.View, soft *Soft, md *coordinator.Metadata, req Request, cfg Config, now int64) (Result, *coordinator.Error) {
	r := req.Heartbeat
	h := &heartbeat{c: c, req: req, r: r, soft: soft, md: md, cfg: cfg, now: now, memberID: r.MemberID, instanceID: r.InstanceID, owned: r.Topics}
	joining := r.MemberEpoch == coordinator.JoinEpoch
	var g *group
	if gs := soft.Groups[r.Group]; gs != nil {
		g, _ = gs.CachedModel(req.StateOffset).(*group)
	}
	if g == nil {
		var err *coordinator.Error
		if g, err = c.loadGroup(st, soft, r.Group, joining, cfg, md, now, &h.records); err != nil {
			return Result{}, err
		}
	}
	h.g = g
	if err := h.checkCapacity(r.MemberID); err != nil {
		return Result{}, err
	}
	if h.memberID == "" {
		h.memberID = c.newMemberID(g, now, "")
	}
	if err := h.resolveMember(joining); err != nil {
		return Result{}, err
	}
	h.updateMember()
	if err := h.updateRegex(); err != nil {
		return Result{}, err
	}
	h.gs = soft.group(g.id)
	if !coordinator.SameString(h.m.serverAssignor, h.u.serverAssignor) || h.replaced != nil {
		h.assignorChanged = g.preferred(cfg) != preferredAssignor(g, h.m, h.u, cfg)
	}
	h.subscriptionMoved = h.namesChanged || h.regexStatus != regexNoChange
	h.updateSubscriptionMetadata(h.namesChanged || h.regexStatus == regexUpdatedAndResolved || h.assignorChanged)
	// A resolution scheduled above runs even if a later step fails (Kafka's executor task is
	// not rolled back with the records).
	if err := h.updateTarget(); err != nil {
		return Result{RegexResolution: h.regexResolution}, err
	}
	if err := h.reconcile(); err != nil {
		return Result{RegexResolution: h.regexResolution}, err
	}
	h.scheduleSession(h.cfg.SessionTimeoutMs)
	res := h.response()
	// A decision without records leaves the group as it was: keep the model for the next
	// heartbeat at the same state offset; anything else drops it.
	if len(res.Records) == 0 && req.StateOffset > 0 && g.exists {
		h.gs.KeepModel(g, req.StateOffset)
	} else {
		h.gs.DropModel()
	}
	return res, nil
}

// checkCapacity is throwIfConsumerGroupIsFull, checked on every heartbeat: only an unknown
// (or empty) member id is turned away, never one whose instance id has a static member.
func (h *heartbeat) checkCapacity(memberID string) *coordinator.Error {
	g := h.g
	if h.instanceID != nil && g.static[*h.instanceID] != "" {
		return nil
	}
	if len(g.members) >= int(h.cfg.MaxSize) && (memberID == "" || g.members[memberID] == nil) {
		return coordinator.Errorf(coordinator.ErrGroupMaxSizeReached, "The consumer group has reached its maximum capacity of %d members.", h.cfg.MaxSize)
	}
	return nil
}

// checkEpoch is throwIfConsumerGroupMemberEpochIsInvalid: an older epoch is accepted only
// as a lost response, when the request reports owned partitions that are all assigned.
func checkEpoch(m *member, r *kmsg.ConsumerGroupHeartbeatRequest) *coordinator.Error {
	return coordinator.CheckMemberEpoch("consumer", r.MemberEpoch, m.epoch, m.prevEpoch, func() bool {
		if r.Topics == nil {
			return false
		}
		for _, t := range r.Topics {
			pm, ok := m.assigned[t.TopicID]
			if !ok {
				return false
			}
			for _, p := range t.Partitions {
				if _, ok := pm[p]; !ok {
					return false
				}
			}
		}
		return true
	})
}

// resolveMember is getOrMaybeSubscribe{Dynamic,Static}ConsumerGroupMember: outside a join,
// the known member (by member id, or by instance id), then the epoch check; a join finds the
// member of its member id or creates it, or takes over a static member's instance id
// (replaceStatic) unless an active consumer-protocol member still holds it.
func (h *heartbeat) resolveMember(joining bool) *coordinator.Error {
	r, g := h.r, h.g
	if !joining {
		// A known dynamic member (the steady heartbeat) is found without the generic call.
		if h.m = g.members[h.memberID]; h.m == nil || r.InstanceID != nil {
			m, err := coordinator.LookupMember(g.members, g.static, g.id, h.memberID, r.InstanceID, memberID)
			if err != nil {
				return err
			}
			h.m = m
		}
		return checkEpoch(h.m, r)
	}
	if r.InstanceID != nil {
		if old, held := coordinator.StaticOwner(g.members, g.static, *r.InstanceID); held {
			if !old.usesClassic() && old.epoch != coordinator.StaticLeaveEpoch {
				return coordinator.UnreleasedInstance(h.memberID, *r.InstanceID, old.id)
			}
			h.replaceStatic(old)
			return nil
		}
	}
	if h.m = g.members[h.memberID]; h.m == nil {
		h.m = newDefaultMember(h.memberID)
	}
	return nil
}

// replaceStatic is replaceMember: the joining member id takes over old at epoch 0, keeping
// its subscription and partitions; old's records are tombstoned (8, 7, 5) and the new id's
// written (5, 7 with old's target, 8).
func (h *heartbeat) replaceStatic(old *member) {
	g := h.g
	m := old.clone()
	m.id, m.epoch, m.prevEpoch = h.memberID, 0, 0
	h.m, h.replaced = m, old
	h.records = append(h.records, removeMemberRecords(g.id, old.id)...)
	h.records = append(h.records, memberMetadataRecord(g.id, m), targetMemberRecord(g.id, m.id, g.target[old.id]), currentAssignmentRecord(g.id, m))
}

// updateMember is ConsumerGroupMember.Builder with the request's fields, then
// hasMemberSubscriptionChanged: record 5 when the metadata changed; a changed set of names
// changes the subscription.
func (h *heartbeat) updateMember() {
	r, m := h.r, h.m
	if (r.InstanceID == nil || coordinator.SameString(r.InstanceID, m.instanceID)) && (r.RackID == nil || coordinator.SameString(r.RackID, m.rackID)) &&
		(r.RebalanceTimeoutMillis == -1 || r.RebalanceTimeoutMillis == m.rebalanceTimeoutMs) &&
		(r.ServerAssignor == nil || coordinator.SameString(r.ServerAssignor, m.serverAssignor)) && r.SubscribedTopicNames == nil &&
		(r.SubscribedTopicRegex == nil || *r.SubscribedTopicRegex == m.regex) &&
		h.req.ClientID == m.clientID && h.req.ClientHost == m.clientHost && m.classic == nil {
		h.u = m // nothing changes: no copy, no record 5
		return
	}
	u := m.clone()
	if r.InstanceID != nil {
		s := *r.InstanceID
		u.instanceID = &s
	}
	if r.RackID != nil {
		s := *r.RackID
		u.rackID = &s
	}
	if r.RebalanceTimeoutMillis != -1 {
		u.rebalanceTimeoutMs = r.RebalanceTimeoutMillis
	}
	if r.ServerAssignor != nil {
		s := *r.ServerAssignor
		u.serverAssignor = &s
	}
	if r.SubscribedTopicNames != nil {
		u.names = sortedSet(r.SubscribedTopicNames)
	}
	if r.SubscribedTopicRegex != nil {
		u.regex = *r.SubscribedTopicRegex
	}
	u.clientID, u.clientHost = h.req.ClientID, h.req.ClientHost
	u.classic = nil
	h.u = u
	if !sameMetadata(h.m, u) {
		h.records = append(h.records, memberMetadataRecord(h.g.id, u))
		h.namesChanged = !slices.Equal(h.m.names, u.names)
	}
}

func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// preferredAssignor is the server assignor named by the most members, or the default
// assignor when none names one; on a tie, the first in the iteration order of the counts.
// With old and updated nil it is preferredServerAssignor(): the counts are the group's map
// (a TimelineHashMap, in assignorTable's order). Otherwise it is
// computePreferredServerAssignor(old, updated): a HashMap copy of that map, filled in its
// order, then old's assignor counted one less (removed at 0) and updated's one more (put
// last when new); a HashMap iterates by bucket and, within one, in the order of the puts.
func preferredAssignor(g *group, old, updated *member, cfg Config) string {
	counts := map[string]int{}
	for _, m := range g.members {
		if m.serverAssignor != nil {
			counts[*m.serverAssignor]++
		}
	}
	names := make([]string, 0, len(counts)+1)
	for _, n := range g.assignorTable.order() {
		if counts[n] > 0 {
			names = append(names, n)
		}
	}
	if len(names) < len(counts) {
		// Names the table does not hold (a group the model made up this decision): after
		// the others, in sorted order.
		var rest []string
		for n := range counts {
			if !slices.Contains(names, n) {
				rest = append(rest, n)
			}
		}
		slices.Sort(rest)
		names = append(names, rest...)
	}
	if old != nil || updated != nil {
		copyCapacity := coordinator.JavaMapCapacityCopy(len(names))
		if old != nil && old.serverAssignor != nil {
			if n := *old.serverAssignor; counts[n] <= 1 {
				delete(counts, n)
				names = slices.DeleteFunc(names, func(s string) bool { return s == n })
			} else {
				counts[n]--
			}
		}
		if updated != nil && updated.serverAssignor != nil {
			n := *updated.serverAssignor
			if counts[n] == 0 {
				names = append(names, n)
			}
			counts[n]++
		}
		coordinator.JavaHashOrder(names, coordinator.JavaStringHash, coordinator.JavaMapCapacityGrown(copyCapacity, len(names)))
	}
	if len(names) == 0 {
		return cfg.Assignors[0]
	}
	best := names[0]
	for _, n := range names[1:] {
		if counts[n] > counts[best] {
			best = n
		}
	}
	return best
}

// subscribedTopicIDs is TopicIds over a member's names and resolved regex topics: the set of
// existing topics it subscribes to.
func (g *group) subscribedTopicIDs(m *member, md *coordinator.Metadata) map[Uuid]bool {
	out := map[Uuid]bool{}
	for _, n := range m.names {
		if t, ok := md.Topic(n); ok {
			out[t.ID] = true
		}
	}
	if m.regex != "" {
		for _, n := range g.regexes[m.regex].Topics {
			if t, ok := md.Topic(n); ok {
				out[t.ID] = true
			}
		}
	}
	return out
}

// updateSubscriptionMetadata is step 6: when the subscription changed in a way that bumps
// the epoch (bump), or the group's metadata refresh is due, recompute the metadata hash over
// the subscribed topics and the subscription type; a bump (or a new hash) writes record 3
// with the next epoch; a legacy partition-metadata record (4) is tombstoned.
func (h *heartbeat) updateSubscriptionMetadata(bump bool) {
	g, gs := h.g, h.gs
	h.groupEpoch = g.epoch
	h.homogeneous = g.homogeneous()
	mdVersion := int64(0)
	if h.md != nil {
		mdVersion = h.md.Version
	}
	if !bump && !gs.metadataExpired(h.now, g.epoch, mdVersion) {
		return
	}
	names := g.subscribedTopicNames(h.m, h.u, nil)
	hash := groupHash(names, h.md)
	n := len(g.members)
	if g.members[h.u.id] == nil && (h.u.instanceID == nil || g.static[*h.u.instanceID] == "") {
		n++
	}
	h.homogeneous = subscriptionHomogeneous(g.subscribedRegexes(h.m, h.u), names, n)
	if hash != g.metadataHash {
		bump = true
	}
	if bump {
		h.groupEpoch++
		h.records = append(h.records, groupMetadataRecord(g.id, h.groupEpoch, hash))
	}
	gs.setRefreshDeadline(h.now, h.groupEpoch, mdVersion)
	if g.hasPartitionRecord {
		h.records = append(h.records, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.ConsumerGroupPartitionMetadata, Group: g.id}})
	}
}

// groupHash is ModernGroup.computeMetadataHash over the subscribed topic names.
func groupHash(names map[string]subscriptionCount, md *coordinator.Metadata) int64 {
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	return coordinator.GroupHash(sorted, md)
}

// updateTarget is step 7, maybeUpdateTargetAssignment.
func (h *heartbeat) updateTarget() *coordinator.Error {
	epoch, target, recs, err := h.c.computeTarget(h.g, h.groupEpoch, h.m, h.u, h.replaced, h.homogeneous, h.md, h.cfg, h.now)
	if err != nil {
		return err
	}
	h.targetEpoch, h.target = epoch, target
	h.records = append(h.records, recs...)
	return nil
}

// reconcile is step 8, maybeReconcile: record 8 when the member's assignment changes; a
// consumer-protocol member left in UNREVOKED_PARTITIONS gets a rebalance timer, otherwise its
// rebalance timer is cancelled.
func (h *heartbeat) reconcile() *coordinator.Error {
	u := h.u
	h.updated = u
	if !h.subscriptionMoved && u.isReconciledTo(h.targetEpoch) {
		return nil
	}
	rc := &reconciler{m: u, targetEpoch: h.targetEpoch, target: h.target, subscribed: h.g.subscribedTopicIDs(u, h.md),
		subscriptionChanged: h.subscriptionMoved, owners: h.g.owners(), owned: h.owned}
	n, err := rc.build()
	if err != nil {
		return err
	}
	if !sameAssignment(n, u) {
		h.records = append(h.records, currentAssignmentRecord(h.g.id, n))
		if !n.usesClassic() {
			ms := h.gs.Member(n.id)
			if n.state == stateUnrevokedPartitons {
				ms.ArmRebalance(h.now, n.rebalanceTimeoutMs, n.epoch)
			} else {
				ms.RebalanceDeadline = 0
			}
		}
	}
	h.updated = n
	return nil
}

// scheduleSession is scheduleConsumerGroupSessionTimeout; a replaced static member's timers
// go with it (they would find nothing to fence).
func (h *heartbeat) scheduleSession(timeoutMs int32) {
	h.gs.Member(h.memberID).ArmSession(h.now, timeoutMs)
	if h.replaced != nil && h.replaced.id != h.memberID {
		h.gs.RemoveMember(h.replaced.id)
	}
}

// response: the assignment on a join, on a full request (rebalance timeout, subscription and
// owned partitions all given) or when the assigned partitions (or their epochs) changed.
func (h *heartbeat) response() Result {
	r, updated := h.r, h.updated
	resp := h.req.newResponse()
	resp.Version = r.Version
	resp.MemberID = &updated.id // the member is not modified after the decision
	resp.MemberEpoch = updated.epoch
	resp.HeartbeatIntervalMillis = h.cfg.HeartbeatIntervalMs
	full := r.RebalanceTimeoutMillis != -1 && (r.SubscribedTopicNames != nil || r.SubscribedTopicRegex != nil) && r.Topics != nil
	if r.MemberEpoch == coordinator.JoinEpoch || full || !h.m.assigned.equalWithEpochs(updated.assigned) {
		resp.Assignment = responseAssignment(updated.assigned)
	}
	return Result{Response: resp, Records: h.records, RegexResolution: h.regexResolution}
}

func responseAssignment(p partitions) *kmsg.ConsumerGroupHeartbeatResponseAssignment {
	a := &kmsg.ConsumerGroupHeartbeatResponseAssignment{}
	a.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
	for _, t := range sortedTopics(p) {
		ps := make([]int32, 0, len(p[t]))
		for n := range p[t] {
			ps = append(ps, n)
		}
		slices.Sort(ps)
		a.Topics = append(a.Topics, kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{TopicID: t, Partitions: ps})
	}
	return a
}
