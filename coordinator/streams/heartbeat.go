package streams

import (
	"fmt"
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
			gs.model, gs.modelOffset = res.model, req.StateOffset
		} else {
			gs.model = nil
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

func blank(s *string) bool { return s != nil && strings.TrimSpace(*s) == "" }

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
	switch {
	case strings.TrimSpace(r.MemberID) == "":
		return coordinator.Errorf(coordinator.ErrInvalidRequest, "MemberId can't be empty.")
	case strings.TrimSpace(r.Group) == "":
		return coordinator.Errorf(coordinator.ErrInvalidRequest, "GroupId can't be empty.")
	case blank(r.InstanceID):
		return coordinator.Errorf(coordinator.ErrInvalidRequest, "InstanceId can't be empty.")
	case blank(r.RackID):
		return coordinator.Errorf(coordinator.ErrInvalidRequest, "RackId can't be empty.")
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

// loadGroup returns the group for a join (creating it, or replacing an empty classic group
// whose tombstone is then added to records) or for a regular heartbeat.
func loadGroup(st groupstate.View, id string, joining bool, records *[]recordcodec.Record) (*group, *coordinator.Error) {
	typ, exists := st.GroupType(id)
	switch {
	case !exists:
		if !joining {
			return nil, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Streams group %s not found.", id)
		}
		return newGroup(id), nil
	case typ == groupstate.GroupTypeStreams:
		v, _ := st.StreamsGroup(id)
		return groupFromView(&v), nil
	case joining && typ == groupstate.GroupTypeClassic:
		if cg, _ := st.ClassicGroup(id); len(cg.Members) == 0 {
			*records = append(*records, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.GroupMetadata, Group: id}})
			return newGroup(id), nil
		}
	}
	return nil, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Group %s is not a streams group.", id)
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

// regular is GroupMetadataManager.streamsGroupHeartbeat (member epoch >= 0).
func (c *Coordinator) regular(st groupstate.View, soft *Soft, md *coordinator.Metadata, req Request, cfg Config, now int64) (Result, *coordinator.Error) {
	r := req.Heartbeat
	var records []recordcodec.Record
	var statuses []Status
	joining := r.MemberEpoch == 0

	var g *group
	if gs := soft.Groups[r.Group]; gs != nil && gs.model != nil && req.StateOffset > 0 && gs.modelOffset == req.StateOffset {
		g = gs.model
	} else {
		var err *coordinator.Error
		if g, err = loadGroup(st, r.Group, joining, &records); err != nil {
			return Result{}, err
		}
	}
	existedBefore := g.exists
	wasEmpty := len(g.members) == 0
	if joining {
		_, known := g.members[r.MemberID]
		staticKnown := r.InstanceID != nil && g.static[*r.InstanceID] != ""
		if len(g.members) >= int(cfg.MaxSize) && !known && !staticKnown {
			return Result{}, coordinator.Errorf(coordinator.ErrGroupMaxSizeReached, "The streams group has reached its maximum capacity of %d members.", cfg.MaxSize)
		}
	}

	// Member.
	var m *member
	var replaced *member // the static member this one replaces
	if r.InstanceID == nil {
		if m = g.members[r.MemberID]; m == nil {
			if !joining {
				return Result{}, coordinator.Errorf(coordinator.ErrUnknownMemberID, "Member %s is not a member of group %s.", r.MemberID, r.Group)
			}
			m = newDefaultMember(r.MemberID)
		}
		if err := checkEpoch(m, r); err != nil {
			return Result{}, err
		}
	} else {
		inst := *r.InstanceID
		var old *member
		if id := g.static[inst]; id != "" {
			old = g.members[id]
		}
		if joining {
			if old == nil {
				if m = g.members[r.MemberID]; m == nil {
					m = newDefaultMember(r.MemberID)
				}
			} else {
				if old.epoch != -2 {
					return Result{}, coordinator.Errorf(coordinator.ErrUnreleasedInstanceID, "Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", r.MemberID, inst, old.id)
				}
				m = old.clone()
				m.id, m.epoch, m.prevEpoch = r.MemberID, 0, 0
				replaced = old
				records = append(records, removeMemberRecords(g.id, old.id)...)
				records = append(records, memberMetadataRecord(g.id, m), targetMemberRecord(g.id, m.id, g.target[old.id]), currentAssignmentRecord(g.id, m))
			}
		} else {
			if old == nil {
				return Result{}, coordinator.Errorf(coordinator.ErrUnknownMemberID, "Instance id %s is unknown.", inst)
			}
			if old.id != r.MemberID {
				return Result{}, coordinator.Errorf(coordinator.ErrFencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", r.MemberID, inst, old.id)
			}
			m = old
			if err := checkEpoch(m, r); err != nil {
				return Result{}, err
			}
		}
	}

	// 1. Member metadata.
	u := m.clone()
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
	u.clientID, u.clientHost = req.ClientID, req.ClientHost
	if r.ProcessID != nil {
		u.processID = *r.ProcessID
	}
	if r.ClientTags != nil {
		tags := map[string]string{}
		for _, t := range r.ClientTags {
			if _, dup := tags[t.Key]; dup {
				return Result{}, coordinator.Errorf(coordinator.ErrUnknownServerError, "") // Collectors.toMap throws
			}
			tags[t.Key] = t.Value
		}
		u.clientTags = u.clientTags[:0:0]
		for k, v := range tags {
			u.clientTags = append(u.clientTags, kv{k, v})
		}
		slices.SortFunc(u.clientTags, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	}
	if joining {
		u.endpoint = nil
	}
	if r.UserEndpoint != nil {
		u.endpoint = &groupstate.StreamsEndpoint{Host: r.UserEndpoint.Host, Port: r.UserEndpoint.Port}
	}
	recompute, refine := false, false
	if !sameMetadata(m, u) {
		records = append(records, memberMetadataRecord(g.id, u))
		recompute = r.InstanceID == nil || epochRelevantChange(m, u)
	}

	// 2. Topology.
	var topology *groupstate.StreamsTopology
	topologyChanged := false
	if r.Topology != nil {
		reqTopo := topologyFromRequest(r.Topology)
		switch {
		case g.topology == nil:
			records = append(records, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupTopology, Group: g.id}, Value: topologyRecordValue(r.Topology)})
			topology = reqTopo
		case cfg.TopologyUpdates:
			ge, re := g.topology.Epoch, r.Topology.Epoch
			switch {
			case re < ge:
				return Result{}, coordinator.Errorf(ErrStreamsTopologyFenced, "The topology epoch %d is older than the group's topology epoch %d.", re, ge)
			case re == ge && !sameTopology(g.topology, reqTopo):
				return Result{}, coordinator.Errorf(ErrStreamsInvalidTopoEpoch, "The topology differs from the group's topology at the same epoch %d.", re)
			case re > ge+1:
				return Result{}, coordinator.Errorf(ErrStreamsInvalidTopoEpoch, "The topology epoch %d is more than one ahead of the group's topology epoch %d.", re, ge)
			case re == ge+1:
				records = append(records, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupTopology, Group: g.id}, Value: topologyRecordValue(r.Topology)})
				topology, topologyChanged = reqTopo, true
			default:
				topology = g.topology
			}
		case g.topology.Epoch > r.Topology.Epoch:
			topology = g.topology
		case !sameTopology(g.topology, reqTopo):
			return Result{}, coordinator.Errorf(coordinator.ErrInvalidRequest, "Topology updates are not supported yet.")
		default:
			topology = g.topology
		}
	} else if g.topology != nil {
		topology = g.topology
	} else {
		return Result{}, coordinator.Errorf(coordinator.ErrUnknownServerError, "")
	}
	if g.topology != nil && u.topologyEpoch < g.topology.Epoch && !topologyChanged {
		statuses = append(statuses, Status{StatusStaleTopology, fmt.Sprintf("The member's topology epoch %d is behind the group's topology epoch %d.", u.topologyEpoch, g.topology.Epoch)})
	}

	// 3. Configured topology and metadata hash.
	gs := soft.Groups[g.id]
	var cached *configuredTopology
	if gs != nil && gs.configured != nil && gs.configuredEpoch == topology.Epoch && existedBefore {
		cached = gs.configured
	}
	var mdVersion int64
	if md != nil {
		mdVersion = md.Version
	}
	reconfigure := g.topology == nil || topologyChanged
	hash := g.metadataHash
	var ct *configuredTopology
	if reconfigure || cached == nil || gs.configuredVersion != mdVersion {
		hash = coordinator.GroupHash(topology.RequiredTopics(), md)
		if hash != g.metadataHash {
			recompute, reconfigure = true, true
		}
		if reconfigure || cached == nil {
			var cerr *coordinator.Error
			if ct, cerr = configure(topology, md); cerr != nil {
				return Result{}, cerr
			}
		} else {
			ct = cached
		}
	} else {
		ct = cached
	}

	validated := int32(-1)
	if ct.ready() {
		validated = topology.Epoch
		if err := checkOwnedTasks(ct, r.ActiveTasks, r.StandbyTasks, r.WarmupTasks); err != nil {
			return Result{}, err
		}
	}
	if err := checkTaskOffsets(r.TaskOffsets, r.TaskEndOffsets); err != nil {
		return Result{}, err
	}
	// From here on nothing fails except the assignor: soft state may change.
	gs = soft.group(g.id)
	gs.configured, gs.configuredVersion, gs.configuredEpoch = ct, mdVersion, topology.Epoch
	// A replacing static member starts without task offsets: Kafka keys them by member id and
	// drops the old id's offsets when its removal replays.
	ms := gs.member(u.id)
	if r.TaskOffsets != nil || r.TaskEndOffsets != nil {
		if r.TaskOffsets != nil {
			ms.TaskOffsets = offsetsMap(r.TaskOffsets)
		}
		if r.TaskEndOffsets != nil {
			ms.TaskEndOffsets = offsetsMap(r.TaskEndOffsets)
		}
	}
	if validated != g.validatedTopologyEpoch {
		recompute = true
	}
	currentCfgs := cfg.assignmentConfigs()
	if !recompute && !sameKVs(currentCfgs, g.lastAssignmentConfigs) {
		recompute = true
	}
	if !recompute && cfg.warmups() && g.state() == groupstate.StateStable && warmupCaughtUp(g, gs, cfg) {
		// KIP-1071: a caught-up warm-up bumps the group epoch so the assignor can promote it.
		refine = true
	}

	groupEpoch := g.epoch
	if recompute || refine {
		groupEpoch++
		records = append(records, groupMetadataRecord(g, groupEpoch, hash, validated, currentCfgs))
	}

	// Initial rebalance delay: armed by the first join of an empty group.
	if wasEmpty && cfg.InitialRebalanceDelayMs > 0 && gs.InitialDelayDeadline == 0 {
		gs.InitialDelayDeadline = now + int64(cfg.InitialRebalanceDelayMs)
	}
	if gs.InitialDelayDeadline != 0 && gs.InitialDelayDeadline <= now {
		// The timer is due but the caller has not run Tick: treat it as fired (the target is then
		// computed by this heartbeat rather than by the timer's own batch).
		gs.InitialDelayDeadline = 0
	}

	// 4. Target assignment, over the members as they will be after this heartbeat.
	if replaced != nil {
		delete(g.members, replaced.id)
		if t, ok := g.target[replaced.id]; ok {
			delete(g.target, replaced.id)
			g.target[u.id] = t
		}
	}
	g.members[u.id] = u
	if u.instanceID != nil {
		g.static[*u.instanceID] = u.id
	}
	targetEpoch, target, delayed, aerr := c.maybeUpdateTarget(g, gs, groupEpoch, ct, currentCfgs, cfg, now, &records)
	if aerr != nil {
		return Result{}, aerr
	}
	if delayed != nil {
		statuses = append(statuses, *delayed)
	}

	// 5. Reconcile.
	updated := u
	if !u.isReconciledTo(targetEpoch) {
		var owned *tuple
		if r.ActiveTasks != nil && r.StandbyTasks != nil && r.WarmupTasks != nil {
			owned = &tuple{active: fromRequestTasks(r.ActiveTasks), standby: fromRequestTasks(r.StandbyTasks), warmup: fromRequestTasks(r.WarmupTasks)}
		}
		rc := &reconciler{g: g, m: u, targetEpoch: targetEpoch, target: target[u.id], owned: owned}
		n, err := rc.build()
		if err != nil {
			return Result{}, err
		}
		if !sameAssignment(n, u) {
			records = append(records, currentAssignmentRecord(g.id, n))
			if n.state == stateUnrevokedTasks {
				ms.RebalanceDeadline, ms.RebalanceEpoch = now+int64(max(n.rebalanceTimeoutMs, 0)), n.epoch
			} else {
				ms.RebalanceDeadline = 0
			}
		}
		updated = n
	}
	ms.SessionDeadline = now + int64(cfg.SessionTimeoutMs)
	if r.ShutdownApplication && gs.ShutdownRequestedBy == "" {
		gs.ShutdownRequestedBy = u.id
	}
	if replaced != nil && replaced.id != u.id {
		// The old member's records are tombstoned; its timers would find nothing to fence.
		gs.removeMember(replaced.id)
	}

	// Response.
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = r.Version
	resp.MemberID, resp.MemberEpoch = updated.id, updated.epoch
	resp.HeartbeatIntervalMillis = cfg.HeartbeatIntervalMs
	resp.TaskOffsetIntervalMillis = cfg.TaskOffsetIntervalMs
	resp.AcceptableRecoveryLag = cfg.AcceptableRecoveryLag
	assignedChanged := !m.assigned.sameWithEpochs(updated.assigned)
	endpointChanged := !endpointEq(m.endpoint, updated.endpoint)
	if joining || assignedChanged {
		resp.ActiveTasks = toResponseTasks(updated.assigned.active)
		resp.StandbyTasks = toResponseTasks(updated.assigned.standby)
		resp.WarmupTasks = toResponseTasks(updated.assigned.warmup)
	}
	if endpointChanged || (assignedChanged && updated.endpoint != nil) {
		gs.EndpointInformationEpoch++
	}
	g.members[updated.id] = updated
	if gs.EndpointInformationEpoch != r.EndpointInformationEpoch {
		resp.PartitionsByUserEndpoint = endpointPartitions(g, ct)
	}
	if existedBefore {
		resp.EndpointInformationEpoch = gs.EndpointInformationEpoch
	}
	var toCreate []InternalTopic
	if ct.status != nil {
		toCreate = ct.toCreate
		statuses = append(statuses, *ct.status)
	}
	if gs.ShutdownRequestedBy != "" {
		statuses = append(statuses, Status{StatusShutdownApplication, fmt.Sprintf("Streams group member %s encountered a fatal error and requested a shutdown for the entire application.", gs.ShutdownRequestedBy)})
	}
	if r.Version >= 1 && len(cfg.RackAwareAssignmentTags) > 0 {
		var missing []string
		for _, tag := range cfg.RackAwareAssignmentTags {
			if !slices.ContainsFunc(updated.clientTags, func(x kv) bool { return x.k == tag }) {
				missing = append(missing, tag)
			}
		}
		if len(missing) > 0 {
			statuses = append(statuses, Status{StatusMissingClientTags, fmt.Sprintf("Missing required client tags for rack-aware standby assignment: [%s]. Configure them via 'client.tag.<tagKey>' in your Streams config.", strings.Join(missing, ", "))})
		}
	}
	resp.Status = make([]kmsg.StreamsGroupHeartbeatResponseStatus, len(statuses))
	for i, s := range statuses {
		resp.Status[i] = kmsg.StreamsGroupHeartbeatResponseStatus{StatusCode: s.Code, StatusDetail: s.Detail}
	}
	return Result{Response: resp, Records: records, InternalTopicsToCreate: toCreate, model: g}, nil
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
	ids := g.sortedMemberIDs()
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
	for _, id := range ids {
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

// endpointPartitions is buildEndpointToPartitions: one entry per member with an endpoint
// (sorted by member id), from its current tasks.
func endpointPartitions(g *group, ct *configuredTopology) []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint {
	out := []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint{}
	for _, id := range g.sortedMemberIDs() {
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
	for _, topic := range sortedKeys(byTopic) {
		ps := byTopic[topic]
		slices.Sort(ps)
		out = append(out, topicParts{topic, slices.Compact(ps)})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
