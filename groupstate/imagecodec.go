package groupstate

import (
	"fmt"
	"slices"
	"strings"
)

// The state image's codec: one method per struct of the state, which visits every field
// once, in the image's order (image.go describes the layout).

// imageCodec is one direction of a state image: it writes the image into w or, when dec,
// reads it from r. This file gives it one method per struct of the state, which visits every
// field once, in the image's order, with the primitives below: writing, a primitive appends
// the field; reading, it reads the field into place. A field can thus not be written without
// being read, nor in another order. What only one direction does (sorting map keys to
// write, allocating and checking to read) is beside the visits, under c.dec.
//
// Reading fills zero values: a field the image says is absent (a nil pointer, a zero topic
// id) is not visited and keeps its zero value. The first error sticks (imageReader): later
// visits read zero values, and the caller checks c.r.err once per entry.
//
// This file is the only source of the codec. The state's images are written and read by
// imageEncoder and imageDecoder (imagecodec_gen.go), copies of this file's functions for one
// direction each, with c.dec a constant: then the primitives inline and a visit costs what
// a hand-written writer or reader does. The copies are generated (go test
// ./groupstate/internal/codecgen -rewrite, after any change here), and
// TestImageCodecGenerated fails when they are stale; imageCodec itself, both directions
// behind c.dec, is what TestImageTwoWayCodec holds them to. c.dec may only appear in the
// condition of an if statement (codecgen folds it there).
type imageCodec struct {
	dec bool
	w   imageWriter
	r   imageReader
	// part is the writing side's scratch for the offset blocks of a part (image.go).
	part *partScratch
	// checkOffsets: reading a part, check its offset blocks (DecodeImagePart) or leave them
	// to an OffsetCheck (DecodeImagePartUnchecked).
	checkOffsets bool
	// format is the format of the image being read (the part header's, image.go); writing
	// is always imageFormat.
	format uint64
}

// The primitives: each visits one value of the type it is named after.

func (c *imageCodec) uv(p *uint64) {
	if c.dec {
		*p = c.r.uv()
	} else {
		c.w.uv(*p)
	}
}

func (c *imageCodec) i64(p *int64) {
	if c.dec {
		c.r.vInto(p)
	} else {
		c.w.v(*p)
	}
}

// i32 visits an int32 (reading, a varint that must fit); i16 and i8 likewise.
func (c *imageCodec) i32(p *int32) {
	if c.dec {
		c.r.i32Into(p)
	} else {
		c.w.v(int64(*p))
	}
}

func (c *imageCodec) i16(p *int16) {
	if c.dec {
		*p = c.r.i16()
	} else {
		c.w.v(int64(*p))
	}
}

func (c *imageCodec) i8(p *int8) {
	if c.dec {
		*p = c.r.i8()
	} else {
		c.w.v(int64(*p))
	}
}

func (c *imageCodec) u8(p *uint8) {
	if c.dec {
		*p = c.r.u8()
	} else {
		c.w.u8(*p)
	}
}

func (c *imageCodec) bool(p *bool) {
	if c.dec {
		*p = c.r.bool()
	} else {
		c.w.bool(*p)
	}
}

// str visits a string; a string read is a substring of the image.
func (c *imageCodec) str(p *string) {
	if c.dec {
		c.r.strInto(p)
	} else {
		c.w.str(*p)
	}
}

func (c *imageCodec) strp(p **string) {
	if c.dec {
		*p = c.r.strp()
	} else {
		c.w.strp(*p)
	}
}

func (c *imageCodec) bytes(p *[]byte) {
	if c.dec {
		*p = c.r.bytes()
	} else {
		c.w.bytes(*p)
	}
}

func (c *imageCodec) uuid(p *Uuid) {
	if c.dec {
		*p = c.r.uuid()
	} else {
		c.w.uuid(*p)
	}
}

func (c *imageCodec) strs(p *[]string) {
	if c.dec {
		*p = c.r.strs()
	} else {
		c.w.strs(*p)
	}
}

func (c *imageCodec) i32s(p *[]int32) {
	if c.dec {
		*p = c.r.i32s()
	} else {
		c.w.i32s(*p)
	}
}

func (c *imageCodec) i16s(p *[]int16) {
	if c.dec {
		*p = c.r.i16s()
	} else {
		c.w.i16s(*p)
	}
}

