package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/compact"
	"github.com/coordlog/coordlog/eventlog/lock"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/audit"
	"github.com/coordlog/coordlog/replay/recovery"
	"github.com/coordlog/coordlog/snapshot"
)

func runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestRealRecordings compacts every scenario recorded from Kafka 4.4 (the compaction scenario
// included, whose log Kafka's own cleaner already cleaned twice), twice: a first pass that
// drops what Kafka's horizons allow and stamps new horizons, and a second pass after them.
// Each pass is proven by replay inside the job and checked again here; the outputs are then
// read by Kafka's DumpLogSegments.
func TestRealRecordings(t *testing.T) {
	scenarios, _ := filepath.Glob("../../fixtures/real/*/__consumer_offsets-0")
	if len(scenarios) == 0 {
		t.Skip("no fixtures/real recordings")
	}
	var outputs []string
	root := t.TempDir()
	for _, in := range scenarios {
		name := filepath.Base(filepath.Dir(in))
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			cur := in
			for i, now := range []string{"2027-01-01T00:00:00Z", "2027-01-05T00:00:00Z"} {
				out := filepath.Join(dir, "pass"+string(rune('1'+i)))
				code, stdout, stderr := runCLI(cur, "--out", out, "--now", now, "--quiet")
				require.Equal(t, 0, code, "%s pass %d: %s", name, i+1, stderr)
				require.Contains(t, stdout, "proof: original and compacted logs replay to equal state")
				orig, err := segment.Open(in, segment.Options{})
				require.NoError(t, err)
				got, err := segment.Open(out, segment.Options{})
				require.NoError(t, err)
				require.NoError(t, audit.CompactionProof{Options: replayOpts(), Exact: true}.Verify(context.Background(), orig, got, []int32{0}))
				cur = filepath.Join(out, "__consumer_offsets-0")
				outputs = append(outputs, cur)
				assert.FileExists(t, filepath.Join(cur, "partition.metadata"))
			}
		})
	}
	t.Run("DumpLogSegments", func(t *testing.T) {
		var all []string
		for _, o := range outputs {
			files, _ := filepath.Glob(filepath.Join(o, "*.log"))
			all = append(all, files...)
		}
		dumpAll(t, all)
	})
}

// dumpAll runs Kafka's DumpLogSegments over files in one JVM and checks that it read every
// batch of every file as valid, with the same batch count as our reader.
func dumpAll(t *testing.T, files []string) {
	require.NotEmpty(t, files)
	out := dumpLogSegments(t, files)
	require.NotContains(t, out, "Exception")
	require.NotContains(t, out, "isvalid: false")
	want := 0
	for _, f := range files {
		r, err := segment.Open(filepath.Dir(f), segment.Options{})
		require.NoError(t, err)
		it, err := r.Batches(0, 0)
		require.NoError(t, err)
		for it.Next() {
			if filepath.Base(it.Batch().Origin.File) == filepath.Base(f) {
				want++
			}
		}
		require.NoError(t, it.Err())
		it.Close()
	}
	got := len(regexp.MustCompile(`(?m)^baseOffset: `).FindAllString(out, -1))
	assert.Equal(t, want, got, "batches Kafka read")
	assert.Contains(t, out, "deleteHorizonMs: OptionalLong[")
}

// TestCorpus compacts every partition of the real-world corpus (../shared/fixtures-found,
// Kafka 1.x to 4.2, classic groups) and proves each by replay. Partitions whose original does
// not replay strictly are compacted and compared in forensic mode.
func TestCorpus(t *testing.T) {
	const corpus = "../../../shared/fixtures-found"
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("corpus %s absent: %v", corpus, err)
	}
	var dirs []string
	filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), "__consumer_offsets-") {
			dirs = append(dirs, p)
			return filepath.SkipDir
		}
		return nil
	})
	require.NotEmpty(t, dirs)
	var removed, in int64
	forensic := 0
	for _, d := range dirs {
		src, err := segment.Open(d, segment.Options{})
		if err != nil {
			continue // no .log files
		}
		parts, _ := src.Partitions()
		opts := compact.DefaultOptions(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
		ro := replayOpts()
		if e := replay.New(parts[0], ro); e.Run(context.Background(), src, math.MaxInt64) != nil {
			forensic++
			src, err = segment.Open(d, segment.Options{Mode: eventlog.Forensic})
			require.NoError(t, err)
			ro.Mode = eventlog.Forensic
		}
		pl, err := compact.NewPlan(context.Background(), src, parts[0], opts)
		require.NoError(t, err, d)
		c := compact.NewCompacted(src, pl)
		st, err := compact.Each(context.Background(), c, parts[0], nil)
		require.NoError(t, err, d)
		require.NoError(t, audit.CompactionProof{Options: ro, Report: t.Logf}.Verify(context.Background(), src, c, parts), d)
		pl.Close()
		removed += st.RemovedTotal().Records
		in += st.InRecords
	}
	t.Logf("%d partitions (%d compared in forensic mode): %d of %d records removed", len(dirs), forensic, removed, in)
}

