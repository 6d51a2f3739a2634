package consumer

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Classic-protocol members inside a consumer group: the JoinGroup, SyncGroup, Heartbeat and
// LeaveGroup of a client that still speaks the classic protocol (GroupMetadataManager.
// classicGroup{Join,Sync,Heartbeat,Leave}ToConsumerGroup). Such a member is a consumer group
// member like any other (records 5, 7, 8) whose record 5 carries its classic metadata (session
// timeout, supported protocols with their subscription bytes). A JoinGroup is a heartbeat in
// disguise: its subscription (topics, owned partitions, rack) is decoded from the embedded
// consumer protocol, the member is updated, the target computed and the member reconciled; the
// JoinGroup response's generation is the member epoch, and the SyncGroup returns the member's
// assigned partitions as ConsumerProtocolAssignment bytes. Heartbeats tell the member to rejoin
// (REBALANCE_IN_PROGRESS) when the group moved on. Instead of the rebalance timer such a member
// has a join timer (armed when it is told to rejoin) and a sync timer (armed by its JoinGroup);
// its session timer uses the session timeout of its JoinGroup.
//
// These calls decide for consumer groups with members. A classic group (or, for a JoinGroup,
// a missing group or an empty consumer or streams group, which the JoinGroup turns into a
// classic group) is the classic coordinator's, which coordlog does not have: the call returns
// ErrNotConsumerGroup and decides nothing.

// JoinGroupRequest is one JoinGroup with what the broker adds from the connection.
type JoinGroupRequest struct {
	Join       *kmsg.JoinGroupRequest
	ClientID   string
	ClientHost string
}

// JoinGroupResult is a JoinGroup decision: the response and the records to append as one
// batch (none with an error). Error is the error answered, with the message Kafka logs (a
// JoinGroup response carries only the code); nil on success. RegexResolution is as in
// Result: a resolution of the group's regular expressions the join scheduled.
type JoinGroupResult struct {
	Response        *kmsg.JoinGroupResponse
	Records         []recordcodec.Record
	Error           *coordinator.Error
	RegexResolution *RegexResolution
}

// SyncGroupResult is a SyncGroup decision. Records is always empty (Kafka writes nothing; it
// answers once what was written before is committed); Error as in JoinGroupResult.
type SyncGroupResult struct {
	Response *kmsg.SyncGroupResponse
	Records  []recordcodec.Record
	Error    *coordinator.Error
}

// ClassicHeartbeatResult is a Heartbeat decision. Records is always empty; Error as in
// JoinGroupResult.
type ClassicHeartbeatResult struct {
	Response *kmsg.HeartbeatResponse
	Records  []recordcodec.Record
	Error    *coordinator.Error
}

// LeaveGroupResult is a LeaveGroup decision: the members that may leave are fenced in one
// batch (which may convert the group back to a classic group). Error is a top-level error
// (the members' own errors are in the response).
type LeaveGroupResult struct {
	Response *kmsg.LeaveGroupResponse
	Records  []recordcodec.Record
	Error    *coordinator.Error
}

// classicGroupView is the consumer group a classic-protocol request addresses, or the reason
// there is none: missing (not found), of another type, or a classic group (ErrNotConsumerGroup).
func classicGroupView(st groupstate.View, id string) (*group, bool, error) {
	typ, exists := st.GroupType(id)
	switch {
	case exists && typ == groupstate.GroupTypeClassic:
		return nil, false, ErrNotConsumerGroup
	case !exists || typ != groupstate.GroupTypeConsumer:
		return nil, false, nil
	}
	g, _ := consumerGroupOf(st, id)
	return g, true, nil
}