// flag visits a presence byte (0 or 1): writing, set; reading, what the image says, and bad
// is the error of any other byte. It returns whether what it stands for follows: an
// optional pointer's pointee, which the caller allocates when reading (the generic helper
// this could be costs a call per pointer) and visits.
func (c *imageCodec) flag(set bool, bad string) bool {
	if !c.dec {
		c.w.bool(set)
		return set
	}
	return c.r.flag(bad)
}

// length visits a plain count (no nil-ness) of elements of at least minSize bytes each.
func (c *imageCodec) length(n *int, minSize int, what string) {
	if !c.dec {
		c.w.uv(uint64(*n))
		return
	}
	*n = c.r.length(minSize, what)
}

// list visits a slice's length and nil-ness; reading, it allocates the slice, from slab when
// there is one. The caller then visits every element of *s.
func codecList[T any](c *imageCodec, s *[]T, minSize int, slab *[]T) {
	if c.dec {
		*s = readList(&c.r, minSize, slab)
	} else {
		c.w.count(len(*s), *s == nil)
	}
}

// codecMapFrame visits a map keyed by string as its length and nil-ness: writing, it
// returns the keys sorted (ids when they are exactly the map's keys: a target assignment
// usually has its group's member ids) and their number; reading, it allocates the map and
// returns the number of entries. The caller then visits each entry, key and value, taking
// them from mapEntry, and ends with codecRepeated.
func codecMapFrame[V any](c *imageCodec, m *map[string]V, minSize int, ids []string) (keys []string, n int) {
	if c.dec {
		n, isNil := c.r.count(minSize)
		if isNil {
			*m = nil
		} else {
			*m = make(map[string]V, n)
		}
		return nil, n
	}
	c.w.count(len(*m), *m == nil)
	switch {
	case len(*m) == 0:
		return nil, 0
	case sameKeys(*m, ids):
		return ids, len(ids)
	}
	keys = sortedKeys(*m)
	return keys, len(keys)
}

// mapEntry is entry i of a map whose sorted keys are keys (writing), or a zero key and
// value to read into (reading: keys is nil).
func mapEntry[V any](m map[string]V, keys []string, i int) (string, V) {
	if keys == nil {
		var zero V
		return "", zero
	}
	return keys[i], m[keys[i]]
}

// codecMemberFrame visits the members of a modern group as codecMapFrame does: writing, it
// returns the sorted member ids; reading, it allocates the map and the members, one
// allocation for all of them (they are immutable once stored, and a replaced member simply
// leaves its slot unreferenced). The caller visits member i, memberEntry's, of
// len(ids)+len(slab), and ends with codecRepeated.
func codecMemberFrame[M any](c *imageCodec, m *map[string]*M, minSize int) (ids []string, slab []M) {
	if c.dec {
		n, isNil := c.r.count(minSize)
		if isNil {
			*m = nil
			return nil, nil
		}
		*m = make(map[string]*M, n)
		return nil, make([]M, n)
	}
	c.w.count(len(*m), *m == nil)
	return sortedKeys(*m), nil
}

// memberEntry is member i: writing, its id and the member; reading, a zero id to read into
// and its slot in slab.
func memberEntry[M any](m map[string]*M, ids []string, slab []M, i int) (string, *M) {
	if slab != nil {
		return "", &slab[i]
	}
	return ids[i], m[ids[i]]
}

// codecMembers visits the members of a modern group (codecMemberFrame), each its id then
// the member (visit), and returns the ids written (nil reading) for the targets' visit.
// what names a member in the error of a repeated id.
func codecMembers[M any](c *imageCodec, m *map[string]*M, minSize int, what string, visit func(*imageCodec, *M)) []string {
	ids, slab := codecMemberFrame(c, m, minSize)
	for i := range len(ids) + len(slab) {
		k, mem := memberEntry(*m, ids, slab, i)
		c.str(&k)
		visit(c, mem)
		if c.dec {
			(*m)[k] = mem
		}
	}
	codecRepeated(c, len(*m), len(slab), what)
	return ids
}

// codecRepeated ends the visit of a map of n entries that holds got: reading, fewer means
// a key came twice (repeated names what it keys).
func codecRepeated(c *imageCodec, got, n int, repeated string) {
	if c.dec && got != n && c.r.err == nil {
		c.r.fail("repeated %s", repeated)
	}
}

// ---------------------------------------------------------------------------------------
// The head and the parts.

