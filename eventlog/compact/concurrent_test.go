package compact_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/compact"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// renderLog renders every batch of partition 0 of src.
func renderLog(src eventlog.Source) ([]string, error) {
	it, err := src.Batches(0, 0)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []string
	for it.Next() {
		out = append(out, render(it.Batch()))
	}
	return out, it.Err()
}

// renderDir renders the segment log published at dir (a partition directory).
func renderDir(t *testing.T, dir string) []string {
	t.Helper()
	r, err := segment.Open(dir, segment.Options{})
	require.NoError(t, err, "the published log must be readable")
	got, err := renderLog(r)
	require.NoError(t, err)
	return got
}

// proofOf is a VerifyFunc that proves a compaction by comparing the staged log with want
// (what the plan computes in memory), batch by batch.
func proofOf(want []string) compact.VerifyFunc {
	return func(_ context.Context, _, compacted eventlog.Source, _ []int32) error {
		got, err := renderLog(compacted)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("compacted log differs: %v, want %v", got, want)
		}
		return nil
	}
}

// waitFor fails the test instead of hanging when a run never gets where the test waits for it.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(2 * time.Minute):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// interleave runs job1 until its proof has passed and holds it there, starts job2 and lets
// it run until it writes its staged log (or returns), then lets job1 publish, and finally
// job2 finish. It returns both results. This is the interleaving that made two runs publish
// a truncated log: run 2 rewrote the shared staging directory between run 1's proof and its
// swap.
func interleave(t *testing.T, job1, job2 *compact.Job) (err1, err2 error) {
	proved, release1 := make(chan struct{}), make(chan struct{})
	verify := job1.Verify
	job1.Verify = func(ctx context.Context, original, compacted eventlog.Source, parts []int32) error {
		err := verify(ctx, original, compacted, parts)
		close(proved)
		<-release1 // between the proof and the swap
		return err
	}
	writing, release2 := make(chan struct{}), make(chan struct{})
	paused := false
	job2.Options.ProgressBytes = 1
	job2.Options.Progress = func(p compact.Progress) {
		if p.Phase == "write" && !paused {
			paused = true
			close(writing)
			<-release2 // halfway through writing its staged log
		}
	}
	done1, done2 := make(chan error, 1), make(chan error, 1)
	go func() { _, err := job1.Run(context.Background()); done1 <- err }()
	waitFor(t, proved, "run 1's proof")
	go func() { _, err := job2.Run(context.Background()); done2 <- err }()
	select {
	case <-writing: // run 2 got as far as staging its own output
	case err2 = <-done2: // run 2 was refused
	case <-time.After(2 * time.Minute):
		t.Fatal("timed out waiting for run 2")
	}
	close(release1)
	err1 = waitFor(t, done1, "run 1")
	close(release2)
	if paused {
		err2 = waitFor(t, done2, "run 2")
	}
	return err1, err2
}

// TestConcurrentInPlaceRuns: two in-place compactions of one partition directory. The
// second is refused while the first runs (naming it), and the first publishes exactly the
// log it proved.
func TestConcurrentInPlaceRuns(t *testing.T) {
	dir, src := writeSegments(t, scenario()...)
	want, _ := compactAll(t, src, compact.DefaultOptions(now))
	newJob := func() *compact.Job {
		return &compact.Job{Input: dir, InPlace: true, Options: compact.DefaultOptions(now), SegmentBytes: 200,
			Verify: proofOf(want)}
	}
	err1, err2 := interleave(t, newJob(), newJob())
	require.NoError(t, err1)
	assert.Equal(t, want, renderDir(t, dir), "run 1 must publish what it proved")
	require.Error(t, err2, "run 2 must not run beside run 1")
	assert.Contains(t, err2.Error(), "is in use by \"compact --in-place\" (pid ")
	leftovers, _ := filepath.Glob(dir + ".compact-*")
	assert.Empty(t, leftovers)
}

