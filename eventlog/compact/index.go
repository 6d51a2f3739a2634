package compact

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"unsafe"
)

// digest identifies a key: 128 bits from two independently seeded runtime hashes, as Kafka's
// cleaner identifies keys by a 16-byte MD5 digest. Two distinct keys collide with probability
// about n^2/2^129 (1e-26 for ten million keys); and a collision could only make one record
// look superseded, which the replay proof would catch before anything is published. In
// exchange every lookup touches one cache line and the index holds no pointers: on a
// heavily overwritten log the index lookups are half of all the work.
type digest struct{ a, b uint64 }

type slot struct {
	d   digest // zero: empty
	off int64
}

const (
	slotBytes    = int64(unsafe.Sizeof(slot{}))
	initialSlots = 1 << 16
)

// keyIndex maps each key digest to the offset of its latest record: an open-addressing table
// (linear probing, load at most 3/4) that doubles while it fits the budget and otherwise, when
// full, spills a run sorted by digest ([16-byte digest][u64 offset]*) to disk and starts over;
// finish merges the runs. Only offsets are needed afterwards (see survivors).
type keyIndex struct {
	s1, s2 maphash.Seed
	slots  []slot
	n      int
	budget int64
	dir    string
	runs   []string
	spills int
	sink   int64 // keeps the touches of putMany from being optimized away
}

func newKeyIndex(budget int64, dir string) *keyIndex {
	n := initialSlots
	for n > 16 && int64(n)*slotBytes > budget {
		n /= 2 // tiny budgets (tests of the spill path)
	}
	return &keyIndex{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), slots: make([]slot, n), budget: budget, dir: dir}
}

func (x *keyIndex) digest(key []byte) digest {
	d := digest{maphash.Bytes(x.s1, key), maphash.Bytes(x.s2, key)}
	if d == (digest{}) {
		d.b = 1 // zero marks empty slots
	}
	return d
}

// put records that key has a record at off. Offsets arrive in increasing order within a scan
// except for deferred transactional records, so it keeps the larger offset.
func (x *keyIndex) put(key []byte, off int64) error { return x.putDigest(x.digest(key), off) }

// putMany puts a chunk of keys (keys[ends[i-1]:ends[i]] at offs[i]). It works in groups: the
// digests of a group are computed and their slots touched first, so that the group's cache
// misses (the table is far larger than the caches) are in flight together instead of one
// after the other; then the puts find their slots in cache.
func (x *keyIndex) putMany(keys []byte, offs []int64, ends []int) error {
	const group = 16
	var ds [group]digest
	from := 0
	for g := 0; g < len(offs); g += group {
		n := min(group, len(offs)-g)
		mask := uint64(len(x.slots) - 1)
		var touch int64
		f := from
		for i := 0; i < n; i++ {
			ds[i] = x.digest(keys[f:ends[g+i]])
			f = ends[g+i]
		}
		// A tight loop of independent loads: the misses overlap.
		for i := 0; i < n; i++ {
			touch += x.slots[ds[i].a&mask].off
		}
		x.sink += touch
		for i := 0; i < n; i++ {
			if err := x.putDigest(ds[i], offs[g+i]); err != nil {
				return err
			}
		}
		from = f
	}
	return nil
}

func (x *keyIndex) putDigest(d digest, off int64) error {
	mask := uint64(len(x.slots) - 1)
	for i := d.a & mask; ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.d == d {
			if off > s.off {
				s.off = off
			}
			return nil
		}
		if s.d == (digest{}) {
			s.d, s.off = d, off
			x.n++
			if x.n*4 >= len(x.slots)*3 {
				return x.grow()
			}
			return nil
		}
	}
}

// grow doubles the table when the budget allows, otherwise spills it.
func (x *keyIndex) grow() error {
	if int64(len(x.slots))*2*slotBytes > x.budget {
		return x.spill()
	}
	old := x.slots
	x.slots = make([]slot, len(old)*2)
	mask := uint64(len(x.slots) - 1)
	for _, s := range old {
		if s.d == (digest{}) {
			continue
		}
		i := s.d.a & mask
		for x.slots[i].d != (digest{}) {
			i = (i + 1) & mask
		}
		x.slots[i] = s
	}
	return nil
}

// gather moves the entries to the front of the table and returns them: the table is no
// longer a hash table afterwards (spill empties it). Gathering in place instead of copying
// keeps a spill within the budget: a copy of a full table's entries is three quarters of the
// budget again, at the moment the index is largest.
func (x *keyIndex) gather() []slot {
	n := 0
	for _, s := range x.slots {
		if s.d != (digest{}) {
			x.slots[n] = s
			n++
		}
	}
	return x.slots[:n]
}

