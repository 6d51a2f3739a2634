package explain

// How a member went, by the rules of what Kafka writes for each way (doc.go's rule table):
//
//   - A leave (LeaveGroup; a ConsumerGroupHeartbeat or StreamsGroupHeartbeat with epoch -1;
//     an admin's removeMembersFromConsumerGroup) is written when it is asked for (a classic
//     group's, when the rebalance it starts completes).
//   - A session timeout fires a session timeout after the member's last heartbeat. A
//     consumer-protocol member's records are written while handling its own heartbeats, so its
//     last heartbeat is no earlier than its last record (a coordinator that reloads the
//     partition restarts every timer, later still). A classic generation's record is written
//     at the leader's SyncGroup, a moment after the join that restarted every member's session
//     (classicSyncAllowance).
//   - A consumer-protocol member's rebalance timeout starts at the record that puts it in
//     UNREVOKED_PARTITIONS (each such record restarts it) and fences it exactly that long
//     after; a classic member is removed by its rebalance timeout no sooner than that long
//     after its generation (the join phase of a later rebalance, or a sync that never came).
//   - A static member's leave writes epoch -2 and keeps it; its session timeout (from that
//     record) removes it, unless it comes back with the same instance id (a replacement).
//
// So a removal sooner than those timeouts after the member's own last record is a leave,
// proved; one about a timeout after it is likely that timeout (a leave at that very moment is
// a coincidence); after a longer silence the log cannot tell (an idle member writes nothing).

// classicSyncAllowance is how long after the join that restarted a classic member's session
// the generation's record may be written (the leader computes the assignment and sends
// SyncGroup): a removal must be sooner than the session timeout less this to prove a leave.
const classicSyncAllowance = 1_000

// timerSlack is how long after a timeout's deadline the removal it causes may be written for
// the timing to point at that timeout: a third of the timeout, at most 5 s (a classic group
// writes the removal once the others rejoined, up to a heartbeat interval later).
func timerSlack(timeoutMs int64) int64 { return min(timeoutMs/3, 5_000) }

// settle texts: what outside the log tells the causes of a removal apart.
const (
	settleClient   = "the client's log at that time (a close(), a crash, a stall)"
	settleRequests = "the broker's request log (a LeaveGroup, or a heartbeat with epoch -1, from the member)"
)

// classifyRemoval tells how member m (as it was) went when its removal was written at at, and
// how sure that is.
func (a *Analyzer) classifyRemoval(g *groupModel, m *memberModel, at Position) (Removal, diagnosis) {
	r := Removal{Member: g.ref(m), SessionTimeoutMs: m.sessionTimeoutMs, RebalanceTimeoutMs: m.rebalanceTimeoutMs, SilentMs: -1,
		Owned: m.assigned.assignments(a.names)}
	last := m.lastSeen
	r.LastSeen = &last
	if m.joined.Offset >= 0 {
		j := m.joined
		r.Joined = &j
	}
	if last.Timestamp >= 0 && at.Timestamp >= 0 {
		r.SilentMs = at.Timestamp - last.Timestamp
	}
	session := int64(m.sessionTimeoutMs)
	if m.protocol != typeClassic || session <= 0 {
		session = a.opts.SessionTimeoutMs
		r.SessionTimeoutMs = int32(min(session, 1<<31-1))
	}
	own, ownSilent := m.lastOwn, int64(-1)
	if m.ownSet {
		r.OwnRecord = &own
		if own.Timestamp >= 0 && at.Timestamp >= 0 {
			ownSilent = at.Timestamp - own.Timestamp
		}
	}
	var d diagnosis
	switch {
	case m.awayAt != nil:
		d = a.afterTemporaryLeave(&r, m, at, session)
	case ownSilent < 0 && r.SilentMs < 0:
		r.Cause = "unknown"
		d = oneOf("left", "fenced-session-timeout", "no timestamps to tell a leave from a timeout")
	case m.revoking && m.protocol != typeClassic && m.rebalanceTimeoutMs > 0 && at.Timestamp >= 0 &&
		m.revokingAt.Timestamp >= 0 && at.Timestamp-m.revokingAt.Timestamp >= int64(m.rebalanceTimeoutMs):
		d = a.afterRevoking(&r, m, at, session, ownSilent)
	default:
		d = a.bySilence(&r, m, at, session, ownSilent)
	}
	return r, d
}