// TestDryRun prints what would go by reason and writes nothing.
func TestDryRun(t *testing.T) {
	in := "../../fixtures/real/deletions/__consumer_offsets-0"
	if _, err := os.Stat(in); err != nil {
		t.Skip("no fixtures/real/deletions")
	}
	before, _ := os.ReadDir(filepath.Dir(in))
	code, stdout, stderr := runCLI(in, "--dry-run", "--now", "2027-01-01T00:00:00Z")
	require.Equal(t, 0, code, stderr)
	for _, r := range compact.Reasons() {
		assert.Contains(t, stdout, r.String())
	}
	assert.Regexp(t, `superseded\s+[1-9]\d* records\s+[1-9]\d* bytes`, stdout)
	assert.Contains(t, stdout, "would remove")
	after, _ := os.ReadDir(filepath.Dir(in))
	assert.Equal(t, len(before), len(after))
}

// TestUsage: every flag compact validates, with the exit code (2: a bad command line) and what
// the message says; RELIABILITY.md's "Command line" section points here.
func TestUsage(t *testing.T) {
	in := "../../fixtures/real/consumer/__consumer_offsets-0"
	for _, c := range []struct {
		args string
		code int
		msg  string // a substring of stderr (stdout for code 0)
	}{
		{"", exitUsage, "compact needs one input"},
		{"x y --dry-run", exitUsage, "compact needs one input"},
		{"x --out y --in-place", exitUsage, "give --out DIR or --in-place (or --dry-run)"},
		{"x --dry-run --now yesterday", exitUsage, "--now"},
		{"x --bogus", exitUsage, "unknown flag --bogus (compact --help lists the flags)"},
		{"x --in-plac", exitUsage, "unknown flag --in-plac; did you mean --in-place?"},
		{"x --dry-run --segment-bytes 0", exitUsage, "--segment-bytes 0: output segments need a positive size"},
		{"x --dry-run --index-memory -1", exitUsage, "--index-memory -1: give at least 1048576 bytes"},
		{"x --dry-run --index-memory 1000", exitUsage, "--index-memory 1000: give at least 1048576 bytes"},
		{"x --dry-run --delete-retention -1h", exitUsage, "--delete-retention -1h0m0s: a retention is 0 or more"},
		{"x --dry-run --producer-expiration -1s", exitUsage, "--producer-expiration -1s: an expiration is 0 or more"},
		{"x --dry-run --kafka-version 3.9", exitUsage, `unsupported Kafka version "3.9"`},
		{"x --dry-run --quiet --verbose", exitUsage, "--quiet and --verbose exclude each other"},
		{"--version", exitOK, "compact "},
		{in + " --dry-run --now 2027-01-01T00:00:00Z --quiet", exitOK, "would remove"},
		{"/nonexistent --dry-run", exitFailure, "/nonexistent"},
	} {
		t.Run(c.args, func(t *testing.T) {
			code, stdout, stderr := runCLI(strings.Fields(c.args)...)
			require.Equal(t, c.code, code, "stdout: %s\nstderr: %s", stdout, stderr)
			got := stderr
			if c.code == exitOK {
				got = stdout
			}
			require.Contains(t, got, c.msg)
		})
	}
}

// writeLog writes batches as a partition directory.
func writeLog(t *testing.T, batches ...*eventlog.Batch) string {
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	w, err := segment.NewWriter(dir, segment.WriterOptions{})
	require.NoError(t, err)
	for _, b := range batches {
		_, err := w.Write(b)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return dir
}

func str(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint16(b, uint16(len(s))), s...)
}

func batch(base int64, horizon int64, recs ...eventlog.Record) *eventlog.Batch {
	b := &eventlog.Batch{BaseOffset: base, LastOffset: base + int64(max(len(recs), 1)) - 1, Magic: 2, ProducerID: -1,
		ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: 1_700_000_000_000, MaxTimestamp: 1_700_000_000_000, Records: recs}
	if horizon > 0 {
		b.Attributes |= eventlog.AttrDeleteHorizon
		b.BaseTimestamp = horizon
	}
	for i := range b.Records {
		b.Records[i].Offset = base + int64(i)
		b.Records[i].Timestamp = 1_700_000_000_000
	}
	b.NumRecords = int32(len(recs))
	return b
}

