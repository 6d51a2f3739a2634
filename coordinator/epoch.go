package coordinator

// Member epochs with a meaning of their own in the heartbeats of KIP-848 consumer groups and
// KIP-1071 streams groups.
const (
	// JoinEpoch is the epoch of a member that joins (or rejoins after being fenced).
	JoinEpoch int32 = 0
	// LeaveEpoch is the epoch of a member that leaves the group.
	LeaveEpoch int32 = -1
	// StaticLeaveEpoch is the epoch of a static member that leaves temporarily: it keeps its
	// assignment for the instance id to rejoin with.
	StaticLeaveEpoch int32 = -2
)

// CheckMemberEpoch is Kafka's throwIfConsumerGroupMemberEpochIsInvalid and
// throwIfStreamsGroupMemberEpochIsInvalid: a heartbeat's epoch is accepted when it is 0 (a
// join), equal to the member's epoch, or, because a response may have been lost, the member's
// previous epoch while everything the member reports owning is in its current assignment
// (ownsOnlyAssigned, called only then). kind names the group type in the message ("consumer"
// or "streams").
func CheckMemberEpoch(kind string, received, current, previous int32, ownsOnlyAssigned func() bool) *Error {
	switch {
	case received == JoinEpoch || received == current:
		return nil
	case received > current:
		return Errorf(ErrFencedMemberEpoch, "The %s group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", kind, received, current)
	case received != previous || !ownsOnlyAssigned():
		return Errorf(ErrFencedMemberEpoch, "The %s group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", kind, received, current)
	}
	return nil
}

// AssignmentIntervalElapsed reports whether a new target assignment may be computed at now:
// Kafka computes one at most every assignment interval (group.*.assignment.interval.ms, 0 =
// no limit) after the previous one, whose timestamp 0 means "none yet" (or a group whose last
// member left, so that the next assignment is not delayed).
func AssignmentIntervalElapsed(lastAssignment int64, intervalMs int32, now int64) bool {
	return lastAssignment == 0 || intervalMs == 0 || now >= lastAssignment+int64(intervalMs)
}
