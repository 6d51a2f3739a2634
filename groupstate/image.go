package groupstate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// A state image is the whole State in a compact binary form that is written straight from
// the state's maps and read straight back into them, without the Dump in between (Dump and
// Restore deep-copy every member and offset, which made them most of a snapshot's cost).
// Snapshots use it (package replay); the parts are independent, so a caller may encode and
// decode them on several goroutines.
//
// An image is a head and parts:
//
//   - The head: the image format (1), the Kafka version, the totals (groups, groups with
//     offsets, offsets) that the parts must add up to, the pending transactional offsets and
//     the share-group state-partition metadata.
//   - Each part: a run of entries, one per id in sorted order, an id being a group or the
//     owner of committed offsets (offsets outlive their group, so the two are keyed alike
//     but each optional). An entry is the id, a flag byte (1: group, 2: offsets), the group
//     (a type byte and every field of the group's internal struct, maps as sorted lists) and
//     its offsets: their number and their length-prefixed block (packed.go), which a
//     restored state keeps as it is until a mutation needs the group's offsets.
//
// The split into parts (PlanImage) depends only on the state, so the same state gives the
// same bytes whatever the number of goroutines. Every field of the internal structs is
// written, including the nil-ness of slices, maps and pointers: a decoded image is the same
// State, not just one with an equal Dump.
//
// Both directions are imagecodec.go's imageCodec methods, one per struct: each visits every
// field of its struct once, in the image's order, and the codec writes or reads it. This
// file only starts and ends them: AppendImageHead and NewFromImageHead run the head's
// visit, AppendImagePart and DecodeImagePart the entries'. Nothing is written by one piece
// of code and read by another, except the frame of the offset blocks, which packed.go writes
// and reads (their rows are the codec's offset). TestImageCoversEveryField fills every field
// of every struct and fails when an image does not bring one back; TestImageGolden pins the
// bytes.

// imageFormat is the version of the image layout, which the head and every part name. This
// build writes format 2 and reads 1 and 2. History: 1, the first; 2 adds the layout of
// Kafka's maps of members and regexes (order.go: a table per map, a sequence number per
// member and regex), and a header to each part (a zero byte and the format; a part of
// format 1 begins with its number of entries). A state read from a format-1 image assumes
// the orders of those maps (order.go).
const imageFormat = 2

// Entry flags.
const (
	imageHasGroup   = 1
	imageHasOffsets = 2
)

// Group type bytes.
const (
	imageClassic  = 1
	imageConsumer = 2
	imageShare    = 3
	imageStreams  = 4
)

// ImagePlan is the split of a state's ids into image parts.
type ImagePlan struct {
	ids  []string
	cuts []int // part i is ids[cuts[i]:cuts[i+1]]
}

// NumParts returns the number of parts (at least one, which may be empty).
func (p *ImagePlan) NumParts() int { return len(p.cuts) - 1 }

