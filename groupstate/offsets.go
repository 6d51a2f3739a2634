package groupstate

import (
	"slices"
	"strings"
)

// NoProducerID is RecordBatch.NO_PRODUCER_ID: the batch is not transactional.
const NoProducerID int64 = -1

// OffsetAndMetadata is a committed (or pending) offset, with the log offset of the record
// that wrote it.
type OffsetAndMetadata struct {
	CommittedOffset int64  `json:"committedOffset"`
	LeaderEpoch     int32  `json:"leaderEpoch"` // -1: none
	Metadata        string `json:"metadata"`
	CommitTimestamp int64  `json:"commitTimestamp"`
	ExpireTimestamp int64  `json:"expireTimestamp"` // -1: none
	TopicID         Uuid   `json:"topicId"`
	RecordOffset    int64  `json:"recordOffset"`
}

// CommittedOffset is an offset with its group, topic and partition.
type CommittedOffset struct {
	GroupID   string `json:"groupId"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	OffsetAndMetadata
}

// PendingTransaction is the pending transactional offsets of one producer id.
type PendingTransaction struct {
	ProducerID int64             `json:"producerId"`
	Offsets    []CommittedOffset `json:"offsets,omitempty"` // sorted by group, topic, partition
}

// TxnResult is the result carried by a transaction marker.
type TxnResult uint8

// Transaction results (ControlRecordType ABORT = 0, COMMIT = 1).
const (
	TxnAbort TxnResult = iota
	TxnCommit
)

func (r TxnResult) String() string {
	if r == TxnCommit {
		return "COMMIT"
	}
	return "ABORT"
}

// ReplayOffsetCommit replays an offset commit value (records 0 and 1), mirroring
// OffsetMetadataManager.replay: a missing group is created as a simple classic group; with
// producerID == NoProducerID the offset is committed at once, otherwise it waits in the
// pending map of that producer until its transaction marker. It never fails.
func (s *State) ReplayOffsetCommit(recordOffset, producerID int64, groupID, topic string, partition int32, v OffsetCommitValue) error {
	s.touch(groupID)
	if s.keepOffset != nil && !s.keepOffset(groupID, topic, partition) {
		// Not kept (SetOffsetFilter): only the commit's effect on groups.
		if _, ok := s.groups[groupID]; !ok {
			s.groups[strings.Clone(groupID)] = &classicGroup{protocolType: "", currentStateTimestamp: -1}
		}
		return nil
	}
	if producerID == NoProducerID && s.lastOffsets != nil && groupID == s.lastGroup {
		// The same group as the previous commit: it exists and has its offsets.
		gm := s.lastOffsets
		t := s.lastTopic
		if topic != t.name {
			t = gm.topic(topic)
			s.lastTopic = t
		}
		if t.put(partition, s.offsetValue(recordOffset, v)) {
			gm.num++
			s.numOffsets++
		}
		return nil
	}
	if _, ok := s.groups[groupID]; !ok {
		// Clone: the caller may pass a string that aliases a reused read buffer.
		s.groups[strings.Clone(groupID)] = &classicGroup{protocolType: "", currentStateTimestamp: -1}
	}
	om := s.offsetValue(recordOffset, v)
	if producerID == NoProducerID {
		s.putOffset(groupID, topic, partition, om)
		return nil
	}
	// The names may alias a read buffer: the pending map and the open-transactions index key
	// by the state's own copies.
	k := offsetKey{s.intern(groupID), s.intern(topic), partition}
	p := s.pending[producerID]
	if p == nil {
		p = map[offsetKey]OffsetAndMetadata{}
		s.pending[producerID] = p
	}
	p[k] = om
	ids := s.open[k]
	if i, found := slices.BinarySearch(ids, producerID); !found {
		s.open[k] = slices.Insert(ids, i, producerID)
	}
	return nil
}

func (s *State) offsetValue(recordOffset int64, v OffsetCommitValue) OffsetAndMetadata {
	om := OffsetAndMetadata{
		CommittedOffset: v.Offset,
		LeaderEpoch:     v.LeaderEpoch,
		Metadata:        strings.Clone(v.Metadata), // may alias a read buffer
		CommitTimestamp: v.CommitTimestamp,
		ExpireTimestamp: v.ExpireTimestamp,
		RecordOffset:    recordOffset,
	}
	if s.version.hasOffsetTopicID() {
		om.TopicID = v.TopicID
	}
	return om
}

func (s *State) putOffset(groupID, topic string, partition int32, om OffsetAndMetadata) {
	s.touch(groupID)
	gm := s.offsets[groupID]
	if gm == nil {
		gm = newGroupOffsets(strings.Clone(groupID))
		s.offsets[gm.id] = gm
	}
	s.unpackOffsets(gm)
	t := gm.topic(topic)
	if t.put(partition, om) {
		gm.num++
		s.numOffsets++
	}
	if _, exists := s.groups[groupID]; exists {
		// Remember only a group that exists: the fast path skips the existence check. gm.id is
		// the state's own copy of the name (the caller's may alias a read buffer).
		s.lastGroup, s.lastOffsets, s.lastTopic = gm.id, gm, t
	}
}

// ReplayOffsetCommitTombstone replays an offset tombstone (records 0 and 1): it removes the
// committed offset and the pending transactional offsets of every open transaction for the
// same group, topic and partition. Groups are not touched. It never fails.
func (s *State) ReplayOffsetCommitTombstone(groupID, topic string, partition int32) error {
	s.touch(groupID)
	if s.keepOffset != nil && !s.keepOffset(groupID, topic, partition) {
		return nil // nothing of the key is stored (SetOffsetFilter)
	}
	if gm := s.offsets[groupID]; gm != nil {
		s.unpackOffsets(gm)
		if t := gm.topics[topic]; t != nil && t.del(partition) {
			gm.num--
			s.numOffsets--
		}
		if gm.num == 0 {
			delete(s.offsets, groupID)
			s.forgetLastCommit()
		}
	}
	k := offsetKey{groupID, topic, partition}
	for _, pid := range s.open[k] {
		delete(s.pending[pid], k) // the producer's (possibly now empty) entry stays, as in Kafka
	}
	delete(s.open, k)
	return nil
}

// SetOffsetFilter makes the state keep only the committed and pending offsets of the keys
// (group, topic, partition) that keep accepts; nil keeps every offset. The commits of other
// keys still have their effect on groups (a commit for an unknown group creates its implicit
// group); their offsets, tombstones and pending entries are not kept. It serves proofs that
// compare the offsets of a large log part by part (replay/audit): a filtered state is not a
// whole state, and its image is not a snapshot of the log. Set it before the first record.
func (s *State) SetOffsetFilter(keep func(group, topic string, partition int32) bool) {
	s.keepOffset = keep
}

// ReplayEndTransactionMarker replays a COMMIT or ABORT control record of producerID. The
// producer's pending offsets are dropped from the pending map and the open-transactions
// index; on COMMIT each one is committed only when no offset exists for its partition or the
// existing one was written by an older record (smaller record offset). A marker without
// pending offsets is ignored. It never fails.
func (s *State) ReplayEndTransactionMarker(producerID int64, result TxnResult) error {
	p, ok := s.pending[producerID]
	if !ok {
		return nil
	}
	delete(s.pending, producerID)
	for k := range p {
		ids := s.open[k]
		if i, found := slices.BinarySearch(ids, producerID); found {
			ids = slices.Delete(ids, i, i+1)
			if len(ids) == 0 {
				delete(s.open, k)
			} else {
				s.open[k] = ids
			}
		}
	}
	if result != TxnCommit {
		return nil
	}
	for k, om := range p {
		if cur, ok := s.View().Offset(k.group, k.topic, k.partition); ok && om.RecordOffset <= cur.RecordOffset {
			continue
		}
		s.putOffset(k.group, k.topic, k.partition, om)
	}
	return nil
}

// ---------------------------------------------------------------------------------------
// Views.

// NumOffsets returns the number of committed offsets.
func (v View) NumOffsets() int { return v.s.numOffsets }

// Offset returns the committed offset of a group's partition.
func (v View) Offset(groupID, topic string, partition int32) (OffsetAndMetadata, bool) {
	s := v.s
	gm := s.offsets[groupID]
	if gm == nil {
		return OffsetAndMetadata{}, false
	}
	if gm.packed != "" {
		return gm.getPacked(topic, partition)
	}
	return gm.get(topic, partition)
}

// OffsetGroupIDs returns the ids of the groups that have committed offsets, sorted. Offsets
// live apart from groups: a group may have offsets without existing, and the reverse.
func (v View) OffsetGroupIDs() []string { return sortedKeys(v.s.offsets) }

// Offsets returns the committed offsets of a group, sorted by topic and partition.
func (v View) Offsets(groupID string) []CommittedOffset {
	s := v.s
	gm := s.offsets[groupID]
	if gm == nil {
		return nil
	}
	if gm.packed != "" {
		return gm.appendPacked(make([]CommittedOffset, 0, gm.count), groupID)
	}
	out := make([]CommittedOffset, 0, gm.num)
	gm.each(func(topic string, p int32, om *OffsetAndMetadata) {
		out = append(out, CommittedOffset{GroupID: groupID, Topic: topic, Partition: p, OffsetAndMetadata: *om})
	})
	sortOffsets(out)
	return out
}

// AllOffsets returns every committed offset, sorted by group, topic and partition.
func (v View) AllOffsets() []CommittedOffset {
	s := v.s
	if s.numOffsets == 0 {
		return nil
	}
	out := make([]CommittedOffset, 0, s.numOffsets)
	for _, g := range v.OffsetGroupIDs() {
		out = append(out, v.Offsets(g)...)
	}
	return out
}

func sortOffsets(o []CommittedOffset) {
	slices.SortFunc(o, func(a, b CommittedOffset) int {
		if c := strings.Compare(a.GroupID, b.GroupID); c != 0 {
			return c
		}
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
}

// PendingProducerIDs returns the producer ids with a pending transaction (one whose marker
// has not been replayed), sorted. A producer whose pending offsets were all cancelled by
// offset tombstones is still listed, as Kafka keeps its empty entry until the marker.
func (v View) PendingProducerIDs() []int64 {
	s := v.s
	ids := make([]int64, 0, len(s.pending))
	for id := range s.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// PendingTransactions returns the pending transactional offsets by producer id, sorted.
func (v View) PendingTransactions() []PendingTransaction {
	s := v.s
	if len(s.pending) == 0 {
		return nil
	}
	out := make([]PendingTransaction, 0, len(s.pending))
	for _, pid := range v.PendingProducerIDs() {
		p := s.pending[pid]
		pt := PendingTransaction{ProducerID: pid}
		for k, om := range p {
			pt.Offsets = append(pt.Offsets, CommittedOffset{GroupID: k.group, Topic: k.topic, Partition: k.partition, OffsetAndMetadata: om})
		}
		sortOffsets(pt.Offsets)
		out = append(out, pt)
	}
	return out
}

// PendingOffset returns the pending transactional offset of producerID for a partition.
func (v View) PendingOffset(producerID int64, groupID, topic string, partition int32) (OffsetAndMetadata, bool) {
	s := v.s
	om, ok := s.pending[producerID][offsetKey{groupID, topic, partition}]
	return om, ok
}

// OpenTransactions returns the producer ids with a pending offset for the partition, sorted
// (Kafka's openTransactions index).
func (v View) OpenTransactions(groupID, topic string, partition int32) []int64 {
	s := v.s
	return slices.Clone(s.open[offsetKey{groupID, topic, partition}])
}

// HasOpenTransactions reports whether the group has any pending transactional offset.
func (v View) HasOpenTransactions(groupID string) bool {
	s := v.s
	for k := range s.open {
		if k.group == groupID {
			return true
		}
	}
	return false
}
