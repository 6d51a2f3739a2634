package groupstate

import (
	"cmp"
	"maps"
	"slices"
)

// Kafka keeps a modern group's members, and a consumer group's resolved regular expressions
// and its counts of members per server assignor, in TimelineHashMaps
// (org.apache.kafka.timeline), and where it iterates them (the records of a conversion or a
// deletion, the input of its assignors, the choice of the preferred assignor) their order
// decides what it writes. That order is not a function of the keys: it depends on the order the keys were
// inserted and on the size of the map's table, which grows with the puts and never shrinks
// (coordinator/javahash.go has the iteration rule). Both follow from the log: a broker that
// loaded the partition built its maps by replaying it, and one that never restarted built
// them by replaying its own decisions' records, in the same order. So replay keeps them, per
// map: kafkaTable (the table size and the next insertion sequence number) and, in each
// member, regex or server assignor, the sequence number it got when it was inserted. A key
// removed and put again is a new insertion.
//
// Which record is which operation on the map is Kafka's replay (GroupMetadataManager.replay,
// the same in 4.0 to 4.4):
//
//   - consumer members: records 5 and 8 put the member (insert or replace), a record 8
//     tombstone puts an existing one, a record 5 tombstone removes it;
//   - share members: records 10 and 14 put the member, twice when they create it
//     (ShareGroup.getOrMaybeCreateMember puts the new member before the update puts it
//     again), a record 14 tombstone puts an existing one, a record 10 tombstone removes it;
//   - streams members: records 19 and 22 put the member, a record 22 tombstone puts an
//     existing one, a record 19 tombstone removes it;
//   - consumer regexes: a record 16 removes the regex and puts it again
//     (ConsumerGroup.updateResolvedRegularExpression), so it moves to the end; its tombstone
//     removes it;
//   - consumer server assignors (ConsumerGroup.maybeUpdateServerAssignors, on every put and
//     removal of a member, Map.compute on the map of counts): the member's assignor before
//     the record, if any, counts one member less (its key removed at 0, else put), then its
//     assignor after the record, if any, one more (put; inserted at 1). A member's record 8
//     thus moves its assignor to the end of the map when it is the assignor's only member.
//
// The table and the sequence numbers are not part of a Dump (two logs that replay to equal
// states may leave different orders, for instance a log and its compaction, whose records
// come in another order), so Equal ignores them, and a state restored from a Dump, or from an
// image of format 1 (written before coordlog kept them), assumes an order (assumeOrder):
// the keys inserted in sorted order into a table that never held more than today's keys,
// each put once more after the last insertion. View.MemberTable says when the order is
// assumed.

// kafkaTable is the layout of one of Kafka's TimelineHashMaps, besides its keys.
type kafkaTable struct {
	// slots is the size of the table: a power of two, 2 for a map created with expected
	// size 0 (Kafka's are), doubled by a put that would take the map past 0.75 keys per
	// slot (BaseHashTable.baseAddOrReplace, which checks before it looks for the key, so a
	// replace can grow the table too), never shrunk.
	slots uint32
	// next is the sequence number the next inserted key gets.
	next uint64
	// assumed: the order was not replayed but assumed (assumeOrder).
	assumed bool
}

// minSlots is the table size of a TimelineHashMap created with expected size 0.
const minSlots = 2

func newKafkaTable() kafkaTable { return kafkaTable{slots: minSlots} }

// put is a put into the map while it holds size keys: the table grows first if it must.
func (t *kafkaTable) put(size int) {
	if 3*(uint64(size)+1) > 4*uint64(t.slots) {
		t.slots *= 2
	}
}

// insert returns the sequence number of a key inserted now.
func (t *kafkaTable) insert() uint64 {
	n := t.next
	t.next++
	return n
}

