package streams

import (
	"maps"
	"slices"
)

// Warm-up tasks (KIP-1071, Config.Assignor == AssignorHighlyAvailable). Kafka 4.4 has the
// scaffolding but assigns none; this is coordlog's reading of the KIP:
//
//   - A process is caught up on a task when one of its members reported both an offset and
//     an end offset for it with end - offset <= AcceptableRecoveryLag, or when it currently
//     runs the task as active.
//   - After the sticky assignor, every stateful active task that moves from its current
//     owner (still a member) to a member whose process is not caught up stays with its
//     current owner; the intended new owner gets a warm-up instead, at most
//     NumWarmupReplicas warm-ups per group (tasks beyond the budget stay put too and move in
//     a later round). A warm-up never lands on a process that holds the task in another
//     role, and the current owner drops a standby of the task it keeps.
//   - When a member reports offsets that make a warm-up caught up while the group is
//     stable, the group epoch is bumped (record 17 only changes the epoch) so the next
//     target computation promotes it; the warm-up then disappears from the target.

func caughtUp(g *group, gs *GroupSoft, process string, t TaskID, lag int64) bool {
	for _, m := range g.members {
		if m.processID != process {
			continue
		}
		if m.assigned.active.has(t) {
			return true
		}
		if ms := gs.Members[m.id]; ms != nil {
			off, ok1 := ms.TaskOffsets[t]
			end, ok2 := ms.TaskEndOffsets[t]
			if ok1 && ok2 && end-off <= lag {
				return true
			}
		}
	}
	return false
}

func applyWarmups(g *group, gs *GroupSoft, ct *configuredTopology, cfg Config, next map[string]tuple) {
	owner := map[TaskID]string{}
	for _, id := range g.sortedMemberIDs() {
		for t := range g.members[id].assigned.active {
			owner[t] = id
		}
	}
	budget := int(cfg.NumWarmupReplicas)
	for _, id := range slices.Sorted(maps.Keys(next)) {
		tt := next[id]
		for _, t := range tt.active.sorted() {
			st := ct.byID[t.Subtopology]
			if st == nil || !st.stateful {
				continue
			}
			prev, ok := owner[t]
			if !ok || prev == id {
				continue
			}
			pm, nm := g.members[prev], g.members[id]
			if pm == nil || nm == nil || pm.processID == nm.processID || caughtUp(g, gs, nm.processID, t, cfg.AcceptableRecoveryLag) {
				continue
			}
			// Keep the task on its current owner; no other member of its process may keep a
			// standby of it then.
			delete(tt.active, t)
			next[id] = tt
			pt := next[prev]
			if pt.active == nil {
				pt.active = taskMap{}
			}
			pt.active[t] = 0
			next[prev] = pt
			for _, oid := range slices.Sorted(maps.Keys(next)) {
				if om := g.members[oid]; om != nil && om.processID == pm.processID {
					delete(next[oid].standby, t)
				}
			}
			tt = next[id]
			if budget == 0 || processHolds(g, next, nm.processID, t) {
				continue
			}
			if tt.warmup == nil {
				tt.warmup = taskMap{}
			}
			tt.warmup[t] = 0
			budget--
		}
		next[id] = tt
	}
	for id, tt := range next {
		next[id] = normalize(tt)
	}
}

// processHolds reports whether a member of process holds t in any role in the assignment.
func processHolds(g *group, next map[string]tuple, process string, t TaskID) bool {
	for id, tt := range next {
		if m := g.members[id]; m != nil && m.processID == process && (tt.active.has(t) || tt.standby.has(t) || tt.warmup.has(t)) {
			return true
		}
	}
	return false
}

// warmupCaughtUp reports whether some member's target warm-up is now caught up.
func warmupCaughtUp(g *group, gs *GroupSoft, cfg Config) bool {
	for _, id := range g.sortedMemberIDs() {
		m := g.members[id]
		for _, t := range slices.Collect(func(yield func(TaskID) bool) {
			for t := range g.target[id].warmup {
				if !yield(t) {
					return
				}
			}
		}) {
			if caughtUp(g, gs, m.processID, t, cfg.AcceptableRecoveryLag) {
				return true
			}
		}
	}
	return false
}
