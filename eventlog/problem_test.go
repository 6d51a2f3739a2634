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

// Forensic reports are summarised per file and kind (issue 13, item 12): a million bad
// batches in one file are one line and a bounded amount of memory, unless the report keeps
// everything (--verbose).
func TestReportSummarisedPerFileAndKind(t *testing.T) {
	fill := func(r *Report) {
		for i := range 100_000 {
			r.Add(Problem{Kind: KindBelowBase, Partition: 0, File: "a.log", Pos: int64(100 * i), Offset: int64(i), Detail: "below", SkippedBatches: 1, SkippedRecords: 2, SkippedBytes: 100})
		}
		r.Add(Problem{Kind: KindBadCRC, Partition: 0, File: "a.log", Pos: 5, Offset: -1, Detail: "crc", SkippedBytes: 9})
	}
	var r Report
	fill(&r)
	require.EqualValues(t, 100_001, r.Count())
	require.Len(t, r.Problems(), MaxKeptProblems)
	require.Equal(t, []string{
		"a.log: 100000 below-base problems from byte 0 to 9999900 (partition 0, base offsets 0..99999; skipped 100000 batches, 200000 records, 10000000 bytes); the first: below",
		"a.log: bad-crc at byte 5 (partition 0, base offset unknown): crc (skipped 0 batches, 0 records, 9 bytes)",
	}, r.ProblemLines())
	require.Equal(t, Tally{Problems: 100_000, Batches: 100_000, Records: 200_000, Bytes: 10_000_000}, r.Summary()[KindBelowBase])

	all := Report{KeepAll: true}
	fill(&all)
	require.Len(t, all.Problems(), 100_001)
	require.Len(t, all.ProblemLines(), 100_001)
}
