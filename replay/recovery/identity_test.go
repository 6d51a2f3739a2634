package recovery

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/snapshot"
)

// snapshotOf replays src up to k and writes a snapshot of it to store.
func snapshotOf(t *testing.T, store *snapshot.Store, src eventlog.Source, k int64) snapshot.Info {
	t.Helper()
	e := replay.New(0, replay.Options{})
	require.NoError(t, e.Run(context.Background(), src, k))
	in, err := TakeSnapshot(store, src, e, 0)
	require.NoError(t, err)
	return in
}

// TestLogIdentity: a snapshot records the first batch of its log and the last one it
// replayed (one mark when they are the same batch), and CheckLog accepts it on that log only.
func TestLogIdentity(t *testing.T) {
	src := genMem(genSpec{Seed: 31, Groups: 10, Members: 2, Offsets: 5, Churn: 300})
	_, end, _ := src.Offsets(0)
	first := src.batches[0]
	marks, err := LogIdentity(src, 0, end)
	require.NoError(t, err)
	last := src.batches[len(src.batches)-1]
	require.Equal(t, []snapshot.LogMark{
		{Offset: 0, BaseOffset: first.BaseOffset, LastOffset: first.LastOffset, CRC: first.CRC},
		{Offset: end - 1, BaseOffset: last.BaseOffset, LastOffset: last.LastOffset, CRC: last.CRC},
	}, marks)
	marks, err = LogIdentity(src, 0, first.LastOffset) // inside the first batch
	require.NoError(t, err)
	require.Len(t, marks, 1)
	marks, err = LogIdentity(src, 0, 0)
	require.NoError(t, err)
	require.Empty(t, marks, "nothing replayed, nothing to identify")

	m := snapshot.Meta{Partition: 0, NextOffset: end}
	m.Log, err = LogIdentity(src, 0, end)
	require.NoError(t, err)
	require.NoError(t, CheckLog(src, m))

	// The same offsets with other contents (a compaction rewrote the last batch).
	other := &genSource{batches: append([]*eventlog.Batch(nil), src.batches...)}
	changed := *last
	changed.CRC ^= 0xdead
	other.batches[len(other.batches)-1] = &changed
	err = CheckLog(other, m)
	require.ErrorIs(t, err, ErrForeignLog)
	require.ErrorContains(t, err, "taken from another log: batch at offset ")
	require.ErrorContains(t, err, fmt.Sprintf("crc 0x%08x here, 0x%08x in the snapshot", changed.CRC, last.CRC))

	// A log whose first batch differs.
	other = &genSource{batches: append([]*eventlog.Batch(nil), src.batches...)}
	f := *first
	f.CRC++
	other.batches[0] = &f
	require.ErrorContains(t, CheckLog(other, m), "taken from another log: first batch")

	// A log without the batch (a shorter log, a gap).
	other = &genSource{batches: src.batches[:len(src.batches)-1]}
	require.ErrorContains(t, CheckLog(other, m), "none here")

	// No identity (format 1): accepted when the log holds the last offset replayed.
	m.Log = nil
	require.ErrorIs(t, CheckLog(src, m), ErrNoLogIdentity)
	require.ErrorIs(t, CheckLog(other, m), ErrForeignLog)
}

// TestForeignSnapshotSkipped: a snapshot of another log (another generated log with the same
// offsets, as a copied snapshot directory would bring) is skipped with a message naming the
// batch and both CRCs, and recovery replays this log; a snapshot of this log in the same store
// is used. Without the identity check the foreign state was restored silently.
func TestForeignSnapshotSkipped(t *testing.T) {
	ctx := context.Background()
	spec := genSpec{Seed: 41, Groups: 12, Members: 2, Offsets: 6, Churn: 400}
	here := genMem(spec)
	spec.Seed = 42
	there := genMem(spec)
	_, endHere, _ := here.Offsets(0)
	_, endThere, _ := there.Offsets(0)
	k := min(endHere, endThere) / 2

	store, err := snapshot.OpenStore(filepath.Join(t.TempDir(), "snapshots"), snapshot.Options{})
	require.NoError(t, err)
	foreign := snapshotOf(t, store, there, k)
	want := fullReplay(t, here, 0, Options{})

	rec, err := Recover(ctx, here, store, 0, Options{})
	require.NoError(t, err)
	msgs := strings.Join(rec.Messages(), "\n")
	require.Nil(t, rec.Snapshot, msgs)
	require.Contains(t, msgs, "snapshot "+foreign.Name+" skipped (taken from another log: ")
	require.Contains(t, msgs, "left in place")
	requireSameEngine(t, want, rec.Engine, false, "full replay instead of the foreign snapshot")

	// snapshot create's restore does not start from it either.
	rec, err = RestoreNewest(here, store, 0, Options{RequireLogIdentity: true}, math.MaxInt64)
	require.NoError(t, err)
	require.Nil(t, rec.Snapshot)

	// An older snapshot of this log, under the foreign one, is used.
	own := snapshotOf(t, store, here, k/2)
	rec, err = Recover(ctx, here, store, 0, Options{})
	require.NoError(t, err)
	require.NotNil(t, rec.Snapshot, strings.Join(rec.Messages(), "\n"))
	require.Equal(t, own.Name, rec.Snapshot.Name)
	requireSameEngine(t, want, rec.Engine, true, "from this log's snapshot")
}

