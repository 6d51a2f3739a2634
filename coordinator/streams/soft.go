package streams

import (
	"slices"

	"github.com/coordlog/coordlog/groupstate"
)

// Soft is the state Kafka keeps in memory only and never writes to the log: timers, the
// shutdown request, the endpoint-information epoch, reported task offsets and the configured
// topology (a function of the topology and the cluster metadata). groupstate holds only what
// replay can rebuild, so this lives apart, owned by the caller and passed to every call.
//
// The coordinator updates Soft as it decides, even when the caller then fails to append the
// records (Kafka does not roll these back either; see fact sheet 9.9). A caller that wants
// a dry run uses Clone first. After a restart, build a new Soft and call Restore: like
// Kafka's onLoaded it arms a session timer for every member and a rebalance timer for every
// member in UNREVOKED_TASKS; everything else starts empty (endpoint epoch 0, no shutdown
// request, no task offsets), as after a Kafka failover.
type Soft struct {
	Groups map[string]*GroupSoft
}

// GroupSoft is one group's soft state.
type GroupSoft struct {
	Members map[string]*MemberSoft
	// ShutdownRequestedBy is the first member that asked the application to shut down ("" if
	// none); cleared when the group becomes empty.
	ShutdownRequestedBy string
	// EndpointInformationEpoch is the in-memory IQ endpoint epoch (starts at 0).
	EndpointInformationEpoch int32
	// InitialDelayDeadline is when the initial-rebalance timer fires (0 = not armed).
	InitialDelayDeadline int64

	configured *configuredTopology
	// configuredFor identifies the inputs configured was built from.
	configuredVersion int64
	configuredEpoch   int32

	// model caches the group as built from the state at log offset modelOffset (see
	// Request.StateOffset).
	model       *group
	modelOffset int64
}

// MemberSoft is one member's timers and reported offsets.
type MemberSoft struct {
	// SessionDeadline is when the member is fenced if it does not heartbeat (0 = none).
	SessionDeadline int64
	// RebalanceDeadline is when the member is fenced if it has not revoked its tasks
	// (0 = none); it fires only if the member's epoch is still RebalanceEpoch.
	RebalanceDeadline int64
	RebalanceEpoch    int32
	// TaskOffsets and TaskEndOffsets are the last reported cumulative changelog offsets.
	TaskOffsets    map[TaskID]int64
	TaskEndOffsets map[TaskID]int64
}

// NewSoft returns empty soft state.
func NewSoft() *Soft { return &Soft{Groups: map[string]*GroupSoft{}} }

func (s *Soft) group(id string) *GroupSoft {
	g := s.Groups[id]
	if g == nil {
		g = &GroupSoft{Members: map[string]*MemberSoft{}}
		s.Groups[id] = g
	}
	return g
}

func (g *GroupSoft) member(id string) *MemberSoft {
	m := g.Members[id]
	if m == nil {
		m = &MemberSoft{}
		g.Members[id] = m
	}
	return m
}

// Clone returns a deep copy (the cached configured topology is shared: it is immutable).
func (s *Soft) Clone() *Soft {
	c := NewSoft()
	for id, g := range s.Groups {
		ng := *g
		ng.model = nil
		ng.Members = make(map[string]*MemberSoft, len(g.Members))
		for mid, m := range g.Members {
			nm := *m
			nm.TaskOffsets = cloneOffsets(m.TaskOffsets)
			nm.TaskEndOffsets = cloneOffsets(m.TaskEndOffsets)
			ng.Members[mid] = &nm
		}
		c.Groups[id] = &ng
	}
	return c
}

func cloneOffsets(m map[TaskID]int64) map[TaskID]int64 {
	if m == nil {
		return nil
	}
	c := make(map[TaskID]int64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Restore arms the timers of every member of every streams group in st, as Kafka does when
// a coordinator loads a partition: session timers from now, rebalance timers from now for
// members in UNREVOKED_TASKS. Groups and members already known keep their timers.
func (s *Soft) Restore(st groupstate.View, cfg func(groupID string) Config, now int64) {
	for _, id := range st.GroupIDs() {
		v, ok := st.StreamsGroup(id)
		if !ok {
			continue
		}
		c := cfg(id)
		gs := s.group(id)
		for i := range v.Members {
			m := memberFromView(&v.Members[i])
			if _, ok := gs.Members[m.id]; ok {
				continue
			}
			ms := gs.member(m.id)
			ms.SessionDeadline = now + int64(c.SessionTimeoutMs)
			if m.state == stateUnrevokedTasks {
				ms.RebalanceDeadline, ms.RebalanceEpoch = now+int64(max(m.rebalanceTimeoutMs, 0)), m.epoch
			}
		}
	}
}

// removeMember drops a member's timers and offsets (Kafka cancels its timers and forgets its
// task offsets when it leaves or is fenced).
func (g *GroupSoft) removeMember(id string) { delete(g.Members, id) }

// sortedMemberIDs lists the members with soft state, sorted.
func (g *GroupSoft) sortedMemberIDs() []string {
	ids := make([]string, 0, len(g.Members))
	for id := range g.Members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
