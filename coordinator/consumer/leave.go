package consumer

import (
	"maps"
	"slices"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// leave is consumerGroupLeave: epoch -1 (leave) and -2 (static temporary leave).
func (c *Coordinator) leave(st groupstate.View, soft *Soft, md *coordinator.Metadata, cfg Config, req *Request, now int64) (Result, *coordinator.Error) {
	r := req.Heartbeat
	typ, ok := st.GroupType(r.Group)
	if !ok {
		return Result{}, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Group %s not found.", r.Group)
	}
	if typ != groupstate.GroupTypeConsumer {
		return Result{}, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Group %s is not a consumer group.", r.Group)
	}
	v, _ := st.ConsumerGroup(r.Group)
	g := groupFromView(&v)
	resp := req.newResponse()
	resp.Version = r.Version
	id := r.MemberID
	resp.MemberID, resp.MemberEpoch = &id, r.MemberEpoch
	var m *member
	if r.InstanceID == nil {
		if m = g.members[r.MemberID]; m == nil {
			return Result{}, coordinator.Errorf(coordinator.ErrUnknownMemberID, "Member %s is not a member of group %s.", r.MemberID, r.Group)
		}
	} else {
		inst := *r.InstanceID
		if mid := g.static[inst]; mid != "" {
			m = g.members[mid]
		}
		if m == nil {
			return Result{}, coordinator.Errorf(coordinator.ErrUnknownMemberID, "Instance id %s is unknown.", inst)
		}
		if m.id != r.MemberID {
			return Result{}, coordinator.Errorf(coordinator.ErrFencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", r.MemberID, inst, m.id)
		}
		if r.MemberEpoch == coordinator.StaticLeaveEpoch {
			// consumerGroupStaticMemberGroupLeave: the member keeps its partitions (nobody
			// else may take them) and its timers; their assignment epochs restart at 0.
			n := m.clone()
			n.epoch = coordinator.StaticLeaveEpoch
			n.pending = nil
			for _, pm := range n.assigned {
				for p := range pm {
					pm[p] = 0
				}
			}
			return Result{Response: resp, Records: []recordcodec.Record{currentAssignmentRecord(g.id, n)}}, nil
		}
	}
	recs, err := c.fence(g, soft, md, cfg, []string{m.id}, now)
	if err != nil {
		return Result{}, err
	}
	return Result{Response: resp, Records: recs}, nil
}

// fence is consumerGroupFenceMembers (ids distinct members of g): when only classic-protocol
// members remain (and the policy and group.max.size allow) the group goes back to a classic
// group (migration.go; its soft state goes, the classic coordinator keeps the classic
// members' timers); otherwise tombstones 8, 7, 5 per member, a tombstone 16 for each regex
// whose last user leaves, record 3 with the next epoch and the hash without them (always
// bumped), and for a group left empty record 6 at that epoch with timestamp 0, so that the
// next first join is not delayed. The members' timers are cancelled.
func (c *Coordinator) fence(g *group, soft *Soft, md *coordinator.Metadata, cfg Config, ids []string, now int64) ([]recordcodec.Record, *coordinator.Error) {
	gone := map[string]bool{}
	for _, id := range ids {
		gone[id] = true
	}
	if g.downgradeOnFence(cfg, gone) {
		recs, err := g.toClassicGroup(gone, nil, md, now)
		if err != nil {
			return nil, err
		}
		delete(soft.Groups, g.id)
		return recs, nil
	}
	var recs []recordcodec.Record
	for _, id := range ids {
		recs = append(recs, removeMemberRecords(g.id, id)...)
	}
	// maybeDeleteResolvedRegularExpressions: regexes no remaining member uses.
	users := map[string]int{}
	for _, m := range g.members {
		if m.regex != "" && !gone[m.id] {
			users[m.regex]++
		}
	}
	deleted := map[string]bool{}
	for _, id := range ids {
		if re := g.members[id].regex; re != "" && users[re] == 0 && !deleted[re] {
			deleted[re] = true
		}
	}
	for _, re := range slices.Sorted(maps.Keys(deleted)) {
		recs = append(recs, regexTombstone(g.id, re))
	}
	names := g.subscribedTopicNames(nil, nil, gone)
	hash := groupHash(names, md)
	epoch := g.epoch + 1
	recs = append(recs, groupMetadataRecord(g.id, epoch, hash))
	if len(g.members) == len(ids) {
		recs = append(recs, targetMetadataRecord(g.id, epoch, 0))
	}
	if gs := soft.Groups[g.id]; gs != nil {
		for _, id := range ids {
			delete(gs.Members, id)
		}
	}
	return recs, nil
}

// TimerResult is the outcome of one fired timer: its records form one atomic batch.
type TimerResult struct {
	Kind    coordinator.TimerKind
	Group   string
	Member  string
	Records []recordcodec.Record
}

// Tick fires the earliest timer due at now (deadline <= now), if any, and returns its
// records: a session timeout fences the member, a rebalance timeout fences it if its epoch is
// still the one the timer was armed with, and a classic-protocol member's join or sync
// timeout fences it. A fence may convert the group back to a classic group. Each timer is its
// own write, so the caller appends and applies the records before calling Tick again, until
// ok is false. Ties are broken by group id, kind and member id. A fence that fails (a
// downgrade whose subscription bytes cannot be read) writes nothing, as in Kafka.
func (c *Coordinator) Tick(st groupstate.View, soft *Soft, md *coordinator.Metadata, now int64) (TimerResult, bool) {
	best, ok := coordinator.EarliestDue(now, soft.Timers())
	if !ok {
		return TimerResult{}, false
	}
	gs := soft.Groups[best.Group]
	ms := gs.Members[best.Member]
	res := TimerResult{Kind: best.Kind, Group: best.Group, Member: best.Member}
	switch best.Kind {
	case coordinator.TimerSession:
		ms.SessionDeadline = 0
	case coordinator.TimerRebalance:
		ms.RebalanceDeadline = 0
	case coordinator.TimerJoin:
		ms.JoinDeadline = 0
	case coordinator.TimerSync:
		ms.SyncDeadline = 0
	}
	v, ok := st.ConsumerGroup(best.Group)
	if !ok {
		delete(gs.Members, best.Member)
		return res, true
	}
	g := groupFromView(&v)
	m := g.members[best.Member]
	if m == nil {
		delete(gs.Members, best.Member)
		return res, true
	}
	if best.Kind == coordinator.TimerRebalance && m.epoch != ms.RebalanceEpoch {
		return res, true
	}
	res.Records, _ = c.fence(g, soft, md, c.config(g.id), []string{m.id}, now)
	return res, true
}
