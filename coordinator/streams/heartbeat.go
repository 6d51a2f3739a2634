package streams

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Request is one StreamsGroupHeartbeat with what the broker adds from the connection.
type Request struct {
	Heartbeat  *kmsg.StreamsGroupHeartbeatRequest
	ClientID   string
	ClientHost string
	// StateOffset, when positive, is the log end offset the state reflects (for example
	// replay.Engine.NextOffset()). Replay is deterministic, so the offset identifies the
	// state: the coordinator then reuses the group model it built from the same offset
	// instead of copying the group view again (the no-change heartbeat path). Zero disables
	// the cache; a caller that changes the state without moving the offset must pass zero.
	StateOffset int64
}

// Result is a decision: the response and the records to append, in order, as one atomic
// batch (see Batches for the 1 MiB rule). Records is empty when the response is an error.
type Result struct {
	Response *kmsg.StreamsGroupHeartbeatResponse
	Records  []recordcodec.Record
	// InternalTopicsToCreate is what KafkaApis would ask the controller to create (sorted by
	// name) while the status is MISSING_INTERNAL_TOPICS.
	InternalTopicsToCreate []InternalTopic

	model *group // the group model a no-record decision left unchanged
}

// Coordinator decides for the streams groups of one __consumer_offsets partition. It holds
// no state of its own: the replayed state and the soft state are passed to every call.
type Coordinator struct {
	// Config returns the effective configuration of a group; nil means DefaultConfig.
	Config func(groupID string) Config
}

func (c *Coordinator) config(id string) Config {
	if c.Config == nil {
		return DefaultConfig()
	}
	cfg := c.Config(id)
	if cfg.Assignor == "" {
		cfg.Assignor = AssignorSticky
	}
	return cfg
}

// Heartbeat decides one StreamsGroupHeartbeat. st is read only; soft is updated (timers,
// endpoint epoch, shutdown flag, task offsets, configured-topology cache). now is the
// coordinator's clock in ms.
func (c *Coordinator) Heartbeat(st groupstate.View, soft *Soft, md *coordinator.Metadata, req Request, now int64) Result {
	hb := req.Heartbeat
	cfg := c.config(hb.Group)
	var res Result
	var err *coordinator.Error
	if err = validateRequest(hb, cfg); err == nil {
		if hb.MemberEpoch == -1 || hb.MemberEpoch == -2 {
			res, err = c.leave(st, soft, hb)
		} else {
			res, err = c.regular(st, soft, md, req, cfg, now)
		}
	}
	if gs := soft.Groups[hb.Group]; gs != nil {
		// A decision without records leaves the group as it was: keep the model for the next
		// heartbeat at the same offset. Anything else (records the caller may or may not
		// apply, or an error after a partial update of the model) drops it.
		if err == nil && len(res.Records) == 0 && res.model != nil && req.StateOffset > 0 {
			gs.KeepModel(res.model, req.StateOffset)
		} else {
			gs.DropModel()
		}
		res.model = nil
	}
	if err != nil {
		resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
		resp.Version = hb.Version
		resp.ErrorCode = err.Code
		if err.Message != "" {
			m := err.Message
			resp.ErrorMessage = &m
		}
		return Result{Response: resp}
	}
	return res
}

