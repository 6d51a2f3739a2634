package streams

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// leave is streamsGroupLeave: epoch -1 (leave) and -2 (static temporary leave).
func (c *Coordinator) leave(st groupstate.View, soft *Soft, r *kmsg.StreamsGroupHeartbeatRequest) (Result, *coordinator.Error) {
	if err := coordinator.CheckGroupType(st, r.Group, groupstate.GroupTypeStreams); err != nil {
		return Result{}, err
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
	m, err := coordinator.LookupMember(g.members, g.static, r.Group, r.MemberID, r.InstanceID, memberID)
	if err != nil {
		return Result{}, err
	}
	if r.InstanceID != nil && r.MemberEpoch == coordinator.StaticLeaveEpoch {
		// The member keeps its tasks (nobody else may take them) and its timers; active
		// assignment epochs restart at 0 for the member id that will rejoin.
		n := m.clone()
		n.epoch = coordinator.StaticLeaveEpoch
		n.pending = tuple{}
		for t := range n.assigned.active {
			n.assigned.active[t] = 0
		}
		return Result{Response: resp, Records: []recordcodec.Record{currentAssignmentRecord(g.id, n)}}, nil
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
		gs.RemoveMember(memberID)
		if len(g.members) == 1 {
			gs.ShutdownRequestedBy = ""
		}
	}
	return recs
}

// TimerResult is the outcome of one fired timer: its records form one atomic batch.
type TimerResult = coordinator.TimerResult

// Tick fires the earliest timer due at now (deadline <= now), if any, and returns its
// records: a session timeout fences the member, a rebalance timeout fences it if its epoch is
// still the one the timer was armed with, and the initial rebalance delay computes the
// delayed target assignment (an assignor that fails writes nothing: the result's Err). Each
// timer is its own write operation in Kafka, so the caller appends and applies the records
// before calling Tick again; it loops until ok is false. Ties are broken by group id, then
// kind, then member id, so runs are deterministic.
func (c *Coordinator) Tick(st groupstate.View, soft *Soft, md *coordinator.Metadata, now int64) (TimerResult, bool) {
	t, ok := coordinator.EarliestDue(now, soft.Timers())
	if !ok {
		return TimerResult{}, false
	}
	gs := soft.Groups[t.Group]
	res := TimerResult{Kind: t.Kind, Group: t.Group, Member: t.Member}
	g, ok := streamsGroupOf(st, t.Group)
	if t.Kind == coordinator.TimerInitialDelay {
		gs.InitialDelayDeadline = 0
		if !ok || len(g.members) == 0 || g.epoch <= g.assignmentEpoch || gs.configured == nil {
			return res, true
		}
		// computeDelayedTargetAssignment uses the stored assignment configs.
		_, _, _, err := c.maybeUpdateTarget(g, gs, g.epoch, gs.configured, g.lastAssignmentConfigs, c.config(g.id), now, &res.Records)
		if err != nil {
			res.Records, res.Err = nil, err
		}
		return res, true
	}
	var m *member
	if ok {
		m = g.members[t.Member]
	}
	if gs.FireMemberTimer(t, m != nil, func() int32 { return m.epoch }) {
		res.Records = fence(g, soft, m.id)
	}
	return res, true
}
