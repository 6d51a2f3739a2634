package groupstate

// State is the in-memory model of one __consumer_offsets partition after replay. The zero
// value is not usable; call New. State is not safe for concurrent mutation; concurrent reads
// through the view methods are safe when no mutator runs.
type State struct {
	version KafkaVersion

	groups map[string]group

	// Committed offsets by group. Per offset: a struct value in the group's map, no pointer.
	offsets    map[string]*groupOffsets
	numOffsets int

	// Pending transactional offsets by producer id. An entry may be empty (an offset
	// tombstone removed its last offset): Kafka keeps it until the marker.
	pending map[int64]map[offsetKey]OffsetAndMetadata
	// The open-transactions index: (group, topic, partition) -> sorted producer ids that
	// have a pending offset for it. Always equal to what pending implies.
	open map[offsetKey][]int64

	// Share-group state-partition metadata, keyed by group id; it lives apart from the
	// groups map and survives group removal (GroupMetadataManager.shareGroupStatePartitionMetadata).
	shareStateMeta map[string]ShareStatePartitionMetadata

	// The group and topic of the previous non-transactional offset commit. Commits come in
	// runs (a consumer commits its partitions together), so most skip three map lookups.
	// lastOffsets is set only while the group exists; forgetLastCommit clears it on removals.
	lastGroup   string
	lastOffsets *groupOffsets
	lastTopic   *topicOffsets // one of lastOffsets.topics

	// imageTotals is set between NewFromImageHead and FinishImage (image.go).
	imageTotals *imageTotals
	// unchecked are the packed offset blocks of a state decoded with
	// DecodeImagePartUnchecked that no OffsetCheck has taken yet; imageErr is the first
	// damaged block a mutation unpacked (packed.go).
	unchecked []uncheckedBlock
	imageErr  error

	// sc is the mutators' scratch memory and the interned names (scratch.go).
	sc *scratch
	// keepOffset, when set, selects the offsets the state keeps (SetOffsetFilter).
	keepOffset func(group, topic string, partition int32) bool
	// changed is, while an ImageCache is attached, the ids whose group or offsets a mutator
	// touched since the cache's image (imagecache.go).
	changed map[string]struct{}
	cache   *ImageCache
}

// forgetLastCommit drops the memo of the previous offset commit; every removal of a group or
// of a group's offsets calls it.
func (s *State) forgetLastCommit() { s.lastGroup, s.lastOffsets, s.lastTopic = "", nil, nil }

// removeGroup deletes a group of any type. All removals go through here, so that the offset
// commit memo (which assumes its group exists) can never outlive the group.
func (s *State) removeGroup(groupID string) {
	s.touch(groupID)
	delete(s.groups, groupID)
	s.forgetLastCommit()
}

// groupOffsets holds one group's committed offsets, per topic by partition
// (offsettable.go); num counts them.
//
// A group restored from a state image keeps its offsets packed (packed != "", topics nil)
// until a mutator unpacks them; views read packed offsets in place, so that reads never write
// (packed.go).
type groupOffsets struct {
	id     string // the group id, owned by the state
	topics map[string]*topicOffsets
	num    int    // the offsets in topics
	packed string // the image's block of these offsets, sorted; "" once unpacked
	count  int    // the number of packed offsets
}

// TopicPartition identifies a partition by topic name.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

type offsetKey struct {
	group     string
	topic     string
	partition int32
}

type group interface {
	groupType() GroupType
}

// New returns an empty state that applies the replay rules of version v. An invalid v
// selects DefaultKafkaVersion.
func New(v KafkaVersion) *State {
	if !v.Valid() {
		v = DefaultKafkaVersion
	}
	return &State{
		version:        v,
		groups:         map[string]group{},
		offsets:        map[string]*groupOffsets{},
		pending:        map[int64]map[offsetKey]OffsetAndMetadata{},
		open:           map[offsetKey][]int64{},
		shareStateMeta: map[string]ShareStatePartitionMetadata{},
	}
}

// Version returns the Kafka version whose rules the state applies.
func (s *State) Version() KafkaVersion { return s.version }

// ---------------------------------------------------------------------------------------
// Group-level read access.

// GroupIDs returns the ids of all groups, sorted.
func (v View) GroupIDs() []string { return sortedKeys(v.s.groups) }

// NumGroups returns the number of groups.
func (v View) NumGroups() int { return len(v.s.groups) }

// GroupType returns the type of group id.
func (v View) GroupType(id string) (GroupType, bool) {
	s := v.s
	g, ok := s.groups[id]
	if !ok {
		return "", false
	}
	return g.groupType(), true
}

// GroupState returns the derived state of group id (Kafka's spelling: Empty, Stable,
// Assigning, Reconciling, NotReady).
func (v View) GroupState(id string) (string, bool) {
	s := v.s
	switch g := s.groups[id].(type) {
	case *classicGroup:
		return g.state(), true
	case *consumerGroup:
		return g.state(), true
	case *shareGroup:
		return g.state(), true
	case *streamsGroup:
		return g.state(s.version), true
	}
	return "", false
}