// afterTemporaryLeave diagnoses the removal of a static member at epoch -2. Its leave does
// not restart its session timer, which runs from its last heartbeat: no earlier than its own
// record before the leave, no later than the leave.
func (a *Analyzer) afterTemporaryLeave(r *Removal, m *memberModel, at Position, session int64) diagnosis {
	aw, from := *m.awayAt, m.awayFrom
	r.LastSeen = &aw
	if aw.Timestamp >= 0 && at.Timestamp >= 0 {
		r.SilentMs = at.Timestamp - aw.Timestamp
	}
	r.Cause = "expired-after-temporary-leave"
	admin := Alternative{Cause: "left", Settle: "the broker's request log: an admin's removeMembersFromConsumerGroup (LeaveGroup) naming its instance id"}
	if r.SilentMs < 0 || from.Timestamp < 0 {
		return diagnosis{certainty: CertaintyOneOfSeveral, evidence: []string{"no timestamps to tell when"}, alternatives: []Alternative{admin}}
	}
	sinceHB := at.Timestamp - from.Timestamp
	ev := "it left temporarily (epoch -2) at offset " + itoa(aw.Offset) + " and was removed " + Duration(r.SilentMs) +
		" later; its " + Duration(session) + " session timer runs from its last heartbeat, between its record at offset " +
		itoa(from.Offset) + " (" + Duration(sinceHB) + " before the removal) and the leave"
	switch {
	case sinceHB < session:
		r.Cause = "left"
		return diagnosis{certainty: CertaintyLikely, evidence: []string{ev + ": too soon for its session to expire, so a LeaveGroup naming its instance id removed it"},
			alternatives: []Alternative{{Cause: "expired-after-temporary-leave", Settle: "the group's session timeout (consumer.session.timeout.ms of the group, or the brokers' group.consumer.session.timeout.ms), if shorter than " + Duration(sinceHB)}}}
	case r.SilentMs <= session+timerSlack(session):
		return diagnosis{certainty: CertaintyLikely, evidence: []string{ev + ": when its session timeout fires"}, alternatives: []Alternative{admin}}
	}
	return diagnosis{certainty: CertaintyOneOfSeveral, evidence: []string{ev + ": later than its session timeout fires (a coordinator that reloaded restarts the timer)"},
		alternatives: []Alternative{admin, {Cause: "expired-after-temporary-leave", Settle: "the broker's log (a coordinator load, or \"Member ... fenced from the group because its session expired\")"}}}
}

// afterRevoking diagnoses the removal of a member still asked to revoke, a rebalance timeout
// or more after its rebalance timer started.
func (a *Analyzer) afterRevoking(r *Removal, m *memberModel, at Position, session, ownSilent int64) diagnosis {
	rb := int64(m.rebalanceTimeoutMs)
	waited := at.Timestamp - m.revokingAt.Timestamp
	ev := "it was asked to revoke " + m.pending.label(a.names) + " at offset " + itoa(m.revokingAt.Offset) +
		" (which starts its " + Duration(rb) + " rebalance timeout) and was removed " + Duration(waited) + " later, still owning them"
	r.Cause = "fenced-rebalance-timeout"
	leave := Alternative{Cause: "left", Settle: settleClient + "; " + settleRequests}
	if waited <= rb+timerSlack(rb) {
		ev += ": what its rebalance timeout does"
		alts := []Alternative{leave}
		if ownSilent >= session {
			alts = append(alts, Alternative{Cause: "fenced-session-timeout", Settle: settleClient})
		} else if ownSilent >= 0 {
			ev += "; too soon after its own last record (offset " + itoa(m.lastOwn.Offset) + ") for its " + Duration(session) + " session timeout"
		}
		return diagnosis{certainty: CertaintyLikely, evidence: []string{ev}, alternatives: alts}
	}
	r.Cause = "unknown"
	return diagnosis{certainty: CertaintyOneOfSeveral, evidence: []string{ev + ", later than the timeout fires"},
		alternatives: []Alternative{leave, {Cause: "fenced-rebalance-timeout", Settle: settleClient},
			{Cause: "fenced-session-timeout", Settle: settleClient}}}
}

