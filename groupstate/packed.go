package groupstate

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Packed offsets. Committed offsets are most of a coordinator's state, and most groups are
// not touched for a long time after a restart; building their maps is most of what a restore
// from a state image would cost. So a restored group keeps its offsets as the image's block
// (a substring of the image) and unpacks them into maps on the first mutation of that group.
// Reads decode the block in place and never write, which keeps concurrent views safe.
//
// The block, sorted by topic and then partition, each topic once:
//
//	uvarint topic count, then per topic: uvarint len + topic, uvarint row count, rows
//	row: varint partition, varint committed offset, varint leader epoch, uvarint len +
//	     metadata, varint commit timestamp, varint expire timestamp, byte 0 (zero topic id)
//	     or 1 + 16 bytes, varint record offset
//
// scanOffsetsBlock checks a block completely (structure, strict order, canonical encoding),
// when the part is decoded (DecodeImagePart) or later by an OffsetCheck
// (DecodeImagePartUnchecked); once checked, unpacking and reading cannot fail, and a packed
// block is byte for byte the block the state's maps would encode. Before, they are bounded
// and never panic, and unpacking reports damage (State.ImageErr).

// n returns the number of offsets, packed or not.
func (gm *groupOffsets) n() int {
	if gm.packed != "" {
		return gm.count
	}
	return gm.num
}

// unpackOffsets builds the maps of a packed group (mutators call it first). A damaged
// block (only possible before an OffsetCheck passed) unpacks to what could be read, the
// offset count follows, and the first such error is kept for ImageErr.
func (s *State) unpackOffsets(gm *groupOffsets) {
	if gm.packed == "" {
		return
	}
	before := gm.count
	if err := gm.unpack(); err != nil && s.imageErr == nil {
		s.imageErr = err
	}
	s.numOffsets += gm.num - before
}

// ImageErr reports the first damaged offset block a mutation met in a state decoded with
// DecodeImagePartUnchecked (nil for any other state).
func (v View) ImageErr() error { return v.s.imageErr }

// unpack builds the maps of a packed group; it fails only on a damaged block.
func (gm *groupOffsets) unpack() error {
	c := &imageDecoder{dec: true, r: imageReader{s: gm.packed, what: "packed offsets"}}
	r := &c.r
	topics := r.length(2, "topics")
	gm.topics, gm.num = make(map[string]*topicOffsets, topics), 0
	for range topics {
		t := gm.topic(r.str())
		for range r.length(8, "offsets") {
			part := r.i32()
			var om OffsetAndMetadata
			if c.offset(&om); r.err != nil {
				break
			}
			if t.put(part, om) {
				gm.num++
			}
		}
	}
	if r.err == nil && (r.left() != 0 || gm.num != gm.count) {
		r.fail("%d offsets unpacked, %d announced, %d bytes left", gm.num, gm.count, r.left())
	}
	gm.packed, gm.count = "", 0
	if r.err != nil {
		return fmt.Errorf("group %q: %w", gm.id, r.err)
	}
	return nil
}

// getPacked finds one offset in the packed block.
func (gm *groupOffsets) getPacked(topic string, partition int32) (OffsetAndMetadata, bool) {
	c := &imageDecoder{dec: true, r: imageReader{s: gm.packed, what: "packed offsets"}}
	r := &c.r
	var om OffsetAndMetadata
	for range r.length(2, "topics") {
		t := r.str()
		rows := r.length(8, "offsets")
		if t != topic {
			for range rows {
				r.i32()
				c.offset(&om)
			}
			continue
		}
		for range rows {
			p := r.i32()
			om = OffsetAndMetadata{}
			if c.offset(&om); p == partition {
				return om, true
			}
		}
		break
	}
	return OffsetAndMetadata{}, false
}

// appendPacked appends the packed offsets, in their (sorted) order, as CommittedOffsets.
func (gm *groupOffsets) appendPacked(out []CommittedOffset, groupID string) []CommittedOffset {
	c := &imageDecoder{dec: true, r: imageReader{s: gm.packed, what: "packed offsets"}}
	r := &c.r
	for range r.length(2, "topics") {
		t := r.str()
		for range r.length(8, "offsets") {
			p := r.i32()
			var om OffsetAndMetadata
			if c.offset(&om); r.err != nil {
				return out
			}
			out = append(out, CommittedOffset{GroupID: groupID, Topic: t, Partition: p, OffsetAndMetadata: om})
		}
	}
	return out
}

