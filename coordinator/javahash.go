package coordinator

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf16"
)

// Java's hash-table iteration orders. Kafka's assignors and record builders iterate
// java.util.HashMap and HashSet instances, and where an algorithm keeps the first k elements
// of a set, or hands partitions to members in iteration order, that order decides the
// result. A coordinator that must give the assignments Kafka gives therefore reproduces it:
// a HashMap iterates its table buckets in index order, and the keys of one bucket in the
// order they were put (a resize splits a bucket into two while keeping that order). The
// bucket of a key is spread(hashCode) & (capacity-1), and the capacity is a power of two
// that depends on how the map was built (JavaMapCapacity*).
//
// Not modelled: a bucket holding 8 or more keys in a table of at least 64 becomes a
// red-black tree, which iterates differently. With Java's load factor of 0.75 and the
// hash codes of random member ids and topic ids this needs 8 colliding keys in one bucket;
// the differential tests against Kafka's own assignors have never met one.

// JavaStringHash is String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units.
func JavaStringHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x80 {
			h = 31*h + int32(c)
			continue
		}
		for _, u := range utf16.Encode([]rune(s[i:])) {
			h = 31*h + int32(u)
		}
		return h
	}
	return h
}

// JavaUUIDHash is org.apache.kafka.common.Uuid.hashCode: the two halves xor-ed, then the
// high and low ints of that xor-ed.
func JavaUUIDHash(id [16]byte) int32 {
	x := binary.BigEndian.Uint64(id[:8]) ^ binary.BigEndian.Uint64(id[8:])
	return int32(x>>32) ^ int32(x)
}

// JavaUUIDCompare is Uuid.compareTo: the most significant long, then the least significant
// one, each compared as a signed long (not bytewise).
func JavaUUIDCompare(a, b [16]byte) int {
	return cmp.Or(
		cmp.Compare(int64(binary.BigEndian.Uint64(a[:8])), int64(binary.BigEndian.Uint64(b[:8]))),
		cmp.Compare(int64(binary.BigEndian.Uint64(a[8:])), int64(binary.BigEndian.Uint64(b[8:]))))
}

