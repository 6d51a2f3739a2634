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
	if err := coordinator.CheckGroupType(st, r.Group, groupstate.GroupTypeConsumer); err != nil {
		return Result{}, err
	}
	g, _ := consumerGroupOf(st, r.Group)
	resp := req.newResponse()
	resp.Version = r.Version
	id := r.MemberID
	resp.MemberID, resp.MemberEpoch = &id, r.MemberEpoch
	m, err := coordinator.LookupMember(g.members, g.static, r.Group, r.MemberID, r.InstanceID, memberID)
	if err != nil {
		return Result{}, err
	}
	if r.InstanceID != nil && r.MemberEpoch == coordinator.StaticLeaveEpoch {
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
			gs.RemoveMember(id)
		}
	}
	return recs, nil
}

// TimerResult is the outcome of one fired timer: its records form one atomic batch.
type TimerResult = coordinator.TimerResult

// Tick fires the earliest timer due at now (deadline <= now), if any, and returns its
// records: a session timeout fences the member, a rebalance timeout fences it if its epoch is
// still the one the timer was armed with, and a classic-protocol member's join or sync
// timeout fences it. A fence may convert the group back to a classic group. Each timer is its
// own write, so the caller appends and applies the records before calling Tick again, until
// ok is false. Ties are broken by group id, kind and member id. A fence that fails (a
// downgrade whose subscription bytes cannot be read) writes nothing, as in Kafka, and its
// error is the result's Err.
func (c *Coordinator) Tick(st groupstate.View, soft *Soft, md *coordinator.Metadata, now int64) (TimerResult, bool) {
	t, ok := coordinator.EarliestDue(now, soft.Timers())
	if !ok {
		return TimerResult{}, false
	}
	res := TimerResult{Kind: t.Kind, Group: t.Group, Member: t.Member}
	g, ok := consumerGroupOf(st, t.Group)
	var m *member
	if ok {
		m = g.members[t.Member]
	}
	if soft.Groups[t.Group].FireMemberTimer(t, m != nil, func() int32 { return m.epoch }) {
		res.Records, res.Err = c.fence(g, soft, md, c.config(g.id), []string{m.id}, now)
	}
	return res, true
}