// JoinGroup decides a JoinGroup (versions 0-9) of a classic-protocol member to a consumer
// group with members (classicGroupJoinToConsumerGroup), after the checks of Kafka's service:
// an empty group id is INVALID_GROUP_ID, a session timeout outside group.min/max.session.
// timeout.ms INVALID_SESSION_TIMEOUT; a non-empty streams group or a share group is
// INCONSISTENT_GROUP_PROTOCOL. Then, in Kafka's order: the migration policy must not be
// disabled (INCONSISTENT_GROUP_PROTOCOL); an unknown member id gets a generated one; the group
// must have room (GROUP_MAX_SIZE_REACHED); the protocol type must be "consumer" and one of the
// protocols supported by every classic member (INCONSISTENT_GROUP_PROTOCOL); a dynamic member
// without a member id (version 4+) is answered MEMBER_ID_REQUIRED with its new id and rejoins
// with it; a static member without a member id joins or replaces the holder of its instance id
// (whatever protocol the holder uses), one with a member id must hold its instance id
// (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID); the subscription must decode
// (INCONSISTENT_GROUP_PROTOCOL). The member is updated (record 5: subscribed topics, rack,
// rebalance timeout, no regex, its classic metadata), the epoch bumped if its topics changed,
// the target computed and the member reconciled against the partitions its subscription says
// it owns. A static member replacing the last consumer-protocol member converts the group back
// to a classic group instead (migration.go). On success the member's session timer (the
// JoinGroup's session timeout) and sync timer (its rebalance timeout) are armed, its join
// timer cancelled.
func (c *Coordinator) JoinGroup(st groupstate.View, soft *Soft, md *coordinator.Metadata, req JoinGroupRequest, now int64) (JoinGroupResult, error) {
	j := req.Join
	cfg := c.config(j.Group)
	soft.observeMetadata(md)
	var h *heartbeat
	// A resolution scheduled before a later step fails still runs (as in Heartbeat).
	fail := func(memberID string, err *coordinator.Error) (JoinGroupResult, error) {
		res := JoinGroupResult{Response: joinErrorResponse(j.Version, memberID, err.Code), Error: err}
		if h != nil {
			res.RegexResolution = h.regexResolution
		}
		return res, nil
	}
	if err := validateJoin(j, cfg); err != nil {
		return fail(j.MemberID, err)
	}
	g, cerr, err := joinedConsumerGroup(st, j, cfg)
	if err != nil || cerr != nil {
		if err != nil {
			return JoinGroupResult{}, err
		}
		return fail("", cerr)
	}
	// classicGroupJoinToConsumerGroup.
	unknown := j.MemberID == ""
	memberID := j.MemberID
	if unknown {
		memberID = c.newMemberID(g, now, req.ClientID)
	}
	h = &heartbeat{c: c, soft: soft, md: md, cfg: cfg, now: now, memberID: memberID, instanceID: j.InstanceID, g: g}
	if err := h.checkCapacity(memberID); err != nil {
		return fail("", err)
	}
	names := make([]string, len(j.Protocols))
	for i, p := range j.Protocols {
		names[i] = p.Name
	}
	if !g.supportsClassicProtocols(j.ProtocolType, names) {
		return fail("", coordinator.Errorf(coordinator.ErrInconsistentGroupProto, "Member %s's protocols are not supported.", memberID))
	}
	if j.InstanceID == nil && unknown && j.Version >= 4 {
		// JoinGroupRequest.requiresKnownMemberId: the client rejoins with this id.
		return fail(memberID, coordinator.Errorf(coordinator.ErrMemberIDRequired, "Dynamic member with unknown member id joins the consumer group; rejoin with member id %s.", memberID))
	}
	if err := h.resolveClassicMember(unknown); err != nil {
		return fail("", err)
	}
	if err := h.classicJoin(j, req.ClientID, req.ClientHost); err != nil {
		return fail("", err)
	}
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = j.Version
	resp.MemberID, resp.Generation = h.updated.id, h.updated.epoch
	pt, name := recordcodec.ConsumerProtocolType, h.updated.classic.SupportedProtocols[0].Name
	resp.ProtocolType = &pt
	resp.Protocol = joinProtocolName(j.Version, name)
	return JoinGroupResult{Response: resp, Records: h.records, RegexResolution: h.regexResolution}, nil
}

// validateJoin is GroupCoordinatorService.joinGroup's checks of the request alone: a group id
// (INVALID_GROUP_ID) and a session timeout within the broker's bounds
// (INVALID_SESSION_TIMEOUT). Their answers echo the request's member id.
func validateJoin(j *kmsg.JoinGroupRequest, cfg Config) *coordinator.Error {
	if j.Group == "" {
		return coordinator.Errorf(coordinator.ErrInvalidGroupID, "The group id is empty.")
	}
	if j.SessionTimeoutMillis < cfg.ClassicMinSessionTimeoutMs || j.SessionTimeoutMillis > cfg.ClassicMaxSessionTimeoutMs {
		return coordinator.Errorf(coordinator.ErrInvalidSessionTimeout, "The session timeout %d is not within [%d, %d] (group.min.session.timeout.ms, group.max.session.timeout.ms).",
			j.SessionTimeoutMillis, cfg.ClassicMinSessionTimeoutMs, cfg.ClassicMaxSessionTimeoutMs)
	}
	return nil
}