// JavaStringCompare is String.compareTo: UTF-16 code units compared in order. It differs
// from Go's bytewise order only between characters above U+FFFF and those in
// U+E000..U+FFFF.
func JavaStringCompare(a, b string) int {
	ascii := true
	for i := 0; i < len(a) && ascii; i++ {
		ascii = a[i] < 0x80
	}
	for i := 0; i < len(b) && ascii; i++ {
		ascii = b[i] < 0x80
	}
	if ascii {
		return cmp.Compare(a, b)
	}
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// javaBucket is HashMap.hash (h ^ h>>>16) masked to a table of capacity buckets.
func javaBucket(h int32, capacity int) int {
	u := uint32(h)
	return int((u ^ u>>16) & uint32(capacity-1))
}

// javaTableSizeFor is HashMap.tableSizeFor: the power of two >= n (1 for n <= 1).
func javaTableSizeFor(n int) int {
	c := 1
	for c < n {
		c <<= 1
	}
	return c
}

// javaGrow is the capacity after n puts into a table of capacity c: HashMap doubles it
// whenever the size exceeds capacity*0.75.
func javaGrow(c, n int) int {
	for n > int(float32(c)*0.75) {
		c <<= 1
	}
	return c
}

// JavaMapCapacityGrown is the capacity of a HashMap of capacity c after it holds n keys
// (HashMap.resize keeps the order of the keys of a bucket).
func JavaMapCapacityGrown(c, n int) int { return javaGrow(c, n) }

// JavaMapCapacityDefault is the table capacity of a `new HashMap<>()` (or HashSet) after n
// puts (Collectors.toMap and computeIfAbsent-built maps are these).
func JavaMapCapacityDefault(n int) int { return javaGrow(16, n) }

// JavaMapCapacitySized is the capacity of a `new HashMap<>(initialCapacity)` after n puts.
func JavaMapCapacitySized(initialCapacity, n int) int {
	return javaGrow(javaTableSizeFor(initialCapacity), n)
}

// JavaMapCapacityCopy is the capacity of `new HashMap<>(m)` for a map m of n entries
// (HashMap.putMapEntries: tableSizeFor(n/0.75 + 1)).
func JavaMapCapacityCopy(n int) int {
	if n == 0 {
		return 16 // the default table, allocated on the first put
	}
	return javaGrow(javaTableSizeFor(int(float32(n)/0.75+1)), n)
}

// JavaSetCapacityCopy is the capacity of `new HashSet<>(c)` for a collection of n elements:
// a HashMap of initial capacity max(n/0.75 + 1, 16).
func JavaSetCapacityCopy(n int) int {
	return JavaMapCapacitySized(max(int(float32(n)/0.75)+1, 16), n)
}

// JavaHashOrder reorders keys, given in the order they were put into a Java HashMap whose
// table ends with capacity buckets, into the order the map iterates them. keys is sorted in
// place (a stable sort by bucket) and returned.
func JavaHashOrder[K any](keys []K, hash func(K) int32, capacity int) []K {
	if len(keys) < 2 {
		return keys
	}
	slices.SortStableFunc(keys, func(a, b K) int {
		return cmp.Compare(javaBucket(hash(a), capacity), javaBucket(hash(b), capacity))
	})
	return keys
}

// JavaIntSetOrder is the iteration order of a HashSet<Integer> of capacity capacity built by
// adding ps in order; ps is reordered in place. Integer.hashCode is the value itself.
func JavaIntSetOrder(ps []int32, capacity int) []int32 {
	return JavaHashOrder(ps, func(p int32) int32 { return p }, capacity)
}

// Kafka's TimelineHashMap (org.apache.kafka.timeline, a BaseHashTable underneath) is the map
// of a group's members, and its iteration order is the order of the records Kafka writes for
// every member (conversions, deletions) and, through the HashMap Kafka's
// TargetAssignmentBuilder fills from it, the order its assignors see members sharing a
// bucket. The table is an array of slots, a power of two of at least 2 (a map created with
// expected size 0 starts with 2). The slot of a key is the top log2(slots) bits of hashCode *
// -7046029254386353131 (Fibonacci hashing). A slot chains its keys in an array, in the order
// they were put: a new key is appended, a replaced key keeps its place, a removed key leaves
// the others in order. Before every put, insert or replace alike, the table doubles if
// (size+1)*0.75 > slots, moving the keys slot by slot, each chain in order; since a key of
// slot s can only move to slot 2s or 2s+1, every chain stays in the order its keys were put.
// The table never shrinks. The iterator walks the slots in order and each chain from its last
// key to its first. So the order follows from two facts: the order in which today's keys were
// inserted (a key removed and put again counts from its last insertion), and the table size,
// which the history of puts decides (KafkaTimelineGrow).
//
// Not modelled: reverting the map to a snapshot (Kafka's coordinator does it when an append
// fails) re-adds the entries changed since then at the end of their chains.

// KafkaTimelineMinSlots is the table size of a TimelineHashMap created with expected size 0,
// as the maps of a group's members and regular expressions are.
const KafkaTimelineMinSlots = 2

// KafkaTimelineGrow is the table size after a put (an insert or a replace) into a
// TimelineHashMap whose table has slots slots and holds size keys (BaseHashTable.
// baseAddOrReplace grows before it looks for the key).
func KafkaTimelineGrow(slots, size int) int {
	if 3*(size+1) > 4*slots {
		return 2 * slots
	}
	return slots
}

// KafkaTimelineSlots is the table size of a TimelineHashMap created with expected size 0
// after n keys were put into it one after the other, nothing else put or removed.
func KafkaTimelineSlots(n int) int {
	slots := KafkaTimelineMinSlots
	for size := range n {
		slots = KafkaTimelineGrow(slots, size)
	}
	return slots
}

// KafkaTimelineOrder reorders keys, given in the order they were inserted into a
// TimelineHashMap whose table has slots slots, into the order the map iterates them: by slot,
// and within a slot from the last inserted to the first. keys is reordered in place and
// returned.
func KafkaTimelineOrder[K any](keys []K, hash func(K) int32, slots int) []K {
	if len(keys) < 2 {
		return keys
	}
	type entry struct {
		slot uint64
		at   int
	}
	es := make([]entry, len(keys))
	for i, k := range keys {
		es[i] = entry{kafkaSlot(hash(k), slots), i}
	}
	slices.SortFunc(es, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.slot, b.slot), cmp.Compare(b.at, a.at))
	})
	order := make([]K, len(keys))
	for i, e := range es {
		order[i] = keys[e.at]
	}
	copy(keys, order)
	return keys
}

// kafkaSlot is BaseHashTable.findSlot: the top log2(slots) bits of the hash code times
// -7046029254386353131.
func kafkaSlot(h int32, slots int) uint64 {
	return uint64(int64(h)*-7046029254386353131) >> uint(65-bits.Len(uint(slots)))
}
