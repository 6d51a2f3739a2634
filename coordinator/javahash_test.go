package coordinator

import (
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
