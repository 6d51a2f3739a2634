package coordinator

import (
	"maps"
	"slices"

	"github.com/coordlog/coordlog/recordcodec"
)

// The soft state of a group: what Kafka keeps in memory only and never writes to the log
// (ModernGroup's and GroupMetadataManager's in-memory fields, its timer wheel). Every
// coordinator keeps, per group, a GroupSoft with its members' MemberTimers and the group's
// own timers, and adds the fields of its protocol beside it: the consumer coordinator its
// metadata refresh deadline and regex resolution, the streams coordinator its endpoint epoch,
// shutdown request, configured topology and task offsets. A classic coordinator joins the
// same way: its members' session (heartbeat-<g>-<m>) timers are MemberTimers, its group's
// join-<g> and sync-<g> timers group timers beside InitialDelayDeadline.

// MemberTimers are the deadlines of one member's timers, in the coordinator's clock (ms; 0 =
// not armed). A protocol's soft state of a member embeds them.
type MemberTimers struct {
	// SessionDeadline is when the member is fenced if it does not heartbeat.
	SessionDeadline int64
	// RebalanceDeadline is when the member is fenced if it has not revoked what it must give
	// up; it fires only if the member's epoch is still RebalanceEpoch.
	RebalanceDeadline int64
	RebalanceEpoch    int32
	// JoinDeadline and SyncDeadline are a classic-protocol member's join timer (armed when it
	// is told to rejoin, unless armed already) and sync timer (armed by its JoinGroup): it is
	// fenced if it does not send the JoinGroup, or the SyncGroup, before them.
	JoinDeadline int64
	SyncDeadline int64
}

// Timers returns t; through it the skeleton reaches the timers of any protocol's member soft
// state that embeds MemberTimers (SoftMember).
func (t *MemberTimers) Timers() *MemberTimers { return t }

// ArmSession arms the session timer: now plus the session timeout.
func (t *MemberTimers) ArmSession(now int64, timeoutMs int32) {
	t.SessionDeadline = now + int64(timeoutMs)
}

// ArmRebalance arms the rebalance timer of a member left at epoch with something to revoke:
// now plus its rebalance timeout (a negative timeout fires at once).
func (t *MemberTimers) ArmRebalance(now int64, timeoutMs, epoch int32) {
	t.RebalanceDeadline, t.RebalanceEpoch = now+int64(max(timeoutMs, 0)), epoch
}

// disarm clears the deadline of the member timer of kind.
func (t *MemberTimers) disarm(kind TimerKind) {
	switch kind {
	case TimerSession:
		t.SessionDeadline = 0
	case TimerRebalance:
		t.RebalanceDeadline = 0
	case TimerJoin:
		t.JoinDeadline = 0
	case TimerSync:
		t.SyncDeadline = 0
	}
}

// appendArmed appends the armed timers of member of group.
func (t *MemberTimers) appendArmed(out []Timer, group, member string) []Timer {
	for _, x := range [...]Timer{
		{At: t.SessionDeadline, Kind: TimerSession},
		{At: t.RebalanceDeadline, Kind: TimerRebalance},
		{At: t.JoinDeadline, Kind: TimerJoin},
		{At: t.SyncDeadline, Kind: TimerSync},
	} {
		if x.At != 0 {
			x.Group, x.Member = group, member
			out = append(out, x)
		}
	}
	return out
}

// SoftMember is a protocol's soft state of one member: it embeds MemberTimers.
type SoftMember interface{ Timers() *MemberTimers }

// GroupSoft is the soft state every group keeps, whatever its protocol: its members' (PM, a
// pointer to the protocol's member soft state M), the group's own timers, and the group model
// a coordinator cached by state offset. A protocol's soft state of a group embeds it.
type GroupSoft[M any, PM interface {
	*M
	SoftMember
}] struct {
	Members map[string]PM
	// InitialDelayDeadline is when the group's initial-rebalance timer fires (0 = not armed):
	// the delay a new group's first assignment waits for more members (streams groups;
	// consumer groups have none).
	InitialDelayDeadline int64

	// model is the group model a coordinator built from the state at log offset modelOffset
	// (the request's StateOffset) and left unchanged; never modified.
	model       any
	modelOffset int64
}

// NewGroupSoft returns the soft state of a group without members.
func NewGroupSoft[M any, PM interface {
	*M
	SoftMember
}]() GroupSoft[M, PM] {
	return GroupSoft[M, PM]{Members: map[string]PM{}}
}

// Member returns member id's soft state, created empty when missing.
func (g *GroupSoft[M, PM]) Member(id string) PM {
	m := g.Members[id]
	if m == nil {
		m = PM(new(M))
		g.Members[id] = m
	}
	return m
}

