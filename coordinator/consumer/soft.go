package consumer

import (
	"maps"
	"math"
	"slices"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
)

// Soft is the state Kafka keeps in memory only: timers, each group's metadata refresh
// deadline, the regex resolutions in flight, and which metadata version last created a
// topic. It is owned by the caller and passed to every call; after a restart build a new
// Soft and call Restore (Kafka's onLoaded). The coordinator updates it as it decides, even if
// the caller then does not append the records (Kafka does not roll these back either); a dry
// run uses Clone first.
type Soft struct {
	Groups map[string]*GroupSoft
	// NewTopicsVersion is lastMetadataImageWithNewTopics: the metadata version that last
	// created a topic (the first version seen counts, as after a failover), -1 before any.
	NewTopicsVersion int64
	knownTopics      map[string]bool
	knownVersion     int64
	seenMetadata     bool
}

// GroupSoft is one group's soft state: the skeleton's (its members' timers, the cached
// model) and the consumer protocol's.
type GroupSoft struct {
	coordinator.GroupSoft[MemberSoft, *MemberSoft]
	// RefreshDeadline and RefreshEpoch are the metadata refresh deadline: the subscription
	// metadata is recomputed when the deadline passed, when the group epoch is below
	// RefreshEpoch, or when the metadata version moved since RefreshVersion. Zero values
	// mean "refresh on the next heartbeat" (a new or restored group).
	RefreshDeadline int64
	RefreshEpoch    int32
	RefreshVersion  int64
	// RegexResolution is the resolution of regular expressions scheduled on the executor
	// (nil if none is in flight); the caller runs it with Coordinator.ResolveRegexes.
	RegexResolution *RegexResolution
}

// RegexResolution is one scheduled resolution of a group's regular expressions
// (TopicRegexResolver.resolveRegularExpressions on the executor).
type RegexResolution struct {
	Group   string
	Member  string   // the member whose heartbeat scheduled it
	Regexes []string // sorted
}

// MemberSoft is one member's timers: session and rebalance timers, and a classic-protocol
// member's join and sync timers.
type MemberSoft = coordinator.MemberTimers

// NewSoft returns empty soft state.
func NewSoft() *Soft { return &Soft{Groups: map[string]*GroupSoft{}, NewTopicsVersion: -1} }

func (s *Soft) group(id string) *GroupSoft {
	return coordinator.SoftGroupOf(s.Groups, id, newGroupSoft)
}

func newGroupSoft() *GroupSoft { return &GroupSoft{GroupSoft: coordinator.NewGroupSoft[MemberSoft]()} }

// Clone returns a deep copy.
func (s *Soft) Clone() *Soft {
	c := &Soft{Groups: make(map[string]*GroupSoft, len(s.Groups)), NewTopicsVersion: s.NewTopicsVersion,
		knownTopics: maps.Clone(s.knownTopics), knownVersion: s.knownVersion, seenMetadata: s.seenMetadata}
	for id, g := range s.Groups {
		ng := *g
		ng.GroupSoft = g.GroupSoft.Clone(func(m *MemberSoft) *MemberSoft { n := *m; return &n })
		if g.RegexResolution != nil {
			r := *g.RegexResolution
			r.Regexes = slices.Clone(r.Regexes)
			ng.RegexResolution = &r
		}
		c.Groups[id] = &ng
	}
	return c
}

// observeMetadata is onNewMetadataImage's bookkeeping of lastMetadataImageWithNewTopics:
// the first version seen counts as new, later versions when they bring a topic name not seen
// before.
func (s *Soft) observeMetadata(md *coordinator.Metadata) {
	if md == nil {
		return
	}
	if s.seenMetadata && md.Version == s.knownVersion {
		return
	}
	created := !s.seenMetadata
	for name := range md.Topics {
		if !s.knownTopics[name] {
			created = true
		}
	}
	s.knownTopics = make(map[string]bool, len(md.Topics))
	for name := range md.Topics {
		s.knownTopics[name] = true
	}
	if created {
		s.NewTopicsVersion = md.Version
	}
	s.seenMetadata, s.knownVersion = true, md.Version
}

// metadataExpired is ModernGroup.hasMetadataExpired, with a metadata version change standing
// for Kafka's requestMetadataRefresh on a metadata image that touches the group's topics.
func (g *GroupSoft) metadataExpired(now int64, groupEpoch int32, mdVersion int64) bool {
	return now >= g.RefreshDeadline || groupEpoch < g.RefreshEpoch || mdVersion != g.RefreshVersion
}

// setRefreshDeadline is setMetadataRefreshDeadline(now + METADATA_REFRESH_INTERVAL_MS).
func (g *GroupSoft) setRefreshDeadline(now int64, epoch int32, mdVersion int64) {
	g.RefreshDeadline, g.RefreshEpoch, g.RefreshVersion = now+math.MaxInt32, epoch, mdVersion
}

// Restore arms the timers of every member of every consumer group in st, as Kafka's
// onLoaded does when a coordinator loads a partition: a session timer from now with the
// group's session timeout for every member (classic-protocol members too: onLoaded does not
// use their JoinGroup's session timeout), and a rebalance timer for every member in
// UNREVOKED_PARTITIONS (classic-protocol members too, although their own requests never arm
// one). Join and sync timers are lost, as in Kafka. Groups and members already known keep
// theirs.
func (s *Soft) Restore(st groupstate.View, cfg func(groupID string) Config, now int64) {
	for _, id := range st.GroupIDs() {
		v, ok := st.ConsumerGroup(id)
		if !ok {
			continue
		}
		c := cfg(id)
		gs := s.group(id)
		for i := range v.Members {
			m := &v.Members[i]
			gs.RestoreMember(m.MemberID, now, c.SessionTimeoutMs, m.State == stateUnrevokedPartitons, m.RebalanceTimeoutMs, m.MemberEpoch)
		}
	}
}

// Timers lists every armed timer, in the order they fire (coordinator.Timer.Compare).
func (s *Soft) Timers() []coordinator.Timer { return coordinator.ArmedTimers(s.Groups) }

// NextDeadline returns the earliest armed timer deadline (0 if none), for callers that sleep.
func (s *Soft) NextDeadline() int64 { return coordinator.NextDeadline(s.Timers()) }