// validateRequest is the broker's request-only validation (KafkaApis and
// GroupCoordinatorService), in Kafka's order.
func validateRequest(r *kmsg.StreamsGroupHeartbeatRequest, cfg Config) *coordinator.Error {
	if r.Topology != nil {
		if err := checkTopologyNames(r.Topology); err != nil {
			return err
		}
		for _, s := range r.Topology.Subtopologies {
			if len(s.SourceTopicRegex) > 0 {
				return coordinator.Errorf(coordinator.ErrInvalidRequest, "Regular expressions for source topics are not supported yet.")
			}
		}
	}
	if strings.TrimSpace(r.MemberID) == "" {
		return coordinator.Errorf(coordinator.ErrInvalidRequest, "MemberId can't be empty.")
	}
	if err := coordinator.CheckIDs(r.Group, r.InstanceID, r.RackID); err != nil {
		return err
	}
	switch {
	case r.MemberEpoch == 0:
		if r.RebalanceTimeoutMillis == -1 {
			return coordinator.Errorf(coordinator.ErrInvalidRequest, "RebalanceTimeoutMs must be provided in first request.")
		}
		if r.ActiveTasks == nil || len(r.ActiveTasks) > 0 {
			return coordinator.Errorf(coordinator.ErrInvalidRequest, "ActiveTasks must be empty when (re-)joining.")
		}
		if r.StandbyTasks == nil || len(r.StandbyTasks) > 0 {
			return coordinator.Errorf(coordinator.ErrInvalidRequest, "StandbyTasks must be empty when (re-)joining.")
		}
		if r.WarmupTasks == nil || len(r.WarmupTasks) > 0 {
			return coordinator.Errorf(coordinator.ErrInvalidRequest, "WarmupTasks must be empty when (re-)joining.")
		}
		if r.Topology == nil {
			return coordinator.Errorf(coordinator.ErrInvalidRequest, "Topology must be non-null when (re-)joining.")
		}
		for _, s := range r.Topology.Subtopologies {
			for _, ti := range s.StateChangelogTopics {
				if ti.NumPartitions != 0 {
					return coordinator.Errorf(ErrStreamsInvalidTopology, "Changelog topic %s must have an undefined partition count, but it is set to %d.", ti.Topic, ti.NumPartitions)
				}
			}
		}
		if cfg.TopologyUpdates {
			if err := checkTopologyKIP(r.Topology); err != nil {
				return err
			}
		}
	case r.MemberEpoch == -2:
		if r.InstanceID == nil {
			return coordinator.Errorf(coordinator.ErrInvalidRequest, "InstanceId can't be null.")
		}
	case r.MemberEpoch < -2:
		return coordinator.Errorf(coordinator.ErrInvalidRequest, "MemberEpoch is %d, but must be greater than or equal to -2.", r.MemberEpoch)
	}
	if r.ActiveTasks != nil || r.StandbyTasks != nil || r.WarmupTasks != nil {
		if r.ActiveTasks == nil || r.StandbyTasks == nil || r.WarmupTasks == nil {
			return coordinator.Errorf(coordinator.ErrInvalidRequest, "If one task-type is non-null, all must be non-null.")
		}
	}
	if r.MemberEpoch != 0 && r.Topology != nil {
		return coordinator.Errorf(coordinator.ErrInvalidRequest, "Topology can only be provided when (re-)joining.")
	}
	if cfg.TopologyUpdates && r.ActiveTasks != nil {
		// KIP-1071: the three owned task sets must be disjoint (not enforced by Kafka 4.4).
		seen := map[TaskID]bool{}
		for _, l := range [][]kmsg.TaskIDs{r.ActiveTasks, r.StandbyTasks, r.WarmupTasks} {
			for t := range fromRequestTasks(l) {
				if seen[t] {
					return coordinator.Errorf(coordinator.ErrInvalidRequest, "Task %s-%d is reported in more than one role.", t.Subtopology, t.Partition)
				}
				seen[t] = true
			}
		}
	}
	return nil
}

// loadGroup is getOrMaybeCreateStreamsGroup: a join creates a missing group and replaces an
// empty classic group (whose tombstone is then added to records).
func loadGroup(st groupstate.View, id string, joining bool, records *[]recordcodec.Record) (*group, *coordinator.Error) {
	loaded, err := coordinator.LoadGroup(st, id, groupstate.GroupTypeStreams, joining, false, records)
	switch {
	case err != nil:
		return nil, err
	case loaded == coordinator.LoadStored:
		g, _ := streamsGroupOf(st, id)
		return g, nil
	}
	return newGroup(id), nil
}

// checkEpoch is throwIfStreamsGroupMemberEpochIsInvalid: an older epoch is accepted only as a
// lost response, when the request reports every task list and owns only assigned tasks.
func checkEpoch(m *member, r *kmsg.StreamsGroupHeartbeatRequest) *coordinator.Error {
	return coordinator.CheckMemberEpoch("streams", r.MemberEpoch, m.epoch, m.prevEpoch, func() bool {
		return r.ActiveTasks != nil && r.StandbyTasks != nil && r.WarmupTasks != nil &&
			subset(r.ActiveTasks, m.assigned.active) && subset(r.StandbyTasks, m.assigned.standby) && subset(r.WarmupTasks, m.assigned.warmup)
	})
}

func subset(owned []kmsg.TaskIDs, assigned taskMap) bool {
	for _, t := range owned {
		for _, p := range t.Partitions {
			if !assigned.has(TaskID{t.SubtopologyID, p}) {
				return false
			}
		}
	}
	return true
}

func checkOwnedTasks(ct *configuredTopology, lists ...[]kmsg.TaskIDs) *coordinator.Error {
	for _, l := range lists {
		for _, t := range l {
			st := ct.byID[t.SubtopologyID]
			if st == nil {
				return coordinator.Errorf(coordinator.ErrInvalidRequest, "Subtopology %s does not exist in the topology.", t.SubtopologyID)
			}
			for _, p := range t.Partitions {
				if p < 0 || p >= st.numTasks {
					return coordinator.Errorf(coordinator.ErrInvalidRequest, "Task %d for subtopology %s is invalid. Number of tasks for this subtopology: %d", p, t.SubtopologyID, st.numTasks)
				}
			}
		}
	}
	return nil
}

