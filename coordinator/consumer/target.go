package consumer

import (
	"slices"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/recordcodec"
)

// computeTarget is maybeUpdateTargetAssignment: the epoch and target the member reconciles
// toward. The stored target stands when the assignment epoch has caught up with groupEpoch or
// the assignment interval has not elapsed (no timer: a later heartbeat computes it).
// Otherwise the preferred assignor runs over the members as they will be after this
// heartbeat (u replacing old, or the static member it replaces, whose target it inherits),
// and record 7 is written for every member whose target changed, then record 6 (epoch, now).
// The members are taken in the order Kafka's UpdatedMembersAndTargetAssignmentView yields
// them (an OverlayMap over the group's map of members): the group's members in the order its
// map iterates them, u in old's place, the member u replaces left out, and u last when it is
// new.
func (c *Coordinator) computeTarget(g *group, groupEpoch int32, old, u, replaced *member, homogeneous bool, md *coordinator.Metadata, cfg Config, now int64) (int32, []TopicPartitions, []recordcodec.Record, *coordinator.Error) {
	lastTarget := func() []TopicPartitions {
		if t, ok := g.target[u.id]; ok {
			return t
		}
		if replaced != nil {
			return g.target[replaced.id]
		}
		return nil
	}
	if g.assignmentEpoch >= groupEpoch || !coordinator.AssignmentIntervalElapsed(g.assignmentTimestamp, cfg.AssignmentIntervalMs, now) {
		return g.assignmentEpoch, lastTarget(), nil, nil
	}
	assignor := preferredAssignor(g, old, u, cfg)
	members := make([]*member, 0, len(g.members)+1)
	targets := make(map[string][]TopicPartitions, len(g.members)+1)
	for _, id := range g.memberOrder() {
		switch {
		case id == u.id:
			members = append(members, u)
		case replaced != nil && id == replaced.id:
			continue
		default:
			members = append(members, g.members[id])
		}
		if t, ok := g.target[id]; ok {
			targets[id] = t
		}
	}
	if _, ok := g.members[u.id]; !ok {
		members = append(members, u)
	}
	if _, ok := g.target[u.id]; !ok && replaced != nil {
		if t, ok := g.target[replaced.id]; ok {
			targets[u.id] = t
		}
	}
	recs, next, err := assignTargets(g, members, targets, groupEpoch, assignor, homogeneous, md, now)
	if err != nil {
		return 0, nil, nil, err
	}
	return groupEpoch, next[u.id], recs, nil
}

// assignTargets is TargetAssignmentBuilder.build over members (in the order Kafka puts them
// into the builder's HashMap) and their previous targets: the assignor's result, normalized
// (sorted topics and partitions), and the records: 7 per member whose target changed or who
// had none, in the iteration order of that HashMap, then 6.
func assignTargets(g *group, members []*member, targets map[string][]TopicPartitions, epoch int32, assignor string, homogeneous bool, md *coordinator.Metadata, now int64) ([]recordcodec.Record, map[string][]TopicPartitions, *coordinator.Error) {
	specMembers := make([]SpecMember, len(members))
	for i, m := range members {
		sm := SpecMember{ID: m.id, InstanceID: m.instanceID, RackID: m.rackID, TopicNames: m.names, Target: targets[m.id]}
		if m.regex != "" {
			if r, ok := g.regexes[m.regex]; ok {
				sm.RegexTopics = r.Topics
			}
		}
		specMembers[i] = sm
	}
	spec := KafkaSpec(specMembers, homogeneous, func(name string) (Uuid, int32, bool) {
		t, ok := md.Topic(name)
		return t.ID, t.Partitions, ok
	})
	out, err := Assign(assignor, spec)
	if err != nil {
		return nil, nil, coordinator.Errorf(coordinator.ErrUnknownServerError, "")
	}
	next := make(map[string][]TopicPartitions, len(members))
	var recs []recordcodec.Record
	for i, am := range spec.Members {
		var a MemberAssignment
		if i < len(out) {
			a = out[i]
		}
		nt := normalizeTarget(a)
		next[am.ID] = nt
		if old, ok := targets[am.ID]; !ok || !sameTarget(old, nt) {
			recs = append(recs, targetMemberRecord(g.id, am.ID, nt))
		}
	}
	recs = append(recs, targetMetadataRecord(g.id, epoch, now))
	return recs, next, nil
}

// normalizeTarget sorts an assignor's result by topic id and partition, dropping empty topics.
func normalizeTarget(a MemberAssignment) []TopicPartitions {
	out := make([]TopicPartitions, 0, len(a))
	for _, tp := range a {
		if len(tp.Partitions) == 0 {
			continue
		}
		ps := slices.Clone(tp.Partitions)
		slices.Sort(ps)
		out = append(out, TopicPartitions{Topic: tp.Topic, Partitions: ps})
	}
	slices.SortFunc(out, func(x, y TopicPartitions) int { return x.Topic.Compare(y.Topic) })
	return out
}

func sameTarget(a, b []TopicPartitions) bool {
	return slices.EqualFunc(a, b, func(x, y TopicPartitions) bool {
		return x.Topic == y.Topic && slices.Equal(x.Partitions, y.Partitions)
	})
}