// head visits the image head of s: the format, the version, the totals the parts add up to,
// the pending offsets (by producer, then by group, topic and partition) and the share-group
// state metadata (by group). Reading, s is a new State that it fills; the open-transactions
// index is built from the pending offsets.
func (c *imageCodec) head(s *State) error {
	format, version := uint64(imageFormat), uint64(s.version)
	c.uv(&format)
	if c.dec && (format < 1 || format > imageFormat) && c.r.err == nil {
		return fmt.Errorf("%w: image format %d, this build reads 1 to %d", ErrImageCorrupt, format, imageFormat)
	}
	c.uv(&version)
	if c.dec {
		if s.version = KafkaVersion(version); !s.version.Valid() && c.r.err == nil {
			return fmt.Errorf("%w: invalid Kafka version %d", ErrImageCorrupt, s.version)
		}
	}
	t := imageTotals{format: format, groups: uint64(len(s.groups)), offsetGroups: uint64(len(s.offsets)), offsets: uint64(s.numOffsets)}
	c.uv(&t.groups)
	c.uv(&t.offsetGroups)
	c.uv(&t.offsets)
	if c.dec {
		if c.r.err != nil {
			return c.r.err
		}
		// Bounds for the preallocations: the totals are checked exactly by FinishImage;
		// here they only must not make a damaged head allocate without limit.
		const maxPrealloc = 1 << 24
		s.groups = make(map[string]group, min(t.groups, maxPrealloc))
		s.offsets = make(map[string]*groupOffsets, min(t.offsetGroups, maxPrealloc))
		s.pending = map[int64]map[offsetKey]OffsetAndMetadata{}
		s.open = map[offsetKey][]int64{}
		s.shareStateMeta = map[string]ShareStatePartitionMetadata{}
		s.imageTotals = &t
	}
	if err := c.pendingOffsets(s); err != nil {
		return err
	}
	c.shareStateMetas(s)
	if c.dec {
		if c.r.err == nil && c.r.left() != 0 {
			c.r.fail("%d bytes after the head", c.r.left())
		}
		return c.r.err
	}
	return nil
}

// pendingOffsets visits the pending transactional offsets of the head, by producer id then
// offset key (reading: each key's open producers too).
func (c *imageCodec) pendingOffsets(s *State) error {
	var pids []int64
	if !c.dec {
		pids = make([]int64, 0, len(s.pending))
		for pid := range s.pending {
			pids = append(pids, pid)
		}
		slices.Sort(pids)
	}
	n := len(pids)
	c.length(&n, 2, "producers")
	for i := range n {
		var pid int64
		var keys []offsetKey
		var pm map[offsetKey]OffsetAndMetadata
		if !c.dec {
			pid, pm = pids[i], s.pending[pids[i]]
			keys = make([]offsetKey, 0, len(pm))
			for k := range pm {
				keys = append(keys, k)
			}
			slices.SortFunc(keys, compareOffsetKeys)
		}
		c.i64(&pid)
		if c.dec {
			c.r.what = fmt.Sprintf("pending offsets of producer %d", pid)
			if _, dup := s.pending[pid]; dup {
				c.r.fail("producer listed twice")
			}
		}
		k := len(keys)
		c.length(&k, 10, "offsets")
		if c.dec {
			pm = make(map[offsetKey]OffsetAndMetadata, k)
			s.pending[pid] = pm
		}
		for j := range k {
			var key offsetKey
			var o OffsetAndMetadata
			if !c.dec {
				key = keys[j]
				o = pm[key]
			}
			c.offsetKey(&key)
			c.offset(&o)
			if c.dec {
				pm[key] = o
				if c.r.err != nil {
					return c.r.err
				}
				ids := s.open[key]
				at, found := slices.BinarySearch(ids, pid)
				if found {
					c.r.fail("offset %s/%s-%d listed twice", key.group, key.topic, key.partition)
					return c.r.err
				}
				s.open[key] = slices.Insert(ids, at, pid)
			}
		}
	}
	return nil
}

// shareStateMetas visits the share-group state partition metadata of the head, by group id.
func (c *imageCodec) shareStateMetas(s *State) {
	var ids []string
	if !c.dec {
		ids = sortedKeys(s.shareStateMeta)
	}
	c.r.what = "share-group state metadata"
	n := len(ids)
	c.length(&n, 5, "entries")
	for i := range n {
		var id string
		var m ShareStatePartitionMetadata
		if !c.dec {
			id = ids[i]
			m = s.shareStateMeta[id]
		}
		c.str(&id)
		c.shareStatePartitionMetadata(&m)
		if c.dec {
			if _, dup := s.shareStateMeta[id]; dup {
				c.r.fail("group %q listed twice", id)
			}
			s.shareStateMeta[id] = m
		}
	}
}

