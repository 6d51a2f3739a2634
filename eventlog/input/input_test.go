package input

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/internal/testcorpus"
)

// TestOpenTellsKindsApart opens each kind a user can point coordlog at, and the things that
// are none of them.
func TestOpenTellsKindsApart(t *testing.T) {
	part := filepath.Join(testcorpus.Recordings(), "streams", "__consumer_offsets-0")
	in, err := Open(part, eventlog.Strict)
	require.NoError(t, err)
	require.Equal(t, PartitionDir, in.Kind)
	require.NotNil(t, in.Report())
	parts, err := in.Select(nil)
	require.NoError(t, err)
	require.Equal(t, []int32{0}, parts)
	_, err = in.Select([]int32{0, 7})
	require.EqualError(t, err, "partition 7 is not in the input (it has [0])")
	require.NoError(t, in.Close())

	logDir := filepath.Join(testcorpus.Recordings(), "streams")
	in, err = Open(logDir, eventlog.Strict)
	require.NoError(t, err)
	require.Equal(t, LogDir, in.Kind)
	require.Equal(t, []string{filepath.Join(logDir, "driver.log") + ": not a segment file (this is a log directory), ignored"}, in.Report().Warnings(),
		"the recording driver's own log beside the partition is not a segment")
	require.NoError(t, in.Close())

	db := filepath.Join(t.TempDir(), "db")
	l, err := pebblelog.Open(db, nil)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.True(t, IsDatabase(db))
	in, err = Open(db, eventlog.Strict)
	require.NoError(t, err)
	require.Equal(t, Database, in.Kind)
	require.Nil(t, in.Report())
	require.NoError(t, in.Close())
	require.NoError(t, in.Close(), "a second Close does nothing")

	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = Open(file, eventlog.Strict)
	require.ErrorContains(t, err, "is not a directory: give a __consumer_offsets-N directory, a log directory, a coordlog database or one .log segment file")
	_, err = Open(t.TempDir(), eventlog.Strict)
	require.ErrorContains(t, err, "no .log files and no __consumer_offsets-N directories")
	require.False(t, IsDatabase(t.TempDir()))
}

// copyPartition copies the .log files of a recording's partition into dir.
func copyPartition(t *testing.T, scenario, dir string) {
	t.Helper()
	src := filepath.Join(testcorpus.Recordings(), scenario, "__consumer_offsets-0")
	logs, _ := filepath.Glob(filepath.Join(src, "*.log"))
	require.NotEmpty(t, logs)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, f := range logs {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644))
	}
}

// What users point coordlog at besides the usual: one segment file (as kafka-dump-log --files
// takes it), a log directory whose own name ends in -N with a broker's server.log beside the
// partitions, another topic's partition directory.
func TestOpenEdgeCases(t *testing.T) {
	root := t.TempDir()
	logDir := filepath.Join(root, "kafka-logs-1")
	copyPartition(t, "classic", filepath.Join(logDir, "__consumer_offsets-3"))
	require.NoError(t, os.WriteFile(filepath.Join(logDir, "server.log"), []byte("INFO started\n"), 0o644))
	in, err := Open(logDir, eventlog.Strict)
	require.NoError(t, err)
	require.Equal(t, LogDir, in.Kind)
	ps, _ := in.Partitions()
	require.Equal(t, []int32{3}, ps, "a log directory, though its name ends in -1")
	require.Equal(t, []string{filepath.Join(logDir, "server.log") + ": not a segment file (this is a log directory), ignored"}, in.Report().Warnings())

	seg := filepath.Join(logDir, "__consumer_offsets-3", "00000000000000000000.log")
	in, err = Open(seg, eventlog.Strict)
	require.NoError(t, err)
	require.Equal(t, SegmentFile, in.Kind)
	ps, _ = in.Partitions()
	require.Equal(t, []int32{3}, ps, "the partition of the file's directory")
	first, next, err := in.Offsets(3)
	require.NoError(t, err)
	require.Equal(t, int64(0), first)
	require.Equal(t, int64(37), next)

	loose := filepath.Join(root, "copy.log")
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(loose, b, 0o644))
	in, err = Open(loose, eventlog.Strict)
	require.NoError(t, err)
	ps, _ = in.Partitions()
	require.Equal(t, []int32{0}, ps)
	require.Len(t, in.Report().Warnings(), 2, "neither the name nor the directory says base offset and partition: both said")

	orders := filepath.Join(root, "orders-0")
	copyPartition(t, "classic", orders)
	_, err = Open(orders, eventlog.Strict)
	require.EqualError(t, err, orders+` is a partition of topic "orders", not of __consumer_offsets: its records are not group coordinator records; give a __consumer_offsets-N directory (or the log directory that holds them)`)
	_, err = Open(filepath.Join(orders, "00000000000000000000.log"), eventlog.Strict)
	require.ErrorContains(t, err, `is a partition of topic "orders"`)

	onlyLogs := filepath.Join(root, "logs")
	require.NoError(t, os.MkdirAll(onlyLogs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(onlyLogs, "server.log"), nil, 0o644))
	_, err = Open(onlyLogs, eventlog.Strict)
	require.ErrorContains(t, err, "its .log files (server.log) are not segments")
}

