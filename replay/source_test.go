package replay

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
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
