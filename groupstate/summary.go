package groupstate

// GroupSummary is what a list of groups shows of one group: its identity, state, member count
// and epochs, read in place. View.Group copies every member with its assignment; a list of
// thousands of groups needs none of that, and copying it was a sixth of `replay groups` on a
// streams-heavy log.
type GroupSummary struct {
	GroupID string
	Type    GroupType
	State   string
	// ProtocolType is a classic group's protocol type as stored ("" for a simple group), and
	// "consumer", "share" or "streams" for the modern types.
	ProtocolType string
	Members      int
	// Classic groups: the generation, the chosen protocol ("" when none) and whether the
	// group is simple (no protocol type, no members: offsets only).
	Generation *int32
	Protocol   string
	Simple     bool
	// Modern groups: the group and assignment epochs; streams groups: the topology's epoch
	// (nil until a topology record).
	GroupEpoch, AssignmentEpoch, TopologyEpoch *int32
	// ServerAssignor is the assignor most members of a consumer group name (ties: the first
	// by name), "" when none names one (the broker's default applies).
	ServerAssignor string
}

// GroupSummary returns the summary of group id, of any type, without copying its members.
func (v View) GroupSummary(id string) (GroupSummary, bool) {
	s := v.s
	g, ok := s.groups[id]
	if !ok {
		return GroupSummary{}, false
	}
	i32 := func(x int32) *int32 { return &x }
	out := GroupSummary{GroupID: id, Type: g.groupType()}
	switch g := g.(type) {
	case *classicGroup:
		out.State, out.ProtocolType, out.Members = g.state(), g.protocolType, len(g.members)
		out.Generation, out.Simple = i32(g.generation), g.isSimple()
		if g.protocol != nil {
			out.Protocol = *g.protocol
		}
	case *consumerGroup:
		out.State, out.ProtocolType, out.Members = g.state(), "consumer", len(g.members)
		out.GroupEpoch, out.AssignmentEpoch = i32(g.groupEpoch), i32(g.assignmentEpoch)
		out.ServerAssignor = majorityAssignor(g.assignors)
	case *shareGroup:
		out.State, out.ProtocolType, out.Members = g.state(), "share", len(g.members)
		out.GroupEpoch, out.AssignmentEpoch = i32(g.groupEpoch), i32(g.assignmentEpoch)
	case *streamsGroup:
		out.State, out.ProtocolType, out.Members = g.state(s.version), "streams", len(g.members)
		out.GroupEpoch, out.AssignmentEpoch = i32(g.groupEpoch), i32(g.assignmentEpoch)
		if g.topology != nil {
			out.TopologyEpoch = i32(g.topology.Epoch)
		}
	}
	return out, true
}

// majorityAssignor is the server assignor most members name (ties: the first by name), ""
// when none names one. It reads Kafka's serverAssignors counts (order.go) with a tie rule a
// reader can predict, rather than the counts' map order Kafka breaks ties with.
func majorityAssignor(counts map[string]assignorCount) string {
	best, n := "", int32(0)
	for a, c := range counts {
		if a != "" && (c.members > n || c.members == n && a < best) {
			best, n = a, c.members
		}
	}
	return best
}

// NumGroupOffsets returns how many committed offsets group id has, without listing them.
func (v View) NumGroupOffsets(groupID string) int {
	gm := v.s.offsets[groupID]
	switch {
	case gm == nil:
		return 0
	case gm.packed != "":
		return gm.count
	}
	return gm.num
}
