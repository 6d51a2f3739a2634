package groupstate

import "strings"

// topicOffsets is one topic's committed offsets in one group, by partition number. Kafka's
// partitions are 0..N-1 and a group commits most partitions of the topics it reads, in runs,
// so the offsets sit in a slice indexed by partition (a commit is an index into memory laid
// out in partition order, not a hashed (topic, partition) key in a table of 96-byte slots).
// The slice grows only while it stays at most about twice as long as the offsets it holds;
// a partition past that, or a negative one, goes to a map beside it, and moves into the slice
// when the slice grows over it. So memory stays within a small factor of what a map takes,
// whatever partitions a group commits.
type topicOffsets struct {
	name   string // the group's own copy of the topic name
	slots  []OffsetAndMetadata
	has    []bool
	dense  int // the offsets in slots
	sparse map[int32]OffsetAndMetadata
}

func (t *topicOffsets) len() int { return t.dense + len(t.sparse) }

func (t *topicOffsets) get(p int32) (OffsetAndMetadata, bool) {
	if p >= 0 && int(p) < len(t.slots) {
		return t.slots[p], t.has[p]
	}
	om, ok := t.sparse[p]
	return om, ok
}

// put stores om for partition p and reports whether p had no offset.
func (t *topicOffsets) put(p int32, om OffsetAndMetadata) bool {
	if p >= 0 && int(p) >= len(t.slots) {
		if limit := 2*(t.len()+1) + 16; int(p) < limit {
			t.grow(min(max(int(p)+1, 2*len(t.slots), 8), limit))
		}
	}
	if p >= 0 && int(p) < len(t.slots) {
		t.slots[p] = om
		if t.has[p] {
			return false
		}
		t.has[p] = true
		t.dense++
		return true
	}
	if t.sparse == nil {
		t.sparse = map[int32]OffsetAndMetadata{}
	}
	n := len(t.sparse)
	t.sparse[p] = om
	return len(t.sparse) > n
}

// grow makes the slice n long and moves the map's partitions below n into it.
func (t *topicOffsets) grow(n int) {
	slots := make([]OffsetAndMetadata, n)
	has := make([]bool, n)
	copy(slots, t.slots)
	copy(has, t.has)
	t.slots, t.has = slots, has
	for p, om := range t.sparse {
		if p >= 0 && int(p) < n {
			slots[p], has[p] = om, true
			t.dense++
			delete(t.sparse, p)
		}
	}
}

// del removes partition p's offset and reports whether there was one.
func (t *topicOffsets) del(p int32) bool {
	if p >= 0 && int(p) < len(t.slots) {
		if !t.has[p] {
			return false
		}
		t.slots[p], t.has[p] = OffsetAndMetadata{}, false
		t.dense--
		return true
	}
	n := len(t.sparse)
	delete(t.sparse, p)
	return len(t.sparse) < n
}

// each calls f for every offset: the slice's in partition order, then the map's in no order.
func (t *topicOffsets) each(f func(p int32, om *OffsetAndMetadata)) {
	for p := range t.slots {
		if t.has[p] {
			f(int32(p), &t.slots[p])
		}
	}
	for p, om := range t.sparse {
		f(p, &om)
	}
}

func newGroupOffsets(id string) *groupOffsets {
	return &groupOffsets{id: id, topics: map[string]*topicOffsets{}}
}

// topic returns the group's offsets of topic, new when it has none (under a copy of the
// name: the caller's may alias a read buffer). A topic whose offsets were all deleted keeps
// its (empty) entry: the commit memo of State may point at it.
func (gm *groupOffsets) topic(topic string) *topicOffsets {
	t := gm.topics[topic]
	if t == nil {
		t = &topicOffsets{name: strings.Clone(topic)}
		gm.topics[t.name] = t
	}
	return t
}

func (gm *groupOffsets) get(topic string, p int32) (OffsetAndMetadata, bool) {
	if t := gm.topics[topic]; t != nil {
		return t.get(p)
	}
	return OffsetAndMetadata{}, false
}

// each calls f for every offset of the group, topic by topic in no order.
func (gm *groupOffsets) each(f func(topic string, p int32, om *OffsetAndMetadata)) {
	for name, t := range gm.topics {
		t.each(func(p int32, om *OffsetAndMetadata) { f(name, p, om) })
	}
}
