package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/lock"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// smallLog writes a partition directory at dir in which compaction has work: k0 is
// superseded twice, k1 once.
func smallLog(t *testing.T, dir string) {
	w, err := segment.NewWriter(dir, segment.WriterOptions{})
	require.NoError(t, err)
	for i, key := range []string{"k0", "k1", "k0", "k1", "k0", "k2"} {
		off := int64(i)
		_, err := w.Write(&eventlog.Batch{BaseOffset: off, LastOffset: off, Magic: 2, ProducerID: -1, ProducerEpoch: -1,
			BaseSequence: -1, BaseTimestamp: 1000 + off, MaxTimestamp: 1000 + off, NumRecords: 1,
			Records: []eventlog.Record{{Offset: off, Timestamp: 1000 + off, Key: []byte(key), Value: []byte{byte(i)}}}})
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
}

// offsetsIn lists the record offsets of the partition directory dir.
func offsetsIn(t *testing.T, dir string) []int64 {
	t.Helper()
	r, err := segment.Open(dir, segment.Options{})
	require.NoError(t, err)
	parts, err := r.Partitions()
	require.NoError(t, err)
	require.Len(t, parts, 1)
	it, err := r.Batches(parts[0], 0)
	require.NoError(t, err)
	defer it.Close()
	var out []int64
	for it.Next() {
		for _, rec := range it.Batch().Records {
			out = append(out, rec.Offset)
		}
	}
	require.NoError(t, it.Err())
	return out
}

func acceptAll(context.Context, eventlog.Source, eventlog.Source, []int32) error { return nil }

// TestRerunAfterCrashFromAnotherDirectory: an in-place run started with a relative path
// crashes right after its swap marker is durable; a re-run from another working directory
// (with the absolute path) finishes the swap and the log comes out compacted.
func TestRerunAfterCrashFromAnotherDirectory(t *testing.T) {
	root := t.TempDir()
	smallLog(t, filepath.Join(root, "data", "__consumer_offsets-0"))
	t.Chdir(root)
	now := time.UnixMilli(10_000_000)
	crashHook = func(step string) error {
		if step == "marker" {
			return errCrash
		}
		return nil
	}
	defer func() { crashHook = nil }()
	job := &Job{Input: filepath.Join("data", "__consumer_offsets-0"), InPlace: true, Options: DefaultOptions(now), Verify: acceptAll}
	_, err := job.Run(context.Background())
	require.ErrorIs(t, err, errCrash)
	crashHook = nil

	target := filepath.Join(root, "data", "__consumer_offsets-0")
	require.FileExists(t, MarkerPath(target))
	assert.Equal(t, []int64{0, 1, 2, 3, 4, 5}, offsetsIn(t, target), "the crash left the target untouched")
	t.Chdir(t.TempDir())
	job.Input = target
	_, err = job.Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 4, 5}, offsetsIn(t, target))
	assert.NoFileExists(t, MarkerPath(target))
	leftovers, _ := filepath.Glob(target + ".compact-*")
	assert.Empty(t, leftovers)
}

// TestOldRelativeMarker: a marker of an older coordlog holds paths relative to the working
// directory of the run that wrote it. Recovery from another directory finds them from the
// marker's own place; a marker whose paths cannot be placed is refused with what to do.
func TestOldRelativeMarker(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	target, staged := filepath.Join("data", "log"), filepath.Join("data", "log.compact-new")
	mkdir(t, target, "old")
	mkdir(t, staged, "new")
	dev, ino, err := inode(staged)
	require.NoError(t, err)
	old := map[string]any{"target": target, "staged": staged, "backup": filepath.Join("data", "log.compact-old"), "dev": dev, "ino": ino, "keep_backup": false}
	b, _ := json.Marshal(old)
	require.NoError(t, os.WriteFile(MarkerPath(target), b, 0o644))

	t.Chdir(t.TempDir())
	abs := filepath.Join(root, "data", "log")
	did, err := Recover(abs)
	require.NoError(t, err)
	assert.True(t, did)
	assert.Equal(t, "new", content(t, abs))
	assert.NoDirExists(t, filepath.Join(root, staged))
	assert.NoDirExists(t, BackupPath(abs))
	assert.NoFileExists(t, MarkerPath(abs))

	// "../elsewhere/log" cannot be placed from the marker's location.
	mkdir(t, abs+".compact-new", "newer")
	old["target"], old["staged"] = filepath.Join("..", "elsewhere", "log"), filepath.Join("..", "elsewhere", "log.compact-new")
	b, _ = json.Marshal(old)
	require.NoError(t, os.WriteFile(MarkerPath(abs), b, 0o644))
	_, err = Recover(abs)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("relative to the directory it ran in (%q)", old["target"]))
	assert.Equal(t, "new", content(t, abs), "nothing moved")
}