// joinedConsumerGroup is classicGroupJoin's dispatch: a non-empty consumer group is this
// coordinator's (unless the migration policy forbids classic joins); a missing group, a
// classic group, an empty consumer or streams group is the classic coordinator's
// (ErrNotConsumerGroup); any other group answers INCONSISTENT_GROUP_PROTOCOL.
func joinedConsumerGroup(st groupstate.View, j *kmsg.JoinGroupRequest, cfg Config) (*group, *coordinator.Error, error) {
	typ, exists := st.GroupType(j.Group)
	switch {
	case !exists || typ == groupstate.GroupTypeClassic:
		return nil, nil, ErrNotConsumerGroup
	case typ != groupstate.GroupTypeConsumer:
		if state, _ := st.GroupState(j.Group); typ == groupstate.GroupTypeStreams && state == groupstate.StateEmpty {
			return nil, nil, ErrNotConsumerGroup
		}
		return nil, coordinator.Errorf(coordinator.ErrInconsistentGroupProto, "Group %s is not a consumer group.", j.Group), nil
	}
	g, _ := consumerGroupOf(st, j.Group)
	if len(g.members) == 0 {
		return nil, nil, ErrNotConsumerGroup
	}
	if cfg.MigrationPolicy == MigrationDisabled {
		return nil, coordinator.Errorf(coordinator.ErrInconsistentGroupProto, "Cannot join the consumer group %s with the classic protocol because the group migration is disabled.", g.id), nil
	}
	return g, nil, nil
}

// classicJoin is the rest of classicGroupJoinToConsumerGroup once the member is known: its
// subscription decoded, the member updated, regexes, subscription metadata, then either the
// conversion back to a classic group (a static member replacing the last consumer-protocol
// member) or the target, reconciliation and the member's timers.
func (h *heartbeat) classicJoin(j *kmsg.JoinGroupRequest, clientID, clientHost string) *coordinator.Error {
	g, cfg, md, now := h.g, h.cfg, h.md, h.now
	downgrade := false
	if j.InstanceID != nil {
		if old := g.members[g.static[*j.InstanceID]]; old != nil {
			downgrade = g.downgradeOnReplace(cfg, old)
		}
	}
	sub, derr := recordcodec.DecodeConsumerSubscriptionLenient(j.Protocols[0].Metadata)
	if derr != nil {
		return coordinator.Errorf(coordinator.ErrInconsistentGroupProto, "Malformed embedded consumer protocol in subscription deserialization.")
	}
	rebalanceTimeout := j.RebalanceTimeoutMillis
	if j.Version == 0 {
		rebalanceTimeout = j.SessionTimeoutMillis // JoinGroupRequest.maybeOverrideRebalanceTimeout
	}
	h.updateClassicMember(j, sub, rebalanceTimeout, clientID, clientHost)
	// A static member replacing one with a regex gives it up (record 16 tombstone, bump).
	if err := h.updateRegex(); err != nil {
		return err
	}
	h.gs = h.soft.group(g.id)
	h.subscriptionMoved = h.namesChanged || h.regexStatus != regexNoChange
	h.updateSubscriptionMetadata(h.subscriptionMoved)
	h.owned = ownedFromSubscription(sub, md)
	if downgrade {
		return h.classicJoinDowngrade(*j.InstanceID)
	}
	if err := h.updateTarget(); err != nil {
		return err
	}
	if err := h.reconcile(); err != nil {
		return err
	}
	ms := h.gs.Member(h.updated.id)
	ms.JoinDeadline = 0
	ms.ArmSession(now, j.SessionTimeoutMillis)
	ms.SyncDeadline = now + int64(max(rebalanceTimeout, 0))
	if h.replaced != nil && h.replaced.id != h.updated.id {
		h.gs.RemoveMember(h.replaced.id)
	}
	return nil
}