// offsetScratch is reusable space for appendOffsetsBlock.
type offsetScratch struct {
	topics []string
	rank   []uint64
	keys   []uint64
	vals   []OffsetAndMetadata
	index  map[string]int
}

// topicIndex returns the index of topic in sc.topics, adding it when new: a linear search
// over the few topics of a typical group, a map beyond that.
func (sc *offsetScratch) topicIndex(topic string) int {
	if sc.index == nil {
		for i, t := range sc.topics {
			if t == topic {
				return i
			}
		}
		if len(sc.topics) < 16 {
			sc.topics = append(sc.topics, topic)
			return len(sc.topics) - 1
		}
		sc.index = make(map[string]int, 2*len(sc.topics))
		for i, t := range sc.topics {
			sc.index[t] = i
		}
	}
	if i, ok := sc.index[topic]; ok {
		return i
	}
	sc.index[topic] = len(sc.topics)
	sc.topics = append(sc.topics, topic)
	return len(sc.topics) - 1
}

// appendOffsetsBlock appends the block of an unpacked group. The rows are ordered by
// sorting integer keys (topic rank, partition) rather than (string, int) pairs: the topics
// of a group are few, and this sort is most of the cost of writing offsets.
func appendOffsetsBlock(b []byte, gm *groupOffsets, sc *offsetScratch) []byte {
	sc.topics, sc.keys, sc.vals, sc.index = sc.topics[:0], sc.keys[:0], sc.vals[:0], nil
	// A key is topic index (16 bits), partition with its sign bit flipped so that unsigned
	// order is signed order (32 bits), and the row's index in vals (16 bits), which saves
	// looking every value up again after the sort. Groups too big for that take the
	// lookups (keys without the index).
	small := gm.num <= 1<<16
	if small {
		for name, t := range gm.topics {
			if t.len() == 0 {
				continue // emptied by tombstones: no row, no topic in the block
			}
			idx := sc.topicIndex(name)
			if idx >= 1<<16 {
				small = false
				break
			}
			t.each(func(p int32, om *OffsetAndMetadata) {
				part := uint64(uint32(p) ^ 0x80000000)
				sc.keys = append(sc.keys, uint64(idx)<<48|part<<16|uint64(len(sc.vals)))
				sc.vals = append(sc.vals, *om)
			})
		}
	}
	if !small {
		// Too many offsets or topics for the small keys: wide keys, values looked up.
		sc.topics, sc.keys, sc.vals, sc.index = sc.topics[:0], sc.keys[:0], sc.vals[:0], nil
		for name, t := range gm.topics {
			if t.len() == 0 {
				continue
			}
			idx := sc.topicIndex(name)
			t.each(func(p int32, _ *OffsetAndMetadata) {
				sc.keys = append(sc.keys, uint64(idx)<<32|uint64(uint32(p)^0x80000000))
			})
		}
		return appendSortedOffsets(b, gm, sc, 32, nil)
	}
	return appendSortedOffsets(b, gm, sc, 48, sc.vals)
}

// appendSortedOffsets finishes appendOffsetsBlock: the topic index is the key's bits from
// shift up, the partition the 32 bits below it, and with vals the row index the 16 bits
// below that.
func appendSortedOffsets(b []byte, gm *groupOffsets, sc *offsetScratch, shift uint, vals []OffsetAndMetadata) []byte {
	low := uint64(1)<<shift - 1
	// Rank the topics by name and rewrite the keys' topic halves with the ranks.
	order := make([]int, len(sc.topics))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(sc.topics[a], sc.topics[b]) })
	sc.rank = slices.Grow(sc.rank[:0], len(order))[:len(order)]
	for r, i := range order {
		sc.rank[i] = uint64(r)
	}
	for i, k := range sc.keys {
		sc.keys[i] = sc.rank[k>>shift]<<shift | k&low
	}
	slices.Sort(sc.keys)

	c := imageEncoder{w: imageWriter{b: b}}
	w := &c.w
	w.uv(uint64(len(order)))
	for j := 0; j < len(sc.keys); {
		r := sc.keys[j] >> shift
		k := j + 1
		for k < len(sc.keys) && sc.keys[k]>>shift == r {
			k++
		}
		topic := sc.topics[order[r]]
		w.str(topic)
		w.uv(uint64(k - j))
		for ; j < k; j++ {
			key := sc.keys[j]
			p := int32(uint32(key>>(shift-32)) ^ 0x80000000)
			w.v(int64(p))
			if vals != nil {
				c.offset(&vals[key&0xffff])
			} else {
				om, _ := gm.get(topic, p)
				c.offset(&om)
			}
		}
	}
	return w.b
}