// RemoveMember drops a member's soft state: Kafka cancels its timers (and forgets what else
// it kept of it) when it leaves or is fenced.
func (g *GroupSoft[M, PM]) RemoveMember(id string) { delete(g.Members, id) }

// MemberIDs lists the members with soft state, sorted.
func (g *GroupSoft[M, PM]) MemberIDs() []string { return slices.Sorted(maps.Keys(g.Members)) }

// Clone returns a copy whose members are copied by clone (a copy of *m, plus deep copies of
// what it references); the cached model is not kept.
func (g *GroupSoft[M, PM]) Clone(clone func(m PM) PM) GroupSoft[M, PM] {
	c := *g
	c.model, c.modelOffset = nil, 0
	c.Members = make(map[string]PM, len(g.Members))
	for id, m := range g.Members {
		c.Members[id] = clone(m)
	}
	return c
}

// AppendTimers appends the armed timers of the group (id) and of its members.
func (g *GroupSoft[M, PM]) AppendTimers(out []Timer, id string) []Timer {
	if g.InitialDelayDeadline != 0 {
		out = append(out, Timer{At: g.InitialDelayDeadline, Group: id, Kind: TimerInitialDelay})
	}
	for mid, m := range g.Members {
		out = m.Timers().appendArmed(out, id, mid)
	}
	return out
}

// FireMemberTimer disarms member timer t and reports whether it fences the member: only if
// the member is still in the group (inGroup; one that is gone loses its soft state) and,
// for a rebalance timer, still at the epoch the timer was armed with (epoch gives the
// member's current one). Kafka's expired session and rebalance timeouts, and a
// classic-protocol member's join and sync timeouts.
func (g *GroupSoft[M, PM]) FireMemberTimer(t Timer, inGroup bool, epoch func() int32) bool {
	ms := g.Members[t.Member].Timers()
	ms.disarm(t.Kind)
	if !inGroup {
		g.RemoveMember(t.Member)
		return false
	}
	return t.Kind != TimerRebalance || epoch() == ms.RebalanceEpoch
}

// CachedModel returns the group model kept for the state at offset (nil when none: offset
// 0 disables the cache).
func (g *GroupSoft[M, PM]) CachedModel(offset int64) any {
	if offset <= 0 || g.modelOffset != offset {
		return nil
	}
	return g.model
}

// KeepModel keeps model, built from the state at offset and left unchanged by a decision
// without records, for the next decision at the same offset; DropModel forgets it.
func (g *GroupSoft[M, PM]) KeepModel(model any, offset int64) { g.model, g.modelOffset = model, offset }

// DropModel forgets the cached model (a decision with records, or an error after a partial
// update of the model).
func (g *GroupSoft[M, PM]) DropModel() { g.model = nil }

// SoftGroup is what ArmedTimers needs of a protocol's soft state of a group.
type SoftGroup interface {
	AppendTimers(out []Timer, id string) []Timer
}

// ArmedTimers lists every armed timer of the groups, in the order they fire (Timer.Compare).
func ArmedTimers[G SoftGroup](groups map[string]G) []Timer {
	var out []Timer
	for id, g := range groups {
		out = g.AppendTimers(out, id)
	}
	slices.SortFunc(out, Timer.Compare)
	return out
}

// NextDeadline returns the earliest deadline of timers (0 if none), for callers that sleep.
func NextDeadline(timers []Timer) int64 {
	var next int64
	for _, t := range timers {
		if next == 0 || t.At < next {
			next = t.At
		}
	}
	return next
}

// TimerResult is the outcome of one fired timer: its records form one atomic batch. Err is
// set when the timer's write failed (Kafka's runtime logs the failure and appends nothing):
// Records is then empty.
type TimerResult struct {
	Kind    TimerKind
	Group   string
	Member  string
	Records []recordcodec.Record
	Err     *Error
}

// RestoreMember arms the timers of a member of a loaded group as Kafka's onLoaded does,
// unless the member has soft state already: a session timer from now, and, for a member
// still revoking (unrevoked), a rebalance timer from now at its epoch.
func (g *GroupSoft[M, PM]) RestoreMember(id string, now int64, sessionTimeoutMs int32, unrevoked bool, rebalanceTimeoutMs, epoch int32) {
	if _, ok := g.Members[id]; ok {
		return
	}
	ms := g.Member(id).Timers()
	ms.ArmSession(now, sessionTimeoutMs)
	if unrevoked {
		ms.ArmRebalance(now, rebalanceTimeoutMs, epoch)
	}
}

// SoftGroupOf returns groups[id], made by create when missing: a protocol's soft state of a
// group, kept from the group's first decision on.
func SoftGroupOf[G any](groups map[string]*G, id string, create func() *G) *G {
	g := groups[id]
	if g == nil {
		g = create()
		groups[id] = g
	}
	return g
}