func (c *imageCodec) offsetKey(k *offsetKey) {
	c.str(&k.group)
	c.str(&k.topic)
	c.i32(&k.partition)
}

// offset visits a committed or pending offset: here in the head, and as the rows of the
// offset blocks (packed.go, whose checkOffset checks a row without building it).
func (c *imageCodec) offset(o *OffsetAndMetadata) {
	c.i64(&o.CommittedOffset)
	c.i32(&o.LeaderEpoch)
	c.str(&o.Metadata)
	c.i64(&o.CommitTimestamp)
	c.i64(&o.ExpireTimestamp)
	if c.flag(!o.TopicID.IsZero(), "bad topic id flag") {
		c.uuid(&o.TopicID)
		if c.dec && o.TopicID.IsZero() {
			c.r.fail("zero topic id written as present")
		}
	}
	c.i64(&o.RecordOffset)
}

func (c *imageCodec) shareStatePartitionMetadata(m *ShareStatePartitionMetadata) {
	c.str(&m.GroupID)
	c.topicPartitionsInfos(&m.InitializingTopics)
	c.topicPartitionsInfos(&m.InitializedTopics)
	codecList(c, &m.DeletingTopicIDs, 16, nil)
	for i := range m.DeletingTopicIDs {
		c.uuid(&m.DeletingTopicIDs[i])
	}
}

func (c *imageCodec) topicPartitionsInfos(s *[]TopicPartitionsInfo) {
	codecList(c, s, 18, nil)
	for i := range *s {
		t := &(*s)[i]
		c.uuid(&t.TopicID)
		c.str(&t.TopicName)
		c.i32s(&t.Partitions)
	}
}

// partHeader visits the header of a part: from format 2 on, a zero byte and the format, then
// the number of entries n. A part of format 1 has no format: it begins with n, which is 0
// only in an empty part that ends there, so a zero byte with more bytes after it starts a
// format. Reading, it sets c.format.
func (c *imageCodec) partHeader(n *int) {
	if c.dec && !c.r.formatFollows() {
		c.format = 1
	} else {
		zero, format := uint8(0), uint64(imageFormat)
		c.u8(&zero)
		c.uv(&format)
		if c.dec {
			if (format < 2 || format > imageFormat) && c.r.err == nil {
				c.r.fail("part format %d, this build reads 1 to %d", format, imageFormat)
			}
			c.format = format
		}
	}
	c.length(n, 2, "entries")
}

// kafkaTable visits the layout of one of Kafka's maps (order.go), after the map's keys: its
// table size, the next insertion sequence number and whether the order is assumed. Images
// of format 1 do not have it: reading one, it returns false, and the caller gives the map
// the assumed order (assumeOrder). The keys' own sequence numbers are not checked against
// next: a wrong one misorders the map, nothing more.
func (c *imageCodec) kafkaTable(t *kafkaTable) bool {
	if c.dec && c.format < 2 {
		return false
	}
	slots := uint64(t.slots)
	c.uv(&slots)
	c.uv(&t.next)
	c.bool(&t.assumed)
	if c.dec {
		if slots < minSlots || slots > 1<<30 || slots&(slots-1) != 0 {
			c.r.fail("a table of %d slots", slots)
		}
		t.slots = uint32(slots)
	}
	return true
}

// seq visits the insertion sequence number of a member or a regex (format 2 on; reading
// format 1 leaves it 0, for the caller's assumed order).
func (c *imageCodec) seq(p *uint64) {
	if c.dec && c.format < 2 {
		return
	}
	c.uv(p)
}

// entry visits entry i of a part (prev is the id before it, reading): the id, a flag byte
// saying which of group and offsets follow, and them.
func (c *imageCodec) entry(e *imageEntry, i int, prev string) {
	c.str(&e.id)
	var flags uint8
	if c.dec {
		c.r.what, c.r.entry, c.r.entryID = "entry", i, e.id
		if i > 0 && e.id <= prev {
			c.r.fail("ids out of order")
		}
	} else {
		if e.g != nil {
			flags |= imageHasGroup
		}
		if e.off != nil {
			flags |= imageHasOffsets
		}
	}
	c.u8(&flags)
	if c.dec && (flags == 0 || flags&^(imageHasGroup|imageHasOffsets) != 0) {
		c.r.fail("bad entry flags %#x", flags)
	}
	if flags&imageHasGroup != 0 {
		c.group(&e.g)
	}
	if flags&imageHasOffsets != 0 {
		c.groupOffsets(e.id, &e.off)
	}
}

