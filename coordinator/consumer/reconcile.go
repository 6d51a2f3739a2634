package consumer

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
)

// reconciler is Kafka's consumer CurrentAssignmentBuilder: it moves one member one step
// toward its target. Ownership questions are answered from the group as it was before this
// heartbeat (Kafka's timeline state changes only when the records replay).
type reconciler struct {
	m                   *member
	targetEpoch         int32
	target              []TopicPartitions
	subscribed          map[Uuid]bool // the member's subscribed existing topics
	subscriptionChanged bool
	owners              ownerIndex
	owned               []kmsg.ConsumerGroupHeartbeatRequestTopic // nil: not reported
}

var errUnknownState = coordinator.Errorf(coordinator.ErrFencedMemberEpoch, "The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin.")

func (r *reconciler) build() (*member, *coordinator.Error) {
	m := r.m
	switch m.state {
	case stateStable:
		if m.epoch != r.targetEpoch {
			return r.next(m.epoch), nil
		}
		if r.subscriptionChanged {
			return r.dropUnsubscribed(m.epoch), nil
		}
		return m, nil
	case stateUnrevokedPartitons:
		if r.ownsAny(m.pending) {
			if r.subscriptionChanged {
				return r.dropUnsubscribed(m.epoch), nil
			}
			return m, nil
		}
		// Consumer groups keep the epoch once the revocation is acknowledged (streams: +1).
		return r.next(m.epoch), nil
	case stateUnreleased:
		return r.next(m.epoch), nil
	default:
		if r.owned == nil || len(r.owned) > 0 {
			return nil, errUnknownState
		}
		return r.next(r.targetEpoch), nil
	}
}

// ownsAny is ownsRevokedPartitions: without a report of owned partitions, everything counts
// as still owned.
func (r *reconciler) ownsAny(p partitions) bool {
	if r.owned == nil {
		return true
	}
	for _, t := range r.owned {
		pm := p[t.TopicID]
		for _, n := range t.Partitions {
			if _, ok := pm[n]; ok {
				return true
			}
		}
	}
	return false
}

// withEpoch is Builder.updateMemberEpoch: the previous epoch becomes the current one.
func withEpoch(m *member, epoch int32) *member {
	n := m.clone()
	n.prevEpoch, n.epoch = m.epoch, epoch
	return n
}

// dropUnsubscribed is updateCurrentAssignment: partitions of topics the member no longer
// subscribes to move to pending revocation (UNREVOKED_PARTITIONS while still owned; already
// revoked ones just leave the assignment).
func (r *reconciler) dropUnsubscribed(epoch int32) *member {
	m := r.m
	var assigned, pending partitions
	switch {
	case len(r.subscribed) == 0 && len(m.pending) == 0:
		if len(m.assigned) == 0 {
			return m
		}
		assigned, pending = nil, m.assigned.clone()
	default:
		changed := false
		for t := range m.assigned {
			if !r.subscribed[t] {
				changed = true
			}
		}
		if !changed {
			return m
		}
		assigned, pending = partitions{}, m.pending.clone()
		if pending == nil {
			pending = partitions{}
		}
		for t, pm := range m.assigned {
			if r.subscribed[t] {
				assigned[t] = pm
				continue
			}
			if pending[t] == nil {
				pending[t] = map[int32]int32{}
			}
			for p, e := range pm {
				pending[t][p] = e
			}
		}
	}
	if len(pending) > 0 && r.ownsAny(pending) {
		n := withEpoch(m, epoch)
		n.state, n.assigned, n.pending = stateUnrevokedPartitons, normalize(assigned), normalize(pending)
		return n
	}
	n := withEpoch(m, epoch)
	n.assigned = normalize(assigned)
	return n
}

// next is computeNextAssignment: per topic (the target counts as empty for unsubscribed
// topics), kept = assigned ∩ target, to revoke = assigned − kept, to assign = target − kept −
// partitions another member still owns (a partition in this member's own pending revocation
// does not count as owned by another).
func (r *reconciler) next(epoch int32) *member {
	m := r.m
	target := make(map[Uuid][]int32, len(r.target))
	for _, tp := range r.target {
		target[tp.Topic] = tp.Partitions
	}
	kept, revoke, assign := partitions{}, partitions{}, partitions{}
	unreleased := false
	for t, ps := range target {
		if !r.subscribed[t] {
			continue
		}
		cur := m.assigned[t]
		for _, p := range ps {
			if e, ok := cur[p]; ok {
				put(kept, t, p, e)
				continue
			}
			if r.owners.epoch(t, p) != -1 && !m.pending.has(t, p) {
				unreleased = true
				continue
			}
			put(assign, t, p, r.targetEpoch)
		}
	}
	for t, pm := range m.assigned {
		for p, e := range pm {
			if !kept.has(t, p) {
				put(revoke, t, p, e)
			}
		}
	}
	switch {
	case len(revoke) > 0 && r.ownsAny(revoke):
		n := withEpoch(m, epoch)
		n.state, n.assigned, n.pending = stateUnrevokedPartitons, normalize(kept), revoke
		return n
	case len(assign) > 0:
		for t, pm := range assign {
			for p, e := range pm {
				put(kept, t, p, e)
			}
		}
		n := withEpoch(m, r.targetEpoch)
		n.state = stateStable
		if unreleased {
			n.state = stateUnreleased
		}
		n.assigned, n.pending = normalize(kept), nil
		return n
	default:
		n := withEpoch(m, r.targetEpoch)
		n.state = stateStable
		if unreleased {
			n.state = stateUnreleased
		}
		n.assigned, n.pending = normalize(kept), nil
		return n
	}
}

func put(p partitions, t Uuid, n, e int32) {
	pm := p[t]
	if pm == nil {
		pm = map[int32]int32{}
		p[t] = pm
	}
	pm[n] = e
}

// normalize turns an empty assignment into nil so that comparisons do not depend on it.
func normalize(p partitions) partitions {
	for t, pm := range p {
		if len(pm) == 0 {
			delete(p, t)
		}
	}
	if len(p) == 0 {
		return nil
	}
	return p
}