func checkTaskOffsets(lists ...[]kmsg.TaskOffset) *coordinator.Error {
	for _, l := range lists {
		seen := map[TaskID]bool{}
		for _, o := range l {
			t := TaskID{o.SubtopologyID, o.Partition}
			if seen[t] {
				return coordinator.Errorf(coordinator.ErrInvalidRequest, "Task offsets contain a duplicate entry for subtopology %s and partition %d.", o.SubtopologyID, o.Partition)
			}
			seen[t] = true
		}
	}
	return nil
}

func strp(s string) *string { return &s }

// heartbeat carries one regular heartbeat through the steps of regular: the request, then
// what each step decides for the steps after it, in the order the steps set it.
type heartbeat struct {
	req     Request
	r       *kmsg.StreamsGroupHeartbeatRequest
	soft    *Soft
	md      *coordinator.Metadata
	cfg     Config
	now     int64
	joining bool // member epoch 0

	// The decision so far: records to append and response statuses, in order.
	records  []recordcodec.Record
	statuses []Status

	// loadGroupCheckCapacity.
	g             *group
	existedBefore bool // the group was in the state (not created by this join)
	wasEmpty      bool

	// resolveMember and updateMemberMetadata.
	m        *member // the member as the request found it (or a new one)
	replaced *member // the static member m replaces, if any
	u        *member // m with the request's metadata

	// Why the group epoch is bumped: recompute (member, hash, validated epoch, assignment
	// configs) or refine (a caught-up warm-up, KIP-1071).
	recompute, refine bool

	// updateTopology, configureTopology, validateTasks.
	topology        *groupstate.StreamsTopology // the group's topology after this heartbeat
	topologyChanged bool                        // replaced by a KIP topology update
	ct              *configuredTopology
	mdVersion       int64
	hash            int64 // the metadata hash record 17 carries
	validated       int32 // the validated topology epoch (-1: not ready)

	// updateSoftState and after.
	gs          *GroupSoft
	ms          *MemberSoft
	currentCfgs []kv
	groupEpoch  int32
	targetEpoch int32
	target      map[string]tuple
	updated     *member // u reconciled toward its target
}

// regular is GroupMetadataManager.streamsGroupHeartbeat (member epoch >= 0), step by step in
// Kafka's order. A step that fails ends the decision with its error: the records prepared so
// far are dropped (Kafka aborts the whole write operation).
func (c *Coordinator) regular(st groupstate.View, soft *Soft, md *coordinator.Metadata, req Request, cfg Config, now int64) (Result, *coordinator.Error) {
	h := &heartbeat{req: req, r: req.Heartbeat, soft: soft, md: md, cfg: cfg, now: now, joining: req.Heartbeat.MemberEpoch == 0}
	if err := h.loadGroupCheckCapacity(st); err != nil {
		return Result{}, err
	}
	if err := h.resolveMember(); err != nil {
		return Result{}, err
	}
	// 1. Member metadata.
	if err := h.updateMemberMetadata(); err != nil {
		return Result{}, err
	}
	// 2. Topology.
	if err := h.updateTopology(); err != nil {
		return Result{}, err
	}
	h.setTopologyStaleStatus()
	// 3. Configured topology and metadata hash; 3b. owned tasks against it.
	if err := h.configureTopology(); err != nil {
		return Result{}, err
	}
	if err := h.validateTasks(); err != nil {
		return Result{}, err
	}
	// From here on nothing fails except the assignor: soft state may change.
	h.updateSoftState()
	h.bumpGroupEpoch()
	h.initialRebalanceDelay()
	// 4. Target assignment.
	if err := h.updateTarget(c); err != nil {
		return Result{}, err
	}
	// 5. Reconcile.
	if err := h.reconcile(); err != nil {
		return Result{}, err
	}
	h.scheduleTimers()
	return h.response(), nil
}

// loadGroupCheckCapacity gets the group (the model cached for the same state offset, else
// loadGroup) and, for a join, is throwIfStreamsGroupIsFull: a member already in the group, by
// member id or instance id, may rejoin a full group.
func (h *heartbeat) loadGroupCheckCapacity(st groupstate.View) *coordinator.Error {
	r := h.r
	if gs := h.soft.Groups[r.Group]; gs != nil {
		h.g, _ = gs.CachedModel(h.req.StateOffset).(*group)
	}
	if h.g == nil {
		g, err := loadGroup(st, r.Group, h.joining, &h.records)
		if err != nil {
			return err
		}
		h.g = g
	}
	g := h.g
	h.existedBefore = g.exists
	h.wasEmpty = len(g.members) == 0
	if h.joining {
		_, known := g.members[r.MemberID]
		staticKnown := r.InstanceID != nil && g.static[*r.InstanceID] != ""
		if len(g.members) >= int(h.cfg.MaxSize) && !known && !staticKnown {
			return coordinator.Errorf(coordinator.ErrGroupMaxSizeReached, "The streams group has reached its maximum capacity of %d members.", h.cfg.MaxSize)
		}
	}
	return nil
}

