package snapshot_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coordlog/coordlog/snapshot"
	"github.com/stretchr/testify/require"
)

// TestWriteFailureAtEveryStep fails each step of Write in turn (every write call included,
// torn in half) and checks that the failed write leaves no snapshot and no temporary file,
// that the previous snapshot still loads, and that the next write succeeds.
func TestWriteFailureAtEveryStep(t *testing.T) {
	// Count the steps of one write of this size.
	payload := sampleState(400, 3, 20) // a few MB: many buffered writes
	var steps []string
	{
		s := openStore(t, 2)
		s.SetTestHook(func(step string) error { steps = append(steps, step); return nil })
		_, err := s.Write(meta(0, 10), payload)
		require.NoError(t, err)
	}
	require.Greater(t, len(steps), 6)
	injected := errors.New("injected failure")
	for i, step := range steps {
		t.Run(fmt.Sprintf("%d-%s", i, step), func(t *testing.T) {
			s := openStore(t, 2)
			_, err := s.Write(meta(0, 5), sampleState(3, 1, 1))
			require.NoError(t, err)
			n := 0
			s.SetTestHook(func(st string) error {
				if n++; n-1 == i {
					return injected
				}
				return nil
			})
			_, err = s.Write(meta(0, 10), payload)
			require.ErrorIs(t, err, injected)

			ents, err := os.ReadDir(s.Dir())
			require.NoError(t, err)
			for _, e := range ents {
				require.False(t, strings.HasSuffix(e.Name(), ".tmp"), "temporary file left: %s", e.Name())
			}
			l, err := s.Load(0, func(*snapshot.Snapshot) error { return nil })
			require.NoError(t, err)
			require.Empty(t, l.Skipped)
			switch step {
			case "syncdir", "prune": // the rename happened: the new snapshot is whole
				require.EqualValues(t, 10, l.Used.NextOffset)
			default:
				require.EqualValues(t, 5, l.Used.NextOffset)
			}
			s.SetTestHook(nil)
			_, err = s.Write(meta(0, 10), payload)
			require.NoError(t, err)
		})
	}
}

// TestCrashDuringWrite runs a writer in a child process that writes snapshots in a loop and
// kills it with SIGKILL at random instants. After every kill the store must open, every
// *.snap file must verify (a snapshot is renamed into place only when complete and synced),
// and Load must return the newest one.
func TestCrashDuringWrite(t *testing.T) {
	if os.Getenv("SNAPSHOT_CRASH_CHILD") != "" {
		t.Skip("child mode runs in TestCrashChild")
	}
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	dir := filepath.Join(t.TempDir(), "snapshots")
	rng := rand.New(rand.NewPCG(1, 2))
	last := int64(0)
	for r := 0; r < rounds; r++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SNAPSHOT_CRASH_CHILD="+dir, "SNAPSHOT_CRASH_START="+strconv.FormatInt(last+1, 10))
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(20+rng.IntN(300)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()

		s, err := snapshot.OpenStore(dir, snapshot.Options{Retain: 3})
		require.NoError(t, err)
		infos, err := s.List(0)
		require.NoError(t, err)
		for _, in := range infos {
			_, err := s.Verify(in.Name)
			require.NoError(t, err, "round %d: a snapshot in place must be whole", r)
		}
		var got state
		l, err := s.Load(0, func(sn *snapshot.Snapshot) error { return sn.Decode(&got) })
		if len(infos) == 0 {
			require.ErrorIs(t, err, snapshot.ErrNoSnapshot)
			continue
		}
		require.NoError(t, err)
		require.Empty(t, l.Skipped)
		require.Equal(t, infos[0].NextOffset, l.Used.NextOffset)
		require.GreaterOrEqual(t, l.Used.NextOffset, last, "snapshots never go backwards")
		require.Equal(t, childState(l.Used.NextOffset), got)
		last = l.Used.NextOffset
		t.Logf("round %d: newest snapshot at %d (%d in store)", r, last, len(infos))
	}
	require.Positive(t, last, "no snapshot completed in any round: the child is too slow")
}

func childState(off int64) state {
	st := sampleState(300, 3, 10)
	st.Version = strconv.FormatInt(off, 10)
	return st
}

// TestCrashChild is the child of TestCrashDuringWrite: it writes until killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("SNAPSHOT_CRASH_CHILD")
	if dir == "" {
		t.Skip("run by TestCrashDuringWrite")
	}
	start, _ := strconv.ParseInt(os.Getenv("SNAPSHOT_CRASH_START"), 10, 64)
	s, err := snapshot.OpenStore(dir, snapshot.Options{Retain: 3})
	require.NoError(t, err)
	for off := start; ; off++ {
		_, err := s.Write(meta(0, off), childState(off))
		require.NoError(t, err)
	}
}
