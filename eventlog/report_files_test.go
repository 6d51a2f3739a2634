package eventlog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReportGroups: thousands of problems of one kind in one file count as one ProblemGroup,
// with what they skipped and where the first and last are; kinds and files stay apart.
func TestReportGroups(t *testing.T) {
	var r Report
	for i := int64(0); i < 1000; i++ {
		r.Add(Problem{Kind: KindSuperseded, Partition: 2, File: "b.log", Pos: i * 10, Offset: 100 + i, SkippedBatches: 1, SkippedRecords: 2, SkippedBytes: 10})
	}
	r.Add(Problem{Kind: KindBadCRC, Partition: 2, File: "b.log", Pos: 10000, Offset: 1100, SkippedBatches: 1, SkippedRecords: 1, SkippedBytes: 70})
	r.Add(Problem{Kind: KindTruncated, Partition: 1, File: "a.log", Pos: 5, Offset: -1, SkippedBytes: 3})
	got := r.Groups()
	require.Len(t, got, 3)
	require.Equal(t, ProblemGroup{File: "a.log", Partition: 1, Kind: KindTruncated, Tally: Tally{Problems: 1, Bytes: 3}, First: got[0].First, Last: got[0].First}, got[0])
	require.Equal(t, Tally{Problems: 1000, Batches: 1000, Records: 2000, Bytes: 10000}, got[1].Tally)
	require.Equal(t, KindSuperseded, got[1].Kind)
	require.Equal(t, int64(100), got[1].First.Offset)
	require.Equal(t, int64(1099), got[1].Last.Offset)
	require.Equal(t, KindBadCRC, got[2].Kind)
	require.Equal(t, int64(1), got[2].Problems)
}

// TestReportRender: without verbose, 1,000 superseded batches of one file are one note and two
// damaged batches of another one line under the damage header; verbose lists every problem.
func TestReportRender(t *testing.T) {
	fill := func(r *Report) {
		r.Warn("x.cleaned: transient file ignored")
		for i := int64(0); i < 1000; i++ {
			r.Add(Problem{Kind: KindSuperseded, File: "b.log", Pos: i * 10, Offset: 100 + i, SkippedBatches: 1, SkippedRecords: 1, SkippedBytes: 10})
		}
		for i := int64(0); i < 2; i++ {
			r.Add(Problem{Kind: KindBadCRC, File: "c.log", Pos: 40 + i, Offset: 7, Detail: "crc 1 != 2", SkippedBatches: 1, SkippedRecords: 3, SkippedBytes: 70})
		}
	}
	var r Report
	fill(&r)
	var notes, damage strings.Builder
	r.Render(&notes, &damage, false)
	require.Equal(t, "warning: x.cleaned: transient file ignored\n"+
		"note: b.log: 1000 batches below the offsets earlier segment files reached (1000 records, base offsets 100 to 1099): superseded, skipped as Kafka's reads skip them (--verbose lists each)\n",
		notes.String())
	require.Equal(t, "2 problems in the input (--verbose lists each):\n"+
		"  c.log: 2 bad-crc problems (skipped 2 batches, 6 records, 140 bytes), the first at byte 40 (partition 0, base offset 7): crc 1 != 2\n",
		damage.String())
	// verbose, from a report that kept every problem (--verbose sets KeepAll on the input's).
	all := Report{KeepAll: true}
	fill(&all)
	notes.Reset()
	damage.Reset()
	all.Render(&notes, &damage, true)
	require.Equal(t, "warning: x.cleaned: transient file ignored\n", notes.String())
	require.Equal(t, 1003, strings.Count(damage.String(), "\n"))
	require.Contains(t, damage.String(), "  c.log: bad-crc at byte 41 (partition 0, base offset 7): crc 1 != 2 (skipped 1 batch, 3 records, 70 bytes)\n")
	// verbose from a report that did not keep them all: the counts, not a partial list.
	notes.Reset()
	damage.Reset()
	r.Render(&notes, &damage, true)
	require.Contains(t, damage.String(), "2 problems in the input (--verbose lists each):\n")
}
