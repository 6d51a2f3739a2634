package eventlog

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProblemsByPartition: partitions read in parallel report in any order; Problems lists
// them by partition, each partition's problems in the order found.
func TestProblemsByPartition(t *testing.T) {
	var r Report
	for _, p := range []Problem{{Partition: 3, Pos: 1}, {Partition: 1, Pos: 7}, {Partition: 3, Pos: 2}, {Partition: 1, Pos: 5}} {
		r.Add(p)
	}
	var got [][2]int64
	for _, p := range r.Problems() {
		got = append(got, [2]int64{int64(p.Partition), p.Pos})
	}
	require.Equal(t, [][2]int64{{1, 7}, {1, 5}, {3, 1}, {3, 2}}, got)
}
