package audit

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// source builds a log: each element of batches is one batch at its own base offset.
func source(t *testing.T, batches ...struct {
	base int64
	recs []recordcodec.Record
}) eventlog.Source {
	t.Helper()
	m, err := eventlog.NewMemory()
	require.NoError(t, err)
	for _, bt := range batches {
		lb := &logBuilder{t: t, next: bt.base}
		lb.batch(-1, bt.recs...)
		require.NoError(t, m.Append(lb.log[0]))
	}
	return m
}

type batchAt = struct {
	base int64
	recs []recordcodec.Record
}

func TestCompactionProof(t *testing.T) {
	ctx := context.Background()
	tomb := recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit, Group: "h", Topic: "t", Partition: 0}}
	original := source(t,
		batchAt{0, []recordcodec.Record{offsetCommit("g", "t", 0, 1), offsetCommit("h", "t", 0, 5)}},
		batchAt{2, []recordcodec.Record{offsetCommit("g", "t", 0, 2), tomb}},
	)
	// What Kafka's cleaner leaves once the tombstone's horizon passed: the latest commit of g,
	// nothing of h. Replaying it no longer creates h's implicit group.
	compacted := source(t, batchAt{2, []recordcodec.Record{offsetCommit("g", "t", 0, 2)}}, batchAt{3, nil})
	var reported []string
	report := func(format string, args ...any) { reported = append(reported, fmt.Sprintf(format, args...)) }
	require.NoError(t, CompactionProof{Report: report}.Verify(ctx, original, compacted, []int32{0}))
	require.Equal(t, []string{"partition 0: 1 implicit group(s) (no members, no metadata; created by replaying offset commits) exist on one side only, as after Kafka's own cleaner"}, reported)

	err := CompactionProof{Exact: true}.Verify(ctx, original, compacted, []int32{0})
	require.ErrorContains(t, err, "partition 0: states differ (original -> compacted)")
	require.ErrorContains(t, err, "- group h")

	wrong := source(t, batchAt{0, []recordcodec.Record{offsetCommit("g", "t", 0, 1)}}, batchAt{3, nil})
	err = CompactionProof{}.Verify(ctx, original, wrong, []int32{0})
	require.ErrorContains(t, err, "states differ")
	require.ErrorContains(t, err, "~ offset g/t-0")

	short := source(t, batchAt{2, []recordcodec.Record{offsetCommit("g", "t", 0, 2)}})
	err = CompactionProof{}.Verify(ctx, original, short, []int32{0})
	require.EqualError(t, err, "partition 0: next offset 4 after the original, 3 after the compacted log")

	// The digest is the state's, not the log's: equal states from different logs match.
	a, b := replay.New(0, replay.Options{}), replay.New(0, replay.Options{})
	require.NoError(t, a.Run(ctx, original, 1<<62))
	require.NoError(t, b.Run(ctx, compacted, 1<<62))
	da, na, err := StateDigest(a.State(), false)
	require.NoError(t, err)
	db, nb, err := StateDigest(b.State(), false)
	require.NoError(t, err)
	require.Equal(t, da, db)
	require.Equal(t, [2]int{2, 1}, [2]int{na, nb}, "g on both sides, h on the original only")
}

// TestCompactionProofSizedByOriginal: the parts are sized on the compacted log first, which
// holds far fewer keys than its original when the cleaner removed deleted ones; a part of the
// original that then exceeds the budget sizes the parts again, and the proof still passes
// (and still fails a wrong compaction).
func TestCompactionProofSizedByOriginal(t *testing.T) {
	ctx := context.Background()
	var commits, tombs, kept []recordcodec.Record
	for p := range int32(60) {
		commits = append(commits, offsetCommit("g", "t", p, int64(p)))
		if p < 50 {
			tombs = append(tombs, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit, Group: "g", Topic: "t", Partition: p}})
		} else {
			kept = append(kept, offsetCommit("g", "t", p, int64(p)))
		}
	}
	original := source(t, batchAt{0, commits}, batchAt{60, tombs})
	// What the cleaner leaves once the tombstones' horizon passed: the ten keys not deleted.
	compacted := source(t, batchAt{50, kept}, batchAt{109, nil})
	var reported []string
	report := func(format string, args ...any) { reported = append(reported, fmt.Sprintf(format, args...)) }
	pr := CompactionProof{Report: report, MemoryBudget: 15 * offsetBookEntryBytes}
	require.NoError(t, pr.Verify(ctx, original, compacted, []int32{0}))
	// The compacted log's 10 keys fit a budget of 15, the original's 60 do not: the parts are
	// sized on the original's count (again if a part of them still does not fit).
	sizings := 0
	for _, r := range reported {
		if strings.Contains(r, "comparing them in") {
			var keys int
			_, err := fmt.Sscanf(r, "partition 0: about %d offset keys", &keys)
			require.NoError(t, err, r)
			require.InDelta(t, 60, keys, 12, "sized on the original's keys (an estimate): %s", r)
			sizings++
		}
	}
	require.NotZero(t, sizings, "%q", reported)
	require.Contains(t, reported[len(reported)-1], "equal in both logs")

	wrong := source(t, batchAt{50, append(kept[:9:9], offsetCommit("g", "t", 59, 7))}, batchAt{109, nil})
	require.ErrorContains(t, pr.Verify(ctx, original, wrong, []int32{0}), "~ offset g/t-59")
}
