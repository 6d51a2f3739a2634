package streams

import "github.com/coordlog/coordlog/coordinator"

// reconciler is Kafka's streams CurrentAssignmentBuilder: it moves one member one step
// toward its target assignment. Ownership questions are answered from the group as it was
// before this heartbeat (Kafka's timeline state is updated only when the records replay).
type reconciler struct {
	g           *group
	m           *member
	targetEpoch int32
	target      tuple
	owned       *tuple // nil: the request did not report all three owned lists
}

// errUnknownState is the fencing of a member whose record 22 carries an unknown state.
var errUnknownState = coordinator.Errorf(coordinator.ErrFencedMemberEpoch, "The streams group member is in a unknown state. The member must abandon all its tasks and rejoin.")

func (r *reconciler) build() (*member, *coordinator.Error) {
	m := r.m
	switch m.state {
	case stateStable:
		if m.epoch != r.targetEpoch {
			return r.next(m.epoch), nil
		}
		return m, nil
	case stateUnrevokedTasks:
		if r.notReleased(m.pending) {
			return m, nil
		}
		// Streams moves to epoch+1 once the revocation is acknowledged (consumer groups keep it).
		return r.next(m.epoch + 1), nil
	case stateUnreleasedTasks:
		return r.next(m.epoch), nil
	default:
		if r.owned == nil || !r.owned.empty() {
			return nil, errUnknownState
		}
		return r.next(r.targetEpoch), nil
	}
}

// notReleased is hasNotReleased: without a full report of owned tasks nothing counts as
// released.
func (r *reconciler) notReleased(pending tuple) bool {
	return r.owned == nil || r.owned.containsAny(pending)
}

func (r *reconciler) unreleasedActive(t TaskID) bool {
	if _, ok := r.g.activeProcess(t); ok {
		return true
	}
	return r.heldByOtherOnProcess(t, r.m.assigned.standby, r.g.standbyOnProcess) ||
		r.heldByOtherOnProcess(t, r.m.assigned.warmup, r.g.warmupOnProcess)
}

func (r *reconciler) unreleasedStandby(t TaskID) bool {
	if p, ok := r.g.activeProcess(t); ok && p == r.m.processID && !r.m.assigned.active.has(t) {
		return true
	}
	return r.g.standbyOnProcess(t, r.m.processID) || r.heldByOtherOnProcess(t, r.m.assigned.warmup, r.g.warmupOnProcess)
}

func (r *reconciler) unreleasedWarmup(t TaskID) bool {
	if p, ok := r.g.activeProcess(t); ok && p == r.m.processID {
		return true
	}
	return r.heldByOtherOnProcess(t, r.m.assigned.standby, r.g.standbyOnProcess) || r.g.warmupOnProcess(t, r.m.processID)
}

func (r *reconciler) heldByOtherOnProcess(t TaskID, own taskMap, onProcess func(TaskID, string) bool) bool {
	return onProcess(t, r.m.processID) && !own.has(t)
}

// diff splits current against target: kept (current ∩ target, values kept), to revoke
// (current − target) and to assign (target − current − unreleased, valued newValue).
func diff(current, target taskMap, newValue int32, unreleased func(TaskID) bool) (kept, revoke, assign taskMap, held bool) {
	kept, revoke, assign = taskMap{}, taskMap{}, taskMap{}
	for t, v := range current {
		if target.has(t) {
			kept[t] = v
		} else {
			revoke[t] = v
		}
	}
	for t := range target {
		if kept.has(t) {
			continue
		}
		if unreleased(t) {
			held = true
			continue
		}
		assign[t] = newValue
	}
	return
}

func (r *reconciler) next(epoch int32) *member {
	cur := r.m.assigned
	aKept, aRevoke, aAssign, heldA := diff(cur.active, r.target.active, r.targetEpoch, r.unreleasedActive)
	sKept, sRevoke, sAssign, heldS := diff(cur.standby, r.target.standby, 0, r.unreleasedStandby)
	wKept, wRevoke, wAssign, heldW := diff(cur.warmup, r.target.warmup, 0, r.unreleasedWarmup)

	// Role changes that depend on no other member take effect at once, so the client can
	// recycle the task instead of closing and re-creating it. (a) An own active demoted to
	// standby: the standby is granted now; the active stays pending revocation.
	for t := range cur.active {
		if sAssign.has(t) {
			delete(sAssign, t)
			sKept[t] = 0
		}
	}
	// (b) Standby <-> warm-up conversions: granted now, no revocation needed.
	for t := range cur.standby {
		if wAssign.has(t) {
			delete(wAssign, t)
			wKept[t] = 0
			delete(sRevoke, t)
		}
	}
	for t := range cur.warmup {
		if sAssign.has(t) {
			delete(sAssign, t)
			sKept[t] = 0
			delete(wRevoke, t)
		}
	}
	// (c) An own standby or warm-up the target wants as active needs no client revocation; it
	// is kept in its old role until the active is granted in a step with nothing to revoke.
	for t := range cur.standby {
		if r.target.active.has(t) {
			delete(sRevoke, t)
		}
	}
	for t := range cur.warmup {
		if r.target.active.has(t) {
			delete(wRevoke, t)
		}
	}
	pending := tuple{active: aRevoke, standby: sRevoke, warmup: wRevoke}
	toRevoke := !pending.empty() && r.notReleased(pending)
	for t := range cur.standby {
		if r.target.active.has(t) && !(!toRevoke && aAssign.has(t)) {
			sKept[t] = 0
		}
	}
	for t := range cur.warmup {
		if r.target.active.has(t) && !(!toRevoke && aAssign.has(t)) {
			wKept[t] = 0
		}
	}

	n := r.m.clone()
	held := heldA || heldS || heldW
	assign := tuple{active: aAssign, standby: sAssign, warmup: wAssign}
	kept := tuple{active: aKept, standby: sKept, warmup: wKept}
	switch {
	case toRevoke:
		n.state = stateUnrevokedTasks
		n.prevEpoch, n.epoch = r.m.epoch, epoch
		n.assigned, n.pending = normalize(kept), normalize(pending)
	case !assign.empty():
		n.state = stateStable
		if held {
			n.state = stateUnreleasedTasks
		}
		n.prevEpoch, n.epoch = r.m.epoch, r.targetEpoch
		n.assigned, n.pending = normalize(merge(kept, assign)), tuple{}
	default:
		n.state = stateStable
		if held {
			n.state = stateUnreleasedTasks
		}
		n.prevEpoch, n.epoch = r.m.epoch, r.targetEpoch
		n.assigned, n.pending = normalize(kept), tuple{}
	}
	return n
}

func merge(a, b tuple) tuple {
	out := a.clone()
	for _, p := range []struct {
		dst *taskMap
		src taskMap
	}{{&out.active, b.active}, {&out.standby, b.standby}, {&out.warmup, b.warmup}} {
		if len(p.src) == 0 {
			continue
		}
		if *p.dst == nil {
			*p.dst = taskMap{}
		}
		for t, v := range p.src {
			(*p.dst)[t] = v
		}
	}
	return out
}

// normalize turns empty sets into nil so that comparisons and records do not depend on it.
func normalize(t tuple) tuple {
	if len(t.active) == 0 {
		t.active = nil
	}
	if len(t.standby) == 0 {
		t.standby = nil
	}
	if len(t.warmup) == 0 {
		t.warmup = nil
	}
	return t
}
