package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/internal/hostile"
	"github.com/coordlog/coordlog/recordcodec"
)

// memoryChildEnv carries the arguments of a replay run to TestMemoryChild, so that the run's
// peak RSS is measured in a process of its own.
const memoryChildEnv = "COORDLOG_MEMORY_CHILD_ARGS"

// TestMemoryChild is not a test: run by TestRecordCountBombMemory in a child process, it runs
// the CLI with the arguments of memoryChildEnv, stdout discarded, and exits with its code.
func TestMemoryChild(t *testing.T) {
	args := os.Getenv(memoryChildEnv)
	if args == "" {
		t.Skip("only run as the child of TestRecordCountBombMemory")
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	os.Exit(run(context.Background(), strings.Split(args, "\n"), devnull, os.Stderr))
}

// Record-count bombs (issue 13, defect 5): a 6 KB gzip batch of 600,000 tiny records took
// `decode --format jsonl` to 1.3-1.9 GiB and `describe --forensic` to 0.3-0.9 GiB plus 78 MB of
// violation lines; an 80 KB one of 8 million records was OOM-killed. Each command runs in a
// child process whose peak RSS (ru_maxrss) must stay under 256 MiB, and whose stderr stays
// short. The bombs are generated here, never committed.
func TestRecordCountBombMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CLI on bombs in child processes")
	}
	const limit = 256 << 20
	dir := t.TempDir()
	for _, n := range []int{600_000, 8_000_000} {
		raw, err := hostile.RecordBomb(n, nil)
		require.NoError(t, err)
		part := filepath.Join(dir, fmt.Sprint(n), "__consumer_offsets-0")
		require.NoError(t, os.MkdirAll(part, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(part, "00000000000000000000.log"), raw, 0o644))
	}
	for _, c := range []struct {
		args      []string
		exit      int
		stderrHas string
	}{
		{[]string{"decode", "600000/__consumer_offsets-0", "--format", "jsonl"}, 0, ""},
		{[]string{"decode", "600000/__consumer_offsets-0"}, 0, ""},
		{[]string{"describe", "600000/__consumer_offsets-0", "--forensic"}, 0, "violation: 600000 violations in 600000/__consumer_offsets-0/00000000000000000000.log on records, offsets 0 to 0"},
		{[]string{"decode", "8000000/__consumer_offsets-0", "--format", "jsonl"}, 1, "too-large at byte 0"},
		{[]string{"describe", "8000000/__consumer_offsets-0", "--forensic"}, 0, "too-large"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			child := exec.Command(os.Args[0], "-test.run=^TestMemoryChild$")
			child.Dir = dir
			child.Env = append(os.Environ(), memoryChildEnv+"="+strings.Join(c.args, "\n"))
			var stderr bytes.Buffer
			child.Stderr = &stderr
			err := child.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, c.exit, code, "stderr: %.2000s", stderr.String())
			peak := child.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
			t.Logf("peak RSS %d MiB, stderr %d bytes", peak>>20, stderr.Len())
			require.Less(t, peak, int64(limit), "peak RSS")
			require.Less(t, stderr.Len(), 64<<10, "stderr: %.2000s", stderr.String())
			require.Contains(t, stderr.String(), c.stderrHas)
		})
	}
}

// commitLog writes a partition directory of groups x partitions offset commits (topic "t",
// one batch per group), each key once: a log whose describe document is much larger than its
// state.
func commitLog(t *testing.T, dir string, groups, partitions int) {
	t.Helper()
	w, err := segment.NewWriter(dir, segment.WriterOptions{})
	require.NoError(t, err)
	off := int64(0)
	for g := range groups {
		b := &eventlog.Batch{BaseOffset: off, Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: 1000, MaxTimestamp: 1000}
		for p := range partitions {
			v := recordcodec.NewOffsetCommitValue()
			v.Offset, v.Metadata, v.CommitTimestamp = int64(p)*1000, "consumer metadata", 1000
			k, val, err := recordcodec.Encode(recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit, Group: fmt.Sprintf("group-%04d", g), Topic: "t", Partition: int32(p)}, Value: v})
			require.NoError(t, err)
			b.Records = append(b.Records, eventlog.Record{Offset: off, Timestamp: 1000, Key: k, Value: val})
			off++
		}
		b.LastOffset, b.NumRecords = off-1, int32(partitions)
		_, err := w.Write(b)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
}

// childPeak runs the CLI with args in a child process (TestMemoryChild, stdout discarded)
// from dir and returns its peak RSS.
func childPeak(t *testing.T, dir string, args ...string) int64 {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^TestMemoryChild$")
	child.Dir = dir
	child.Env = append(os.Environ(), memoryChildEnv+"="+strings.Join(args, "\n"))
	var stderr bytes.Buffer
	child.Stderr = &stderr
	require.NoError(t, child.Run(), "stderr: %.2000s", stderr.String())
	return child.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
}

// TestJSONDocumentsStream: describe --format json and offsets --format json of a log of
// 400,000 committed offsets write documents of about 150 MB each without holding them: each
// group is converted, with its offsets, only when it is written (replay/jsondoc's Seq and
// Encoder). Their peak RSS stays within 160 MiB of the replay's own (groups, whose output is
// a line per group): 50 and 80 MiB more when this test was written (offsets also marks every
// committed offset by the commit that wrote it), where holding the describe document
// (encoding/json's MarshalIndent of the same types) took 550 MiB more.
func TestJSONDocumentsStream(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a log of 400,000 offset commits and runs the CLI on it in child processes")
	}
	dir := t.TempDir()
	commitLog(t, filepath.Join(dir, "__consumer_offsets-0"), 500, 800)
	replayed := childPeak(t, dir, "groups", "__consumer_offsets-0")
	for _, args := range [][]string{
		{"describe", "__consumer_offsets-0", "--format", "json"},
		{"offsets", "__consumer_offsets-0", "--format", "json"},
	} {
		peak := childPeak(t, dir, args...)
		t.Logf("%s: peak RSS %d MiB; the replay alone %d MiB", strings.Join(args, " "), peak>>20, replayed>>20)
		require.Less(t, peak-replayed, int64(160<<20), "%s holds more than it streams", strings.Join(args, " "))
	}
}