// TestCorruptInput: strict mode stops at the damaged batch, names file and byte position, and
// writes nothing; --forensic skips it.
func TestCorruptInput(t *testing.T) {
	in := "../../fixtures/real/consumer/__consumer_offsets-0"
	if _, err := os.Stat(in); err != nil {
		t.Skip("no fixtures/real/consumer")
	}
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	files, _ := filepath.Glob(filepath.Join(in, "*.log"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644))
	}
	first := filepath.Join(dir, filepath.Base(files[0]))
	b, _ := os.ReadFile(first)
	b[len(b)/2] ^= 0x55
	require.NoError(t, os.WriteFile(first, b, 0o644))
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(dir, "--out", out, "--now", "2027-01-01T00:00:00Z", "--quiet")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, first)
	assert.Regexp(t, `at byte \d+`, stderr)
	assert.Contains(t, stderr, "nothing written")
	assert.NoDirExists(t, out)
	assert.NoDirExists(t, out+".compact-new")

	code, _, stderr = runCLI(dir, "--out", out, "--now", "2027-01-01T00:00:00Z", "--quiet", "--forensic")
	assert.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `[0-9]+ problems? in the input \(--verbose lists each\):\n  .*: [0-9]+ [a-z-]+ problems? \(skipped`, stderr)
	assert.DirExists(t, out)
}

// TestProofCatchesStateChange: dropping an expired group tombstone while an offset commit of
// the same group survives would let replay recreate the group as a simple group (Kafka's
// cleaner and loader would do the same). The proof sees the difference, prints it, and
// nothing is published.
func TestProofCatchesStateChange(t *testing.T) {
	offsetKey := str(str(binary.BigEndian.AppendUint16(nil, 1), "g"), "t")
	offsetKey = binary.BigEndian.AppendUint32(offsetKey, 0)
	value := binary.BigEndian.AppendUint16(nil, 3)
	value = binary.BigEndian.AppendUint64(value, 42)
	value = binary.BigEndian.AppendUint32(value, 0xffffffff)
	value = str(value, "")
	value = binary.BigEndian.AppendUint64(value, 1_700_000_000_000)
	groupKey := str(binary.BigEndian.AppendUint16(nil, 2), "g")
	otherKey := binary.BigEndian.AppendUint32(str(str(binary.BigEndian.AppendUint16(nil, 1), "h"), "t"), 0)
	dir := writeLog(t,
		batch(0, 0, eventlog.Record{Key: offsetKey, Value: value}),
		batch(1, 1_700_000_100_000, eventlog.Record{Key: groupKey}), // horizon passed long ago
		batch(2, 0, eventlog.Record{Key: otherKey, Value: value}),
	)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(dir, "--out", out, "--now", "2027-01-01T00:00:00Z", "--quiet", "--exact")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "proof failed, nothing replaced")
	assert.Contains(t, stderr, "states differ")
	assert.Contains(t, stderr, "+ group g")
	assert.NoDirExists(t, out)

	// By default the implicit group is the one tolerated difference, and it is reported.
	code, _, stderr = runCLI(dir, "--out", out, "--now", "2027-01-01T00:00:00Z", "--quiet")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "1 implicit group(s)")
}

// TestProofCatchesWrongCompaction: a "compacted" log that lost a latest record, or kept an
// aborted one as committed, fails the proof even in the tolerant mode.
func TestProofCatchesWrongCompaction(t *testing.T) {
	key := func(g string) []byte {
		return binary.BigEndian.AppendUint32(str(str(binary.BigEndian.AppendUint16(nil, 1), g), "t"), 0)
	}
	value := func(off int64) []byte {
		v := binary.BigEndian.AppendUint16(nil, 3)
		v = binary.BigEndian.AppendUint64(v, uint64(off))
		v = binary.BigEndian.AppendUint32(v, 0xffffffff)
		v = str(v, "")
		return binary.BigEndian.AppendUint64(v, 1_700_000_000_000)
	}
	orig := writeLog(t,
		batch(0, 0, eventlog.Record{Key: key("g"), Value: value(1)}),
		batch(1, 0, eventlog.Record{Key: key("g"), Value: value(2)}),
	)
	wrong := writeLog(t, batch(0, 0, eventlog.Record{Key: key("g"), Value: value(1)}), batch(1, 0))
	a, err := segment.Open(orig, segment.Options{})
	require.NoError(t, err)
	b, err := segment.Open(wrong, segment.Options{})
	require.NoError(t, err)
	err = audit.CompactionProof{Options: replayOpts()}.Verify(context.Background(), a, b, []int32{0})
	require.ErrorContains(t, err, "states differ")
	require.ErrorContains(t, err, "~ offset g/t-0")
}

