package replay

import (
	"context"
	"math"
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
// engine, up to workers partitions at a time (GOMAXPROCS-sized when workers <= 0): reading,
// decompression, CRC checks, decoding and replay of a partition all run on its goroutine.
// Results come back in the order of parts. The error is the first partition error in that
// order. With opts.ObserverFor, each partition's engine has its own observer.
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
	if workers <= 0 {
		workers = defaultWorkers()
	}
	results := make([]Result, len(parts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers)
	for i, p := range parts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			o := opts
			if o.Observer == nil && o.ObserverFor != nil {
				o.Observer = o.ObserverFor(p)
			}
			e := New(p, o)
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