// assumeOrder gives a map whose order was not replayed the assumed one: its keys inserted in
// sorted order (seqs are set through seq, in the order of keys, which must be sorted) into
// a table that then saw one more put.
func (t *kafkaTable) assumeOrder(n int, seq func(i int) *uint64) {
	*t = newKafkaTable()
	for i := range n {
		t.put(i)
		*seq(i) = t.insert()
	}
	t.put(n)
	t.assumed = true
}

// TimelineTable is what the iteration order of one of Kafka's TimelineHashMaps depends on
// besides its keys (order.go; coordinator.KafkaTimelineOrder turns it into the order).
type TimelineTable struct {
	// Inserted is the map's keys in the order they were inserted, the earliest first.
	Inserted []string
	// Slots is the size of the map's table.
	Slots int
	// Assumed: the state was restored from a Dump or from an image written before coordlog
	// kept the order (format 1), and the order is an assumption: the keys inserted in sorted
	// order into a table that never held more than they.
	Assumed bool
}

// MemberTable returns the table of Kafka's map of the members of the consumer, share or
// streams group id; false for a classic or missing group.
func (v View) MemberTable(id string) (TimelineTable, bool) {
	switch g := v.s.groups[id].(type) {
	case *consumerGroup:
		return memberTable(&g.modernGroup, func(m *ConsumerMember) uint64 { return m.seq }), true
	case *shareGroup:
		return memberTable(&g.modernGroup, func(m *ShareMember) uint64 { return m.seq }), true
	case *streamsGroup:
		return memberTable(&g.modernGroup, func(m *StreamsMember) uint64 { return m.seq }), true
	}
	return TimelineTable{}, false
}

func memberTable[M, T any](g *modernGroup[M, T], seq func(*M) uint64) TimelineTable {
	return g.memberTable.view(insertionOrder(g.members, seq))
}

func (t *kafkaTable) view(inserted []string) TimelineTable {
	return TimelineTable{Inserted: inserted, Slots: int(t.slots), Assumed: t.assumed}
}

// insertionOrder lists the keys of m by their sequence numbers.
func insertionOrder[V any](m map[string]V, seq func(V) uint64) []string {
	if len(m) == 0 {
		return nil
	}
	type keyed struct {
		seq uint64
		key string
	}
	ks := make([]keyed, 0, len(m))
	for k, v := range m {
		ks = append(ks, keyed{seq(v), k})
	}
	slices.SortFunc(ks, func(a, b keyed) int { return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.key, b.key)) })
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.key
	}
	return out
}

// RegexTable returns the table of Kafka's map of the resolved regexes of the consumer group
// id; false for another or a missing group.
func (v View) RegexTable(id string) (TimelineTable, bool) {
	g, ok := v.s.groups[id].(*consumerGroup)
	if !ok {
		return TimelineTable{}, false
	}
	return g.regexTable.view(insertionOrder(g.regexes, func(r ResolvedRegularExpression) uint64 { return r.seq })), true
}

// AssignorTable returns the table of Kafka's map of the server assignors the members of the
// consumer group id name (serverAssignors: assignor -> number of members); false for another
// or a missing group.
func (v View) AssignorTable(id string) (TimelineTable, bool) {
	g, ok := v.s.groups[id].(*consumerGroup)
	if !ok {
		return TimelineTable{}, false
	}
	return g.assignorTable.view(insertionOrder(g.assignors, func(a assignorCount) uint64 { return a.seq })), true
}

// assumeMemberOrder gives a group whose member order was not replayed the assumed one.
func assumeMemberOrder[M, T any](g *modernGroup[M, T], seq func(*M) *uint64) {
	ids := sortedKeys(g.members)
	g.memberTable.assumeOrder(len(ids), func(i int) *uint64 { return seq(g.members[ids[i]]) })
}

// assumeOrder gives every modern group of s the assumed orders (a state restored from a
// Dump).
func (s *State) assumeOrder() {
	for _, g := range s.groups {
		switch g := g.(type) {
		case *consumerGroup:
			g.assumeOrder()
		case *shareGroup:
			g.assumeOrder()
		case *streamsGroup:
			g.assumeOrder()
		}
	}
}