// TestConcurrentOutRunsToOneDestination: two --out compactions of two copies of a log into
// one destination. The second is refused while the first runs, and the destination holds
// exactly what the first proved.
func TestConcurrentOutRunsToOneDestination(t *testing.T) {
	dir1, src := writeSegments(t, scenario()...)
	dir2, _ := writeSegments(t, scenario()...)
	want, _ := compactAll(t, src, compact.DefaultOptions(now))
	out := filepath.Join(t.TempDir(), "out")
	newJob := func(in string) *compact.Job {
		return &compact.Job{Input: in, Output: out, Options: compact.DefaultOptions(now), SegmentBytes: 200,
			Verify: proofOf(want)}
	}
	err1, err2 := interleave(t, newJob(dir1), newJob(dir2))
	require.NoError(t, err1)
	assert.Equal(t, want, renderDir(t, filepath.Join(out, compact.PartitionDir(0))), "run 1 must publish what it proved")
	require.Error(t, err2, "run 2 must not run beside run 1")
	assert.Contains(t, err2.Error(), "is in use by \"compact --out\" (pid ")
	leftovers, _ := filepath.Glob(out + ".compact-*")
	assert.Empty(t, leftovers)
	_, err := os.Stat(out + ".coordlog.lock")
	assert.True(t, os.IsNotExist(err), "the lock file goes with the lock")
}

// TestInPlaceThroughSymlink: a partition directory reached through a symbolic link is
// compacted where it is, and the link stays a link to it.
func TestInPlaceThroughSymlink(t *testing.T) {
	dir, src := writeSegments(t, scenario()...)
	want, _ := compactAll(t, src, compact.DefaultOptions(now))
	link := filepath.Join(t.TempDir(), compact.PartitionDir(0))
	require.NoError(t, os.Symlink(dir, link))
	job := &compact.Job{Input: link, InPlace: true, Options: compact.DefaultOptions(now), Verify: proofOf(want)}
	res, err := job.Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, link, res.Published)
	st, err := os.Lstat(link)
	require.NoError(t, err)
	require.True(t, st.Mode()&os.ModeSymlink != 0, "the link must stay a link")
	dest, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, dir, dest)
	assert.Equal(t, want, renderDir(t, dir), "the directory behind the link is compacted")
	for _, d := range []string{dir, link} {
		leftovers, _ := filepath.Glob(d + ".*")
		assert.Empty(t, leftovers)
	}
}

// TestDeadRunsLeftoversRemoved: staging directories left by runs that died before their
// swap (a unique one, and the shared one of an older coordlog) are removed by the next run,
// which holds the lock and so knows that their owners are gone.
func TestDeadRunsLeftoversRemoved(t *testing.T) {
	dir, src := writeSegments(t, scenario()...)
	want, _ := compactAll(t, src, compact.DefaultOptions(now))
	dead := []string{dir + ".compact-new-4711-0badf00d", dir + ".compact-new"}
	for _, d := range dead {
		require.NoError(t, os.MkdirAll(filepath.Join(d, compact.PartitionDir(0)), 0o755))
	}
	unrelated := dir + ".compact-newer"
	require.NoError(t, os.Mkdir(unrelated, 0o755))
	var logged []string
	job := &compact.Job{Input: dir, InPlace: true, Options: compact.DefaultOptions(now), Verify: proofOf(want),
		Log: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }}
	_, err := job.Run(context.Background())
	require.NoError(t, err)
	for _, d := range dead {
		assert.NoDirExists(t, d)
		assert.Contains(t, logged, "removed "+d+", left by an interrupted run")
	}
	assert.DirExists(t, unrelated, "only staging names are removed")
	assert.Equal(t, want, renderDir(t, dir))
}

// TestOutRefusesInterruptedInput: a log whose in-place compaction was interrupted (its swap
// marker remains) is not read by --out: it may be missing or about to change.
func TestOutRefusesInterruptedInput(t *testing.T) {
	dir, _ := writeSegments(t, scenario()...)
	require.NoError(t, os.WriteFile(compact.MarkerPath(dir), []byte("{}"), 0o644))
	out := filepath.Join(t.TempDir(), "out")
	job := &compact.Job{Input: dir, Output: out, Options: compact.DefaultOptions(now), Verify: proofOf(nil)}
	_, err := job.Run(context.Background())
	require.ErrorContains(t, err, "an in-place compaction was interrupted ("+compact.MarkerPath(dir)+" remains): run `compact "+dir+" --in-place` to finish it first")
	assert.NoDirExists(t, out)
	require.ErrorContains(t, compact.Pending(dir), "interrupted")
	require.NoError(t, compact.Pending(out))
}