// groupOffsets visits one id's committed offsets: their number and their block (packed.go).
// Writing, a packed group's block is written as it is; reading, the block stays packed in
// the state until a mutation needs it. With c.checkOffsets the block is checked here,
// completely, so that unpacking it later cannot fail; else an OffsetCheck does it later.
func (c *imageCodec) groupOffsets(id string, gm **groupOffsets) {
	if !c.dec {
		o := *gm
		c.w.uv(uint64(o.n()))
		if o.packed != "" {
			c.w.str(o.packed)
			return
		}
		c.part.block = appendOffsetsBlock(c.part.block[:0], o, &c.part.sc)
		c.w.uv(uint64(len(c.part.block)))
		c.w.b = append(c.w.b, c.part.block...)
		return
	}
	r := &c.r
	n := r.length(8, "offsets")
	block := r.str()
	if r.err != nil {
		return
	}
	if n == 0 {
		// Only an empty group's block, which the state never holds but an image may.
		if block != "\x00" {
			r.fail("offsets: %d-byte block for no offsets", len(block))
			return
		}
		*gm = newGroupOffsets(id)
		return
	}
	if c.checkOffsets {
		if err := checkOffsetsBlock(block, n); err != nil {
			r.fail("%s", strings.TrimPrefix(err.Error(), ErrImageCorrupt.Error()+": "))
			return
		}
	}
	*gm = &groupOffsets{id: id, packed: block, count: n}
}

// ---------------------------------------------------------------------------------------
// Groups.

// group visits a group: its type byte and its struct.
func (c *imageCodec) group(g *group) {
	var t uint8
	if !c.dec {
		switch (*g).(type) {
		case *classicGroup:
			t = imageClassic
		case *consumerGroup:
			t = imageConsumer
		case *shareGroup:
			t = imageShare
		case *streamsGroup:
			t = imageStreams
		default:
			panic(fmt.Sprintf("groupstate: image of unknown group type %T", *g))
		}
	}
	c.u8(&t)
	switch t {
	case imageClassic:
		c.classicGroup(codecGroupOf[classicGroup](c, g))
	case imageConsumer:
		c.consumerGroup(codecGroupOf[consumerGroup](c, g))
	case imageShare:
		c.shareGroup(codecGroupOf[shareGroup](c, g))
	case imageStreams:
		c.streamsGroup(codecGroupOf[streamsGroup](c, g))
	default:
		c.r.fail("unknown group type %d", t)
	}
}

// groupOf returns the *G in *g; reading, a new one, stored in *g.
func codecGroupOf[G any, P interface {
	*G
	group
}](c *imageCodec, g *group) P {
	if c.dec {
		p := P(new(G))
		*g = p
		return p
	}
	return (*g).(P)
}

func (c *imageCodec) classicGroup(g *classicGroup) {
	c.str(&g.protocolType)
	c.i32(&g.generation)
	c.strp(&g.protocol)
	c.strp(&g.leader)
	c.i64(&g.currentStateTimestamp)
	codecList(c, &g.members, 11, nil)
	for i := range g.members {
		c.classicMember(&g.members[i])
	}
}

func (c *imageCodec) classicMember(m *ClassicMember) {
	c.str(&m.MemberID)
	c.strp(&m.GroupInstanceID)
	c.str(&m.ClientID)
	c.str(&m.ClientHost)
	c.i32(&m.RebalanceTimeoutMs)
	c.i32(&m.SessionTimeoutMs)
	c.bytes(&m.Subscription)
	c.bytes(&m.Assignment)
	c.bool(&m.ProtocolDecoded)
	c.strs(&m.SubscribedTopics)
	codecList(c, &m.AssignedPartitions, 2, nil)
	for i := range m.AssignedPartitions {
		t := &m.AssignedPartitions[i]
		c.str(&t.Topic)
		c.i32s(&t.Partitions)
	}
}

