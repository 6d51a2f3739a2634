package pebblelog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/internal/testgen"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// failingFS fails every write to a file whose name starts with prefix once on is set, with err.
type failingFS struct {
	vfs.FS
	prefix string
	err    error
	on     *atomic.Bool
}

func (f failingFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	if err != nil || !strings.HasPrefix(f.FS.PathBase(name), f.prefix) {
		return file, err
	}
	return failingFile{file, f}, nil
}

type failingFile struct {
	vfs.File
	fs failingFS
}

func (f failingFile) Write(p []byte) (int, error) {
	if f.fs.on.Load() {
		return 0, f.fs.err
	}
	return f.File.Write(p)
}

// TestFatalIsAnError: an I/O error Pebble treats as fatal (here the first MANIFEST write of a
// new database) in a call of this package comes back as an error naming the directory, not
// as a panic.
func TestFatalIsAnError(t *testing.T) {
	on := &atomic.Bool{}
	on.Store(true)
	fs := failingFS{FS: vfs.NewMem(), prefix: "MANIFEST-", err: syscall.EIO, on: on}
	_, err := pebblelog.Open("db", &pebblelog.Options{FS: fs})
	require.Error(t, err)
	require.ErrorIs(t, err, syscall.EIO)
	require.ErrorContains(t, err, "writing db failed")
	require.ErrorContains(t, err, "MANIFEST")
	require.ErrorContains(t, err, "run the same command again")
}

const fatalEnv = "COORDLOG_TEST_BACKGROUND_FATAL"

// TestHelperBackgroundFatal is not a test: run with fatalEnv set, it makes MANIFEST writes
// fail after opening and appends until a flush (in one of Pebble's goroutines) fails on it.
func TestHelperBackgroundFatal(t *testing.T) {
	if os.Getenv(fatalEnv) == "" {
		t.Skip("helper process")
	}
	on := &atomic.Bool{}
	fs := failingFS{FS: vfs.NewMem(), prefix: "MANIFEST-", err: syscall.EIO, on: on}
	l, err := pebblelog.Open("db", &pebblelog.Options{FS: fs, MemTableSize: 256 << 10})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	on.Store(true)
	var off int64
	for range 100000 {
		b := testgen.Batch(0, off, 9, 0)
		if err := l.Append(b); err != nil {
			fmt.Println("append:", err)
			os.Exit(4)
		}
		off = b.LastOffset + 1
	}
	fmt.Println("no fatal error")
	os.Exit(5)
}

// TestFatalInBackgroundExits: a fatal error in one of Pebble's goroutines (a MANIFEST write
// after a flush) ends the process with status 1 and a message naming the database and what
// to do, without a panic or a goroutine dump; or, should the next append be refused first,
// that append fails with the error.
func TestFatalInBackgroundExits(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBackgroundFatal$")
	cmd.Env = append(os.Environ(), fatalEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	out := stdout.String() + stderr.String()
	t.Logf("exit %d: %s", ee.ExitCode(), out)
	require.NotContains(t, out, "panic")
	require.NotContains(t, out, "goroutine ")
	switch ee.ExitCode() {
	case 1:
		require.Contains(t, stderr.String(), "coordlog: writing db failed")
		require.Contains(t, stderr.String(), "MANIFEST")
		require.Contains(t, stderr.String(), "crash-consistent")
	case 4:
		require.Contains(t, stdout.String(), "append: writing db failed")
	default:
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", ee.ExitCode(), stdout.String(), stderr.String())
	}
}

// mountTmpfs mounts a tmpfs of size bytes on a new directory, or skips the test when it
// cannot (not root, no mount permission).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestImportDiskFull imports a log larger than the filesystem's free space: the import stops
// with an error that names the directory and says what to do and up to which offset the
// database holds the partition, without a panic; what it holds reads back whole; a writer is
// refused cleanly while the disk is full; a re-run once space is freed completes it. It runs
// with two memtable sizes (the flushes and compactions of a small one run while the disk
// fills), and with the disk filled to the last byte by another writer just before a commit,
// which only the reserve lets Pebble survive.
func TestImportDiskFull(t *testing.T) {
	root := t.TempDir()
	_, _, err := testgen.Dump(root, 1, 20<<20, 20, eventlog.CodecNone)
	require.NoError(t, err)
	for _, c := range []struct {
		name     string
		memTable uint64
		fillAt   int // fill the disk before this commit (0: never)
	}{{"memtable=1MiB", 1 << 20, 0}, {"memtable=256KiB", 256 << 10, 0}, {"filled-by-another-writer", 1 << 20, 3}} {
		t.Run(c.name, func(t *testing.T) { importDiskFull(t, root, c.memTable, c.fillAt) })
	}
}

// fillUp writes to path until the filesystem is full.
func fillUp(t *testing.T, path string) {
	f, err := os.Create(path)
	require.NoError(t, err)
	for err == nil {
		_, err = f.Write(make([]byte, 64<<10))
	}
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, f.Close())
}

