package streams

import (
	"fmt"

	"github.com/coordlog/coordlog/groupstate"
)

// This file gives the external tests (package streams_test, which drive the coordinator
// through streamstest.Runner and so cannot live in this package) the checks that need the
// coordinator's own group model.

// CheckInvariants verifies, on the replayed state, that no active task has two owners and that
// no process holds a task twice (active, standby or warm-up; assigned or pending revocation).
func CheckInvariants(st groupstate.View, gid string) error {
	v, ok := st.StreamsGroup(gid)
	if !ok {
		return nil
	}
	g := groupFromView(&v)
	activeOwner := map[TaskID]string{}
	onProcess := map[string]map[TaskID]string{}
	for _, id := range g.sortedMemberIDs() {
		m := g.members[id]
		if onProcess[m.processID] == nil {
			onProcess[m.processID] = map[TaskID]string{}
		}
		for _, tt := range []tuple{m.assigned, m.pending} {
			for task := range tt.active {
				if o, dup := activeOwner[task]; dup {
					return fmt.Errorf("active task %v owned by %s and %s", task, o, id)
				}
				activeOwner[task] = id
			}
			for _, set := range []taskMap{tt.active, tt.standby, tt.warmup} {
				for task := range set {
					// One member may hold a task in two roles during an in-place role change
					// (demoted active pending revocation plus its new standby); two members of
					// one process never hold the same task.
					if o, dup := onProcess[m.processID][task]; dup && o != id {
						return fmt.Errorf("task %v twice on process %s (%s and %s)", task, m.processID, o, id)
					}
					onProcess[m.processID][task] = id
				}
			}
		}
	}
	return nil
}

// CheckConverged requires every member STABLE at the assignment epoch with its target and
// nothing pending revocation.
func CheckConverged(st groupstate.View, gid string) error {
	v, ok := st.StreamsGroup(gid)
	if !ok || len(v.Members) == 0 {
		return nil
	}
	g := groupFromView(&v)
	if g.epoch != g.assignmentEpoch {
		return fmt.Errorf("group not assigned: group epoch %d, assignment epoch %d", g.epoch, g.assignmentEpoch)
	}
	for _, id := range g.sortedMemberIDs() {
		m := g.members[id]
		switch {
		case !m.isReconciledTo(g.assignmentEpoch):
			return fmt.Errorf("member %s epoch %d state %d, assignment epoch %d", id, m.epoch, m.state, g.assignmentEpoch)
		case !m.assigned.sameTasks(g.target[id]):
			return fmt.Errorf("member %s not at its target", id)
		case !m.pending.empty():
			return fmt.Errorf("member %s has pending revocations", id)
		}
	}
	return nil
}
