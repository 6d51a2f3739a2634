package pebblelog_test

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/internal/testgen"
	"github.com/coordlog/coordlog/eventlog/lock"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// listing describes every file under dir (name, size, mode, modification time): a reader
// must leave it exactly as it found it.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		lines = append(lines, fmt.Sprintf("%s %d %v %d", rel, st.Size(), st.Mode(), st.ModTime().UnixNano()))
		return nil
	}))
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// importDB imports a generated log directory of parts partitions into a new database in dir.
func importDB(t *testing.T, dir string, parts, batches int) [][]*eventlog.Batch {
	t.Helper()
	root := t.TempDir()
	want := writeSegments(t, root, parts, batches)
	src, err := segment.Open(root, segment.Options{})
	require.NoError(t, err)
	l, err := pebblelog.Open(dir, nil)
	require.NoError(t, err)
	_, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{CommitBytes: 4096})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	return want
}

// TestReadOnlyWritesNothing: readers of a database take no lock and write nothing: two at
// once, beside a writer of the same process, and the directory (names, sizes, modes, times)
// is as it was. A write through a reader fails with ErrReadOnly.
func TestReadOnlyWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	want := importDB(t, dir, 2, 150)
	before := listing(t, dir)

	r1, err := pebblelog.Open(dir, &pebblelog.Options{ReadOnly: true})
	require.NoError(t, err)
	r2, err := pebblelog.Open(dir, &pebblelog.Options{ReadOnly: true})
	require.NoError(t, err, "a second reader beside the first")
	for p := range 2 {
		require.Len(t, collect(t, r1, int32(p), 0), len(want[p]))
		require.Len(t, collect(t, r2, int32(p), 0), len(want[p]))
	}
	require.ErrorIs(t, r1.Append(testgen.Batch(0, 1<<20, 1, 0)), pebblelog.ErrReadOnly)
	require.ErrorIs(t, r1.AddPartition(7, 0), pebblelog.ErrReadOnly)
	require.NoError(t, r1.Close())
	require.NoError(t, r2.Close())
	require.Equal(t, before, listing(t, dir), "readers changed the database directory")

	// Beside a writer of this process: the reader sees the log as it was when it opened.
	w, err := pebblelog.Open(dir, nil)
	require.NoError(t, err)
	r, err := pebblelog.Open(dir, &pebblelog.Options{ReadOnly: true})
	require.NoError(t, err, "a reader beside a writer")
	require.NoError(t, w.Append(testgen.Batch(0, 1<<20, 3, 0)))
	got := collect(t, r, 0, 0)
	require.Len(t, got, len(want[0]), "the reader's view is the database as it opened")
	require.NoError(t, r.Close())
	require.NoError(t, w.Close())
	r, err = pebblelog.Open(dir, &pebblelog.Options{ReadOnly: true})
	require.NoError(t, err)
	require.Len(t, collect(t, r, 0, 0), len(want[0])+1, "a new reader sees the append")
	require.NoError(t, r.Close())

	_, err = pebblelog.Open(filepath.Join(t.TempDir(), "none"), &pebblelog.Options{ReadOnly: true})
	require.ErrorContains(t, err, "holds no coordlog database")
}

// TestReadOnlySurvivesWriterCompactions: a reader opened before a writer compacts reads every
// batch it saw at open, although the writer deleted the tables they were in (the reader
// pinned them).
func TestReadOnlySurvivesWriterCompactions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	opts := &pebblelog.Options{MemTableSize: 256 << 10}
	w, err := pebblelog.Open(dir, opts)
	require.NoError(t, err)
	defer w.Close()
	var off int64
	appendMany := func(n int) {
		for range n {
			b := testgen.Batch(0, off, 9, 0)
			require.NoError(t, w.Append(b))
			off = b.LastOffset + 1
		}
	}
	appendMany(3000)
	tables := func() map[string]bool {
		names, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
		m := map[string]bool{}
		for _, n := range names {
			m[filepath.Base(n)] = true
		}
		return m
	}
	r, err := pebblelog.Open(dir, &pebblelog.Options{ReadOnly: true})
	require.NoError(t, err)
	defer r.Close()
	seen := tables()
	require.NotEmpty(t, seen)
	// Flushes of the meta key overlap every earlier table, so compactions rewrite (and delete)
	// them; append until one of the tables the reader saw is gone.
	for deleted := false; !deleted; {
		appendMany(2000)
		now := tables()
		for n := range seen {
			deleted = deleted || !now[n]
		}
		require.Less(t, off, int64(5_000_000), "no table was compacted away")
	}
	got := collect(t, r, 0, 0)
	require.Len(t, got, 3000, "the reader reads what it saw at open")
	require.EqualValues(t, 3000*9-1, got[len(got)-1].LastOffset)
}