func lessDigest(a, b digest) int {
	if a.a != b.a {
		return cmp.Compare(a.a, b.a)
	}
	return cmp.Compare(a.b, b.b)
}

// spill writes the entries as a run sorted by digest and empties the table (keeping its size);
// the entries are gathered and sorted in the table's own memory.
func (x *keyIndex) spill() error {
	ents := x.gather()
	// Whatever happens next, the table is emptied: gathered, it is no longer a hash table.
	defer func() {
		clear(x.slots)
		x.n = 0
	}()
	slices.SortFunc(ents, func(a, b slot) int { return lessDigest(a.d, b.d) })
	path := filepath.Join(x.dir, fmt.Sprintf("keys-%06d.run", x.spills))
	x.spills++
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var b [24]byte
	for _, s := range ents {
		binary.BigEndian.PutUint64(b[0:], s.d.a)
		binary.BigEndian.PutUint64(b[8:], s.d.b)
		binary.BigEndian.PutUint64(b[16:], uint64(s.off))
		w.Write(b[:])
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	x.runs = append(x.runs, path)
	return nil
}

// discard removes the spilled runs of an index that will not be finished.
func (x *keyIndex) discard() {
	for _, r := range x.runs {
		os.Remove(r)
	}
	x.runs, x.slots = nil, nil
}

// finish returns the latest offset of every key, as survivors (sorted by offset). The index is
// unusable afterwards.
func (x *keyIndex) finish() (*survivors, error) {
	s := &survivors{dir: x.dir, budget: x.budget}
	if len(x.runs) == 0 {
		offs := make([]int64, 0, x.n)
		for _, e := range x.slots {
			if e.d != (digest{}) {
				offs = append(offs, e.off)
			}
		}
		x.slots = nil
		slices.Sort(offs)
		s.mem = offs
		return s, nil
	}
	if x.n > 0 {
		if err := x.spill(); err != nil {
			return nil, err
		}
	}
	x.slots = nil
	if err := mergeKeyRuns(x.runs, s.add); err != nil {
		return nil, err
	}
	for _, r := range x.runs {
		os.Remove(r)
	}
	x.runs = nil
	if err := s.seal(); err != nil {
		return nil, err
	}
	return s, nil
}

type keyRun struct {
	r   *bufio.Reader
	f   *os.File
	d   digest
	off int64
}

func (k *keyRun) next() (bool, error) {
	var b [24]byte
	if _, err := io.ReadFull(k.r, b[:]); err != nil {
		if err == io.EOF {
			return false, nil
		}
		return false, fmt.Errorf("%s: %w", k.f.Name(), err)
	}
	k.d = digest{binary.BigEndian.Uint64(b[0:]), binary.BigEndian.Uint64(b[8:])}
	k.off = int64(binary.BigEndian.Uint64(b[16:]))
	return true, nil
}

type keyHeap []*keyRun

func (h keyHeap) Len() int { return len(h) }
func (h keyHeap) Less(i, j int) bool {
	if c := lessDigest(h[i].d, h[j].d); c != 0 {
		return c < 0
	}
	return h[i].off > h[j].off
}
func (h keyHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)   { *h = append(*h, x.(*keyRun)) }
func (h *keyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeKeyRuns merges sorted key runs and calls emit with the largest offset of each key.
func mergeKeyRuns(paths []string, emit func(int64) error) (err error) {
	var h keyHeap
	defer func() {
		for _, k := range h {
			k.f.Close()
		}
	}()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		k := &keyRun{f: f, r: bufio.NewReaderSize(f, 256<<10)}
		ok, err := k.next()
		if err != nil {
			f.Close()
			return err
		}
		if !ok {
			f.Close()
			continue
		}
		h = append(h, k)
	}
	heap.Init(&h)
	var last digest
	started := false
	for h.Len() > 0 {
		top := h[0]
		// Equal digests pop largest offset first (Less), so the first of a key is the latest.
		if !started || top.d != last {
			if err := emit(top.off); err != nil {
				return err
			}
			last, started = top.d, true
		}
		ok, err := top.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			top.f.Close()
			heap.Pop(&h)
		}
	}
	return nil
}

// survivors is the sorted set of offsets that are the latest record of their key: in memory,
// or (after a spilled key index) as offset-sorted runs merged on read. It can be iterated any
// number of times.
type survivors struct {
	dir    string
	budget int64
	mem    []int64  // sorted, when not spilled (and the pending chunk while adding)
	runs   []string // offset-sorted runs of big-endian u64
	count  int64
}

