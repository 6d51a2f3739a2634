package recovery

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
)

// gcPause turns Go's collector off for a restore and puts it back (Options.PauseGC).
//
// Decoding a snapshot allocates almost only what the state keeps, so collections during it
// free nothing; and the first collection after it has a whole state to mark, which a tail
// replay would pay for in assists while the heap is far above the goal the last collection
// (at a few MiB) set. So the collector stays off until the restore and its tail are done,
// with a memory limit as the backstop for the tail's garbage: the heap the decode left,
// twice over (at least 256 MiB more), or a lower GOMEMLIMIT; past it the runtime collects
// as usual. A tail longer than maxPausedTail offsets, or a full replay, runs with the
// collector back on: the limit would make it collect constantly instead.
// maxPausedTail is the longest tail (in offsets) replayed with the collector paused; a
// longer one, or a full replay, runs with it on.
const maxPausedTail = 2_000_000

type gcPause struct {
	percent int
	limit   int64
	on      bool
}

func pauseGC(on bool) *gcPause {
	p := &gcPause{on: on}
	if on {
		p.percent = debug.SetGCPercent(-1)
		p.limit = debug.SetMemoryLimit(-1)
	}
	return p
}

// boundTail sets the memory limit for the tail from the heap the decode left.
func (p *gcPause) boundTail() {
	if !p.on {
		return
	}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	heap := int64(math.MaxInt64 / 4)
	if s[0].Value.Kind() == metrics.KindUint64 {
		heap = int64(s[0].Value.Uint64())
	}
	debug.SetMemoryLimit(min(p.limit, 2*heap+256<<20))
}

// resume puts the collector back as it was.
func (p *gcPause) resume() {
	if !p.on {
		return
	}
	debug.SetMemoryLimit(p.limit)
	debug.SetGCPercent(p.percent)
	p.on = false
}
