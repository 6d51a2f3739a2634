package streams

import (
	"maps"

	"github.com/coordlog/coordlog/coordinator"
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

// GroupSoft is one group's soft state: the skeleton's (its members' timers and task offsets,
// the initial-rebalance timer, the cached model) and the streams protocol's.
type GroupSoft struct {
	coordinator.GroupSoft[MemberSoft, *MemberSoft]
	// ShutdownRequestedBy is the first member that asked the application to shut down ("" if
	// none); cleared when the group becomes empty.
	ShutdownRequestedBy string
	// EndpointInformationEpoch is the in-memory IQ endpoint epoch (starts at 0).
	EndpointInformationEpoch int32

	configured *configuredTopology
	// configuredFor identifies the inputs configured was built from.
	configuredVersion int64
	configuredEpoch   int32
}

// MemberSoft is one member's timers and reported offsets.
type MemberSoft struct {
	coordinator.MemberTimers
	// TaskOffsets and TaskEndOffsets are the last reported cumulative changelog offsets.
	TaskOffsets    map[TaskID]int64
	TaskEndOffsets map[TaskID]int64
}

// NewSoft returns empty soft state.
func NewSoft() *Soft { return &Soft{Groups: map[string]*GroupSoft{}} }

func (s *Soft) group(id string) *GroupSoft {
	return coordinator.SoftGroupOf(s.Groups, id, newGroupSoft)
}

func newGroupSoft() *GroupSoft { return &GroupSoft{GroupSoft: coordinator.NewGroupSoft[MemberSoft]()} }

// Clone returns a deep copy (the cached configured topology is shared: it is immutable).
func (s *Soft) Clone() *Soft {
	c := NewSoft()
	for id, g := range s.Groups {
		ng := *g
		ng.GroupSoft = g.GroupSoft.Clone(func(m *MemberSoft) *MemberSoft {
			nm := *m
			nm.TaskOffsets, nm.TaskEndOffsets = maps.Clone(m.TaskOffsets), maps.Clone(m.TaskEndOffsets)
			return &nm
		})
		c.Groups[id] = &ng
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
			gs.RestoreMember(m.id, now, c.SessionTimeoutMs, m.state == stateUnrevokedTasks, m.rebalanceTimeoutMs, m.epoch)
		}
	}
}

// Timers lists every armed timer, in the order they fire (coordinator.Timer.Compare).
func (s *Soft) Timers() []coordinator.Timer { return coordinator.ArmedTimers(s.Groups) }

// NextDeadline returns the earliest armed timer deadline (0 if none), for callers that sleep.
func (s *Soft) NextDeadline() int64 { return coordinator.NextDeadline(s.Timers()) }