// TestCheckDBPath: a database is written only where it can live: not into the input (a
// Kafka partition directory, or below it), not into a directory of other files; a new, empty
// or existing database directory is fine.
func TestCheckDBPath(t *testing.T) {
	root := t.TempDir()
	part := filepath.Join(root, "__consumer_offsets-0")
	copyPartition(t, "classic", part)
	for _, c := range []struct {
		db, want string
	}{
		{part, "is the input itself"},
		{filepath.Join(part, "db"), "is inside the input " + part},
		{filepath.Join(part, "00000000000000000000.log"), "is inside the input"},
	} {
		require.ErrorContains(t, CheckDBPath(c.db, part), c.want, c.db)
	}
	other := filepath.Join(root, "other")
	copyPartition(t, "classic", other)
	require.ErrorContains(t, CheckDBPath(other, part), "is not a coordlog database and not empty (it holds 00000000000000000000.log)")
	file := filepath.Join(root, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	require.ErrorContains(t, CheckDBPath(file, part), "is a file, not a directory")

	require.NoError(t, CheckDBPath(filepath.Join(root, "new"), part), "a directory to create")
	empty := filepath.Join(root, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	require.NoError(t, CheckDBPath(empty, part))
	require.NoError(t, os.WriteFile(filepath.Join(empty, "LOCK"), nil, 0o644))
	require.NoError(t, CheckDBPath(empty, part), "a writer that stopped before its first MANIFEST")
	require.NoError(t, CheckDBPath(root+"-db", root), "a sibling whose name starts like the input's")
}

// The input-detection defects of issue 13 (item 12): `describe .` inside a partition directory
// failed; a named pipe named like a segment hung the reader; a __consumer_offsets-N whose N
// does not fit a partition number aborted the whole log directory; symbolic links to partition
// directories were not followed.
func TestOpenHostileDirectories(t *testing.T) {
	root := t.TempDir()
	part := filepath.Join(root, "__consumer_offsets-4")
	copyPartition(t, "classic", part)

	t.Run("dot-inside-a-partition-directory", func(t *testing.T) {
		t.Chdir(part)
		in, err := Open(".", eventlog.Strict)
		require.NoError(t, err)
		require.Equal(t, PartitionDir, in.Kind)
		ps, _ := in.Partitions()
		require.Equal(t, []int32{4}, ps)
		in, err = Open("00000000000000000000.log", eventlog.Strict)
		require.NoError(t, err)
		ps, _ = in.Partitions()
		require.Equal(t, []int32{4}, ps, "a segment file named from inside its directory")
		require.Empty(t, in.Report().Warnings())
	})

	t.Run("named-pipe", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
		copyPartition(t, "classic", dir)
		fifo := filepath.Join(dir, "00000000000000099999.log")
		require.NoError(t, syscall.Mkfifo(fifo, 0o644))
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, err := Open(fifo, eventlog.Strict)
			assert.ErrorContains(t, err, "is not a regular file or a directory: not opened")
			in, err := Open(dir, eventlog.Strict)
			if !assert.NoError(t, err) {
				return
			}
			first, next, err := in.Offsets(0)
			assert.NoError(t, err)
			assert.Equal(t, []int64{0, 37}, []int64{first, next})
			assert.Equal(t, []string{fifo + ": not a regular file (a named pipe): not opened, ignored (Kafka's log loader skips it too)"}, in.Report().Warnings())
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			f, _ := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0) // unblock a reader
			if f != nil {
				f.Close()
			}
			t.Fatal("opening a directory holding a named pipe blocked")
		}
	})

	t.Run("log-directory", func(t *testing.T) {
		logDir := filepath.Join(t.TempDir(), "kafka-logs")
		copyPartition(t, "classic", filepath.Join(logDir, "__consumer_offsets-1"))
		copyPartition(t, "consumer", filepath.Join(logDir, "__consumer_offsets-99999999999"))
		elsewhere := filepath.Join(t.TempDir(), "moved", "__consumer_offsets-7")
		copyPartition(t, "consumer", elsewhere)
		link := filepath.Join(logDir, "__consumer_offsets-7")
		require.NoError(t, os.Symlink(elsewhere, link))
		require.NoError(t, os.Symlink(filepath.Join(logDir, "nowhere"), filepath.Join(logDir, "__consumer_offsets-8")))

		in, err := Open(logDir, eventlog.Strict)
		require.NoError(t, err)
		require.Equal(t, LogDir, in.Kind)
		ps, _ := in.Partitions()
		require.Equal(t, []int32{1, 7}, ps)
		require.Equal(t, []string{
			filepath.Join(logDir, "__consumer_offsets-7") + ": a symbolic link to " + elsewhere + ", followed",
			filepath.Join(logDir, "__consumer_offsets-8") + ": a symbolic link that cannot be followed (stat " + filepath.Join(logDir, "__consumer_offsets-8") + ": no such file or directory), ignored",
			filepath.Join(logDir, "__consumer_offsets-99999999999") + ": partition number 99999999999 does not fit Kafka's 32-bit partition numbers: not a partition directory, skipped",
		}, in.Report().Warnings())
		first, next, err := in.Offsets(7)
		require.NoError(t, err)
		require.Less(t, first, next, "the linked partition is read")
	})
}
