package coordinator

import "cmp"

// TimerKind names a coordinator timer.
type TimerKind string

// The timers of a modern group. Kafka arms them in memory (they are not in the log): a
// coordinator that restarts arms them again from the replayed state.
const (
	// TimerSession fences a member that stops heartbeating.
	TimerSession TimerKind = "session-timeout"
	// TimerRebalance fences a member that does not revoke what it must give up in time.
	TimerRebalance TimerKind = "rebalance-timeout"
	// TimerInitialDelay delays a new group's first assignment so that more members can join.
	TimerInitialDelay TimerKind = "initial-rebalance-delay"
	// TimerJoin fences a classic-protocol member of a consumer group that was told to rejoin
	// (REBALANCE_IN_PROGRESS) and does not send a JoinGroup within its rebalance timeout.
	TimerJoin TimerKind = "join-timeout"
	// TimerSync fences a classic-protocol member of a consumer group that joined and does not
	// send a SyncGroup within its rebalance timeout.
	TimerSync TimerKind = "sync-timeout"
)

// Timer is one armed deadline of a group (Member "") or of one of its members. Deadlines are
// in the coordinator's clock: milliseconds, passed to every decision as now (no decision
// reads the wall clock), so that a run is deterministic and a simulation controls time.
type Timer struct {
	At     int64 // the deadline in ms; 0 means not armed
	Group  string
	Kind   TimerKind
	Member string
}

// Due reports whether t is armed and its deadline has passed at now.
func (t Timer) Due(now int64) bool { return t.At != 0 && t.At <= now }

// Compare orders timers by deadline, then group id, kind and member id: the order in which
// they fire, deterministic where deadlines tie (Kafka's timer wheel fires ties in no
// particular order).
func (t Timer) Compare(o Timer) int {
	return cmp.Or(cmp.Compare(t.At, o.At), cmp.Compare(t.Group, o.Group), cmp.Compare(t.Kind, o.Kind), cmp.Compare(t.Member, o.Member))
}

// EarliestDue returns the first timer, in Compare order, that is due at now.
func EarliestDue(now int64, timers []Timer) (Timer, bool) {
	var best Timer
	found := false
	for _, t := range timers {
		if t.Due(now) && (!found || t.Compare(best) < 0) {
			best, found = t, true
		}
	}
	return best, found
}