// TestInPlaceDatabaseLockedThroughSwap: a database compacted in place through a symbolic link
// is compacted where it is (the link stays), and it is locked at every step of the swap: a
// writer (as replay import: lock.Database, then Pending) trying meanwhile is refused, naming
// the compaction. So it is at every step of a re-run that completes a crashed run's swap,
// even when the lock file was replaced in between (a writer came, took the stale lock, found
// the interrupted compaction and left, or the crash left the database moved aside by the
// two-rename fallback). After the job the lock is free and its file is gone.
func TestInPlaceDatabaseLockedThroughSwap(t *testing.T) {
	for _, c := range []struct {
		fallback bool
		crashAt  string
	}{{false, ""}, {true, ""}, {false, "marker"}, {true, "marker"}, {true, "aside"}} {
		name := map[bool]string{false: "exchange", true: "fallback"}[c.fallback]
		if c.crashAt != "" {
			name += "/crash-at-" + c.crashAt
		}
		t.Run(name, func(t *testing.T) {
			useFallback = c.fallback
			defer func() { useFallback = false }()
			testInPlaceDatabaseLockedThroughSwap(t, c.fallback, c.crashAt)
		})
	}
}

func testInPlaceDatabaseLockedThroughSwap(t *testing.T, fallback bool, crashAt string) {
	root := t.TempDir()
	segs := filepath.Join(root, "__consumer_offsets-0")
	smallLog(t, segs)
	src, err := segment.Open(segs, segment.Options{})
	require.NoError(t, err)
	db := filepath.Join(root, "real", "db")
	l, err := pebblelog.Open(db, nil)
	require.NoError(t, err)
	_, err = pebblelog.Import(context.Background(), src, l, pebblelog.ImportOptions{})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	link := filepath.Join(root, "db")
	require.NoError(t, os.Symlink(db, link))

	// writer does what replay import does before it opens a database.
	writer := func() error {
		if err := Pending(link); err != nil {
			return err
		}
		l, err := lock.Database(link, "replay import")
		if err != nil {
			return err
		}
		defer l.Release()
		return Pending(link)
	}
	job := &Job{Input: link, InPlace: true, Options: DefaultOptions(time.UnixMilli(10_000_000)), Verify: acceptAll}
	steps := []string{"marker", "swapped", "backup", "removed"}
	if fallback {
		steps = []string{"marker", "aside", "swapped", "backup", "removed"}
	}
	var recovering []string // the steps of the re-run's recovery
	if crashAt != "" {
		crashHook = func(step string) error {
			if step == crashAt {
				return errCrash
			}
			return nil
		}
		_, err = job.Run(context.Background())
		require.ErrorIs(t, err, errCrash)
		require.ErrorContains(t, writer(), "interrupted") // and removes the stale lock file
		recovering = steps[slices.Index(steps, crashAt)+1:]
	}
	var refused []string
	crashHook = func(step string) error {
		err := writer()
		var busy *lock.BusyError
		if errors.As(err, &busy) && busy.Holder != nil && busy.Holder.Command == "compact --in-place" {
			refused = append(refused, step)
		} else {
			t.Errorf("at step %s: a second writer got %v", step, err)
		}
		return nil
	}
	defer func() { crashHook = nil }()
	_, err = job.Run(context.Background())
	require.NoError(t, err)
	// The re-run completes the swap, then compacts the compacted log once more.
	assert.Equal(t, append(recovering, steps...), refused)

	st, err := os.Lstat(link)
	require.NoError(t, err)
	assert.True(t, st.Mode()&os.ModeSymlink != 0, "the link stays a link")
	l, err = pebblelog.Open(db, nil)
	require.NoError(t, err)
	first, next, err := l.Offsets(0)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{3, 6}, [2]int64{first, next}, "the database behind the link is compacted")
	require.NoError(t, l.Close())
	assert.NoFileExists(t, filepath.Join(db, lock.FileName))
	assert.NoFileExists(t, db+lock.Suffix)
	leftovers, _ := filepath.Glob(db + ".*")
	assert.Empty(t, leftovers)
}