func (g *consumerGroup) assumeOrder() {
	assumeMemberOrder(&g.modernGroup, func(m *ConsumerMember) *uint64 { return &m.seq })
	assumeMapOrder(&g.regexTable, g.regexes, func(r *ResolvedRegularExpression) *uint64 { return &r.seq })
	g.assignors = nil
	for _, m := range g.members {
		if m.ServerAssignor != nil {
			if g.assignors == nil {
				g.assignors = map[string]assignorCount{}
			}
			a := g.assignors[*m.ServerAssignor]
			a.members++
			g.assignors[*m.ServerAssignor] = a
		}
	}
	assumeMapOrder(&g.assignorTable, g.assignors, func(a *assignorCount) *uint64 { return &a.seq })
}

// assumeMapOrder gives a map of values, whose order was not replayed, the assumed one.
func assumeMapOrder[V any](t *kafkaTable, m map[string]V, seq func(*V) *uint64) {
	keys := sortedKeys(m)
	vals := make([]V, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	t.assumeOrder(len(keys), func(i int) *uint64 { return seq(&vals[i]) })
	for i, k := range keys {
		m[k] = vals[i]
	}
}

func (g *shareGroup) assumeOrder() {
	assumeMemberOrder(&g.modernGroup, func(m *ShareMember) *uint64 { return &m.seq })
}

func (g *streamsGroup) assumeOrder() {
	assumeMemberOrder(&g.modernGroup, func(m *StreamsMember) *uint64 { return &m.seq })
}

// copyOrder gives the modern groups of s the orders of their namesakes in from, an equal
// state (Clone).
func (s *State) copyOrder(from *State) {
	for id, g := range s.groups {
		switch g := g.(type) {
		case *consumerGroup:
			f := from.groups[id].(*consumerGroup)
			copyMemberOrder(&g.modernGroup, &f.modernGroup, func(m *ConsumerMember) *uint64 { return &m.seq })
			g.regexTable = f.regexTable
			for re, r := range g.regexes {
				r.seq = f.regexes[re].seq
				g.regexes[re] = r
			}
			g.assignorTable, g.assignors = f.assignorTable, maps.Clone(f.assignors)
		case *shareGroup:
			copyMemberOrder(&g.modernGroup, &from.groups[id].(*shareGroup).modernGroup, func(m *ShareMember) *uint64 { return &m.seq })
		case *streamsGroup:
			copyMemberOrder(&g.modernGroup, &from.groups[id].(*streamsGroup).modernGroup, func(m *StreamsMember) *uint64 { return &m.seq })
		}
	}
}

func copyMemberOrder[M, T any](to, from *modernGroup[M, T], seq func(*M) *uint64) {
	to.memberTable = from.memberTable
	for id, m := range to.members {
		*seq(m) = *seq(from.members[id])
	}
}

// assignorCount is an entry of Kafka's serverAssignors map of a consumer group: how many
// members name the assignor, and its insertion sequence number.
type assignorCount struct {
	members int32
	seq     uint64
}

// updateAssignors is ConsumerGroup.maybeUpdateServerAssignors for a member put or removed
// whose server assignor was old and is now new (nil: none, or no member).
func (g *consumerGroup) updateAssignors(old, new *string) {
	if old != nil {
		if a, ok := g.assignors[*old]; ok {
			if a.members == 1 {
				delete(g.assignors, *old)
			} else {
				g.assignorTable.put(len(g.assignors))
				a.members--
				g.assignors[*old] = a
			}
		}
	}
	if new != nil {
		g.assignorTable.put(len(g.assignors))
		a, ok := g.assignors[*new]
		if !ok {
			if g.assignors == nil {
				g.assignors = map[string]assignorCount{}
			}
			a.seq = g.assignorTable.insert()
		}
		a.members++
		g.assignors[*new] = a
	}
}
