package groupstate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
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
// scanOffsetsBlock checks a block completely (structure, strict order, canonical encoding)
// before the state accepts it, so unpacking and reading cannot fail later, and a packed
// block is byte for byte the block the state's maps would encode.

// n returns the number of offsets, packed or not.
func (gm *groupOffsets) n() int {
	if gm.packed != "" {
		return gm.count
	}
	return len(gm.byTP)
}

// unpack builds the maps of a packed group (mutators call it first).
func (gm *groupOffsets) unpack() {
	if gm.packed == "" {
		return
	}
	r := &imageReader{s: gm.packed, what: "packed offsets"}
	topics := int(r.uv())
	gm.topics = make(map[string]string, topics)
	gm.byTP = make(map[TopicPartition]OffsetAndMetadata, gm.count)
	for range topics {
		topic := r.str()
		gm.topics[topic] = topic
		for range r.uv() {
			part := r.i32()
			gm.byTP[TopicPartition{topic, part}] = r.offset()
		}
	}
	if r.err != nil || len(gm.byTP) != gm.count {
		// scanOffsetsBlock accepted this block: a failure here is a bug, not bad input.
		panic(fmt.Sprintf("groupstate: unpacking checked offsets of group %q: %v (%d of %d)", gm.id, r.err, len(gm.byTP), gm.count))
	}
	gm.packed, gm.count = "", 0
}

// getPacked finds one offset in the packed block.
func (gm *groupOffsets) getPacked(topic string, partition int32) (OffsetAndMetadata, bool) {
	r := &imageReader{s: gm.packed, what: "packed offsets"}
	for range r.uv() {
		t := r.str()
		rows := r.uv()
		if t != topic {
			for range rows {
				r.i32()
				r.offset()
			}
			continue
		}
		for range rows {
			p := r.i32()
			om := r.offset()
			if p == partition {
				return om, true
			}
		}
		break
	}
	return OffsetAndMetadata{}, false
}

// appendPacked appends the packed offsets, in their (sorted) order, as CommittedOffsets.
func (gm *groupOffsets) appendPacked(out []CommittedOffset, groupID string) []CommittedOffset {
	r := &imageReader{s: gm.packed, what: "packed offsets"}
	for range r.uv() {
		t := r.str()
		for range r.uv() {
			p := r.i32()
			out = append(out, CommittedOffset{GroupID: groupID, Topic: t, Partition: p, OffsetAndMetadata: r.offset()})
		}
	}
	return out
}

// appendOffsetsBlock appends the block of an unpacked group; tps is scratch space.
func appendOffsetsBlock(b []byte, gm *groupOffsets, tps *[]TopicPartition) []byte {
	w := imageWriter{b: b}
	s := (*tps)[:0]
	for tp := range gm.byTP {
		s = append(s, tp)
	}
	slices.SortFunc(s, func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	*tps = s
	topics := 0
	for j := range s {
		if j == 0 || s[j].Topic != s[j-1].Topic {
			topics++
		}
	}
	w.uv(uint64(topics))
	for j := 0; j < len(s); {
		k := j + 1
		for k < len(s) && s[k].Topic == s[j].Topic {
			k++
		}
		w.str(s[j].Topic)
		w.uv(uint64(k - j))
		for ; j < k; j++ {
			w.v(int64(s[j].Partition))
			w.offset(gm.byTP[s[j]])
		}
	}
	return w.b
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

// checkOffset checks what offset() reads without building the value: the int64 fields are
// only skipped (any canonical varint of at most 10 bytes is one), which is most of the work
// of a scan.
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