// TestSwapAcrossFileSystemsRefused: a staged directory on another file system than its
// target is refused before the marker is written (the renames would fail half way).
func TestSwapAcrossFileSystemsRefused(t *testing.T) {
	other, err := os.MkdirTemp("/dev/shm", "compact-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	defer os.RemoveAll(other)
	dir := t.TempDir()
	a, _, _ := inode(dir)
	b, _, _ := inode(other)
	if a == b {
		t.Skip("/dev/shm is on the temporary directory's file system here")
	}
	target, staged := filepath.Join(other, "log"), filepath.Join(dir, "log.compact-new-1")
	mkdir(t, target, "old")
	mkdir(t, staged, "new")
	err = Replace(target, staged, false)
	require.ErrorContains(t, err, "are on different file systems")
	assert.NoFileExists(t, MarkerPath(target))
	assert.Equal(t, "old", content(t, target))
}

// TestLogDirectoryCrashRecovered: an in-place run over a log directory crashes during the
// swap of its first partition (after the marker; with the two-rename fallback also while the
// partition directory is moved aside). The re-run locks every partition (the missing one
// too), completes the swap and compacts the rest; also in a log directory whose name a glob
// pattern would misread (the markers are found in its listing).
func TestLogDirectoryCrashRecovered(t *testing.T) {
	for _, c := range []struct{ crashAt, dir string }{{"marker", "logs"}, {"aside", "logs"}, {"aside", "logs[1]"}} {
		crashAt := c.crashAt
		t.Run(crashAt+" "+c.dir, func(t *testing.T) {
			useFallback = crashAt == "aside"
			defer func() { useFallback, crashHook = false, nil }()
			logs := filepath.Join(t.TempDir(), c.dir)
			for _, p := range []string{"__consumer_offsets-0", "__consumer_offsets-1"} {
				smallLog(t, filepath.Join(logs, p))
			}
			crashHook = func(step string) error {
				if step == crashAt {
					return errCrash
				}
				return nil
			}
			job := &Job{Input: logs, InPlace: true, Options: DefaultOptions(time.UnixMilli(10_000_000)), Verify: acceptAll}
			_, err := job.Run(context.Background())
			require.ErrorIs(t, err, errCrash)
			if crashAt == "aside" {
				require.NoDirExists(t, filepath.Join(logs, "__consumer_offsets-0"), "the crash hit the window")
			}
			require.ErrorContains(t, Pending(logs), "interrupted")

			crashHook = nil
			_, err = job.Run(context.Background())
			require.NoError(t, err)
			for _, p := range []string{"__consumer_offsets-0", "__consumer_offsets-1"} {
				assert.Equal(t, []int64{3, 4, 5}, offsetsIn(t, filepath.Join(logs, p)), p)
			}
			ents, err := os.ReadDir(logs)
			require.NoError(t, err)
			for _, e := range ents {
				assert.NotContains(t, e.Name(), ".", "left in the log directory")
			}
			ents, err = os.ReadDir(filepath.Dir(logs))
			require.NoError(t, err)
			for _, e := range ents {
				assert.False(t, strings.HasPrefix(e.Name(), c.dir+"."), "left beside the log directory: %s", e.Name())
			}
		})
	}
}
