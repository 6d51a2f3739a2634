package recovery

import (
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/snapshot"
)

// The payload of kind SnapshotKind: the engine's counters and the state as a groupstate image
// (head and parts, see groupstate/image.go), each part a msgpack byte string. Parts are
// encoded and decoded on every core, and neither direction goes through the Dump.

// imageLayout is the version of stateImage's msgpack framing.
const imageLayout = 1

// imagePartBytes is the size a part aims at: big enough that msgpack framing and goroutine
// hand-offs cost nothing, small enough to spread a state over the cores and to bound the
// memory of parts in flight.
var imagePartBytes = 1 << 20

// testEncodeHook, set by tests only, runs in an encoder goroutine before it encodes part i:
// slowed encoders show whether any outlives MarshalSnapshot.
var testEncodeHook func(i int)

// imagePayload is the payload of kind SnapshotKind.
type imagePayload struct {
	Stats replay.Stats
	State stateImage
}

// stateImage encodes view (when writing) and holds the decoded state (when reading).
type stateImage struct {
	view groupstate.View
	// cache, when set, is the state's image cache: untouched entries are copied from it, and
	// the image written becomes its own once every part is written (TakeSnapshotCached).
	cache *groupstate.ImageCache
	st    *groupstate.State
	// merge is how long adding the decoded parts to the state took (the restore phase;
	// decoding the parts overlaps reading them).
	merge time.Duration
}

var (
	_ snapshot.Marshaler   = stateImage{}
	_ snapshot.Unmarshaler = (*stateImage)(nil)
)

func workers() int { return max(1, runtime.GOMAXPROCS(0)) }

// MarshalSnapshot writes [layout, head, [part...]]. Parts are encoded ahead on every core
// and written in order; at most 2 per core are in memory at once.
func (im stateImage) MarshalSnapshot(e *snapshot.Encoder) error {
	plan := im.view.PlanImage(imagePartBytes)
	n := plan.NumParts()
	if im.cache != nil {
		im.cache.Begin(plan)
	}
	if err := first(e.ArrayLen(3), e.Int(imageLayout), e.Bytes(im.view.AppendImageHead(nil)), e.ArrayLen(n)); err != nil {
		return err
	}
	// The feeder hands out part numbers in order, each with a buffer from free: a part
	// waiting to be written always has its buffer, so taking them in order cannot starve
	// the part the writer waits for. At most 2 per core are in memory at once.
	w := workers()
	type job struct {
		i   int
		buf []byte
	}
	results := make([]chan []byte, n)
	for i := range results {
		results[i] = make(chan []byte, 1) // workers never wait for the writer
	}
	free := make(chan []byte, 2*w)
	for range 2 * w {
		free <- nil
	}
	jobs := make(chan job)
	done := make(chan struct{})
	var wg sync.WaitGroup
	// Every return waits for the workers: the caller may change the state once this
	// returns, and no worker may still be reading it.
	defer func() {
		close(done)
		wg.Wait()
	}()
	go func() {
		defer close(jobs)
		for i := range n {
			var buf []byte
			select {
			case buf = <-free:
			case <-done:
				return
			}
			select {
			case jobs <- job{i, buf}:
			case <-done:
				return
			}
		}
	}()
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if testEncodeHook != nil {
					testEncodeHook(j.i)
				}
				if im.cache != nil {
					results[j.i] <- im.view.AppendImagePartCached(j.buf[:0], plan, j.i, im.cache)
				} else {
					results[j.i] <- im.view.AppendImagePart(j.buf[:0], plan, j.i)
				}
			}
		}()
	}
	for i := range n {
		b := <-results[i]
		if err := e.Bytes(b); err != nil {
			return err // done stops the feeder; the workers finish their parts and end
		}
		free <- b
	}
	if im.cache != nil {
		im.cache.Commit()
	}
	return nil
}

// UnmarshalSnapshot reads the head and the parts and builds the state, decoding parts on
// every core while the rest of the payload is still being read.
func (im *stateImage) UnmarshalSnapshot(d *snapshot.Decoder) error {
	n, err := d.ArrayLen()
	if err != nil {
		return err
	}
	if n != 3 {
		return fmt.Errorf("state image: %d fields, want 3", n)
	}
	layout, err := d.Int()
	if err != nil {
		return err
	}
	if layout != imageLayout {
		return fmt.Errorf("state image layout %d, this build reads %d", layout, imageLayout)
	}
	head, err := d.String()
	if err != nil {
		return err
	}
	st, err := groupstate.NewFromImageHead(head)
	if err != nil {
		return err
	}
	nparts, err := d.ArrayLen()
	if err != nil {
		return err
	}
	if nparts < 0 || d.Prealloc(nparts, 2) < nparts {
		return fmt.Errorf("state image: %d parts do not fit the payload", nparts)
	}
	type job struct {
		i    int
		data string
	}
	type result struct {
		part *groupstate.ImagePart
		err  error
	}
	results := make([]chan result, nparts)
	for i := range results {
		results[i] = make(chan result, 1) // workers never wait for the merge
	}
	jobs := make(chan job, workers())
	var wg sync.WaitGroup
	for range min(workers(), nparts) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				// The offset blocks are checked later (checkOffsets), on cores the
				// caller has idle: see RecoverTo.
				p, err := groupstate.DecodeImagePartUnchecked(j.data)
				results[j.i] <- result{p, err}
			}
		}()
	}
	var readErr error
	for i := range nparts {
		// Each part is read into its own buffer, which nothing else references or ever
		// writes: the state's strings become substrings of it without another copy.
		buf, err := d.BytesBuf(nil)
		if err != nil {
			readErr = err
			break
		}
		jobs <- job{i, unsafe.String(unsafe.SliceData(buf), len(buf))}
	}
	close(jobs)
	wg.Wait()
	if readErr != nil {
		return readErr
	}
	start := time.Now()
	defer func() { im.merge = time.Since(start) }()
	for i, ch := range results {
		r := <-ch
		if r.err == nil {
			r.err = st.AddImagePart(r.part)
		}
		if r.err != nil {
			return fmt.Errorf("part %d of %d: %w", i, nparts, r.err)
		}
	}
	if err := st.FinishImage(); err != nil {
		return err
	}
	im.st = st
	return nil
}

// checkOffsets runs c on n goroutines (the caller's included) and returns what it found,
// as snapshot corruption.
func checkOffsets(c *groupstate.OffsetCheck, n int) error {
	var wg sync.WaitGroup
	for range n - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Run()
		}()
	}
	c.Run()
	wg.Wait()
	if err := c.Err(); err != nil {
		return fmt.Errorf("%w: %v", snapshot.ErrCorrupt, err)
	}
	return nil
}

// first returns the first non-nil error.
func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