func (s *survivors) add(off int64) error {
	s.mem = append(s.mem, off)
	s.count++
	if int64(len(s.mem))*8 >= s.budget {
		return s.spillChunk()
	}
	return nil
}

func (s *survivors) spillChunk() error {
	slices.Sort(s.mem)
	path := filepath.Join(s.dir, fmt.Sprintf("offsets-%06d.run", len(s.runs)))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var b [8]byte
	for _, o := range s.mem {
		binary.BigEndian.PutUint64(b[:], uint64(o))
		w.Write(b[:])
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	s.runs = append(s.runs, path)
	s.mem = s.mem[:0]
	return err
}

// seal ends adding: a survivor list that never reached the budget stays in memory.
func (s *survivors) seal() error {
	if len(s.runs) == 0 {
		slices.Sort(s.mem)
		return nil
	}
	if len(s.mem) > 0 {
		if err := s.spillChunk(); err != nil {
			return err
		}
	}
	s.mem = nil
	return nil
}

// Len is the number of surviving keys.
func (s *survivors) Len() int64 {
	if s.runs == nil {
		return int64(len(s.mem))
	}
	return s.count
}

// cursor walks the survivors in offset order.
type cursor struct {
	mem  []int64
	i    int
	h    offHeap
	head int64 // current smallest not-yet-passed survivor, or maxInt when exhausted
	err  error
}

const exhausted = int64(^uint64(0) >> 1)

// cursor returns a cursor positioned at the first survivor >= from.
func (s *survivors) cursor(from int64) (*cursor, error) {
	c := &cursor{}
	if s.runs == nil {
		c.mem = s.mem
		c.i, _ = slices.BinarySearch(s.mem, from)
		c.load()
		return c, nil
	}
	for _, p := range s.runs {
		f, err := os.Open(p)
		if err != nil {
			c.close()
			return nil, err
		}
		r := &offRun{f: f, r: bufio.NewReaderSize(f, 64<<10)}
		if r.next() {
			c.h = append(c.h, r)
		} else {
			f.Close()
			if r.err != nil {
				c.close()
				return nil, r.err
			}
		}
	}
	heap.Init(&c.h)
	c.load()
	c.skipTo(from)
	return c, c.err
}

func (c *cursor) load() {
	if c.h == nil {
		if c.i < len(c.mem) {
			c.head = c.mem[c.i]
		} else {
			c.head = exhausted
		}
		return
	}
	if c.h.Len() == 0 {
		c.head = exhausted
		return
	}
	c.head = c.h[0].cur
}

func (c *cursor) advance() {
	if c.h == nil {
		c.i++
		c.load()
		return
	}
	top := c.h[0]
	if top.next() {
		heap.Fix(&c.h, 0)
	} else {
		if top.err != nil && c.err == nil {
			c.err = top.err
		}
		top.f.Close()
		heap.Pop(&c.h)
	}
	c.load()
}

// skipTo moves past survivors below off.
func (c *cursor) skipTo(off int64) {
	for c.head < off {
		if c.h == nil {
			// Offsets in memory: jump with a binary search when far behind.
			if j := c.i + 16; j < len(c.mem) && c.mem[j] < off {
				k, _ := slices.BinarySearch(c.mem[c.i:], off)
				c.i += k
				c.load()
				continue
			}
		}
		c.advance()
	}
}

// latest reports whether off is a survivor (the latest record of its key). Calls must come in
// increasing offset order.
func (c *cursor) latest(off int64) bool {
	c.skipTo(off)
	return c.head == off
}

func (c *cursor) close() {
	for _, r := range c.h {
		r.f.Close()
	}
	c.h = nil
}

type offRun struct {
	f   *os.File
	r   *bufio.Reader
	cur int64
	err error
}

func (r *offRun) next() bool {
	var b [8]byte
	if _, err := io.ReadFull(r.r, b[:]); err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = fmt.Errorf("%s: %w", r.f.Name(), err)
		}
		return false
	}
	r.cur = int64(binary.BigEndian.Uint64(b[:]))
	return true
}

type offHeap []*offRun

func (h offHeap) Len() int           { return len(h) }
func (h offHeap) Less(i, j int) bool { return h[i].cur < h[j].cur }
func (h offHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *offHeap) Push(x any)        { *h = append(*h, x.(*offRun)) }
func (h *offHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
