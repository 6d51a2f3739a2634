package replay

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/leakcheck"
)

// failingSource has partitions 0 to n-1; Batches of partition bad fails.
type failingSource struct {
	*eventlog.Memory
	n, bad int32
}

func (s failingSource) Partitions() ([]int32, error) {
	ps := make([]int32, s.n)
	for i := range ps {
		ps[i] = int32(i)
	}
	return ps, nil
}

func (s failingSource) Batches(p int32, from int64) (eventlog.Iterator, error) {
	if p == s.bad {
		return nil, errors.New("disk gone")
	}
	return s.Memory.Batches(p, from)
}

// TestReplaySourceErrorsAndWaits: ReplaySource runs partitions on several goroutines, returns
// the first partition's error in partition order, and leaves no goroutine behind, also when a
// partition fails or the context is cancelled.
func TestReplaySourceErrorsAndWaits(t *testing.T) {
	mem, err := eventlog.NewMemory()
	require.NoError(t, err)
	src := failingSource{Memory: mem, n: 16, bad: 11}
	res, err := ReplaySource(context.Background(), src, nil, math.MaxInt64, Options{}, 3)
	require.EqualError(t, err, "disk gone")
	require.Len(t, res, 16)
	require.Error(t, res[11].Err)
	require.NoError(t, res[10].Err)
	leakcheck.None(t, time.Second, "github.com/coordlog/coordlog/replay.ReplaySource")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src.bad = -1
	_, err = ReplaySource(ctx, src, nil, math.MaxInt64, Options{}, 2)
	require.NoError(t, err, "empty partitions replay nothing, cancelled or not")
	leakcheck.None(t, time.Second, "github.com/coordlog/coordlog/replay.ReplaySource")
}

// TestReplayCutsObservers: each partition's engine gets the observer of its cut, and sees
// exactly its partition's records (run under -race: the partitions replay on several
// goroutines at once).
func TestReplayCutsObservers(t *testing.T) {
	mem, err := eventlog.NewMemory()
	require.NoError(t, err)
	const parts = 6
	for p := range int32(parts) {
		lb := offsetCommitLog(200 + 10*int(p))
		for _, b := range lb.batches {
			b.Partition = p
			require.NoError(t, mem.Append(b))
		}
	}
	seen := make([][]int64, parts)
	cuts := make([]Cut, parts)
	for p := range int32(parts) {
		cuts[p] = Cut{Partition: p, Until: math.MaxInt64, Observer: ObserverFunc(func(ev *Event, _ groupstate.View) {
			require.Equal(t, p, ev.Partition)
			seen[p] = append(seen[p], ev.Offset)
		})}
	}
	res, err := ReplayCuts(context.Background(), mem, cuts, Options{}, 3)
	require.NoError(t, err)
	for p := range parts {
		require.Len(t, seen[p], 200+10*p, "partition %d", p)
		require.Equal(t, int64(200+10*p), res[p].Engine.Stats().Records)
	}
}