func (c *imageCodec) consumerGroup(g *consumerGroup) {
	c.i32(&g.groupEpoch)
	c.i64(&g.metadataHash)
	c.bool(&g.hasSubscriptionMetadataRecord)
	c.topicMetadataMap(&g.subscriptionMetadata)
	c.i32(&g.assignmentEpoch)
	c.i64(&g.assignmentTimestamp)
	ids := codecMembers(c, &g.members, 17, "consumer member", (*imageCodec).consumerMember)
	c.targets(&g.target, ids)
	c.regexes(&g.regexes)
	members, regexes := c.kafkaTable(&g.memberTable), c.kafkaTable(&g.regexTable)
	assignors := c.assignors(&g.assignors) && c.kafkaTable(&g.assignorTable)
	if !members || !regexes || !assignors {
		g.assumeOrder()
	}
}

// assignors visits a consumer group's serverAssignors map (order.go; format 2 on): reading
// format 1, it returns false.
func (c *imageCodec) assignors(am *map[string]assignorCount) bool {
	if c.dec && c.format < 2 {
		return false
	}
	keys, n := codecMapFrame(c, am, 3, nil)
	for i := range n {
		k, a := mapEntry(*am, keys, i)
		c.str(&k)
		c.i32(&a.members)
		c.uv(&a.seq)
		if c.dec {
			if a.members < 1 && c.r.err == nil {
				c.r.fail("server assignor %q named by %d members", k, a.members)
			}
			(*am)[k] = a
		}
	}
	codecRepeated(c, len(*am), n, "server assignor")
	return true
}

// topicMetadataMap visits the subscription metadata of 4.0's records 4 and 9.
func (c *imageCodec) topicMetadataMap(tm *map[string]TopicMetadata) {
	keys, n := codecMapFrame(c, tm, 19, nil)
	for i := range n {
		k, t := mapEntry(*tm, keys, i)
		c.str(&k)
		c.topicMetadata(&t)
		if c.dec {
			(*tm)[k] = t
		}
	}
	codecRepeated(c, len(*tm), n, "topic metadata key")
}

func (c *imageCodec) topicMetadata(t *TopicMetadata) {
	c.uuid(&t.TopicID)
	c.str(&t.TopicName)
	c.i32(&t.NumPartitions)
}

// targets visits a consumer or share group's target assignment; ids are the group's sorted
// member ids (writing), usually its keys.
func (c *imageCodec) targets(tm *map[string][]TopicPartitions, ids []string) {
	keys, n := codecMapFrame(c, tm, 2, ids)
	for i := range n {
		k, t := mapEntry(*tm, keys, i)
		c.str(&k)
		c.topicPartitions(&t)
		if c.dec {
			(*tm)[k] = t
		}
	}
	codecRepeated(c, len(*tm), n, "target assignment member")
}

func (c *imageCodec) regexes(rm *map[string]ResolvedRegularExpression) {
	keys, n := codecMapFrame(c, rm, 5, nil)
	for i := range n {
		k, re := mapEntry(*rm, keys, i)
		c.str(&k)
		c.resolvedRegularExpression(&re)
		if c.dec {
			(*rm)[k] = re
		}
	}
	codecRepeated(c, len(*rm), n, "regex")
}

func (c *imageCodec) consumerMember(m *ConsumerMember) {
	c.str(&m.MemberID)
	c.seq(&m.seq)
	c.i32(&m.MemberEpoch)
	c.i32(&m.PreviousMemberEpoch)
	c.i8(&m.State)
	c.str(&m.StateName)
	c.strp(&m.InstanceID)
	c.strp(&m.RackID)
	c.i32(&m.RebalanceTimeoutMs)
	c.str(&m.ClientID)
	c.str(&m.ClientHost)
	c.strs(&m.SubscribedTopicNames)
	c.strp(&m.SubscribedTopicRegex)
	c.strp(&m.ServerAssignor)
	if c.flag(m.ClassicMemberMetadata != nil, "bad classic member metadata flag") {
		if c.dec {
			m.ClassicMemberMetadata = new(ClassicMemberMetadata)
		}
		c.classicMemberMetadata(m.ClassicMemberMetadata)
	}
	c.topicPartitionsWithEpochs(&m.AssignedPartitions)
	c.topicPartitionsWithEpochs(&m.PartitionsPendingRevocation)
}

func (c *imageCodec) classicMemberMetadata(m *ClassicMemberMetadata) {
	c.i32(&m.SessionTimeoutMs)
	codecList(c, &m.SupportedProtocols, 2, nil)
	for i := range m.SupportedProtocols {
		p := &m.SupportedProtocols[i]
		c.str(&p.Name)
		c.bytes(&p.Metadata)
	}
}