// TestPebbleInPlaceCLI imports a recording into a Pebble log, compacts it in place, and checks
// that the compacted log replays to the recording's state and the backup is gone.
func TestPebbleInPlaceCLI(t *testing.T) {
	in := "../../fixtures/real/conversion/__consumer_offsets-0"
	if _, err := os.Stat(in); err != nil {
		t.Skip("no fixtures/real/conversion")
	}
	src, err := segment.Open(in, segment.Options{})
	require.NoError(t, err)
	db := filepath.Join(t.TempDir(), "db")
	l, err := pebblelog.Open(db, nil)
	require.NoError(t, err)
	_, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{})
	require.NoError(t, err)
	require.NoError(t, l.Close())

	code, stdout, stderr := runCLI(db, "--in-place", "--now", "2027-01-01T00:00:00Z")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "published "+db)
	assert.Contains(t, stderr, "verifying")
	assert.NoDirExists(t, db+".compact-old")
	assert.NoDirExists(t, db+".compact-new")

	l, err = pebblelog.Open(db, nil)
	require.NoError(t, err)
	defer l.Close()
	a, b := replay.New(0, replayOpts()), replay.New(0, replayOpts())
	require.NoError(t, a.Run(context.Background(), src, math.MaxInt64))
	require.NoError(t, b.Run(context.Background(), l, math.MaxInt64))
	assert.True(t, groupstate.Equal(a.State(), b.State()), "%v", groupstate.Diff(a.State(), b.State(), 10))
	assert.Equal(t, a.NextOffset(), b.NextOffset())
}