func importDiskFull(t *testing.T, root string, memTable uint64, fillAt int) {
	fsDir := mountTmpfs(t, "40m")
	filler := filepath.Join(fsDir, "filler")
	require.NoError(t, os.WriteFile(filler, make([]byte, 28<<20), 0o644))
	rest := filepath.Join(fsDir, "rest")
	src, err := segment.Open(root, segment.Options{})
	require.NoError(t, err)
	dir := filepath.Join(fsDir, "db")
	opts := &pebblelog.Options{MemTableSize: memTable}
	var fatal atomic.Value
	opts.OnFatal = func(err error) { fatal.Store(err); select {} }

	l, err := pebblelog.Open(dir, opts)
	require.NoError(t, err)
	commits := 0
	l.SetTestHookBeforeCommit(func() {
		if commits++; commits == fillAt {
			fillUp(t, rest)
		}
	})
	_, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{CommitBytes: 512 << 10})
	require.Error(t, err, "a 20 MiB log cannot fit in 12 MiB")
	t.Log(err)
	require.ErrorIs(t, err, pebblelog.ErrNoSpace)
	require.ErrorContains(t, err, "no space left on "+dir)
	require.ErrorContains(t, err, "free space, then run the same command again")
	var we *pebblelog.WriteError
	require.True(t, errors.As(err, &we))
	held, ok := we.Durable[0]
	require.True(t, ok, "the error says how far partition 0 is intact")
	require.Positive(t, held, "the commits that fit are kept")
	require.ErrorContains(t, err, fmt.Sprintf("partition 0 up to offset %d", held-1))
	require.NoError(t, l.Close())

	// What the database holds is whole and agrees with the error.
	r, err := pebblelog.Open(dir, &pebblelog.Options{ReadOnly: true})
	require.NoError(t, err, "a full disk does not keep a reader out")
	next, err := r.NextOffset(0)
	require.NoError(t, err)
	require.GreaterOrEqual(t, next, held)
	got := collect(t, r, 0, 0)
	require.NotEmpty(t, got)
	require.Equal(t, next, got[len(got)-1].LastOffset+1)
	require.NoError(t, r.Close())

	// Full: a writer is refused at once, cleanly, before Pebble writes.
	if fillAt == 0 {
		fillUp(t, rest)
	}
	_, err = pebblelog.Open(dir, opts)
	require.ErrorContains(t, err, "no space left on "+dir)
	require.ErrorContains(t, err, "coordlog needs")
	require.ErrorContains(t, err, "nothing was written")

	// Freed: the same import completes.
	require.NoError(t, os.Remove(filler))
	require.NoError(t, os.Remove(rest))
	l, err = pebblelog.Open(dir, opts)
	require.NoError(t, err)
	_, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{})
	require.NoError(t, err)
	_, srcNext, err := src.Offsets(0)
	require.NoError(t, err)
	next, err = l.NextOffset(0)
	require.NoError(t, err)
	require.Equal(t, srcNext, next)
	require.NoError(t, l.Close())
	_, err = os.Stat(filepath.Join(dir, "coordlog.reserve"))
	require.ErrorIs(t, err, os.ErrNotExist, "the reserve goes with the writer")
}