func (c *imageCodec) resolvedRegularExpression(re *ResolvedRegularExpression) {
	c.str(&re.Regex)
	c.seq(&re.seq)
	c.strs(&re.Topics)
	c.i64(&re.Version)
	c.i64(&re.Timestamp)
}

// topicPartitions and topicPartitionsWithEpochs, the lists of every member, cut their
// slices from the reader's slabs inline (what codecList does, minus a call).
func (c *imageCodec) topicPartitions(s *[]TopicPartitions) {
	if c.dec {
		if n, isNil := c.r.count(17); isNil {
			*s = nil
		} else {
			*s = cut(&c.r.tpSlab, n)
		}
	} else {
		c.w.count(len(*s), *s == nil)
	}
	for i := range *s {
		t := &(*s)[i]
		c.uuid(&t.TopicID)
		c.i32s(&t.Partitions)
	}
}

func (c *imageCodec) topicPartitionsWithEpochs(s *[]TopicPartitionsWithEpochs) {
	if c.dec {
		if n, isNil := c.r.count(18); isNil {
			*s = nil
		} else {
			*s = cut(&c.r.tpeSlab, n)
		}
	} else {
		c.w.count(len(*s), *s == nil)
	}
	for i := range *s {
		t := &(*s)[i]
		c.uuid(&t.TopicID)
		c.i32s(&t.Partitions)
		c.i32s(&t.AssignmentEpochs)
	}
}

func (c *imageCodec) shareGroup(g *shareGroup) {
	c.i32(&g.groupEpoch)
	c.i64(&g.metadataHash)
	c.topicMetadataMap(&g.subscriptionMetadata)
	c.i32(&g.assignmentEpoch)
	c.i64(&g.assignmentTimestamp)
	ids := codecMembers(c, &g.members, 11, "share member", (*imageCodec).shareMember)
	c.targets(&g.target, ids)
	if !c.kafkaTable(&g.memberTable) {
		g.assumeOrder()
	}
}

func (c *imageCodec) shareMember(m *ShareMember) {
	c.str(&m.MemberID)
	c.seq(&m.seq)
	c.i32(&m.MemberEpoch)
	c.i32(&m.PreviousMemberEpoch)
	c.i8(&m.State)
	c.str(&m.StateName)
	c.strp(&m.RackID)
	c.str(&m.ClientID)
	c.str(&m.ClientHost)
	c.strs(&m.SubscribedTopicNames)
	c.topicPartitions(&m.AssignedPartitions)
}

func (c *imageCodec) streamsGroup(g *streamsGroup) {
	c.i32(&g.groupEpoch)
	c.i64(&g.metadataHash)
	c.i32(&g.validatedTopologyEpoch)
	c.i32(&g.storedDescriptionTopologyEpoch)
	c.i32(&g.failedDescriptionTopologyEpoch)
	c.keyValues(&g.lastAssignmentConfigs)
	c.i32(&g.assignmentEpoch)
	c.i64(&g.assignmentTimestamp)
	if c.flag(g.topology != nil, "bad bool") {
		if c.dec {
			g.topology = new(StreamsTopology)
		}
		c.streamsTopology(g.topology)
	}
	ids := codecMembers(c, &g.members, 9, "streams member", (*imageCodec).streamsMember)
	c.streamsTargets(&g.target, ids)
	if !c.kafkaTable(&g.memberTable) {
		g.assumeOrder()
	}
}

func (c *imageCodec) streamsMember(m *StreamsMember) {
	c.str(&m.MemberID)
	c.seq(&m.seq)
	if c.flag(m.MemberEpoch != nil, "bad bool") {
		if c.dec {
			m.MemberEpoch = new(int32)
		}
		c.i32(m.MemberEpoch)
	}
	if c.flag(m.PreviousMemberEpoch != nil, "bad bool") {
		if c.dec {
			m.PreviousMemberEpoch = new(int32)
		}
		c.i32(m.PreviousMemberEpoch)
	}
	if c.flag(m.State != nil, "bad bool") {
		if c.dec {
			m.State = new(int8)
		}
		c.i8(m.State)
	}
	c.str(&m.StateName)
	if c.flag(m.Metadata != nil, "bad bool") {
		if c.dec {
			m.Metadata = new(StreamsMemberMetadata)
		}
		c.streamsMemberMetadata(m.Metadata)
	}
	if c.flag(m.AssignedTasks != nil, "bad bool") {
		if c.dec {
			m.AssignedTasks = new(StreamsTasks)
		}
		c.streamsTasks(m.AssignedTasks)
	}
	if c.flag(m.TasksPendingRevocation != nil, "bad bool") {
		if c.dec {
			m.TasksPendingRevocation = new(StreamsTasks)
		}
		c.streamsTasks(m.TasksPendingRevocation)
	}
}

