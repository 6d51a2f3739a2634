package eventlog

// ReadAhead returns an iterator over the batches of it that reads them on a goroutine of its
// own: while the caller replays one chunk of batches, the goroutine reads, checks (CRC),
// decompresses and frames the next ones. On a machine with a spare core this takes the reading
// off the replay's path (a fifth of a replay of a streams-heavy log, a quarter of one of
// offset commits). The batches come in the same order with the same contents, and the
// iterator's error comes after the last batch read before it, as from it.
//
// it belongs to the goroutine until Close, which stops the goroutine, waits for it and
// closes it. The goroutine may have read up to readAheadChunks chunks (about readAheadBytes
// each) beyond what the caller consumed: a caller that stops early should know that problems
// the source reports past that point (warnings of a segment reader, say) may have been
// reported. Batches returned by Batch stay valid until the next call to Next, as the
// Iterator contract says (in fact until their chunk is recycled, a little longer).
//
// Memory: readAheadChunks chunks, each holding copies of at most readAheadBytes of keys,
// values and headers and readAheadRecords records, or of one batch a little larger (such a
// chunk is dropped once consumed instead of being kept for reuse). A batch past
// readAheadLendBytes is not copied at all: the goroutine waits until the caller has consumed
// everything before it, lends it the iterator's own batch, and reads on only once the caller
// has moved past it, so that a log of huge batches (up to the reader's MaxBatchMemory) takes
// no more memory than without read-ahead.
func ReadAhead(it Iterator) Iterator {
	ra := &readAhead{
		inner: it,
		full:  make(chan *chunk, readAheadChunks),
		free:  make(chan *chunk, readAheadChunks),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	for range readAheadChunks {
		ra.free <- &chunk{}
	}
	go ra.produce()
	return ra
}

const (
	readAheadChunks    = 3
	readAheadBytes     = 512 << 10
	readAheadRecords   = 4096
	readAheadBatches   = 512
	readAheadLendBytes = 4 << 20
)

// chunk holds copies of consecutive batches in arenas it reuses. Arenas never grow while a
// chunk holds batches (a batch that does not fit starts the next chunk), so the slices handed
// out stay where they point.
type chunk struct {
	batches []Batch
	records []Record
	headers []Header
	bytes   []byte
	last    bool  // the inner iterator ended after these batches
	err     error // its Err then
}

func (c *chunk) reset() {
	clear(c.batches) // drop references to the previous batches' origins
	c.batches, c.records, c.headers, c.bytes = c.batches[:0], c.records[:0], c.headers[:0], c.bytes[:0]
	c.last, c.err = false, nil
}

// need returns what batch b takes in a chunk: records, headers and bytes.
func need(b *Batch) (nr, nh, nb int) {
	nr = len(b.Records)
	for i := range b.Records {
		r := &b.Records[i]
		nb += len(r.Key) + len(r.Value)
		nh += len(r.Headers)
		for _, h := range r.Headers {
			nb += len(h.Key) + len(h.Value)
		}
	}
	return nr, nh, nb
}

// fits reports whether b fits in what is left of c's arenas.
func (c *chunk) fits(nr, nh, nb int) bool {
	return len(c.batches) < cap(c.batches) && len(c.records)+nr <= cap(c.records) &&
		len(c.headers)+nh <= cap(c.headers) && len(c.bytes)+nb <= cap(c.bytes)
}

// full reports whether c should be handed over.
func (c *chunk) full() bool {
	return len(c.batches) >= readAheadBatches || len(c.records) >= readAheadRecords || len(c.bytes) >= readAheadBytes
}

// grow gives the empty chunk c arenas of at least the default sizes and room for one batch of
// the given needs.
func (c *chunk) grow(nr, nh, nb int) {
	if cap(c.batches) < readAheadBatches {
		c.batches = make([]Batch, 0, readAheadBatches)
	}
	if want := max(readAheadRecords, nr); cap(c.records) < want {
		c.records = make([]Record, 0, want)
	}
	if want := max(64, nh); cap(c.headers) < want {
		c.headers = make([]Header, 0, want)
	}
	if want := max(readAheadBytes, nb); cap(c.bytes) < want {
		c.bytes = make([]byte, 0, want)
	}
}

// oversized reports whether c grew past the default sizes for one large batch.
func (c *chunk) oversized() bool {
	return cap(c.records) > readAheadRecords || cap(c.bytes) > readAheadBytes || cap(c.headers) > 64
}

// copyBytes copies p into the arena, keeping nil as nil and empty as non-nil empty.
func (c *chunk) copyBytes(p []byte) []byte {
	if p == nil {
		return nil
	}
	s := len(c.bytes)
	c.bytes = append(c.bytes, p...)
	return c.bytes[s:len(c.bytes):len(c.bytes)]
}

// add copies b into c, which has room for it.
func (c *chunk) add(b *Batch) {
	s := len(c.records)
	for i := range b.Records {
		r := &b.Records[i]
		nr := Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: c.copyBytes(r.Key), Value: c.copyBytes(r.Value)}
		if r.Headers != nil {
			hs := len(c.headers)
			for _, h := range r.Headers {
				c.headers = append(c.headers, Header{Key: c.copyBytes(h.Key), Value: c.copyBytes(h.Value)})
			}
			nr.Headers = c.headers[hs:len(c.headers):len(c.headers)]
		}
		c.records = append(c.records, nr)
	}
	nb := *b
	nb.Records = c.records[s:len(c.records):len(c.records)]
	if b.Records == nil {
		nb.Records = nil
	}
	c.batches = append(c.batches, nb)
}

