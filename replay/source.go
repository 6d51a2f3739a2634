package replay

import (
	"context"
	"math"
	"runtime"
	"sync"

	"github.com/coordlog/coordlog/eventlog"
)

// Result is the outcome of replaying one partition.
type Result struct {
	Engine *Engine
	Err    error
}

// ReplaySource replays the given partitions of src (all when parts is nil) from their start up
// to until (exclusive; math.MaxInt64 for the end), each partition independently on its own
// engine, up to workers partitions at a time (GOMAXPROCS-sized when workers <= 0). Results come
// back in the order of parts. The error is the first partition error in that order.
func ReplaySource(ctx context.Context, src eventlog.Source, parts []int32, until int64, opts Options, workers int) ([]Result, error) {
	if parts == nil {
		var err error
		if parts, err = src.Partitions(); err != nil {
			return nil, err
		}
	}
	if until <= 0 {
		until = math.MaxInt64
	}
	cuts := make([]Cut, len(parts))
	for i, p := range parts {
		cuts[i] = Cut{Partition: p, Until: until}
	}
	return ReplayCuts(ctx, src, cuts, opts, workers)
}

// Cut is how far one partition is replayed, and who watches it: partitions of one input have
// unrelated offsets, so a point in history (an offset, a time) is a different offset in each.
type Cut struct {
	Partition int32
	// Until is the exclusive bound of the replay (Engine.Run): 0 replays nothing (a point before
	// the first record), math.MaxInt64 or a negative value replays to the end.
	Until int64
	// Observer, when set, replaces Options.Observer for this partition (observers are not safe
	// for concurrent use, and partitions replay in parallel).
	Observer Observer
}

// ReplayCuts is ReplaySource with a bound and an observer per partition: each cut is replayed
// on its own engine, up to workers at a time, and results come back in the order of cuts.
// When fewer partitions than cores replay at once, those replayed to the end read ahead
// (Options.ReadAhead).
func ReplayCuts(ctx context.Context, src eventlog.Source, cuts []Cut, opts Options, workers int) ([]Result, error) {
	if workers <= 0 {
		workers = defaultWorkers()
	}
	// A core left over by the partitions replaying at once reads ahead for them.
	spare := min(workers, len(cuts)) < runtime.GOMAXPROCS(0)
	results := make([]Result, len(cuts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers)
	for i, c := range cuts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			o := opts
			if c.Observer != nil {
				o.Observer = c.Observer
			}
			until := c.Until
			if until < 0 {
				until = math.MaxInt64
			}
			o.ReadAhead = o.ReadAhead || spare && until == math.MaxInt64
			e := New(c.Partition, o)
			results[i] = Result{Engine: e, Err: e.Run(ctx, src, until)}
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.Err != nil {
			return results, r.Err
		}
	}
	return results, nil
}