// holderEnv makes the test binary a writer that holds a database (see TestHelperHoldWriter).
const holderEnv = "COORDLOG_TEST_HOLD_DB"

// TestHelperHoldWriter is not a test: run with holderEnv set, it takes the database's writer
// lock and opens it for writing, as the import command does, says "ready" and holds the
// database until its stdin closes.
func TestHelperHoldWriter(t *testing.T) {
	dir := os.Getenv(holderEnv)
	if dir == "" {
		t.Skip("helper process")
	}
	held, err := lock.Database(dir, "replay import")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	l, err := pebblelog.Open(dir, nil)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	l.Close()
	held.Release()
	os.Exit(0)
}

// holdWriter starts a process that holds dir open for writing and returns its pid; it ends
// with the test.
func holdWriter(t *testing.T, dir string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldWriter$")
	cmd.Env = append(os.Environ(), holderEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	return cmd.Process.Pid
}

// TestWriterInAnotherProcess: while another process writes a database, Writer names it
// (pid and command), a second writer is refused with a message naming it (not "resource
// temporarily unavailable"), a reader opens beside it, and a reader that cannot open because
// the writer changed the database under it says who and what to do.
func TestWriterInAnotherProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	want := importDB(t, dir, 1, 50)
	pid := holdWriter(t, dir)

	h, busy := pebblelog.Writer(dir)
	require.True(t, busy)
	require.Equal(t, pid, h.PID)
	require.Equal(t, "replay import", h.Command)
	require.Contains(t, h.String(), fmt.Sprintf(`"replay import" (pid %d on host `, pid))

	// A writer that does not take the writer lock first (a Go program using this package)
	// meets Pebble's: named too.
	_, err := pebblelog.Open(dir, nil)
	require.ErrorContains(t, err, fmt.Sprintf(`is in use by "replay import" (pid %d`, pid))
	require.NotContains(t, err.Error(), "temporarily unavailable")

	r, err := pebblelog.Open(dir, &pebblelog.Options{ReadOnly: true})
	require.NoError(t, err, "a reader beside a writer of another process")
	require.Len(t, collect(t, r, 0, 0), len(want[0]))
	require.NoError(t, r.Close())
	_, busy = pebblelog.Writer(dir)
	require.True(t, busy, "the reader left the writer's lock alone")

	// The writer replaces its MANIFEST while a reader opens (here: the reader finds none).
	manifests, err := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
	require.NoError(t, err)
	for _, m := range manifests {
		require.NoError(t, os.Remove(m))
	}
	_, err = pebblelog.Open(dir, &pebblelog.Options{ReadOnly: true})
	require.ErrorContains(t, err, fmt.Sprintf(`in use by "replay import" (pid %d`, pid))
	require.ErrorContains(t, err, "run the command again")
}

// TestWriterNone: no writer, no LOCK file, or a stale coordlog.lock: nobody is named.
func TestWriterNone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	importDB(t, dir, 1, 5)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "coordlog.lock"), []byte(`{"command":"import","pid":1,"host":"h","since":"2025-01-02T03:04:05Z"}`+"\n"), 0o644))
	_, busy := pebblelog.Writer(dir)
	require.False(t, busy, "a stale coordlog.lock names no writer: nobody holds LOCK")
	require.NoError(t, os.Remove(filepath.Join(dir, "LOCK")))
	_, busy = pebblelog.Writer(dir)
	require.False(t, busy)
	_, busy = pebblelog.Writer(t.TempDir())
	require.False(t, busy)
	// A database copied without its LOCK file reads.
	r, err := pebblelog.Open(dir, &pebblelog.Options{ReadOnly: true})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	_, err = os.Stat(filepath.Join(dir, "LOCK"))
	require.ErrorIs(t, err, os.ErrNotExist, "a reader does not create LOCK")
}