// bySilence diagnoses a removal by the time since the member's own last record: sooner than
// a timeout could fire is a leave, about a session timeout a fence, longer the log cannot tell.
func (a *Analyzer) bySilence(r *Removal, m *memberModel, at Position, session, ownSilent int64) diagnosis {
	bound, what := session, Duration(session)+" session timeout"
	if m.protocol == typeClassic {
		bound -= min(classicSyncAllowance, session/4)
		if rb := int64(m.rebalanceTimeoutMs); rb > 0 && rb < session {
			bound, what = rb-min(classicSyncAllowance, rb/4), Duration(rb)+" rebalance timeout"
		}
	}
	silent, from := ownSilent, "its own last record (offset "+itoa(m.lastOwn.Offset)+")"
	if silent < 0 {
		silent, from = r.SilentMs, "its last sign of life (offset "+itoa(r.LastSeen.Offset)+")"
	}
	fence := Alternative{Cause: "fenced-session-timeout", Settle: settleClient}
	leave := Alternative{Cause: "left", Settle: settleClient + "; " + settleRequests}
	switch {
	case silent < bound && ownSilent >= 0 && m.protocol != typeClassic && a.sessionAssumed:
		// The group's session timeout is not in the log: Kafka's default is assumed.
		r.Cause = "left"
		return diagnosis{certainty: CertaintyLikely, evidence: []string{"removed " + Duration(silent) + " after " + from +
			", sooner than the default " + what + " (the group's own is not in the log)"},
			alternatives: []Alternative{{Cause: "fenced-session-timeout", Settle: "the group's session timeout, if it is " + Duration(silent) +
				" or less (consumer.session.timeout.ms of the group, or the brokers' group.consumer.session.timeout.ms; --session-timeout gives it)"}}}
	case silent < bound && ownSilent >= 0:
		r.Cause = "left"
		return diagnosis{certainty: CertaintyProved, evidence: []string{"removed " + Duration(silent) + " after " + from +
			", sooner than its " + what + " could fire: no timeout removes a member before that long after its last request"}}
	case silent < bound:
		r.Cause = "left"
		return diagnosis{certainty: CertaintyLikely, evidence: []string{"removed " + Duration(silent) + " after " + from +
			" (a commit of a partition it owned: the client was alive), sooner than its " + what}, alternatives: []Alternative{fence}}
	case r.SilentMs >= 0 && r.SilentMs < session-timerSlack(session) && r.LastSeen.Offset > m.lastOwn.Offset:
		// Its own records are old, but it committed a partition it owned shortly before: a
		// live client heartbeats while it commits.
		r.Cause = "left"
		return diagnosis{certainty: CertaintyLikely, evidence: []string{"it committed a partition it owned at offset " + itoa(r.LastSeen.Offset) +
			", " + Duration(r.SilentMs) + " before its removal: the client was alive, and a live client heartbeats"}, alternatives: []Alternative{fence}}
	case silent <= session+timerSlack(session):
		r.Cause = "fenced-session-timeout"
		return diagnosis{certainty: CertaintyLikely, evidence: []string{"nothing from it for " + Duration(silent) + " after " + from +
			", about its " + Duration(session) + " session timeout: what a member that stopped right after that record looks like"},
			alternatives: []Alternative{leave}}
	}
	r.Cause = "unknown"
	return diagnosis{certainty: CertaintyOneOfSeveral, evidence: []string{"nothing from it for " + Duration(silent) + " after " + from +
		", longer than its " + Duration(session) + " session timeout: an idle member writes nothing, so it may have left or died at any time since"},
		alternatives: []Alternative{leave, fence}}
}

// oneOf is a one-of-several diagnosis between a leave and a fence.
func oneOf(cause1, cause2, why string) diagnosis {
	return diagnosis{certainty: CertaintyOneOfSeveral, evidence: []string{why},
		alternatives: []Alternative{{Cause: cause1, Settle: settleClient + "; " + settleRequests}, {Cause: cause2, Settle: settleClient}}}
}
