package eventlog

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMemory(t *testing.T) {
	b := func(p int32, base, last int64) *Batch {
		return &Batch{Partition: p, BaseOffset: base, LastOffset: last}
	}
	m, err := NewMemory(b(1, 0, 2), b(1, 5, 5), b(0, 3, 4))
	require.NoError(t, err)
	parts, _ := m.Partitions()
	require.Equal(t, []int32{0, 1}, parts)
	first, next, _ := m.Offsets(1)
	require.Equal(t, [2]int64{0, 6}, [2]int64{first, next})
	first, next, _ = m.Offsets(9)
	require.Equal(t, first, next, "an empty partition")
	read := func(p int32, from int64) []int64 {
		it, err := m.Batches(p, from)
		require.NoError(t, err)
		defer it.Close()
		var bases []int64
		for it.Next() {
			bases = append(bases, it.Batch().BaseOffset)
		}
		require.NoError(t, it.Err())
		return bases
	}
	require.Equal(t, []int64{0, 5}, read(1, 0))
	require.Equal(t, []int64{0, 5}, read(1, 2), "the batch holding from comes whole")
	require.Equal(t, []int64{5}, read(1, 3), "from in a gap: the next batch")
	require.Empty(t, read(1, 6))
	require.ErrorContains(t, m.Append(b(1, 5, 7)), "is not after offset 5")
	require.ErrorContains(t, m.Append(b(1, 9, 8)), "ends before it starts")
}