// TestInPlaceDatabaseSnapshots: a database compacted in place does not keep the snapshots of
// its original, because one of them plus the compacted log after it is not the compacted
// log's state (shown below with the kept backup: the cleaner removed an expired offset
// tombstone after the snapshot, so the snapshot's offset would come back). Instead the
// compacted database gets a fresh snapshot of its end, which restarts to a full replay's
// state, and both stdout and stderr say what became of the old ones.
func TestInPlaceDatabaseSnapshots(t *testing.T) {
	offsetKey := func(g string) []byte {
		return binary.BigEndian.AppendUint32(str(str(binary.BigEndian.AppendUint16(nil, 1), g), "t"), 0)
	}
	value := binary.BigEndian.AppendUint16(nil, 3)
	value = binary.BigEndian.AppendUint64(value, 42)
	value = binary.BigEndian.AppendUint32(value, 0xffffffff)
	value = str(value, "")
	value = binary.BigEndian.AppendUint64(value, 1_700_000_000_000)
	segs := writeLog(t,
		batch(0, 0, eventlog.Record{Key: offsetKey("g"), Value: value}),
		batch(1, 1_700_000_100_000, eventlog.Record{Key: offsetKey("g")}), // tombstone, horizon passed long ago
		batch(2, 0, eventlog.Record{Key: offsetKey("h"), Value: value}),
	)
	src, err := segment.Open(segs, segment.Options{})
	require.NoError(t, err)
	db := filepath.Join(t.TempDir(), "db")
	l, err := pebblelog.Open(db, nil)
	require.NoError(t, err)
	_, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{})
	require.NoError(t, err)
	store, err := snapshot.OpenStore(recovery.StoreDir(db), snapshot.Options{})
	require.NoError(t, err)
	e := replay.New(0, replayOpts())
	require.NoError(t, e.Run(context.Background(), l, 1)) // the state before the tombstone
	_, err = recovery.TakeSnapshot(store, l, e, 0)
	require.NoError(t, err)
	require.NoError(t, l.Close())

	code, stdout, stderr := runCLI(db, "--in-place", "--keep-backup", "--now", "2027-01-01T00:00:00Z")
	require.Equal(t, 0, code, stderr)
	for _, out := range []string{stdout, stderr} {
		assert.Contains(t, out, "snapshots: 1 of the original log, not valid for the compacted log\n")
		assert.Contains(t, out, "snapshots: they stay in the backup "+db+".compact-old\n")
		assert.Contains(t, out, "snapshots: partition 0: a new one at the compacted log's end (offset 3)\n")
	}

	l, err = pebblelog.Open(db, nil)
	require.NoError(t, err)
	full := replay.New(0, replayOpts())
	require.NoError(t, full.Run(context.Background(), l, math.MaxInt64))
	_, hasG := full.State().Offset("g", "t", 0)
	require.False(t, hasG, "the compacted log deletes g's offset")

	// The compacted database restarts from its new snapshot to a full replay's state.
	store, err = snapshot.OpenStore(recovery.StoreDir(db), snapshot.Options{})
	require.NoError(t, err)
	infos, err := store.List(0)
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.EqualValues(t, 3, infos[0].NextOffset)
	rec, err := recovery.Recover(context.Background(), l, store, 0, recovery.Options{Options: replayOpts()})
	require.NoError(t, err)
	require.NotNil(t, rec.Snapshot)
	assert.True(t, groupstate.Equal(full.State(), rec.Engine.State()))

	// Why the old snapshot had to go: restored, with the compacted log after it replayed, it
	// brings back the offset the compacted log deleted. Recovery refuses it (the batches its
	// log identity names are not the compacted log's); restored by hand, it shows why.
	old, err := snapshot.OpenStore(recovery.StoreDir(db+".compact-old"), snapshot.Options{ReadOnly: true})
	require.NoError(t, err)
	rec, err = recovery.Recover(context.Background(), l, old, 0, recovery.Options{Options: replayOpts()})
	require.NoError(t, err)
	require.Nil(t, rec.Snapshot)
	assert.Contains(t, strings.Join(rec.Messages(), "\n"), "taken from another log")
	restored, _, err := recovery.LoadSnapshot(old, snapshot.Name(0, 1), replayOpts())
	require.NoError(t, err)
	require.NoError(t, restored.Run(context.Background(), l, math.MaxInt64))
	_, hasG = restored.State().Offset("g", "t", 0)
	assert.True(t, hasG, "old snapshot + compacted tail keeps the deleted offset")
	assert.False(t, groupstate.Equal(full.State(), restored.State()))
	require.NoError(t, l.Close())

	// --out leaves the original's snapshots with it, and gives the output its own;
	// --in-place without a backup removes them with the original.
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr = runCLI(db, "--out", out, "--now", "2027-01-02T00:00:00Z", "--quiet")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "snapshots: they stay with the original in "+db+"\n")
	assert.FileExists(t, filepath.Join(recovery.StoreDir(out), snapshot.Name(0, 3)))
	assert.FileExists(t, filepath.Join(recovery.StoreDir(db), snapshot.Name(0, 3)))
	code, stdout, stderr = runCLI(out, "--in-place", "--now", "2027-01-03T00:00:00Z", "--quiet")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "snapshots: they are removed with it (--keep-backup keeps them)\n")
	assert.FileExists(t, filepath.Join(recovery.StoreDir(out), snapshot.Name(0, 3)))
}

// TestSecondWriterRefused: compact on a log another writer holds (a segment directory, a
// database) exits 1 with one line naming the holder, and touches nothing.
func TestSecondWriterRefused(t *testing.T) {
	dir := writeLog(t, batch(0, 0, eventlog.Record{Key: str(binary.BigEndian.AppendUint16(nil, 2), "g")}))
	db := filepath.Join(t.TempDir(), "db")
	l, err := pebblelog.Open(db, nil)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	for _, c := range []struct{ path, holder string }{{dir, "replay simulate --segments"}, {db, "replay import"}} {
		var held *lock.Lock
		if c.path == db {
			held, err = lock.Database(c.path, c.holder)
		} else {
			held, err = lock.Beside(c.path, c.holder)
		}
		require.NoError(t, err)
		before, _ := os.ReadDir(filepath.Dir(c.path))
		code, stdout, stderr := runCLI(c.path, "--in-place", "--now", "2027-01-01T00:00:00Z")
		assert.Equal(t, exitFailure, code)
		assert.Empty(t, stdout)
		// (with the date when the test runs across midnight UTC: a lock taken on another day)
		assert.Regexp(t, `^compact: `+regexp.QuoteMeta(c.path)+` is in use by "`+c.holder+`" \(pid \d+ on host [^,]+, since (\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\dZ\): wait for it to finish or stop it\n$`, stderr)
		after, _ := os.ReadDir(filepath.Dir(c.path))
		assert.Equal(t, len(before), len(after), "nothing written beside it")
		require.NoError(t, held.Release())
	}
}