// classicJoinDowngrade converts the group back to a classic group on a static member's join
// (instance id inst): the member is reconciled against the stored target unless the
// subscription moved the epoch (the classic group rebalances anyway), then its records are
// tombstoned with the group's; the group's soft state goes.
func (h *heartbeat) classicJoinDowngrade(inst string) *coordinator.Error {
	g := h.g
	h.updated = h.u
	if g.assignmentEpoch >= h.groupEpoch {
		h.targetEpoch, h.target = g.assignmentEpoch, g.target[g.static[inst]]
		if err := h.reconcile(); err != nil {
			return err
		}
	}
	recs, err := g.toClassicGroup(nil, h.updated, h.md, h.now)
	if err != nil {
		return err
	}
	h.records = append(h.records, recs...)
	delete(h.soft.Groups, g.id)
	return nil
}

// joinProtocolName is JoinGroupResponse's protocol name: "" before version 7, null for "" from
// version 7.
func joinProtocolName(version int16, name string) *string {
	if version >= 7 && name == "" {
		return nil
	}
	return &name
}

// joinErrorResponse is Kafka's JoinGroup error answer: the code, generation -1, no protocol,
// and the member id only where Kafka sets it (the request's, for the service's own checks, the
// new one for MEMBER_ID_REQUIRED).
func joinErrorResponse(version int16, memberID string, code int16) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version, resp.ErrorCode, resp.MemberID = version, code, memberID
	resp.Protocol = joinProtocolName(version, "")
	return resp
}

// resolveClassicMember is getOrMaybeSubscribe{Dynamic,Static}ConsumerGroupMember for a
// classic join: no epoch check; a dynamic member is created if unknown; a static member
// without a member id (unknown) joins, or replaces the holder of its instance id whatever the
// holder's protocol or epoch; with a member id it must be the holder.
func (h *heartbeat) resolveClassicMember(unknown bool) *coordinator.Error {
	g := h.g
	if h.instanceID == nil {
		if h.m = g.members[h.memberID]; h.m == nil {
			h.m = newDefaultMember(h.memberID)
		}
		return nil
	}
	inst := *h.instanceID
	if !unknown {
		m, err := coordinator.KnownStaticMember(g.members, g.static, h.memberID, inst, memberID)
		h.m = m
		return err
	}
	if old, held := coordinator.StaticOwner(g.members, g.static, inst); held {
		h.replaceStatic(old)
	} else if h.m = g.members[h.memberID]; h.m == nil {
		h.m = newDefaultMember(h.memberID)
	}
	return nil
}

// updateClassicMember is the ConsumerGroupMember.Builder of a classic join: instance id, the
// subscription's rack (when not empty), rebalance timeout (unless -1), the subscription's
// topics, no regex, the connection's client id and host, and the classic metadata (session
// timeout, the protocols in request order); record 5 when anything changed.
func (h *heartbeat) updateClassicMember(j *kmsg.JoinGroupRequest, sub *recordcodec.ConsumerProtocolSubscription, rebalanceTimeout int32, clientID, clientHost string) {
	m := h.m
	u := m.clone()
	if j.InstanceID != nil {
		s := *j.InstanceID
		u.instanceID = &s
	}
	if r := nonEmpty(sub.RackId); r != nil {
		u.rackID = r
	}
	if rebalanceTimeout != -1 {
		u.rebalanceTimeoutMs = rebalanceTimeout
	}
	u.names = sortedSet(sub.Topics)
	u.regex = ""
	u.clientID, u.clientHost = clientID, clientHost
	cm := &groupstate.ClassicMemberMetadata{SessionTimeoutMs: j.SessionTimeoutMillis, SupportedProtocols: make([]groupstate.ClassicProtocol, len(j.Protocols))}
	for i, p := range j.Protocols {
		cm.SupportedProtocols[i] = groupstate.ClassicProtocol{Name: p.Name, Metadata: slices.Clone(p.Metadata)}
	}
	u.classic = cm
	h.u = u
	if !sameMetadata(m, u) {
		h.records = append(h.records, memberMetadataRecord(h.g.id, u))
		h.namesChanged = !slices.Equal(m.names, u.names)
	}
}