// resolveMember finds or creates the member the heartbeat is from and checks its epoch.
func (h *heartbeat) resolveMember() *coordinator.Error {
	switch {
	case h.r.InstanceID == nil:
		return h.dynamicMember()
	case h.joining:
		return h.staticJoin()
	default:
		return h.staticMember()
	}
}

// dynamicMember is getOrMaybeCreateDynamicStreamsGroupMember: a known member id, or a new
// member when joining; then the epoch check.
func (h *heartbeat) dynamicMember() *coordinator.Error {
	r := h.r
	if h.m = h.g.members[r.MemberID]; h.m == nil {
		if !h.joining {
			_, err := coordinator.KnownMember(h.g.members, r.Group, r.MemberID)
			return err
		}
		h.m = newDefaultMember(r.MemberID)
	}
	return checkEpoch(h.m, r)
}

// staticJoin is a static member joining (epoch 0): with an instance id nobody holds it is the
// member of its member id, or a new one; an instance id held by a member parked at epoch -2
// (a temporary leave) is taken over (staticReplacement); held by an active member, it is
// UNRELEASED_INSTANCE_ID.
func (h *heartbeat) staticJoin() *coordinator.Error {
	r := h.r
	old, held := coordinator.StaticOwner(h.g.members, h.g.static, *r.InstanceID)
	if !held {
		if h.m = h.g.members[r.MemberID]; h.m == nil {
			h.m = newDefaultMember(r.MemberID)
		}
		return nil
	}
	if old.epoch != coordinator.StaticLeaveEpoch {
		return coordinator.UnreleasedInstance(r.MemberID, *r.InstanceID, old.id)
	}
	h.staticReplacement(old)
	return nil
}

// staticReplacement: the joining member id replaces old at epoch 0, keeping its metadata and
// assignment; old's records are tombstoned (22, 21, 19) and the new id's written (19, 21, 22).
func (h *heartbeat) staticReplacement(old *member) {
	g := h.g
	m := old.clone()
	m.id, m.epoch, m.prevEpoch = h.r.MemberID, 0, 0
	h.m, h.replaced = m, old
	h.records = append(h.records, removeMemberRecords(g.id, old.id)...)
	h.records = append(h.records, memberMetadataRecord(g.id, m), targetMemberRecord(g.id, m.id, g.target[old.id]), currentAssignmentRecord(g.id, m))
}

// staticMember is a regular heartbeat of a static member: its instance id must be known
// (UNKNOWN_MEMBER_ID) and held by its member id (FENCED_INSTANCE_ID); then the epoch check.
func (h *heartbeat) staticMember() *coordinator.Error {
	m, err := coordinator.KnownStaticMember(h.g.members, h.g.static, h.r.MemberID, *h.r.InstanceID, memberID)
	if err != nil {
		return err
	}
	h.m = m
	return checkEpoch(h.m, h.r)
}

// updateMemberMetadata is step 1 (StreamsGroupMember.Builder, then
// hasStreamsMemberMetadataChanged): the member with the request's metadata, and record 19
// when it changed; that bumps the group epoch for a dynamic member, and for a static one only
// when the change is epoch relevant.
func (h *heartbeat) updateMemberMetadata() *coordinator.Error {
	r := h.r
	u := h.m.clone()
	if r.InstanceID != nil {
		u.instanceID = strp(*r.InstanceID)
	}
	if r.RackID != nil {
		u.rackID = strp(*r.RackID)
	}
	if r.RebalanceTimeoutMillis != -1 {
		u.rebalanceTimeoutMs = r.RebalanceTimeoutMillis
	}
	if r.Topology != nil {
		u.topologyEpoch = r.Topology.Epoch
	}
	u.clientID, u.clientHost = h.req.ClientID, h.req.ClientHost
	if r.ProcessID != nil {
		u.processID = *r.ProcessID
	}
	if r.ClientTags != nil {
		if err := setClientTags(u, r.ClientTags); err != nil {
			return err
		}
	}
	if h.joining {
		u.endpoint = nil
	}
	if r.UserEndpoint != nil {
		u.endpoint = &groupstate.StreamsEndpoint{Host: r.UserEndpoint.Host, Port: r.UserEndpoint.Port}
	}
	h.u = u
	if !sameMetadata(h.m, u) {
		h.records = append(h.records, memberMetadataRecord(h.g.id, u))
		h.recompute = r.InstanceID == nil || epochRelevantChange(h.m, u)
	}
	return nil
}

