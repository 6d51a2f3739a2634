package compact

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// entryOverhead estimates the memory of one key index entry beyond its key bytes: the map
// slot (string header, int32 value, control byte, load factor), the allocation rounding of the
// key and its slot in offs.
const entryOverhead = 64

// keyIndex maps each exact key to the offset of its latest record. It lives in memory until
// its estimated size passes the budget, then spills a run (keys sorted, one entry per key) to
// disk and starts over; finish merges the runs. Only offsets are needed afterwards (see
// survivors), so the key bytes never have to be looked up again after the scan.
type keyIndex struct {
	m      map[string]int32 // key -> index in offs; m[string(b)] lookups do not allocate
	offs   []int64
	mem    int64
	budget int64
	dir    string
	runs   []string
	spills int
}

func newKeyIndex(budget int64, dir string) *keyIndex {
	return &keyIndex{m: map[string]int32{}, budget: budget, dir: dir}
}

// put records that key has a record at off. Offsets arrive in increasing order within a scan
// except for deferred transactional records, so it keeps the larger offset.
func (x *keyIndex) put(key []byte, off int64) error {
	if i, ok := x.m[string(key)]; ok {
		if off > x.offs[i] {
			x.offs[i] = off
		}
		return nil
	}
	x.m[string(key)] = int32(len(x.offs))
	x.offs = append(x.offs, off)
	x.mem += int64(len(key)) + entryOverhead
	if x.mem >= x.budget || len(x.offs) == 1<<31-1 {
		return x.spill()
	}
	return nil
}

// spill writes the in-memory entries as a run sorted by key: [uvarint len][key][u64 offset]*.
func (x *keyIndex) spill() error {
	keys := make([]string, 0, len(x.m))
	for k := range x.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	path := filepath.Join(x.dir, fmt.Sprintf("keys-%06d.run", x.spills))
	x.spills++
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var hdr [binary.MaxVarintLen64 + 8]byte
	for _, k := range keys {
		n := binary.PutUvarint(hdr[:], uint64(len(k)))
		w.Write(hdr[:n])
		w.WriteString(k)
		binary.BigEndian.PutUint64(hdr[:8], uint64(x.offs[x.m[k]]))
		w.Write(hdr[:8])
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	x.runs = append(x.runs, path)
	x.m = map[string]int32{}
	x.offs = nil
	x.mem = 0
	return nil
}

// finish returns the latest offset of every key, as survivors (sorted by offset). The index is
// unusable afterwards.
func (x *keyIndex) finish() (*survivors, error) {
	s := &survivors{dir: x.dir, budget: x.budget}
	if len(x.runs) == 0 {
		offs := x.offs
		x.m, x.offs = nil, nil
		slices.Sort(offs)
		s.mem = offs
		return s, nil
	}
	if len(x.m) > 0 {
		if err := x.spill(); err != nil {
			return nil, err
		}
	}
	x.m, x.offs = nil, nil
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
	key []byte
	off int64
}

func (k *keyRun) next() (bool, error) {
	n, err := binary.ReadUvarint(k.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if cap(k.key) < int(n) {
		k.key = make([]byte, n)
	}
	k.key = k.key[:n]
	if _, err := io.ReadFull(k.r, k.key); err != nil {
		return false, fmt.Errorf("%s: %w", k.f.Name(), err)
	}
	var b [8]byte
	if _, err := io.ReadFull(k.r, b[:]); err != nil {
		return false, fmt.Errorf("%s: %w", k.f.Name(), err)
	}
	k.off = int64(binary.BigEndian.Uint64(b[:]))
	return true, nil
}

type keyHeap []*keyRun

func (h keyHeap) Len() int { return len(h) }
func (h keyHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key, h[j].key); c != 0 {
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
	var last []byte
	started := false
	for h.Len() > 0 {
		top := h[0]
		// Equal keys pop largest offset first (Less), so the first of a key is the latest.
		if !started || !bytes.Equal(top.key, last) {
			if err := emit(top.off); err != nil {
				return err
			}
			last = append(last[:0], top.key...)
			started = true
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