// checkOffsetsBlock checks a block that should hold n offsets.
func checkOffsetsBlock(block string, n int) error {
	count, err := scanOffsetsBlock(block)
	if err == nil && count != n {
		err = fmt.Errorf("%w: offsets: %d in the block, %d announced", ErrImageCorrupt, count, n)
	}
	return err
}

// uncheckedBlock is a packed offset block awaiting its OffsetCheck.
type uncheckedBlock struct {
	id    string
	block string
	count int
}

// OffsetCheck checks the offset blocks a state decoded with DecodeImagePartUnchecked left
// unchecked. It holds its own references to the blocks (strings, never written), so its Run
// may go on, on any number of goroutines, while the state is read and mutated.
type OffsetCheck struct {
	blocks []uncheckedBlock
	next   atomic.Int64
	failed atomic.Bool
	mu     sync.Mutex
	err    error
}

// OffsetCheck takes over the state's unchecked offset blocks (none for a state not decoded
// unchecked). Call it while nothing else uses the state.
func (s *State) OffsetCheck() *OffsetCheck {
	c := &OffsetCheck{blocks: s.unchecked}
	s.unchecked = nil
	return c
}

// Len returns the number of blocks to check.
func (c *OffsetCheck) Len() int { return len(c.blocks) }

// Run checks blocks until none is left or one failed. Several goroutines may run it.
func (c *OffsetCheck) Run() {
	for !c.failed.Load() {
		i := c.next.Add(1) - 1
		if i >= int64(len(c.blocks)) {
			return
		}
		b := c.blocks[i]
		if err := checkOffsetsBlock(b.block, b.count); err != nil {
			c.mu.Lock()
			if c.err == nil {
				c.err = fmt.Errorf("offsets of group %q: %w", b.id, err)
			}
			c.mu.Unlock()
			c.failed.Store(true)
		}
	}
}

// Err returns the first damaged block found; call it after every Run returned.
func (c *OffsetCheck) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// scanOffsetsBlock checks a block and counts its offsets.
func scanOffsetsBlock(block string) (int, error) {
	r := &imageReader{s: block, what: "offsets block"}
	topics := r.length(2, "topics")
	if topics == 0 && r.err == nil {
		r.fail("no topics") // a group without offsets has no block
	}
	n := 0
	prevTopic := ""
	for t := range topics {
		topic := r.str()
		if t > 0 && topic <= prevTopic {
			r.fail("topic %q after %q", topic, prevTopic)
		}
		prevTopic = topic
		rows := r.length(8, "offsets")
		if rows == 0 {
			r.fail("topic %q without offsets", topic)
		}
		prev := int32(0)
		for i := range rows {
			p := r.i32()
			if i > 0 && p <= prev {
				r.fail("partition %s-%d after %d", topic, p, prev)
			}
			prev = p
			r.checkOffset()
		}
		n += rows
		if r.err != nil {
			break
		}
	}
	if r.err == nil && r.left() != 0 {
		r.fail("%d bytes after the offsets", r.left())
	}
	return n, r.err
}

// checkOffset checks what imageCodec.offset reads without building the value: the int64
// fields are only skipped (any canonical varint of at most 10 bytes is one), which is most
// of the work of a scan. TestCheckOffsetReadsWhatTheCodecReads holds it to the codec.
func (r *imageReader) checkOffset() {
	r.skipVarint() // committed offset
	r.i32()        // leader epoch
	r.str()        // metadata
	r.skipVarint() // commit timestamp
	r.skipVarint() // expire timestamp
	switch r.u8() {
	case 0:
	case 1:
		if r.uuid().IsZero() {
			r.fail("zero topic id written as present")
		}
	default:
		r.fail("bad topic id flag")
	}
	r.skipVarint() // record offset
}

// skipVarint skips a canonical varint (see uvSlow for the rules).
func (r *imageReader) skipVarint() {
	s := r.s
	for j := r.i; j < len(s) && j-r.i < 10; j++ {
		if c := s[j]; c < 0x80 {
			if j > r.i && (c == 0 || j-r.i == 9 && c > 1) {
				break
			}
			r.i = j + 1
			return
		}
	}
	r.fail("bad varint")
}