// setClientTags replaces u's client tags with the request's, sorted by key.
func setClientTags(u *member, in []kmsg.StreamsGroupHeartbeatRequestClientTag) *coordinator.Error {
	tags := map[string]string{}
	for _, t := range in {
		if _, dup := tags[t.Key]; dup {
			return coordinator.Errorf(coordinator.ErrUnknownServerError, "") // Collectors.toMap throws
		}
		tags[t.Key] = t.Value
	}
	u.clientTags = u.clientTags[:0:0]
	for k, v := range tags {
		u.clientTags = append(u.clientTags, kv{k, v})
	}
	slices.SortFunc(u.clientTags, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	return nil
}

// updateTopology is step 2, maybeUpdateTopology: a join initializes the group's topology
// (record 23) or must bring the group's (or, in Kafka 4.4, an older one); a heartbeat without
// topology keeps the group's. With Config.TopologyUpdates a join may also replace it
// (updateTopologyKIP).
func (h *heartbeat) updateTopology() *coordinator.Error {
	r, g := h.r, h.g
	if r.Topology == nil {
		if g.topology == nil {
			return coordinator.Errorf(coordinator.ErrUnknownServerError, "")
		}
		h.topology = g.topology
		return nil
	}
	reqTopo := topologyFromRequest(r.Topology)
	switch {
	case g.topology == nil:
		h.writeTopology()
		h.topology = reqTopo
	case h.cfg.TopologyUpdates:
		return h.updateTopologyKIP(reqTopo)
	case g.topology.Epoch > r.Topology.Epoch:
		h.topology = g.topology
	case !sameTopology(g.topology, reqTopo):
		return coordinator.Errorf(coordinator.ErrInvalidRequest, "Topology updates are not supported yet.")
	default:
		h.topology = g.topology
	}
	return nil
}

// updateTopologyKIP is step 2 with topology epochs as KIP-1071 describes them: an older epoch
// is fenced, the same epoch must bring the same topology, and the next epoch replaces the
// topology (record 23; the group epoch is bumped by the new validated topology epoch).
func (h *heartbeat) updateTopologyKIP(reqTopo *groupstate.StreamsTopology) *coordinator.Error {
	ge, re := h.g.topology.Epoch, h.r.Topology.Epoch
	switch {
	case re < ge:
		return coordinator.Errorf(ErrStreamsTopologyFenced, "The topology epoch %d is older than the group's topology epoch %d.", re, ge)
	case re == ge && !sameTopology(h.g.topology, reqTopo):
		return coordinator.Errorf(ErrStreamsInvalidTopoEpoch, "The topology differs from the group's topology at the same epoch %d.", re)
	case re > ge+1:
		return coordinator.Errorf(ErrStreamsInvalidTopoEpoch, "The topology epoch %d is more than one ahead of the group's topology epoch %d.", re, ge)
	case re == ge+1:
		h.writeTopology()
		h.topology, h.topologyChanged = reqTopo, true
	default:
		h.topology = h.g.topology
	}
	return nil
}

// writeTopology appends record 23 with the request's topology.
func (h *heartbeat) writeTopology() {
	h.records = append(h.records, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupTopology, Group: h.g.id}, Value: topologyRecordValue(h.r.Topology)})
}

// setTopologyStaleStatus is maybeSetTopologyStaleStatus: STALE_TOPOLOGY when the member's
// topology epoch is behind the group's (not for the join that just replaced it).
func (h *heartbeat) setTopologyStaleStatus() {
	g := h.g
	if g.topology != nil && h.u.topologyEpoch < g.topology.Epoch && !h.topologyChanged {
		h.statuses = append(h.statuses, Status{StatusStaleTopology, fmt.Sprintf("The member's topology epoch %d is behind the group's topology epoch %d.", h.u.topologyEpoch, g.topology.Epoch)})
	}
}

// configureTopology is step 3: the configured topology (configure, which is
// InternalTopicManager.configureTopics) and the metadata hash. Both are recomputed for a new
// or replaced topology and when the metadata version moved; the configured topology is
// cached in Soft per topology epoch and metadata version. A new hash bumps the group epoch.
func (h *heartbeat) configureTopology() *coordinator.Error {
	g := h.g
	gs := h.soft.Groups[g.id]
	var cached *configuredTopology
	if gs != nil && gs.configured != nil && gs.configuredEpoch == h.topology.Epoch && h.existedBefore {
		cached = gs.configured
	}
	if h.md != nil {
		h.mdVersion = h.md.Version
	}
	reconfigure := g.topology == nil || h.topologyChanged
	h.hash = g.metadataHash
	if !reconfigure && cached != nil && gs.configuredVersion == h.mdVersion {
		h.ct = cached
		return nil
	}
	h.hash = coordinator.GroupHash(h.topology.RequiredTopics(), h.md)
	if h.hash != g.metadataHash {
		h.recompute, reconfigure = true, true
	}
	if !reconfigure && cached != nil {
		h.ct = cached
		return nil
	}
	ct, err := configure(h.topology, h.md)
	if err != nil {
		return err
	}
	h.ct = ct
	return nil
}