// PlanImage splits the state into parts of about targetBytes each (estimated from member and
// offset counts; a big group makes a big part). The plan is valid until the state changes.
func (v View) PlanImage(targetBytes int) *ImagePlan {
	s := v.s
	if len(s.unchecked) > 0 {
		// Packed blocks are written out as they are: never ones nobody checked.
		panic("groupstate: PlanImage on a state whose offsets were not checked (State.OffsetCheck)")
	}
	ids := make([]string, 0, len(s.groups)+len(s.offsets))
	for id := range s.groups {
		ids = append(ids, id)
	}
	for id := range s.offsets {
		if _, ok := s.groups[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	p := &ImagePlan{ids: ids, cuts: []int{0}}
	size := 0
	for i, id := range ids {
		size += 16 + len(id)
		if gm := s.offsets[id]; gm != nil {
			size += 32 * gm.n()
		}
		switch g := s.groups[id].(type) {
		case *classicGroup:
			size += 256 * len(g.members)
		case *consumerGroup:
			size += 160 * len(g.members)
		case *shareGroup:
			size += 128 * len(g.members)
		case *streamsGroup:
			size += 256 * len(g.members)
		}
		if size >= targetBytes && i+1 < len(ids) {
			p.cuts = append(p.cuts, i+1)
			size = 0
		}
	}
	p.cuts = append(p.cuts, len(ids))
	return p
}

// AppendImageHead appends the image head to b.
func (v View) AppendImageHead(b []byte) []byte {
	c := imageEncoder{w: imageWriter{b: b}}
	_ = c.head(v.s) // writing cannot fail
	return c.w.b
}

// NewFromImageHead starts a state from an image head: the version, the pending
// transactional offsets and the share-group state metadata, with room for the totals the
// head announces. Add every part with AddImagePart, then call FinishImage.
func NewFromImageHead(head string) (*State, error) {
	c := imageDecoder{dec: true, r: imageReader{s: head, what: "head"}}
	s := &State{}
	if err := c.head(s); err != nil {
		return nil, err
	}
	return s, nil
}

func compareOffsetKeys(a, b offsetKey) int {
	if c := strings.Compare(a.group, b.group); c != 0 {
		return c
	}
	if c := strings.Compare(a.topic, b.topic); c != 0 {
		return c
	}
	return cmp.Compare(a.partition, b.partition)
}

// ---------------------------------------------------------------------------------------
// Parts.

// AppendImagePart appends part i of plan to b. It only reads the state: parts may be encoded
// concurrently.
func (v View) AppendImagePart(b []byte, plan *ImagePlan, i int) []byte {
	s := v.s
	c := imageEncoder{w: imageWriter{b: b}, part: &partScratch{}}
	ids := plan.ids[plan.cuts[i]:plan.cuts[i+1]]
	n := len(ids)
	c.partHeader(&n)
	for i, id := range ids {
		e := imageEntry{id: id, g: s.groups[id], off: s.offsets[id]}
		c.entry(&e, i, "")
	}
	return c.w.b
}

// ImagePart is a decoded part, ready to be added to a state (AddImagePart).
type ImagePart struct {
	format  uint64
	entries []imageEntry
	offsets int
	// unchecked are the offset blocks DecodeImagePartUnchecked left for an OffsetCheck.
	unchecked []uncheckedBlock
}

// imageEntry is one id of a part: its group and its offsets, either of them nil.
type imageEntry struct {
	id  string
	g   group
	off *groupOffsets
}

// DecodeImagePart decodes one part. The state's strings will be substrings of data (no
// copies: data stays referenced while any of them lives). It touches no state, so parts may
// be decoded concurrently.
func DecodeImagePart(data string) (*ImagePart, error) { return decodeImagePart(data, true) }

// DecodeImagePartUnchecked is DecodeImagePart without checking the committed-offset blocks,
// most of a part's bytes and of its decode time: the state built from such parts holds them
// unchecked until an OffsetCheck (State.OffsetCheck) has run, which a caller may do on idle
// cores while it goes on using the state. Until then reads and mutations of those offsets
// are safe (bounded, never a panic) but may see garbage, which a mutation records in
// State.ImageErr; a state is only good once its check passed and ImageErr is nil.
func DecodeImagePartUnchecked(data string) (*ImagePart, error) { return decodeImagePart(data, false) }

func decodeImagePart(data string, checkOffsets bool) (*ImagePart, error) {
	c := &imageDecoder{dec: true, r: imageReader{s: data, what: "part header"}, checkOffsets: checkOffsets}
	n := 0
	c.partHeader(&n)
	if c.r.err != nil {
		return nil, c.r.err
	}
	p := &ImagePart{format: c.format, entries: make([]imageEntry, n)}
	prev := ""
	for i := range p.entries {
		e := &p.entries[i]
		c.entry(e, i, prev)
		if c.r.err != nil {
			return nil, c.r.err
		}
		prev = e.id
		if e.off != nil {
			p.offsets += e.off.n()
			if !checkOffsets && e.off.packed != "" {
				p.unchecked = append(p.unchecked, uncheckedBlock{id: e.id, block: e.off.packed, count: e.off.count})
			}
		}
	}
	if c.r.left() != 0 {
		c.r.what = "part"
		c.r.fail("%d bytes after the last entry", c.r.left())
		return nil, c.r.err
	}
	return p, nil
}

// partScratch is reusable space for writing the offset blocks of a part.
type partScratch struct {
	sc    offsetScratch
	block []byte
}

// imageTotals is what an image head announced, until FinishImage checks it.
type imageTotals struct {
	format                        uint64 // the head's; every part must have it
	groups, offsetGroups, offsets uint64
	lastID                        string // the last id added, for the order check across parts
	parts                         int
}

// AddImagePart adds a decoded part to a state started by NewFromImageHead. Parts must come in
// order (their ids ascend across parts).
func (s *State) AddImagePart(p *ImagePart) error {
	t := s.imageTotals
	if t == nil {
		return fmt.Errorf("groupstate: AddImagePart on a state not started by NewFromImageHead")
	}
	t.parts++
	if p.format != t.format {
		return fmt.Errorf("%w: part %d has image format %d, the head %d", ErrImageCorrupt, t.parts, p.format, t.format)
	}
	if len(p.entries) > 0 && t.lastID != "" && p.entries[0].id <= t.lastID {
		return fmt.Errorf("%w: part %d: id %q does not follow %q", ErrImageCorrupt, t.parts, p.entries[0].id, t.lastID)
	}
	for _, e := range p.entries {
		if e.g != nil {
			s.groups[e.id] = e.g
		}
		if e.off != nil {
			s.offsets[e.id] = e.off
		}
	}
	if n := len(p.entries); n > 0 {
		t.lastID = p.entries[n-1].id
	}
	s.numOffsets += p.offsets
	s.unchecked = append(s.unchecked, p.unchecked...)
	return nil
}

// FinishImage checks that the parts added up to what the head announced and makes the
// state ready for use.
func (s *State) FinishImage() error {
	t := s.imageTotals
	if t == nil {
		return fmt.Errorf("groupstate: FinishImage on a state not started by NewFromImageHead")
	}
	s.imageTotals = nil
	if uint64(len(s.groups)) != t.groups || uint64(len(s.offsets)) != t.offsetGroups || uint64(s.numOffsets) != t.offsets {
		return fmt.Errorf("%w: the head announces %d groups, %d groups with offsets and %d offsets; the %d parts held %d, %d and %d",
			ErrImageCorrupt, t.groups, t.offsetGroups, t.offsets, t.parts, len(s.groups), len(s.offsets), s.numOffsets)
	}
	return nil
}
