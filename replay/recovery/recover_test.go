package recovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/leakcheck"
	"github.com/coordlog/coordlog/internal/testcorpus"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/snapshot"
)

var updateSnapshots = flag.Bool("update-snapshots", false, "write testdata/replay-v2.snap (only when the payload kind changes)")

func fullReplay(t testing.TB, src eventlog.Source, p int32, opts Options) *replay.Engine {
	t.Helper()
	e := replay.New(p, opts.Options)
	require.NoError(t, e.Run(context.Background(), src, math.MaxInt64))
	return e
}

// mustMeta is SnapshotMeta of e, which replayed src.
func mustMeta(t testing.TB, src eventlog.Source, e *replay.Engine) snapshot.Meta {
	t.Helper()
	m, err := SnapshotMeta(src, e, 0)
	require.NoError(t, err)
	return m
}

func dumpJSON(t testing.TB, st groupstate.View) []byte {
	t.Helper()
	b, err := json.Marshal(st.Dump())
	require.NoError(t, err)
	return b
}

// requireSameEngine checks that got (restored at cut and replayed to the end) equals want
// (a full replay): deep equality of the state, byte equality of its JSON, same next offset
// and counters. A batch cut in two is counted once on each side of the cut, so batch
// counters are compared only for cuts at batch boundaries.
func requireSameEngine(t testing.TB, want, got *replay.Engine, midBatch bool, what string) {
	t.Helper()
	if !groupstate.Equal(want.State(), got.State()) {
		t.Fatalf("%s: state differs from full replay:\n%s", what, strings.Join(groupstate.Diff(want.State(), got.State(), 20), "\n"))
	}
	require.Equal(t, dumpJSON(t, want.State()), dumpJSON(t, got.State()), what)
	require.Equal(t, want.NextOffset(), got.NextOffset(), what)
	ws, gs := want.Stats(), got.Stats()
	if midBatch {
		ws.Batches, ws.EmptyBatches, ws.TransactionBts = 0, 0, 0
		gs.Batches, gs.EmptyBatches, gs.TransactionBts = 0, 0, 0
	}
	require.Equal(t, ws, gs, what)
}

// materialize copies partition p of src, as a scan from offset 0 yields it, into memory.
func materialize(t testing.TB, src eventlog.Source, p int32) *genSource {
	t.Helper()
	it, err := src.Batches(p, 0)
	require.NoError(t, err)
	defer it.Close()
	m := &genSource{p: p}
	for it.Next() {
		m.batches = append(m.batches, it.Batch().Clone())
	}
	require.NoError(t, it.Err())
	return m
}

type batchSpan struct{ base, last int64 }

func spans(t testing.TB, src eventlog.Source, p int32) []batchSpan {
	t.Helper()
	it, err := src.Batches(p, 0)
	require.NoError(t, err)
	defer it.Close()
	var out []batchSpan
	for it.Next() {
		out = append(out, batchSpan{it.Batch().BaseOffset, it.Batch().LastOffset})
	}
	require.NoError(t, it.Err())
	return out
}

// cutPoints picks up to n cut offsets spread over the log: batch starts and, for every other
// pick, an offset inside a batch. It reports which cuts fall inside a batch.
func cutPoints(sp []batchSpan, n int) (cuts []int64, mid map[int64]bool) {
	mid = map[int64]bool{}
	if len(sp) == 0 {
		return []int64{0}, mid
	}
	step := max(1, len(sp)/n)
	for i := 0; i < len(sp); i += step {
		b := sp[i]
		cuts = append(cuts, b.base)
		if i%(2*step) == 0 && b.last > b.base {
			m := b.base + (b.last-b.base+1)/2
			cuts = append(cuts, m)
			mid[m] = true
		}
	}
	return append(cuts, sp[len(sp)-1].last+1), mid
}

