package streams

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// leave is streamsGroupLeave: epoch -1 (leave) and -2 (static temporary leave).
func (c *Coordinator) leave(st groupstate.View, soft *Soft, r *kmsg.StreamsGroupHeartbeatRequest) (Result, *coordinator.Error) {
	typ, ok := st.GroupType(r.Group)
	if !ok {
		return Result{}, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Group %s not found.", r.Group)
	}
	if typ != groupstate.GroupTypeStreams {
		return Result{}, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Group %s is not a streams group.", r.Group)
	}
	g, _ := streamsGroupOf(st, r.Group)
	if r.ShutdownApplication {
		if gs := soft.group(g.id); gs.ShutdownRequestedBy == "" {
			gs.ShutdownRequestedBy = r.MemberID
		}
	}
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = r.Version
	resp.MemberID, resp.MemberEpoch = r.MemberID, r.MemberEpoch
	resp.Status = []kmsg.StreamsGroupHeartbeatResponseStatus{}
	var m *member
	if r.InstanceID == nil {
		if m = g.members[r.MemberID]; m == nil {
			return Result{}, coordinator.Errorf(coordinator.ErrUnknownMemberID, "Member %s is not a member of group %s.", r.MemberID, r.Group)
		}
	} else {
		inst := *r.InstanceID
		if id := g.static[inst]; id != "" {
			m = g.members[id]
		}
		if m == nil {
			return Result{}, coordinator.Errorf(coordinator.ErrUnknownMemberID, "Instance id %s is unknown.", inst)
		}
		if m.id != r.MemberID {
			return Result{}, coordinator.Errorf(coordinator.ErrFencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", r.MemberID, inst, m.id)
		}
		if r.MemberEpoch == -2 {
			// The member keeps its tasks (nobody else may take them) and its timers; active
			// assignment epochs restart at 0 for the member id that will rejoin.
			n := m.clone()
			n.epoch = -2
			n.pending = tuple{}
			for t := range n.assigned.active {
				n.assigned.active[t] = 0
			}
			return Result{Response: resp, Records: []recordcodec.Record{currentAssignmentRecord(g.id, n)}}, nil
		}
	}
	return Result{Response: resp, Records: fence(g, soft, m.id)}, nil
}

// fence is streamsGroupFenceMember: tombstones 22, 21, 19, then record 17 with the epoch
// bumped and the stored hash, validated epoch and assignment configs; when the last member
// goes, record 20 at the new epoch with timestamp 0 so the next assignment is not delayed.
func fence(g *group, soft *Soft, memberID string) []recordcodec.Record {
	recs := removeMemberRecords(g.id, memberID)
	recs = append(recs, groupMetadataRecord(g, g.epoch+1, g.metadataHash, g.validatedTopologyEpoch, g.lastAssignmentConfigs))
	if len(g.members) == 1 {
		recs = append(recs, targetMetadataRecord(g.id, g.epoch+1, 0))
	}
	if gs := soft.Groups[g.id]; gs != nil {
		gs.removeMember(memberID)
		if len(g.members) == 1 {
			gs.ShutdownRequestedBy = ""
		}
	}
	return recs
}

// TimerResult is the outcome of one fired timer: its records form one atomic batch.
type TimerResult struct {
	Kind    coordinator.TimerKind
	Group   string
	Member  string
	Records []recordcodec.Record
}

// Tick fires the earliest timer due at now (deadline <= now), if any, and returns its
// records. Each timer is its own write operation in Kafka, so the caller appends and
// applies the records before calling Tick again; it loops until ok is false. Ties are broken
// by group id, then kind, then member id, so runs are deterministic.
func (c *Coordinator) Tick(st groupstate.View, soft *Soft, md *coordinator.Metadata, now int64) (TimerResult, bool) {
	best, ok := coordinator.EarliestDue(now, soft.timers())
	if !ok {
		return TimerResult{}, false
	}
	gs := soft.Groups[best.Group]
	res := TimerResult{Kind: best.Kind, Group: best.Group, Member: best.Member}
	g, ok := streamsGroupOf(st, best.Group)
	switch best.Kind {
	case coordinator.TimerInitialDelay:
		gs.InitialDelayDeadline = 0
		if !ok || len(g.members) == 0 || g.epoch <= g.assignmentEpoch || gs.configured == nil {
			return res, true
		}
		cfg := c.config(g.id)
		// computeDelayedTargetAssignment uses the stored assignment configs.
		_, _, _, err := c.maybeUpdateTarget(g, gs, g.epoch, gs.configured, g.lastAssignmentConfigs, cfg, now, &res.Records)
		if err != nil {
			res.Records = nil
		}
		return res, true
	case coordinator.TimerSession, coordinator.TimerRebalance:
		ms := gs.Members[best.Member]
		if best.Kind == coordinator.TimerSession {
			ms.SessionDeadline = 0
		} else {
			ms.RebalanceDeadline = 0
		}
		if !ok {
			gs.removeMember(best.Member)
			return res, true
		}
		m := g.members[best.Member]
		if m == nil {
			gs.removeMember(best.Member)
			return res, true
		}
		if best.Kind == coordinator.TimerRebalance && m.epoch != ms.RebalanceEpoch {
			return res, true
		}
		res.Records = fence(g, soft, m.id)
		return res, true
	}
	return res, true
}

// NextDeadline returns the earliest armed timer deadline (0 if none), for callers that sleep.
func (s *Soft) NextDeadline() int64 {
	var next int64
	for _, t := range s.timers() {
		if next == 0 || t.At < next {
			next = t.At
		}
	}
	return next
}

// timers lists every armed timer.
func (s *Soft) timers() []coordinator.Timer {
	var out []coordinator.Timer
	add := func(t coordinator.Timer) {
		if t.At != 0 {
			out = append(out, t)
		}
	}
	for gid, gs := range s.Groups {
		add(coordinator.Timer{At: gs.InitialDelayDeadline, Group: gid, Kind: coordinator.TimerInitialDelay})
		for mid, ms := range gs.Members {
			add(coordinator.Timer{At: ms.SessionDeadline, Group: gid, Kind: coordinator.TimerSession, Member: mid})
			add(coordinator.Timer{At: ms.RebalanceDeadline, Group: gid, Kind: coordinator.TimerRebalance, Member: mid})
		}
	}
	return out
}