// validateTasks is step 3b: a ready topology is validated at its epoch, and the owned tasks
// must exist in it (throwIfRequestContainsInvalidTasks); task offsets name each task once.
func (h *heartbeat) validateTasks() *coordinator.Error {
	r := h.r
	h.validated = -1
	if h.ct.ready() {
		h.validated = h.topology.Epoch
		if err := checkOwnedTasks(h.ct, r.ActiveTasks, r.StandbyTasks, r.WarmupTasks); err != nil {
			return err
		}
	}
	return checkTaskOffsets(r.TaskOffsets, r.TaskEndOffsets)
}

// updateSoftState keeps the configured topology and the member's reported task offsets.
func (h *heartbeat) updateSoftState() {
	r := h.r
	h.gs = h.soft.group(h.g.id)
	h.gs.configured, h.gs.configuredVersion, h.gs.configuredEpoch = h.ct, h.mdVersion, h.topology.Epoch
	// A replacing static member starts without task offsets: Kafka keys them by member id and
	// drops the old id's offsets when its removal replays.
	h.ms = h.gs.Member(h.u.id)
	if r.TaskOffsets != nil {
		h.ms.TaskOffsets = offsetsMap(r.TaskOffsets)
	}
	if r.TaskEndOffsets != nil {
		h.ms.TaskEndOffsets = offsetsMap(r.TaskEndOffsets)
	}
}

// bumpGroupEpoch bumps the group epoch (record 17) for a changed member or metadata hash, a
// newly validated topology epoch or changed assignment configurations, and (KIP-1071) for a
// caught-up warm-up.
func (h *heartbeat) bumpGroupEpoch() {
	g := h.g
	if h.validated != g.validatedTopologyEpoch {
		h.recompute = true
	}
	h.currentCfgs = h.cfg.assignmentConfigs()
	if !h.recompute && !sameKVs(h.currentCfgs, g.lastAssignmentConfigs) {
		h.recompute = true
	}
	if !h.recompute && h.cfg.warmups() && g.state() == groupstate.StateStable && warmupCaughtUp(g, h.gs, h.cfg) {
		// KIP-1071: a caught-up warm-up bumps the group epoch so the assignor can promote it.
		h.refine = true
	}
	h.groupEpoch = g.epoch
	if h.recompute || h.refine {
		h.groupEpoch++
		h.records = append(h.records, groupMetadataRecord(g, h.groupEpoch, h.hash, h.validated, h.currentCfgs))
	}
}

// initialRebalanceDelay arms the initial rebalance delay on the first join of an empty group.
func (h *heartbeat) initialRebalanceDelay() {
	gs := h.gs
	if h.wasEmpty && h.cfg.InitialRebalanceDelayMs > 0 && gs.InitialDelayDeadline == 0 {
		gs.InitialDelayDeadline = h.now + int64(h.cfg.InitialRebalanceDelayMs)
	}
	if gs.InitialDelayDeadline != 0 && gs.InitialDelayDeadline <= h.now {
		// The timer is due but the caller has not run Tick: treat it as fired (the target is then
		// computed by this heartbeat rather than by the timer's own batch).
		gs.InitialDelayDeadline = 0
	}
}

// updateTarget is step 4: the target assignment (maybeUpdateTarget), over the members as they
// will be after this heartbeat; a static replacement takes over the old member id's target.
func (h *heartbeat) updateTarget(c *Coordinator) *coordinator.Error {
	g, u := h.g, h.u
	if h.replaced != nil {
		delete(g.members, h.replaced.id)
		if t, ok := g.target[h.replaced.id]; ok {
			delete(g.target, h.replaced.id)
			g.target[u.id] = t
		}
	}
	g.members[u.id] = u
	if u.instanceID != nil {
		g.static[*u.instanceID] = u.id
	}
	targetEpoch, target, delayed, err := c.maybeUpdateTarget(g, h.gs, h.groupEpoch, h.ct, h.currentCfgs, h.cfg, h.now, &h.records)
	if err != nil {
		return err
	}
	h.targetEpoch, h.target = targetEpoch, target
	if delayed != nil {
		h.statuses = append(h.statuses, *delayed)
	}
	return nil
}

// reconcile is step 5, maybeReconcile: a member not reconciled to the target epoch moves
// toward its target from the tasks it reports owning (record 22 when its assignment changes);
// left in UNREVOKED_TASKS it gets a rebalance timer, otherwise its rebalance timer is cleared.
func (h *heartbeat) reconcile() *coordinator.Error {
	r, u := h.r, h.u
	h.updated = u
	if u.isReconciledTo(h.targetEpoch) {
		return nil
	}
	var owned *tuple
	if r.ActiveTasks != nil && r.StandbyTasks != nil && r.WarmupTasks != nil {
		owned = &tuple{active: fromRequestTasks(r.ActiveTasks), standby: fromRequestTasks(r.StandbyTasks), warmup: fromRequestTasks(r.WarmupTasks)}
	}
	rc := &reconciler{g: h.g, m: u, targetEpoch: h.targetEpoch, target: h.target[u.id], owned: owned}
	n, err := rc.build()
	if err != nil {
		return err
	}
	if !sameAssignment(n, u) {
		h.records = append(h.records, currentAssignmentRecord(h.g.id, n))
		if n.state == stateUnrevokedTasks {
			h.ms.ArmRebalance(h.now, n.rebalanceTimeoutMs, n.epoch)
		} else {
			h.ms.RebalanceDeadline = 0
		}
	}
	h.updated = n
	return nil
}