type readAhead struct {
	inner      Iterator
	full, free chan *chunk
	stop, done chan struct{}

	cur    *chunk
	i      int
	batch  *Batch
	err    error
	ended  bool
	closed bool
}

// produce runs on the read-ahead goroutine: it owns inner until it returns.
func (ra *readAhead) produce() {
	defer close(ra.done)
	var c *chunk
	take := func() bool {
		select {
		case c = <-ra.free:
			c.reset()
			return true
		case <-ra.stop:
			return false
		}
	}
	give := func() bool {
		select {
		case ra.full <- c:
			c = nil
			return true
		case <-ra.stop:
			return false
		}
	}
	// settle waits until the caller has given back every chunk but c: it has consumed all
	// that was handed over.
	settle := func() bool {
		held := make([]*chunk, 0, readAheadChunks)
		for len(held) < readAheadChunks-1 {
			select {
			case x := <-ra.free:
				held = append(held, x)
			case <-ra.stop:
				return false
			}
		}
		for _, x := range held {
			ra.free <- x
		}
		return true
	}
	if !take() {
		return
	}
	for ra.inner.Next() {
		b := ra.inner.Batch()
		nr, nh, nb := need(b)
		if nb > readAheadLendBytes {
			// Lend the iterator's own batch instead of copying it: hand over what c holds,
			// wait until all is consumed, send the batch in c, and wait until the caller is
			// past it before the iterator may reuse its memory.
			if len(c.batches) > 0 && (!give() || !take()) {
				return
			}
			if !settle() {
				return
			}
			c.batches = append(c.batches[:0], *b)
			if !give() || !take() || !settle() {
				return
			}
			continue
		}
		if !c.fits(nr, nh, nb) {
			if len(c.batches) > 0 && (!give() || !take()) {
				return
			}
			c.grow(nr, nh, nb)
		}
		c.add(b)
		if c.full() && (!give() || !take()) {
			return
		}
	}
	c.last, c.err = true, ra.inner.Err()
	give()
}

func (ra *readAhead) Next() bool {
	for {
		if ra.closed || ra.ended {
			return false
		}
		if ra.cur != nil {
			if ra.i < len(ra.cur.batches) {
				ra.batch = &ra.cur.batches[ra.i]
				ra.i++
				return true
			}
			if ra.cur.last {
				ra.ended, ra.err = true, ra.cur.err
				return false
			}
			// The caller is past every batch of cur: recycle it (free has room for every
			// chunk, so this never blocks).
			if ra.cur.oversized() {
				ra.cur = &chunk{}
			}
			ra.free <- ra.cur
			ra.cur = nil
		}
		ra.cur, ra.i = <-ra.full, 0
	}
}

func (ra *readAhead) Batch() *Batch { return ra.batch }
func (ra *readAhead) Err() error    { return ra.err }

// Close stops the goroutine, waits for it and closes the inner iterator.
func (ra *readAhead) Close() error {
	if ra.closed {
		return nil
	}
	ra.closed = true
	close(ra.stop)
	<-ra.done
	ra.cur, ra.batch = nil, nil
	return ra.inner.Close()
}