func (c *imageCodec) streamsMemberMetadata(md *StreamsMemberMetadata) {
	c.strp(&md.InstanceID)
	c.strp(&md.RackID)
	c.str(&md.ClientID)
	c.str(&md.ClientHost)
	c.i32(&md.RebalanceTimeoutMs)
	c.i32(&md.TopologyEpoch)
	c.str(&md.ProcessID)
	if c.flag(md.UserEndpoint != nil, "bad bool") {
		if c.dec {
			md.UserEndpoint = new(StreamsEndpoint)
		}
		c.streamsEndpoint(md.UserEndpoint)
	}
	c.keyValues(&md.ClientTags)
}

func (c *imageCodec) streamsEndpoint(e *StreamsEndpoint) {
	c.str(&e.Host)
	port := uint64(e.Port)
	c.uv(&port)
	if c.dec {
		if port > 0xffff {
			c.r.fail("port %d", port)
		} else {
			e.Port = uint16(port)
		}
	}
}

func (c *imageCodec) streamsTasks(t *StreamsTasks) {
	codecList(c, &t.ActiveTasks, 3, nil)
	for i := range t.ActiveTasks {
		a := &t.ActiveTasks[i]
		c.str(&a.SubtopologyID)
		c.i32s(&a.Partitions)
		c.i32s(&a.AssignmentEpochs)
	}
	c.taskIDs(&t.StandbyTasks)
	c.taskIDs(&t.WarmupTasks)
}

func (c *imageCodec) taskIDs(s *[]TaskIDs) {
	codecList(c, s, 2, nil)
	for i := range *s {
		t := &(*s)[i]
		c.str(&t.SubtopologyID)
		c.i32s(&t.Partitions)
	}
}

// streamsTargets visits a streams group's target assignment; ids are the group's sorted
// member ids (writing), usually its keys.
func (c *imageCodec) streamsTargets(tm *map[string]StreamsMemberTarget, ids []string) {
	keys, n := codecMapFrame(c, tm, 5, ids)
	for i := range n {
		k, t := mapEntry(*tm, keys, i)
		c.str(&k)
		c.streamsMemberTarget(&t)
		if c.dec {
			(*tm)[k] = t
		}
	}
	codecRepeated(c, len(*tm), n, "streams target member")
}

func (c *imageCodec) streamsMemberTarget(t *StreamsMemberTarget) {
	c.str(&t.MemberID)
	c.taskIDs(&t.ActiveTasks)
	c.taskIDs(&t.StandbyTasks)
	c.taskIDs(&t.WarmupTasks)
}

func (c *imageCodec) streamsTopology(t *StreamsTopology) {
	c.i32(&t.Epoch)
	codecList(c, &t.Subtopologies, 7, nil)
	for i := range t.Subtopologies {
		c.subtopology(&t.Subtopologies[i])
	}
}

func (c *imageCodec) subtopology(st *Subtopology) {
	c.str(&st.SubtopologyID)
	c.strs(&st.SourceTopics)
	c.strs(&st.SourceTopicRegex)
	c.streamsTopicInfos(&st.StateChangelogTopics)
	c.strs(&st.RepartitionSinkTopics)
	c.streamsTopicInfos(&st.RepartitionSourceTopics)
	codecList(c, &st.CopartitionGroups, 3, nil)
	for i := range st.CopartitionGroups {
		cg := &st.CopartitionGroups[i]
		c.i16s(&cg.SourceTopics)
		c.i16s(&cg.SourceTopicRegex)
		c.i16s(&cg.RepartitionSourceTopics)
	}
}

func (c *imageCodec) streamsTopicInfos(s *[]StreamsTopicInfo) {
	codecList(c, s, 4, nil)
	for i := range *s {
		t := &(*s)[i]
		c.str(&t.Name)
		c.i32(&t.Partitions)
		c.i16(&t.ReplicationFactor)
		c.keyValues(&t.TopicConfigs)
	}
}

func (c *imageCodec) keyValues(s *[]KeyValue) {
	codecList(c, s, 2, nil)
	for i := range *s {
		kv := &(*s)[i]
		c.str(&kv.Key)
		c.str(&kv.Value)
	}
}