// scheduleTimers is scheduleStreamsGroupSessionTimeout and the shutdown request; a replaced
// static member's timers go.
func (h *heartbeat) scheduleTimers() {
	h.ms.ArmSession(h.now, h.cfg.SessionTimeoutMs)
	if h.r.ShutdownApplication && h.gs.ShutdownRequestedBy == "" {
		h.gs.ShutdownRequestedBy = h.u.id
	}
	if h.replaced != nil && h.replaced.id != h.u.id {
		// The old member's records are tombstoned; its timers would find nothing to fence.
		h.gs.RemoveMember(h.replaced.id)
	}
}

// response is the heartbeat's answer: the assignment only on a join or when it changed, the
// endpoint information when the member's endpoint-information epoch is not the group's, and
// the statuses.
func (h *heartbeat) response() Result {
	r, g, gs, cfg, updated := h.r, h.g, h.gs, h.cfg, h.updated
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = r.Version
	resp.MemberID, resp.MemberEpoch = updated.id, updated.epoch
	resp.HeartbeatIntervalMillis = cfg.HeartbeatIntervalMs
	resp.TaskOffsetIntervalMillis = cfg.TaskOffsetIntervalMs
	resp.AcceptableRecoveryLag = cfg.AcceptableRecoveryLag
	assignedChanged := !h.m.assigned.sameWithEpochs(updated.assigned)
	endpointChanged := !endpointEq(h.m.endpoint, updated.endpoint)
	if h.joining || assignedChanged {
		resp.ActiveTasks = toResponseTasks(updated.assigned.active)
		resp.StandbyTasks = toResponseTasks(updated.assigned.standby)
		resp.WarmupTasks = toResponseTasks(updated.assigned.warmup)
	}
	if endpointChanged || (assignedChanged && updated.endpoint != nil) {
		gs.EndpointInformationEpoch++
	}
	g.members[updated.id] = updated
	if gs.EndpointInformationEpoch != r.EndpointInformationEpoch {
		resp.PartitionsByUserEndpoint = endpointPartitions(g, h.ct, updated.id)
	}
	if h.existedBefore {
		resp.EndpointInformationEpoch = gs.EndpointInformationEpoch
	}
	toCreate := h.addResponseStatuses()
	resp.Status = make([]kmsg.StreamsGroupHeartbeatResponseStatus, len(h.statuses))
	for i, s := range h.statuses {
		resp.Status[i] = kmsg.StreamsGroupHeartbeatResponseStatus{StatusCode: s.Code, StatusDetail: s.Detail}
	}
	return Result{Response: resp, Records: h.records, InternalTopicsToCreate: toCreate, model: g}
}

// addResponseStatuses appends the statuses that close the response: the configured
// topology's (with the internal topics to create, which it returns), the shutdown request and
// the client tags missing for rack-aware assignment (version 1).
func (h *heartbeat) addResponseStatuses() []InternalTopic {
	var toCreate []InternalTopic
	if h.ct.status != nil {
		toCreate = h.ct.toCreate
		h.statuses = append(h.statuses, *h.ct.status)
	}
	if h.gs.ShutdownRequestedBy != "" {
		h.statuses = append(h.statuses, Status{StatusShutdownApplication, fmt.Sprintf("Streams group member %s encountered a fatal error and requested a shutdown for the entire application.", h.gs.ShutdownRequestedBy)})
	}
	if h.r.Version >= 1 && len(h.cfg.RackAwareAssignmentTags) > 0 {
		var missing []string
		for _, tag := range h.cfg.RackAwareAssignmentTags {
			if !slices.ContainsFunc(h.updated.clientTags, func(x kv) bool { return x.k == tag }) {
				missing = append(missing, tag)
			}
		}
		if len(missing) > 0 {
			h.statuses = append(h.statuses, Status{StatusMissingClientTags, fmt.Sprintf("Missing required client tags for rack-aware standby assignment: [%s]. Configure them via 'client.tag.<tagKey>' in your Streams config.", strings.Join(missing, ", "))})
		}
	}
	return toCreate
}

func offsetsMap(in []kmsg.TaskOffset) map[TaskID]int64 {
	m := make(map[TaskID]int64, len(in))
	for _, o := range in {
		m[TaskID{o.SubtopologyID, o.Partition}] = o.Offset
	}
	return m
}

