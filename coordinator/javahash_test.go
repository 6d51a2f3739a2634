package coordinator

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJavaHashes: String.hashCode and Uuid.hashCode values computed by a JVM, and the
// capacities Java's HashMap and HashSet constructors end with.
func TestJavaHashes(t *testing.T) {
	require.Equal(t, int32(99162322), JavaStringHash("hello"))
	require.Equal(t, int32(0), JavaStringHash(""))
	require.Equal(t, int32(-286926412), JavaStringHash("uniform"))
	require.Equal(t, int32(108280125), JavaStringHash("range"))
	require.Equal(t, int32(0x4e20), JavaStringHash("\u4e20"))        // one UTF-16 unit
	require.Equal(t, int32(54959989), JavaStringHash("\U0001F600x")) // a surrogate pair
	require.Equal(t, int32(0), JavaUUIDHash([16]byte{}))
	require.Equal(t, int32(0x01020304^0x05060708), JavaUUIDHash([16]byte{1, 2, 3, 4, 5, 6, 7, 8}))

	require.Equal(t, 16, JavaMapCapacityDefault(0))
	require.Equal(t, 16, JavaMapCapacityDefault(12))
	require.Equal(t, 32, JavaMapCapacityDefault(13))
	require.Equal(t, 4, JavaMapCapacityCopy(2)) // 2/0.75+1 = 3.67 -> 4
	require.Equal(t, 8, JavaMapCapacityCopy(3)) // 3/0.75+1 = 5 -> 8
	require.Equal(t, 8, JavaMapCapacityCopy(4))
	require.Equal(t, 16, JavaSetCapacityCopy(3))
	require.Equal(t, 32, JavaSetCapacityCopy(12)) // 12/0.75+1 = 17
	require.Equal(t, 2, JavaMapCapacitySized(1, 1))
}

// TestJavaHashOrder: a HashMap<Integer, Integer> copied from a 2-entry map has 4 buckets, so
// after adding 4 it iterates 0, 4, 1, the order of record 8's partitions [0,4,1] that a Kafka
// 4.4 broker wrote in fixtures/real/consumer (offset 48).
func TestJavaHashOrder(t *testing.T) {
	require.Equal(t, []int32{0, 4, 1}, JavaIntSetOrder([]int32{0, 1, 4}, JavaMapCapacityCopy(2)))
	require.Equal(t, []int32{0, 1, 4}, JavaIntSetOrder([]int32{0, 1, 4}, 16))
	require.Equal(t, []int32{16, 1, 17}, JavaIntSetOrder([]int32{1, 16, 17}, 16))
	require.Equal(t, -1, JavaUUIDCompare([16]byte{0x80}, [16]byte{0x01})) // signed longs
	require.Equal(t, -1, JavaStringCompare("\U0001F600", "\uFFFF"))       // surrogates sort first in UTF-16
}

// TestKafkaTimelineOrder: the iteration orders of org.apache.kafka.timeline.TimelineHashMap
// (kafka-server-common 4.4.0, new TimelineHashMap<>(registry, 0), keySet() after the puts),
// computed by a JVM: the two members of the group fixtures/real/conversion upgrades (Kafka
// wrote their records 5, 7 and 8 in this order), ten and forty members (the table grows to 16
// and 64 slots), and keys sharing a String.hashCode ("Aa" and "BB"), whose chain iterates from
// its last key.
func TestKafkaTimelineOrder(t *testing.T) {
	order := func(keys ...string) []string {
		return KafkaTimelineOrder(keys, JavaStringHash)
	}
	require.Equal(t, []string{"k2-c84346fb-a96d-4532-b8d3-692bd8df9d50", "k1-67f05eb9-e782-45ec-9621-64ad46129382"},
		order("k1-67f05eb9-e782-45ec-9621-64ad46129382", "k2-c84346fb-a96d-4532-b8d3-692bd8df9d50"))
	require.Equal(t, []string{"c", "e", "b", "d", "a"}, order("a", "b", "c", "d", "e"))
	require.Equal(t, []string{"BB", "Aa", "BBAa", "AaBB", "BBBB", "AaAa"}, order("Aa", "BB", "AaAa", "BBBB", "AaBB", "BBAa"))
	var ten, forty []string
	for i := range 10 {
		ten = append(ten, fmt.Sprintf("m%d", i))
	}
	for i := range 40 {
		forty = append(forty, fmt.Sprintf("member-%d", i))
	}
	require.Equal(t, strings.Split("m5,m0,m2,m7,m4,m9,m1,m6,m3,m8", ","), order(ten...))
	require.Equal(t, strings.Split("member-34,member-21,member-13,member-39,member-26,member-3,member-31,member-18,"+
		"member-23,member-10,member-8,member-36,member-0,member-28,member-15,member-20,member-5,member-33,member-38,"+
		"member-25,member-12,member-2,member-30,member-17,member-7,member-35,member-22,member-14,member-27,member-4,"+
		"member-32,member-19,member-24,member-11,member-9,member-37,member-1,member-29,member-16,member-6", ","), order(forty...))
}