// ownedFromSubscription is Utils.toTopicPartitions of the subscription's owned partitions:
// by topic id, topics md does not know left out; never nil (a subscription always reports
// what it owns, version 0 nothing).
func ownedFromSubscription(sub *recordcodec.ConsumerProtocolSubscription, md *coordinator.Metadata) []kmsg.ConsumerGroupHeartbeatRequestTopic {
	out := []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	for _, tp := range sub.OwnedPartitions {
		if t, ok := md.Topic(tp.Topic); ok {
			out = append(out, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t.ID, Partitions: tp.Partitions})
		}
	}
	return out
}

// classicMember is validateConsumerGroupMember then throwIfMemberDoesNotUseClassicProtocol:
// the member by id, or the holder of the instance id (which must be that member id).
func (g *group) classicMember(memberID string, instanceID *string) (*member, *coordinator.Error) {
	var m *member
	if instanceID == nil {
		if m = g.members[memberID]; m == nil {
			return nil, coordinator.Errorf(coordinator.ErrUnknownMemberID, "Member %s is not a member of group %s.", memberID, g.id)
		}
	} else {
		if m = g.members[g.static[*instanceID]]; m == nil {
			return nil, coordinator.Errorf(coordinator.ErrUnknownMemberID, "Member with instance id %s is not a member of group %s.", *instanceID, g.id)
		}
		if m.id != memberID {
			return nil, coordinator.Errorf(coordinator.ErrFencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", memberID, *instanceID, m.id)
		}
	}
	if !m.usesClassic() {
		return nil, coordinator.Errorf(coordinator.ErrUnknownMemberID, "Member %s does not use the classic protocol.", m.id)
	}
	return m, nil
}

func checkGeneration(memberID string, epoch, generation int32) *coordinator.Error {
	if epoch != generation {
		return coordinator.Errorf(coordinator.ErrIllegalGeneration, "The request generation id %d is not equal to the member epoch %d of member %s.", generation, epoch, memberID)
	}
	return nil
}

// armJoinTimer is scheduleConsumerGroupJoinTimeoutIfAbsent.
func armJoinTimer(soft *Soft, g *group, m *member, now int64) {
	ms := soft.group(g.id).Member(m.id)
	if ms.JoinDeadline == 0 {
		ms.JoinDeadline = now + int64(max(m.rebalanceTimeoutMs, 0))
	}
}

// SyncGroup decides a SyncGroup (versions 0-5) of a classic-protocol member of a consumer
// group (classicGroupSyncToConsumerGroup): version 5+ must name the protocol type and name
// (INCONSISTENT_GROUP_PROTOCOL); an empty group id is INVALID_GROUP_ID; a missing group, an
// empty one or one of another type is UNKNOWN_MEMBER_ID. The member must exist (by member id,
// or as the holder of its instance id: UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID) and use the
// classic protocol (UNKNOWN_MEMBER_ID); the generation must be its epoch
// (ILLEGAL_GENERATION); a protocol type or name given must be "consumer" and its first
// protocol (INCONSISTENT_GROUP_PROTOCOL); if the group's assignment epoch is ahead of the member
// and it is not revoking (UNREVOKED_PARTITIONS), it must rejoin first (REBALANCE_IN_PROGRESS,
// which arms its join timer). Otherwise the answer is its assigned partitions (pending
// revocation excluded) as ConsumerProtocolAssignment bytes at the version of its first
// protocol's subscription; its sync timer is cancelled and its session timer re-armed. The
// assignments the request carries (a leader's) are ignored.
func (c *Coordinator) SyncGroup(st groupstate.View, soft *Soft, md *coordinator.Metadata, req *kmsg.SyncGroupRequest, now int64) (SyncGroupResult, error) {
	fail := func(err *coordinator.Error) (SyncGroupResult, error) {
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.Version, resp.ErrorCode = req.Version, err.Code
		return SyncGroupResult{Response: resp, Error: err}, nil
	}
	if req.Version >= 5 && (req.ProtocolType == nil || req.Protocol == nil) {
		return fail(coordinator.Errorf(coordinator.ErrInconsistentGroupProto, "SyncGroup version 5 and above must name the protocol type and name."))
	}
	if req.Group == "" {
		return fail(coordinator.Errorf(coordinator.ErrInvalidGroupID, "The group id is empty."))
	}
	g, ok, err := classicGroupView(st, req.Group)
	if err != nil {
		return SyncGroupResult{}, err
	}
	if !ok || len(g.members) == 0 {
		return fail(coordinator.Errorf(coordinator.ErrUnknownMemberID, "Group %s not found or empty.", req.Group))
	}
	m, cerr := g.classicMember(req.MemberID, req.InstanceID)
	if cerr != nil {
		return fail(cerr)
	}
	if cerr := checkGeneration(m.id, m.epoch, req.Generation); cerr != nil {
		return fail(cerr)
	}
	if len(m.classic.SupportedProtocols) == 0 {
		// A record 5 without protocols (Kafka: NoSuchElementException).
		return fail(coordinator.Errorf(coordinator.ErrUnknownServerError, ""))
	}
	protocol := m.classic.SupportedProtocols[0].Name
	switch {
	case req.ProtocolType != nil && *req.ProtocolType != recordcodec.ConsumerProtocolType:
		return fail(coordinator.Errorf(coordinator.ErrInconsistentGroupProto, "The protocol type %s from member %s request is not equal to the group protocol type %s.", *req.ProtocolType, m.id, recordcodec.ConsumerProtocolType))
	case req.Protocol != nil && *req.Protocol != protocol:
		return fail(coordinator.Errorf(coordinator.ErrInconsistentGroupProto, "The protocol name %s from member %s request is not equal to the protocol name %s returned in the join response.", *req.Protocol, m.id, protocol))
	}
	if g.assignmentEpoch > m.epoch && m.state != stateUnrevokedPartitons {
		armJoinTimer(soft, g, m, now)
		return fail(coordinator.Errorf(coordinator.ErrRebalanceInProgress, "A new rebalance is triggered in group %s and member %s should rejoin to catch up.", g.id, m.id))
	}
	assignment, aerr := encodeAssignment(m.assigned.sets(), m.classic.SupportedProtocols[0].Metadata, md)
	if aerr != nil {
		return fail(coordinator.Errorf(coordinator.ErrUnknownServerError, ""))
	}
	ms := soft.group(g.id).Member(m.id)
	ms.SyncDeadline = 0
	ms.ArmSession(now, m.classic.SessionTimeoutMs)
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.Version = req.Version
	resp.ProtocolType, resp.Protocol, resp.MemberAssignment = req.ProtocolType, req.Protocol, assignment
	return SyncGroupResult{Response: resp}, nil
}

// ClassicHeartbeat decides a Heartbeat (versions 0-4) of a classic-protocol member of a
// consumer group (classicGroupHeartbeatToConsumerGroup): an empty group id is
// INVALID_GROUP_ID; a missing group or one of another type UNKNOWN_MEMBER_ID; the member is
// checked as in SyncGroup (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION). Its
// session timer is re-armed, and it is told to rejoin (REBALANCE_IN_PROGRESS, arming its join
// timer) when its epoch is behind the assignment epoch, it must revoke partitions
// (UNREVOKED_PARTITIONS), or it waits for partitions (UNRELEASED_PARTITIONS) that are now
// free.
func (c *Coordinator) ClassicHeartbeat(st groupstate.View, soft *Soft, md *coordinator.Metadata, req *kmsg.HeartbeatRequest, now int64) (ClassicHeartbeatResult, error) {
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.Version = req.Version
	fail := func(err *coordinator.Error) (ClassicHeartbeatResult, error) {
		resp.ErrorCode = err.Code
		return ClassicHeartbeatResult{Response: resp, Error: err}, nil
	}
	if req.Group == "" {
		return fail(coordinator.Errorf(coordinator.ErrInvalidGroupID, "The group id is empty."))
	}
	g, ok, err := classicGroupView(st, req.Group)
	if err != nil {
		return ClassicHeartbeatResult{}, err
	}
	if !ok {
		return fail(coordinator.Errorf(coordinator.ErrUnknownMemberID, "Group %s not found.", req.Group))
	}
	m, cerr := g.classicMember(req.MemberID, req.InstanceID)
	if cerr != nil {
		return fail(cerr)
	}
	if cerr := checkGeneration(req.MemberID, m.epoch, req.Generation); cerr != nil {
		return fail(cerr)
	}
	soft.group(g.id).Member(m.id).ArmSession(now, m.classic.SessionTimeoutMs)
	if m.epoch < g.assignmentEpoch || m.state == stateUnrevokedPartitons ||
		(m.state == stateUnreleased && !g.waitingOnUnreleasedPartition(m)) {
		armJoinTimer(soft, g, m, now)
		return fail(coordinator.Errorf(coordinator.ErrRebalanceInProgress, "Member %s must rejoin group %s: its epoch %d, the assignment epoch %d, its state %d.", m.id, g.id, m.epoch, g.assignmentEpoch, m.state))
	}
	return ClassicHeartbeatResult{Response: resp}, nil
}

// LeaveGroup decides a LeaveGroup (versions 0-5; before 3 one member by id) to a consumer
// group (classicGroupLeaveToConsumerGroup): an empty group id is INVALID_GROUP_ID; a missing
// group or one of another type answers UNKNOWN_MEMBER_ID for every member. Each member is
// found by member id, or by instance id (the member id, when given, must be the holder's:
// FENCED_INSTANCE_ID; an administrative removal gives none); unknown ones get
// UNKNOWN_MEMBER_ID. The members found leave together, whatever protocol they use: one fence
// (LeaveGroup does not care about epochs), which converts the group back to a classic group if
// only classic-protocol members remain and the policy allows it. Kafka fences them in the
// iteration order of a HashSet of members, which depends on identity hash codes and differs
// from run to run; coordlog keeps the request's order.
func (c *Coordinator) LeaveGroup(st groupstate.View, soft *Soft, md *coordinator.Metadata, req *kmsg.LeaveGroupRequest, now int64) (LeaveGroupResult, error) {
	resp := kmsg.NewPtrLeaveGroupResponse()
	resp.Version = req.Version
	members := req.Members
	if req.Version <= 2 {
		members = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	finish := func(res LeaveGroupResult) (LeaveGroupResult, error) {
		if req.Version <= 2 {
			// LeaveGroupResponse before version 3: the top-level error, else the member's.
			if resp.ErrorCode == coordinator.ErrNone {
				for _, m := range resp.Members {
					if m.ErrorCode != coordinator.ErrNone {
						resp.ErrorCode = m.ErrorCode
						break
					}
				}
			}
			resp.Members = nil
		}
		res.Response = resp
		return res, nil
	}
	if req.Group == "" {
		resp.ErrorCode = coordinator.ErrInvalidGroupID
		return finish(LeaveGroupResult{Error: coordinator.Errorf(coordinator.ErrInvalidGroupID, "The group id is empty.")})
	}
	g, ok, err := classicGroupView(st, req.Group)
	if err != nil {
		return LeaveGroupResult{}, err
	}
	var fenced []string
	seen := map[string]bool{}
	for _, mi := range members {
		rm := kmsg.LeaveGroupResponseMember{MemberID: mi.MemberID, InstanceID: mi.InstanceID}
		var m *member
		switch {
		case !ok:
			rm.ErrorCode = coordinator.ErrUnknownMemberID
		case mi.InstanceID == nil:
			if m = g.members[mi.MemberID]; m == nil {
				rm.ErrorCode = coordinator.ErrUnknownMemberID
			}
		default:
			m = g.members[g.static[*mi.InstanceID]]
			switch {
			case m == nil:
				rm.ErrorCode = coordinator.ErrUnknownMemberID
			case mi.MemberID != "" && m.id != mi.MemberID:
				rm.ErrorCode, m = coordinator.ErrFencedInstanceID, nil
			}
		}
		if m != nil && !seen[m.id] {
			seen[m.id] = true
			fenced = append(fenced, m.id)
		}
		resp.Members = append(resp.Members, rm)
	}
	if len(fenced) == 0 {
		return finish(LeaveGroupResult{})
	}
	recs, ferr := c.fence(g, soft, md, c.config(g.id), fenced, now)
	if ferr != nil {
		resp.ErrorCode, resp.Members = ferr.Code, nil
		return finish(LeaveGroupResult{Error: ferr})
	}
	return finish(LeaveGroupResult{Records: recs})
}