// maybeUpdateTarget is maybeUpdateStreamsTargetAssignment: it returns the epoch and target
// the member reconciles toward, appending records 21 and 20 when it computes a new target.
// Kafka's TargetAssignmentBuilder puts the members into a HashMap in the order its
// UpdatedMembersAndTargetAssignmentView yields them (kafkaOrder), gives that map to the
// assignor and writes records 21 in its iteration order.
func (c *Coordinator) maybeUpdateTarget(g *group, gs *GroupSoft, groupEpoch int32, ct *configuredTopology, cfgs []kv, cfg Config, now int64, records *[]recordcodec.Record) (int32, map[string]tuple, *Status, *coordinator.Error) {
	if gs.InitialDelayDeadline != 0 {
		return g.assignmentEpoch, map[string]tuple{}, &Status{StatusAssignmentDelayed, "Assignment delayed due to the configured initial rebalance delay."}, nil
	}
	if g.assignmentEpoch >= groupEpoch {
		return g.assignmentEpoch, g.target, nil, nil
	}
	if !coordinator.AssignmentIntervalElapsed(g.assignmentTimestamp, cfg.AssignmentIntervalMs, now) {
		return g.assignmentEpoch, g.target, &Status{StatusAssignmentDelayed, "Assignment delayed due to the configured assignment interval."}, nil
	}
	ids := g.kafkaOrder()
	var next map[string]tuple
	if ct.ready() {
		in := make([]assignMember, len(ids))
		for i, id := range ids {
			m := g.members[id]
			in[i] = assignMember{id: id, processID: m.processID, active: m.assigned.active, standby: m.assigned.standby}
			if ms := gs.Members[id]; ms != nil {
				in[i].offsets = ms.TaskOffsets
			}
		}
		numStandby := 0
		if v := kvGet(cfgs, configNumStandbyReplicas); v != "" {
			fmt.Sscan(v, &numStandby)
		}
		var err error
		if next, err = stickyAssign(in, ct.subtopologies, numStandby); err != nil {
			return 0, nil, nil, coordinator.Errorf(coordinator.ErrUnknownServerError, "")
		}
		if cfg.warmups() {
			applyWarmups(g, gs, ct, cfg, next)
		}
	} else {
		next = make(map[string]tuple, len(ids))
	}
	for _, id := range coordinator.JavaHashOrder(ids, coordinator.JavaStringHash, coordinator.JavaMapCapacityDefault(len(ids))) {
		nt := normalize(next[id])
		next[id] = nt
		if old, ok := g.target[id]; !ok || !old.sameTasks(nt) {
			*records = append(*records, targetMemberRecord(g.id, id, nt))
		}
	}
	*records = append(*records, targetMetadataRecord(g.id, groupEpoch, now))
	return groupEpoch, next, nil, nil
}

func kvGet(s []kv, k string) string {
	for _, x := range s {
		if x.k == k {
			return x.v
		}
	}
	return ""
}

// endpointPartitions is buildEndpointToPartitions: one entry per member with an endpoint, from
// its current tasks, in the order of Kafka's map of the members, the member updated last.
func endpointPartitions(g *group, ct *configuredTopology, updated string) []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint {
	out := []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint{}
	ids := g.kafkaOrder()
	if i := slices.Index(ids, updated); i >= 0 {
		ids = append(slices.Delete(ids, i, i+1), updated)
	}
	for _, id := range ids {
		m := g.members[id]
		if m.endpoint == nil {
			continue
		}
		e := kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint{UserEndpoint: kmsg.Endpoint{Host: m.endpoint.Host, Port: m.endpoint.Port}}
		act := topicPartitions(ct, m.assigned.active, nil)
		for _, tp := range act {
			e.ActivePartitions = append(e.ActivePartitions, kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition{Topic: tp.topic, Partitions: tp.parts})
		}
		for _, tp := range topicPartitions(ct, m.assigned.standby, m.assigned.warmup) {
			e.StandbyPartitions = append(e.StandbyPartitions, kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition{Topic: tp.topic, Partitions: tp.parts})
		}
		out = append(out, e)
	}
	return out
}

type topicParts struct {
	topic string
	parts []int32
}

func topicPartitions(ct *configuredTopology, a, b taskMap) []topicParts {
	if ct == nil || ct.byID == nil {
		return nil
	}
	byTopic := map[string][]int32{}
	for _, tm := range []taskMap{a, b} {
		for t := range tm {
			st := ct.byID[t.Subtopology]
			if st == nil {
				continue
			}
			for _, topics := range [][]string{st.sourceTopics, st.repartitionSources} {
				for _, topic := range topics {
					if t.Partition < ct.partitions[topic] {
						byTopic[topic] = append(byTopic[topic], t.Partition)
					}
				}
			}
		}
	}
	var out []topicParts
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		ps := byTopic[topic]
		slices.Sort(ps)
		out = append(out, topicParts{topic, slices.Compact(ps)})
	}
	return out
}
