package audit

import (
	"context"
	"fmt"
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