// TestSnapshotWithoutIdentity: a snapshot written before snapshots recorded their log (format
// 1) is used by readers, with a note saying what was checked, and refused where a new snapshot
// would be built on it (RequireLogIdentity); one whose last replayed offset this log does not
// hold is skipped as another log's.
func TestSnapshotWithoutIdentity(t *testing.T) {
	ctx := context.Background()
	src := genMem(genSpec{Seed: 51, Groups: 8, Members: 2, Offsets: 5, Churn: 200})
	_, end, _ := src.Offsets(0)
	store, err := snapshot.OpenStore(t.TempDir(), snapshot.Options{})
	require.NoError(t, err)
	e := replay.New(0, replay.Options{})
	require.NoError(t, e.Run(ctx, src, end/2))
	m := mustMeta(t, src, e)
	m.Log = nil
	in, err := store.Write(m, newSnapshotPayload(e))
	require.NoError(t, err)

	rec, err := Recover(ctx, src, store, 0, Options{})
	require.NoError(t, err)
	require.NotNil(t, rec.Snapshot)
	msgs := strings.Join(rec.Messages(), "\n")
	require.Contains(t, msgs, "snapshot "+in.Name+": no log identity (snapshot format 1): checked only that this log holds offset")
	requireSameEngine(t, fullReplay(t, src, 0, Options{}), rec.Engine, true, "an old snapshot")

	rec, err = RestoreNewest(src, store, 0, Options{RequireLogIdentity: true}, math.MaxInt64)
	require.NoError(t, err)
	require.Nil(t, rec.Snapshot)
	require.Contains(t, strings.Join(rec.Messages(), "\n"), "no new snapshot is built on it")

	// The same old snapshot on a log that does not reach its last offset: another log's.
	short := &genSource{batches: src.batches[:1]}
	rec, err = Recover(ctx, short, store, 0, Options{})
	require.NoError(t, err)
	require.Nil(t, rec.Snapshot)
}

// TestUnreadableSnapshotsFallBack: a snapshot directory that cannot be listed (here: a file
// where the directory should be) is a warning and a full replay, not an error; so is a
// missing one for a read-only store, silently.
func TestUnreadableSnapshotsFallBack(t *testing.T) {
	ctx := context.Background()
	src := genMem(genSpec{Seed: 61, Groups: 5, Members: 2, Offsets: 4, Churn: 100})
	want := fullReplay(t, src, 0, Options{})
	dir := t.TempDir()
	notADir := filepath.Join(dir, "snapshots")
	require.NoError(t, writeFile(notADir, "not a directory"))
	store, err := snapshot.OpenStore(notADir, snapshot.Options{ReadOnly: true})
	require.NoError(t, err)
	rec, err := Recover(ctx, src, store, 0, Options{})
	require.NoError(t, err)
	require.Nil(t, rec.Snapshot)
	msgs := strings.Join(rec.Messages(), "\n")
	require.Contains(t, msgs, "warning: snapshot: cannot read the snapshot directory "+notADir)
	require.Contains(t, msgs, "replaying from the start of the log")
	requireSameEngine(t, want, rec.Engine, false, "full replay")

	store, err = snapshot.OpenStore(filepath.Join(dir, "none"), snapshot.Options{ReadOnly: true})
	require.NoError(t, err)
	rec, err = Recover(ctx, src, store, 0, Options{})
	require.NoError(t, err)
	require.Empty(t, rec.Messages(), "a missing directory is an empty store")
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