// checkCuts replays src once, taking a snapshot at every cut, and for each snapshot checks
// that Recover (restore plus tail) equals the full replay.
func checkCuts(t *testing.T, src eventlog.Source, p int32, opts Options, cuts []int64, mid map[int64]bool, what string) {
	t.Helper()
	ctx := context.Background()
	want := fullReplay(t, src, p, opts)
	store, err := snapshot.OpenStore(filepath.Join(t.TempDir(), "snapshots"), snapshot.Options{Retain: 1})
	require.NoError(t, err)
	e := replay.New(p, opts.Options)
	cutBatch := false // the incremental engine has split a batch: its batch counters count it twice
	for _, k := range cuts {
		require.NoError(t, e.Run(ctx, src, k))
		if k > e.NextOffset() {
			continue // a gap: the engine stays at the end of the previous batch
		}
		cutBatch = cutBatch || mid[k]
		_, err := TakeSnapshot(store, src, e, 0)
		require.NoError(t, err)
		rec, err := Recover(ctx, src, store, p, opts)
		require.NoError(t, err)
		require.NotNil(t, rec.Snapshot, "%s cut %d: snapshot not used: %v", what, k, rec.Messages())
		require.Equal(t, e.NextOffset(), rec.SnapshotOffset)
		requireSameEngine(t, want, rec.Engine, cutBatch, what+" cut "+itoa(k))
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestRecoverEquivalenceGenerated(t *testing.T) {
	for _, spec := range []genSpec{
		{Seed: 1, Groups: 12, Members: 3, Offsets: 15, Churn: 400},
		{Seed: 2, Groups: 40, Members: 2, Offsets: 25, Churn: 1500, Gaps: true, Partition: 7},
		{Seed: 3, Groups: 3, Members: 6, Offsets: 4, Churn: 800},
	} {
		src := genMem(spec)
		cuts, mid := cutPoints(spans(t, src, spec.Partition), 60)
		t.Logf("seed %d: %d batches, %d cut points", spec.Seed, len(src.batches), len(cuts))
		checkCuts(t, src, spec.Partition, Options{Options: replay.Options{Mode: eventlog.Strict}}, cuts, mid, "seed "+itoa(int64(spec.Seed)))
	}
}

// TestRecoverEquivalenceKafkaVersions checks that the rules in force are carried: the same
// log recovered under each Kafka version equals that version's full replay.
func TestRecoverEquivalenceKafkaVersions(t *testing.T) {
	src := genMem(genSpec{Seed: 4, Groups: 10, Members: 2, Offsets: 10, Churn: 300})
	for _, v := range []groupstate.KafkaVersion{groupstate.Kafka41, groupstate.Kafka42, groupstate.Kafka43, groupstate.Kafka44} {
		cuts, mid := cutPoints(spans(t, src, 0), 15)
		checkCuts(t, src, 0, Options{Options: replay.Options{Version: v, Mode: eventlog.Forensic}}, cuts, mid, "kafka "+v.String())
	}
}

func TestRecoverEquivalenceFoundCorpus(t *testing.T) {
	found := testcorpus.Found(t)
	dirs := testcorpus.PartitionDirs(t, found)
	checked := 0
	for _, dir := range dirs {
		src, err := segment.Open(dir, segment.Options{Mode: eventlog.Strict})
		require.NoError(t, err)
		parts, err := src.Partitions()
		require.NoError(t, err)
		for _, p := range parts {
			// The tail replays read the segment files themselves, from each cut: the reader
			// must resolve half-swapped segments the same from any offset as from 0.
			cuts, mid := cutPoints(spans(t, src, p), 12)
			checkCuts(t, src, p, Options{Options: replay.Options{Mode: eventlog.Strict}}, cuts, mid, dir)
			checked++
		}
	}
	t.Logf("%d partitions of %s", checked, found)
}

func TestRecoverEquivalenceRecordings(t *testing.T) {
	dirs := testcorpus.PartitionDirs(t, testcorpus.Recordings())
	for _, dir := range dirs {
		src, err := segment.Open(dir, segment.Options{Mode: eventlog.Strict})
		require.NoError(t, err)
		parts, err := src.Partitions()
		require.NoError(t, err)
		for _, p := range parts {
			mem := materialize(t, src, p)
			sp := spans(t, mem, p)
			cuts, mid := cutPoints(sp, len(sp)) // every batch of these small recordings
			checkCuts(t, mem, p, Options{Options: replay.Options{Mode: eventlog.Strict, Version: groupstate.Kafka44}}, cuts, mid, dir)
			t.Logf("%s p%d: %d cut points", dir, p, len(cuts))
		}
	}
}

// TestRecoverFromPebbleLog runs the restart path end to end on the Pebble log: periodic
// snapshots during replay with retention, then Recover.
func TestRecoverFromPebbleLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := pebblelog.Open(filepath.Join(dir, "db"), nil)
	require.NoError(t, err)
	defer l.Close()
	spec := genSpec{Seed: 5, Partition: 3, Groups: 30, Members: 3, Offsets: 20, Churn: 2000, Gaps: true}
	app := l.NewAppender()
	require.NoError(t, generate(spec, func(b *eventlog.Batch) error { return app.Add(b) }))
	require.NoError(t, app.Commit())
	app.Close()

	store, err := snapshot.OpenStore(filepath.Join(dir, "db", "snapshots"), snapshot.Options{Retain: 2})
	require.NoError(t, err)
	want := fullReplay(t, l, 3, Options{})

	// No snapshot yet: full replay.
	rec, err := Recover(ctx, l, store, 3, Options{})
	require.NoError(t, err)
	require.Nil(t, rec.Snapshot)
	requireSameEngine(t, want, rec.Engine, false, "no snapshot")
	require.Equal(t, want.Stats().Records+want.Stats().Markers, rec.TailRecords)

	// Periodic snapshots while replaying half the log, retention 2.
	_, next, err := l.Offsets(3)
	require.NoError(t, err)
	e := replay.New(3, replay.Options{})
	var seen []snapshot.Info
	written, err := RunWithSnapshots(ctx, e, l, next/2, SnapshotPolicy{Store: store, EveryRecords: 500, OnSnapshot: func(in snapshot.Info) { seen = append(seen, in) }})
	require.NoError(t, err)
	require.Equal(t, written, seen)
	require.Greater(t, len(written), 3)
	infos, err := store.List(3)
	require.NoError(t, err)
	require.Len(t, infos, 2, "retention keeps the last 2")
	require.Equal(t, written[len(written)-1].NextOffset, infos[0].NextOffset)

	rec, err = Recover(ctx, l, store, 3, Options{})
	require.NoError(t, err)
	require.NotNil(t, rec.Snapshot)
	require.Equal(t, infos[0].NextOffset, rec.SnapshotOffset)
	require.Positive(t, rec.TailRecords)
	requireSameEngine(t, want, rec.Engine, false, "pebble")

	// Byte trigger.
	e = replay.New(3, replay.Options{})
	written, err = RunWithSnapshots(ctx, e, l, math.MaxInt64, SnapshotPolicy{Store: store, EveryBytes: 64 << 10})
	require.NoError(t, err)
	require.NotEmpty(t, written)
	requireSameEngine(t, want, e, false, "RunWithSnapshots to the end")
}

func TestSnapshotDeterministic(t *testing.T) {
	spec := genSpec{Seed: 6, Groups: 50, Members: 4, Offsets: 30, Churn: 3000}
	encode := func(src eventlog.Source, e *replay.Engine) []byte {
		var buf bytes.Buffer
		_, err := snapshot.Encode(&buf, mustMeta(t, src, e), newSnapshotPayload(e))
		require.NoError(t, err)
		return buf.Bytes()
	}
	// Two independent replays: Go randomizes map iteration per map, so equal bytes mean no
	// map order reaches the snapshot.
	srcA, srcB := genMem(spec), genMem(spec)
	a := encode(srcA, fullReplay(t, srcA, 0, Options{}))
	b := encode(srcB, fullReplay(t, srcB, 0, Options{}))
	require.Equal(t, a, b)

	// A restored engine snapshots to the same bytes again.
	store, err := snapshot.OpenStore(t.TempDir(), snapshot.Options{})
	require.NoError(t, err)
	src := genMem(spec)
	_, err = TakeSnapshot(store, src, fullReplay(t, src, 0, Options{}), 0)
	require.NoError(t, err)
	rec, err := Recover(context.Background(), src, store, 0, Options{})
	require.NoError(t, err)
	require.Zero(t, rec.TailRecords)
	require.Equal(t, a, encode(src, rec.Engine))
}

func TestRecoverSkipsUnusableSnapshots(t *testing.T) {
	ctx := context.Background()
	src := genMem(genSpec{Seed: 8, Groups: 10, Members: 2, Offsets: 10, Churn: 500})
	_, end, _ := src.Offsets(0)
	want := fullReplay(t, src, 0, Options{})
	store, err := snapshot.OpenStore(t.TempDir(), snapshot.Options{})
	require.NoError(t, err)
	snapAt := func(k int64, opts Options) snapshot.Info {
		e := replay.New(0, opts.Options)
		require.NoError(t, e.Run(ctx, src, k))
		in, err := TakeSnapshot(store, src, e, 0)
		require.NoError(t, err)
		return in
	}
	old := snapAt(end/4, Options{})
	other := snapAt(end/2, Options{Options: replay.Options{Version: groupstate.Kafka43}})
	broken := snapAt(3*end/4, Options{})
	b, err := os.ReadFile(broken.Path)
	require.NoError(t, err)
	b[len(b)/2] ^= 1
	require.NoError(t, os.WriteFile(broken.Path, b, 0o644))
	// A snapshot ahead of the log (copied from a longer log, say).
	ahead := snapAt(end, Options{})
	require.NoError(t, os.Remove(ahead.Path))
	e := replay.New(0, replay.Options{})
	require.NoError(t, e.Run(ctx, src, end))
	m := mustMeta(t, src, e)
	m.NextOffset = end + 100
	_, err = store.Write(m, newSnapshotPayload(e))
	require.NoError(t, err)

	rec, err := Recover(ctx, src, store, 0, Options{})
	require.NoError(t, err)
	msgs := strings.Join(rec.Messages(), "\n")
	t.Log(msgs)
	require.Equal(t, old.NextOffset, rec.SnapshotOffset)
	require.Contains(t, msgs, "ahead of the log")
	require.Contains(t, msgs, "checksum")
	require.Contains(t, msgs, broken.Name+".broken")
	require.Contains(t, msgs, "built with Kafka 4.3 replay rules, recovering with 4.4")
	require.Contains(t, msgs, "using older snapshot "+old.Name)
	requireSameEngine(t, want, rec.Engine, true, "fallback")

	// Under 4.3 rules the 4.3 snapshot is the one to use.
	rec, err = Recover(ctx, src, store, 0, Options{Options: replay.Options{Version: groupstate.Kafka43}})
	require.NoError(t, err)
	require.Equal(t, other.NextOffset, rec.SnapshotOffset)
	requireSameEngine(t, fullReplay(t, src, 0, Options{Options: replay.Options{Version: groupstate.Kafka43}}), rec.Engine, true, "4.3")

	// Nothing usable: full replay, with the reasons.
	require.NoError(t, os.Truncate(old.Path, 100))
	require.NoError(t, os.Truncate(other.Path, 0))
	rec, err = Recover(ctx, src, store, 0, Options{})
	require.NoError(t, err)
	require.Nil(t, rec.Snapshot)
	require.Contains(t, strings.Join(rec.Messages(), "\n"), "replaying from the start")
	requireSameEngine(t, want, rec.Engine, false, "full")
}

// TestSnapshotFormatCompatibility restores the committed snapshot of the current payload kind
// (testdata/replay-v2.snap, a cut of a generated log) and checks that it plus the tail still
// equals a full replay: a change to the payload or to groupstate that would make it restore a
// different state fails here (bump SnapshotKind then, and -update-snapshots). The snapshot of
// a kind no longer read (replay-v1.snap, never released) must be refused with a message, left
// in place, and the log replayed instead.
func TestSnapshotFormatCompatibility(t *testing.T) {
	spec := genSpec{Seed: 9, Groups: 6, Members: 2, Offsets: 6, Churn: 200}
	src := genMem(spec)
	const cut = 150
	current := filepath.Join("testdata", "replay-v2.snap")
	if *updateSnapshots {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		store, err := snapshot.OpenStore(t.TempDir(), snapshot.Options{})
		require.NoError(t, err)
		e := replay.New(0, replay.Options{})
		require.NoError(t, e.Run(context.Background(), src, cut))
		in, err := TakeSnapshot(store, src, e, 1_700_000_000_000)
		require.NoError(t, err)
		b, err := os.ReadFile(in.Path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(current, b, 0o644))
	}
	want := fullReplay(t, src, 0, Options{})
	for _, c := range []struct {
		file   string
		usable bool
	}{{current, true}, {filepath.Join("testdata", "replay-v1.snap"), false}} {
		b, err := os.ReadFile(c.file)
		require.NoError(t, err)
		dir := t.TempDir()
		name := snapshot.Name(0, cut)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
		store, err := snapshot.OpenStore(dir, snapshot.Options{})
		require.NoError(t, err)
		rec, err := Recover(context.Background(), src, store, 0, Options{})
		require.NoError(t, err)
		if c.usable {
			require.NotNil(t, rec.Snapshot, "%s: %v", c.file, rec.Messages())
			require.EqualValues(t, cut, rec.SnapshotOffset)
			// Written before snapshots recorded their log: used, and said so.
			require.Contains(t, strings.Join(rec.Messages(), "\n"), "no log identity (snapshot format 1)")
			requireSameEngine(t, want, rec.Engine, true, c.file)
			continue
		}
		// An unsupported kind is refused with a message, left where it is, and the log is
		// replayed instead.
		require.Nil(t, rec.Snapshot, c.file)
		require.Len(t, rec.Loaded.Skipped, 1)
		require.ErrorIs(t, rec.Loaded.Skipped[0].Err, errUnsupported)
		require.Empty(t, rec.Loaded.Skipped[0].MovedTo)
		require.Contains(t, strings.Join(rec.Messages(), "\n"), `payload kind "replay/v1", this build reads "replay/v2" only`)
		_, err = os.Stat(filepath.Join(dir, name))
		require.NoError(t, err, "a refused snapshot stays in place")
		requireSameEngine(t, want, rec.Engine, false, c.file)
	}
}

// TestSnapshotManySmallParts encodes and decodes states split into thousands of parts of
// uneven cost on more goroutines than cores: the part pipeline must neither deadlock nor
// reorder, and the bytes must not depend on the split's scheduling.
func TestSnapshotManySmallParts(t *testing.T) {
	defer func(n int) { imagePartBytes = n }(imagePartBytes)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	src := genMem(genSpec{Seed: 12, Groups: 300, Members: 3, Offsets: 20, Churn: 3000})
	e := fullReplay(t, src, 0, Options{})
	var want []byte
	for _, size := range []int{1, 700, 1 << 20} {
		imagePartBytes = size
		for range 5 {
			var buf bytes.Buffer
			_, err := snapshot.Encode(&buf, mustMeta(t, src, e), newSnapshotPayload(e))
			require.NoError(t, err)
			d, err := decodeState(SnapshotKind, func(into any) error {
				_, err := snapshot.Decode(bytes.NewReader(buf.Bytes()), int64(buf.Len()), into)
				return err
			}, false)
			require.NoError(t, err)
			require.True(t, groupstate.Equal(e.State(), d.st.View()), "part size %d", size)
			if size == 1<<20 {
				if want == nil {
					want = buf.Bytes()
				}
				require.Equal(t, want, buf.Bytes())
			}
		}
	}
}

// damagedImage writes what stateImage writes, with the last byte of the last part changed:
// when that part ends with a group's committed offsets (the generated logs' do), the
// damage is inside an offset block and the part's structure still decodes.
type damagedImage struct{ st groupstate.View }

func (im damagedImage) MarshalSnapshot(e *snapshot.Encoder) error {
	plan := im.st.PlanImage(imagePartBytes)
	if err := first(e.ArrayLen(3), e.Int(imageLayout), e.Bytes(im.st.AppendImageHead(nil)), e.ArrayLen(plan.NumParts())); err != nil {
		return err
	}
	for i := range plan.NumParts() {
		b := im.st.AppendImagePart(nil, plan, i)
		if i == plan.NumParts()-1 {
			b[len(b)-1] = 0x80
		}
		if err := e.Bytes(b); err != nil {
			return err
		}
	}
	return nil
}

func (im *damagedImage) UnmarshalSnapshot(*snapshot.Decoder) error { return errors.New("write only") }

// TestRecoverSetsAsideDamagedOffsets: a snapshot whose checksum matches but whose offsets
// are damaged (a writer's bug, a crafted file) is found by the offset check that runs beside
// the tail, moved aside, and recovery starts over from the next older snapshot.
func TestRecoverSetsAsideDamagedOffsets(t *testing.T) {
	ctx := context.Background()
	src := genMem(genSpec{Seed: 21, Groups: 40, Members: 2, Offsets: 8, Churn: 600})
	_, end, _ := src.Offsets(0)
	want := fullReplay(t, src, 0, Options{})
	store, err := snapshot.OpenStore(t.TempDir(), snapshot.Options{})
	require.NoError(t, err)
	older := replay.New(0, replay.Options{})
	require.NoError(t, older.Run(ctx, src, end/3))
	good, err := TakeSnapshot(store, src, older, 0)
	require.NoError(t, err)
	e := replay.New(0, replay.Options{})
	require.NoError(t, e.Run(ctx, src, 2*end/3))
	bad, err := store.Write(mustMeta(t, src, e), &struct {
		Stats replay.Stats
		State damagedImage
	}{e.Stats(), damagedImage{e.State()}})
	require.NoError(t, err)

	rec, err := Recover(ctx, src, store, 0, Options{})
	require.NoError(t, err)
	msgs := strings.Join(rec.Messages(), "\n")
	t.Log(msgs)
	require.Equal(t, good.NextOffset, rec.SnapshotOffset)
	require.Contains(t, msgs, bad.Name+".broken")
	require.Contains(t, msgs, "offsets of group")
	requireSameEngine(t, want, rec.Engine, true, "after setting the damaged snapshot aside")
	leakcheck.None(t, time.Second, decoderCode, checkCode, "github.com/coordlog/coordlog/replay/recovery.RecoverTo")
	_, err = os.Stat(bad.Path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestPauseGC: the option gives the same state and leaves the collector as it
// found it.
func TestPauseGC(t *testing.T) {
	ctx := context.Background()
	src := genMem(genSpec{Seed: 4, Groups: 30, Members: 3, Offsets: 10, Churn: 800})
	_, end, _ := src.Offsets(0)
	want := fullReplay(t, src, 0, Options{})
	store, err := snapshot.OpenStore(t.TempDir(), snapshot.Options{})
	require.NoError(t, err)
	e := replay.New(0, replay.Options{})
	require.NoError(t, e.Run(ctx, src, end/2))
	_, err = TakeSnapshot(store, src, e, 0)
	require.NoError(t, err)
	defer debug.SetGCPercent(debug.SetGCPercent(137))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(5 << 30))
	rec, err := Recover(ctx, src, store, 0, Options{PauseGC: true})
	require.NoError(t, err)
	require.NotNil(t, rec.Snapshot)
	requireSameEngine(t, want, rec.Engine, true, "paused GC")
	_, err = RestoreNewest(src, store, 0, Options{PauseGC: true}, math.MaxInt64)
	require.NoError(t, err)
	require.Equal(t, 137, debug.SetGCPercent(137), "the collector's setting is restored")
	require.EqualValues(t, 5<<30, debug.SetMemoryLimit(-1), "the memory limit is restored")
}

// TestPauseGCOnlyForShortTails: the collector is off during a short tail after a snapshot,
// and on for a full replay (whose garbage needs it).
func TestPauseGCOnlyForShortTails(t *testing.T) {
	ctx := context.Background()
	src := genMem(genSpec{Seed: 5, Groups: 20, Members: 2, Offsets: 5, Churn: 400})
	_, end, _ := src.Offsets(0)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	percentDuringTail := func(store *snapshot.Store) int {
		seen := 0
		opts := Options{PauseGC: true, Options: replay.Options{Observer: replay.ObserverFunc(func(*replay.Event, groupstate.View) {
			seen = debug.SetGCPercent(100)
			debug.SetGCPercent(seen)
		})}}
		_, err := Recover(ctx, src, store, 0, opts)
		require.NoError(t, err)
		return seen
	}
	empty, err := snapshot.OpenStore(t.TempDir(), snapshot.Options{})
	require.NoError(t, err)
	require.Equal(t, 100, percentDuringTail(empty), "full replay: collector on")

	store, err := snapshot.OpenStore(t.TempDir(), snapshot.Options{})
	require.NoError(t, err)
	e := replay.New(0, replay.Options{})
	require.NoError(t, e.Run(ctx, src, end-20))
	_, err = TakeSnapshot(store, src, e, 0)
	require.NoError(t, err)
	require.Equal(t, -1, percentDuringTail(store), "short tail after a snapshot: collector paused")
	require.Equal(t, 100, debug.SetGCPercent(100))
}

// failAfter fails every write once n bytes were written.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n < len(p) {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

// encoderCode and decoderCode name the goroutines of the snapshot encoder and decoder, and of
// the offset check that runs beside a tail replay.
const (
	encoderCode = "github.com/coordlog/coordlog/replay/recovery.stateImage.MarshalSnapshot"
	decoderCode = "github.com/coordlog/coordlog/replay/recovery.(*stateImage).UnmarshalSnapshot"
	checkCode   = "github.com/coordlog/coordlog/replay/recovery.checkOffsets"
)

// TestSnapshotWriteFailureStopsEncoders: a write error ends the snapshot with that error,
// and no encoder goroutine is left reading the state when it returns (the replay right
// after would race with one).
func TestSnapshotWriteFailureStopsEncoders(t *testing.T) {
	defer func(n int) { imagePartBytes = n }(imagePartBytes)
	imagePartBytes = 32 << 10
	ctx := context.Background()
	// A payload of several MiB: the encoder's 1 MiB write buffer flushes (and fails) while
	// later parts are still being encoded.
	src := genMem(genSpec{Seed: 13, Groups: 6000, Members: 3, Offsets: 30})
	_, end, _ := src.Offsets(0)
	e := replay.New(0, replay.Options{})
	require.NoError(t, e.Run(ctx, src, end/2))
	plan := e.State().PlanImage(imagePartBytes)
	require.Greater(t, plan.NumParts(), 60)
	// Each part takes a few milliseconds, so that encoders are busy when a write fails; an
	// encoder that starts reading the state after Encode returned is a late read.
	defer func() { testEncodeHook = nil }()
	var encoded, lateReads atomic.Int64
	var returned atomic.Bool
	testEncodeHook = func(int) {
		encoded.Add(1)
		time.Sleep(3 * time.Millisecond)
		if returned.Load() {
			lateReads.Add(1)
		}
	}
	for _, n := range []int{0, 1000, 3 << 20} {
		encoded.Store(0)
		returned.Store(false)
		_, err := snapshot.Encode(&failAfter{n: n}, mustMeta(t, src, e), newSnapshotPayload(e))
		returned.Store(true)
		require.ErrorContains(t, err, "disk full")
		require.Less(t, encoded.Load(), int64(plan.NumParts()), "n=%d: the failure stopped the encoding early", n)
		// No encoder goroutine is left, and none read the state after Encode returned (a
		// goroutine past its last read may take a moment to exit: the check waits for it).
		leakcheck.None(t, time.Second, encoderCode)
		require.Zero(t, lateReads.Load(), "n=%d: encoders read the state after the snapshot returned", n)
	}
	require.NoError(t, e.Run(ctx, src, end))
}

// TestTakeSnapshotCachedSameFile: snapshots taken one after the other with the engine's image
// cache, with records replayed in between, are byte for byte the snapshots TakeSnapshot writes
// of the same states (the cache copies the entries of untouched groups; nothing else differs).
func TestTakeSnapshotCachedSameFile(t *testing.T) {
	var batches []*eventlog.Batch
	require.NoError(t, generate(genSpec{Seed: 5, Groups: 300, Members: 4, Offsets: 12, Churn: 3000, MaxOpenTxns: 4}, func(b *eventlog.Batch) error {
		batches = append(batches, b.Clone())
		return nil
	}))
	src := &genSource{batches: batches}
	cached, err := snapshot.OpenStore(filepath.Join(t.TempDir(), "cached"), snapshot.Options{Retain: 10})
	require.NoError(t, err)
	plain, err := snapshot.OpenStore(filepath.Join(t.TempDir(), "plain"), snapshot.Options{Retain: 10})
	require.NoError(t, err)
	e := replay.New(0, replay.Options{})
	defer func(old int) { imagePartBytes = old }(imagePartBytes)
	imagePartBytes = 4096 // many parts, most of them untouched between two snapshots
	for i, b := range batches {
		require.NoError(t, e.Apply(b))
		if i%(len(batches)/7) != 0 && i != len(batches)-1 {
			continue
		}
		a, err := TakeSnapshotCached(cached, src, e, 0)
		require.NoError(t, err)
		p, err := TakeSnapshot(plain, src, e, 0)
		require.NoError(t, err)
		ab, err := os.ReadFile(a.Path)
		require.NoError(t, err)
		pb, err := os.ReadFile(p.Path)
		require.NoError(t, err)
		require.True(t, bytes.Equal(ab, pb), "snapshot at batch %d: the cached file differs", i)
	}
}
