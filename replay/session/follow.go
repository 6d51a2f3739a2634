package session

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/coordlog/coordlog/replay"
)

// Follow keeps the replayed partitions up to date with a growing log (a cluster topic read up
// to its end): every interval it replays what was appended since, and calls moved whenever a
// partition's state moved on. It returns nil when ctx ends (the way to stop it), and moved's
// error, or the replay's, otherwise. moved runs on Follow's goroutine, between rounds:
// nothing changes the states while it reads them. Readers on other goroutines (a service
// answering requests while it follows) share r.Lock: Follow holds it while it replays.
func (r *Replayed) Follow(ctx context.Context, interval time.Duration, moved func() error) error {
	return every(ctx, interval, func() (error, error) {
		changed, err := r.catchUp(ctx)
		if err != nil || !changed {
			return err, nil
		}
		return nil, moved()
	})
}

// every runs round every interval until ctx ends (nil) or round fails: with a reading error
// (nil once ctx has ended: the reading was cut short by the ending), or with another error.
func every(ctx context.Context, interval time.Duration, round func() (readErr, err error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		readErr, err := round()
		switch {
		case readErr != nil && ctx.Err() != nil:
			return nil
		case readErr != nil:
			return readErr
		case err != nil:
			return err
		}
	}
}

// catchUp replays what each partition's log holds past its engine, holding r.Lock.
func (r *Replayed) catchUp(ctx context.Context) (changed bool, err error) {
	if r.Lock != nil {
		r.Lock.Lock()
		defer r.Lock.Unlock()
	}
	for _, p := range r.Partitions {
		e := p.Engine
		before := e.NextOffset()
		if err := e.Run(ctx, r.Source, math.MaxInt64); err != nil {
			return changed, fmt.Errorf("follow partition %d at offset %d: %w", e.Partition(), e.NextOffset(), err)
		}
		changed = changed || e.NextOffset() != before
	}
	return changed, nil
}

// Observers makes one observer per partition with New and keeps them by partition, for a
// Request's Observer: partitions may replay in parallel, each asking for its own.
type Observers[O replay.Observer] struct {
	New func(p int32) O

	mu    sync.Mutex
	parts map[int32]O
	order []int32
}

// Observer is Request.Observer.
func (o *Observers[O]) Observer(p int32) replay.Observer {
	obs := o.New(p)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.parts == nil {
		o.parts = map[int32]O{}
	}
	o.parts[p] = obs
	o.order = append(o.order, p)
	return obs
}

// Of returns partition p's observer (ok false: p was not replayed).
func (o *Observers[O]) Of(p int32) (obs O, ok bool) {
	if o == nil {
		return obs, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	obs, ok = o.parts[p]
	return obs, ok
}

// All returns the observers in the order they were made.
func (o *Observers[O]) All() []O {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]O, len(o.order))
	for i, p := range o.order {
		out[i] = o.parts[p]
	}
	return out
}
