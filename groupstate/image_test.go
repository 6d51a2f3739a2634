package groupstate

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// encodeImage encodes s with parts of about target bytes.
func encodeImage(s *State, target int) (head []byte, parts [][]byte) {
	plan := s.View().PlanImage(target)
	head = s.View().AppendImageHead(nil)
	for i := range plan.NumParts() {
		parts = append(parts, s.View().AppendImagePart(nil, plan, i))
	}
	return head, parts
}

func decodeImage(head []byte, parts [][]byte) (*State, error) {
	s, err := NewFromImageHead(string(head))
	if err != nil {
		return nil, err
	}
	for _, b := range parts {
		p, err := DecodeImagePart(string(b))
		if err != nil {
			return nil, err
		}
		if err := s.AddImagePart(p); err != nil {
			return nil, err
		}
	}
	return s, s.FinishImage()
}

// requireSameInternals compares two states field by field, internal maps included, except
// the offset-commit memo and the per-group topic intern maps (caches that hold no state).
func requireSameInternals(t *testing.T, want, got *State) {
	t.Helper()
	require.Equal(t, want.version, got.version)
	require.True(t, reflect.DeepEqual(want.groups, got.groups), "groups differ: %v", Diff(want.View(), got.View(), 5))
	require.Equal(t, len(want.offsets), len(got.offsets))
	for id, gm := range want.offsets {
		g2 := got.offsets[id]
		require.NotNil(t, g2, "offsets of %q missing", id)
		require.Equal(t, gm.id, g2.id)
		require.Equal(t, gm.n(), g2.n())
		require.Equal(t, want.View().Offsets(id), got.View().Offsets(id), "offsets of %q differ", id)
		for i, o := range want.View().Offsets(id) {
			if i%max(1, gm.n()/64) != 0 {
				continue // a sample: Offset on a packed group is a scan
			}
			om, ok := got.View().Offset(id, o.Topic, o.Partition)
			require.True(t, ok)
			require.Equal(t, o.OffsetAndMetadata, om)
		}
		_, ok := got.View().Offset(id, "no such topic", 0)
		require.False(t, ok)
		for name, to := range g2.topics {
			require.Equal(t, name, to.name, "topic %q of %q not keyed by its own name", name, id)
		}
	}
	require.Equal(t, want.numOffsets, got.numOffsets)
	require.True(t, reflect.DeepEqual(want.pending, got.pending), "pending differs")
	require.True(t, reflect.DeepEqual(want.open, got.open), "open index differs")
	require.True(t, reflect.DeepEqual(want.shareStateMeta, got.shareStateMeta), "share state metadata differs")
	require.Nil(t, got.imageTotals)
	require.True(t, Equal(want.View(), got.View()), "%v", Diff(want.View(), got.View(), 5))
}

// imageRoundTrip checks that s survives its image exactly, at several part sizes, and that
// the image is a pure function of the state.
func imageRoundTrip(t *testing.T, s *State) {
	t.Helper()
	var first []byte
	for _, target := range []int{1, 200, 1 << 20} {
		head, parts := encodeImage(s, target)
		got, err := decodeImage(head, parts)
		require.NoError(t, err, "part size %d", target)
		requireSameInternals(t, s, got)
		// Deterministic: the decoded state encodes to the same bytes.
		h2, p2 := encodeImage(got, target)
		require.Equal(t, head, h2)
		require.Equal(t, parts, p2)
		if target == 1<<20 {
			first = bytes.Join(append([][]byte{head}, parts...), nil)
		}
	}
	// Decoded without checking the offsets, then checked: the same state.
	{
		head, parts := encodeImage(s, 200)
		st, err := NewFromImageHead(string(head))
		require.NoError(t, err)
		for _, b := range parts {
			p, err := DecodeImagePartUnchecked(string(b))
			require.NoError(t, err)
			require.NoError(t, st.AddImagePart(p))
		}
		require.NoError(t, st.FinishImage())
		c := st.OffsetCheck()
		c.Run()
		require.NoError(t, c.Err())
		requireSameInternals(t, s, st)
	}
	// A decoded state is live: replay continues on it (unpacking offsets as it goes) like on
	// the original, and a partly unpacked state encodes to the same bytes.
	h, p := encodeImage(s, 64)
	got, err := decodeImage(h, p)
	require.NoError(t, err)
	orig := s.Clone()
	for i, id := range s.View().OffsetGroupIDs() {
		offs := s.View().Offsets(id)
		if i%2 == 0 {
			continue // stays packed
		}
		for _, st := range []*State{orig, got} {
			require.NoError(t, st.ReplayOffsetCommit(1<<40, NoProducerID, id, offs[0].Topic, offs[0].Partition, OffsetCommitValue{Offset: 1, LeaderEpoch: -1, ExpireTimestamp: -1}))
			if len(offs) > 1 {
				require.NoError(t, st.ReplayOffsetCommitTombstone(id, offs[1].Topic, offs[1].Partition))
			}
		}
	}
	for _, st := range []*State{orig, got} {
		require.NoError(t, st.ReplayOffsetCommit(1<<40, NoProducerID, "image-probe", "t", 0, OffsetCommitValue{Offset: 1, LeaderEpoch: -1, ExpireTimestamp: -1}))
	}
	requireSameInternals(t, orig, got)
	h1, p1 := encodeImage(orig, 64)
	h2, p2 := encodeImage(got, 64)
	require.Equal(t, h1, h2)
	require.Equal(t, p1, p2)
	require.NotEmpty(t, first)
}

func TestImageEmptyState(t *testing.T) {
	for _, v := range []KafkaVersion{Kafka40, Kafka44} {
		s := New(v)
		head, parts := encodeImage(s, 1<<20)
		require.Len(t, parts, 1)
		got, err := decodeImage(head, parts)
		require.NoError(t, err)
		requireSameInternals(t, s, got)
	}
}

func TestImageEveryGroupType(t *testing.T) {
	s := New(Kafka44)
	joinConsumer(t, s, "consumer", "m1", 3)
	joinConsumer(t, s, "consumer", "m2", 4)
	require.NoError(t, s.ReplayConsumerGroupRegularExpression("consumer", "orders-.*", RegularExpressionValue{Topics: []string{"orders-b", "orders-a"}, Version: 3, Timestamp: 9}))
	joinShare(t, s, "share", "s1", 2)
	require.NoError(t, s.ReplayShareGroupStatePartitionMetadata("share", ShareStatePartitionMetadataValue{
		InitializedTopics: []TopicPartitionsInfo{{TopicID: topicA, TopicName: "t", Partitions: []int32{1, 0}}},
		DeletingTopics:    []TopicInfo{{TopicID: topicB, TopicName: "gone"}},
	}))
	joinStreams(t, s, "streams", "a", 2)
	joinStreams(t, s, "streams", "b", 3)
	require.NoError(t, s.ReplayGroupMetadata("classic", classicValue("consumer",
		ClassicMember{MemberID: "c1", ClientID: "x", GroupInstanceID: sp("i"), Subscription: []byte{0, 1, 2}, Assignment: []byte{}, SessionTimeoutMs: 10, RebalanceTimeoutMs: -1}), nil))
	require.NoError(t, s.ReplayOffsetCommit(10, NoProducerID, "classic", "t", 0, OffsetCommitValue{Offset: 5, LeaderEpoch: 2, Metadata: "m", CommitTimestamp: 7, ExpireTimestamp: -1, TopicID: topicA}))
	require.NoError(t, s.ReplayOffsetCommit(11, NoProducerID, "orphan", "u", 3, OffsetCommitValue{Offset: 6, LeaderEpoch: -1, ExpireTimestamp: 100}))
	require.NoError(t, s.ReplayGroupMetadataTombstone("orphan")) // offsets outlive their group
	require.NoError(t, s.ReplayOffsetCommit(12, 77, "consumer", "t", 1, OffsetCommitValue{Offset: 8, LeaderEpoch: -1, ExpireTimestamp: -1}))
	require.NoError(t, s.ReplayOffsetCommit(13, 78, "consumer", "t", 1, OffsetCommitValue{Offset: 9, LeaderEpoch: -1, ExpireTimestamp: -1}))
	require.NoError(t, s.ReplayOffsetCommit(14, 79, "x", "t", 1, OffsetCommitValue{Offset: 9, LeaderEpoch: -1, ExpireTimestamp: -1}))
	require.NoError(t, s.ReplayOffsetCommitTombstone("x", "t", 1)) // producer 79 stays, empty
	require.Len(t, s.View().PendingTransactions(), 3)
	// A group with more topics than the encoder's linear topic search holds, committed in
	// no particular order, partitions of both signs.
	for i := range 40 {
		topic := fmt.Sprintf("wide-%02d", (i*17)%40)
		for _, p := range []int32{2, -1, 0, 1 << 30} {
			require.NoError(t, s.ReplayOffsetCommit(int64(100+i), NoProducerID, "wide", topic, p, OffsetCommitValue{Offset: int64(i), LeaderEpoch: -1, ExpireTimestamp: -1}))
		}
	}
	imageRoundTrip(t, s)
}

func TestImageRejectsDamage(t *testing.T) {
	s := New(Kafka44)
	joinConsumer(t, s, "g", "m", 3)
	joinStreams(t, s, "s", "m", 2)
	require.NoError(t, s.ReplayOffsetCommit(10, NoProducerID, "g", "t", 0, OffsetCommitValue{Offset: 5, LeaderEpoch: 2, ExpireTimestamp: -1}))
	require.NoError(t, s.ReplayOffsetCommit(11, 5, "g", "t", 1, OffsetCommitValue{Offset: 5, LeaderEpoch: 2, ExpireTimestamp: -1}))
	head, parts := encodeImage(s, 1<<20)
	require.Len(t, parts, 1)

	// Every truncation of the head or the part fails cleanly.
	for n := range len(head) {
		_, err := decodeImage(head[:n], parts)
		require.ErrorIs(t, err, ErrImageCorrupt, "head cut at %d", n)
	}
	for n := range len(parts[0]) {
		_, err := decodeImage(head, [][]byte{parts[0][:n]})
		require.ErrorIs(t, err, ErrImageCorrupt, "part cut at %d", n)
	}
	// A missing part or a part given twice is caught by the totals and the order.
	_, err := decodeImage(head, nil)
	require.ErrorIs(t, err, ErrImageCorrupt)
	require.Contains(t, err.Error(), "head announces")
	_, err = decodeImage(head, [][]byte{parts[0], parts[0]})
	require.ErrorIs(t, err, ErrImageCorrupt)
	// Trailing bytes.
	_, err = decodeImage(head, [][]byte{append(append([]byte{}, parts[0]...), 0)})
	require.ErrorIs(t, err, ErrImageCorrupt)
	require.Contains(t, err.Error(), "after the last entry")
	// Every single-byte change either fails or decodes to some state, never panics.
	for i := range parts[0] {
		b := append([]byte{}, parts[0]...)
		b[i] ^= 0xff
		_, _ = decodeImage(head, [][]byte{b})
	}
}

// TestImageCoversEveryField fills every field reachable from the groups (one of each type),
// the pending offsets and the share-group state metadata (imagefill_test.go): an image must
// bring each back, so a field the image does not visit, in a struct that exists today or in
// one added later, comes back zero and fails here. State and groupOffsets are not written
// field by field (caches, memos, packed offset blocks): their fields are counted instead.
func TestImageCoversEveryField(t *testing.T) {
	for _, mode := range []fillMode{fillFull, fillOne, fillEmpty} {
		s := filledState(t, mode)
		head, parts := encodeImage(s, 1<<20)
		got, err := decodeImage(head, parts)
		require.NoError(t, err)
		require.Len(t, got.groups, len(s.groups))
		for id, g := range s.groups {
			require.Equal(t, g, got.groups[id], "group %q (a %T) changed in the image: teach image.go its new field", id, g)
		}
		require.Equal(t, s.pending, got.pending)
		require.Equal(t, s.open, got.open)
		require.Equal(t, s.shareStateMeta, got.shareStateMeta)
		h2, p2 := encodeImage(got, 1<<20)
		require.Equal(t, head, h2)
		require.Equal(t, parts, p2)
	}

	fields := map[reflect.Type]int{
		reflect.TypeFor[State]():        17,
		reflect.TypeFor[groupOffsets](): 5,
	}
	for typ, n := range fields {
		require.Equal(t, n, typ.NumField(), "%s has %d fields, image.go knows %d: teach image.go the change", typ, typ.NumField(), n)
	}
}

// TestImageGolden pins the bytes of the images of a few states (testdata/image-*.golden, a
// hex dump of the head and each part at two part sizes): a state's image must not change
// unless the image format does (bump imageFormat and the snapshot kind of package replay,
// then rewrite the files with go test ./groupstate -run TestImageGolden -rewrite). The
// filled states' values derive from field names, so that reorganizing a struct keeps them.
func TestImageGolden(t *testing.T) {
	states := map[string]*State{
		"filled-full":  filledState(t, fillFull),
		"filled-one":   filledState(t, fillOne),
		"filled-empty": filledState(t, fillEmpty),
	}
	for _, v := range KafkaVersions {
		states["mixed-"+v.String()] = mixed(t, v)
	}
	for name, s := range states {
		var b strings.Builder
		for _, target := range []int{1 << 20, 200} {
			head, parts := encodeImage(s, target)
			fmt.Fprintf(&b, "part size %d: head\n%s", target, hex.Dump(head))
			for i, p := range parts {
				fmt.Fprintf(&b, "part size %d: part %d\n%s", target, i, hex.Dump(p))
			}
		}
		golden := filepath.Join("testdata", "image-"+name+".golden")
		if *rewrite {
			require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err, "run go test ./groupstate -run TestImageGolden -rewrite")
		if string(want) != b.String() {
			wl, gl := strings.Split(string(want), "\n"), strings.Split(b.String(), "\n")
			for i := range max(len(wl), len(gl)) {
				w, g := "", ""
				if i < len(wl) {
					w = wl[i]
				}
				if i < len(gl) {
					g = gl[i]
				}
				if w != g {
					t.Fatalf("%s: the image differs from %s from line %d:\nwant %s\ngot  %s", name, golden, i+1, w, g)
				}
			}
		}
	}
}

func FuzzImagePart(f *testing.F) {
	s := New(Kafka44)
	f.Add([]byte{})
	for _, target := range []int{1, 1 << 20} {
		_, parts := encodeImage(s, target)
		for _, p := range parts {
			f.Add(p)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeImagePart(string(b))
		if err != nil {
			require.ErrorIs(t, err, ErrImageCorrupt)
			return
		}
		// Whatever decodes is a state that survives its own image exactly.
		st := New(Kafka44)
		st.imageTotals = &imageTotals{format: p.format}
		require.NoError(t, st.AddImagePart(p))
		st.imageTotals = nil
		head, parts := encodeImage(st, 1<<20)
		got, err := decodeImage(head, parts)
		require.NoError(t, err)
		requireSameInternals(t, st, got)
	})
}

// TestImageHugeGroup covers the encoder's path for groups with more offsets than its packed
// sort keys index (65,536).
func TestImageHugeGroup(t *testing.T) {
	s := New(Kafka44)
	for i := range 70_000 {
		topic := fmt.Sprintf("t%d", i%7)
		require.NoError(t, s.ReplayOffsetCommit(int64(i), NoProducerID, "huge", topic, int32(i/7), OffsetCommitValue{Offset: int64(i), LeaderEpoch: -1, ExpireTimestamp: -1}))
	}
	head, parts := encodeImage(s, 1<<20)
	got, err := decodeImage(head, parts)
	require.NoError(t, err)
	requireSameInternals(t, s, got)
}

// TestImageUncheckedDamagedOffsets damages an offset block without touching the part's
// structure: a checked decode refuses it, an unchecked one defers it to the OffsetCheck, and
// a mutation that unpacks it first records the damage in ImageErr; nothing panics.
func TestImageUncheckedDamagedOffsets(t *testing.T) {
	s := New(Kafka44)
	for p := range 5 {
		require.NoError(t, s.ReplayOffsetCommit(int64(p), NoProducerID, "g", "t", int32(p), OffsetCommitValue{Offset: 7, LeaderEpoch: -1, ExpireTimestamp: -1}))
	}
	head, parts := encodeImage(s, 1<<20)
	require.Len(t, parts, 1)
	b := append([]byte{}, parts[0]...)
	b[len(b)-1] = 0x80 // the last row's record offset now runs past the block
	_, err := decodeImage(head, [][]byte{b})
	require.ErrorIs(t, err, ErrImageCorrupt)

	load := func() *State {
		st, err := NewFromImageHead(string(head))
		require.NoError(t, err)
		p, err := DecodeImagePartUnchecked(string(b))
		require.NoError(t, err)
		require.NoError(t, st.AddImagePart(p))
		require.NoError(t, st.FinishImage())
		return st
	}
	st := load()
	c := st.OffsetCheck()
	require.Equal(t, 1, c.Len())
	c.Run()
	require.ErrorIs(t, c.Err(), ErrImageCorrupt)
	require.Contains(t, c.Err().Error(), `offsets of group "g"`)

	st = load()
	_ = st.View().Offsets("g") // reads of a damaged block stop where it breaks
	_, _ = st.View().Offset("g", "t", 4)
	require.Nil(t, st.View().ImageErr())
	require.NoError(t, st.ReplayOffsetCommit(100, NoProducerID, "g", "t", 9, OffsetCommitValue{Offset: 1, LeaderEpoch: -1, ExpireTimestamp: -1}))
	require.ErrorIs(t, st.View().ImageErr(), ErrImageCorrupt)
	require.Equal(t, len(st.View().Offsets("g")), st.View().NumOffsets(), "the count follows what was unpacked")
	require.Panics(t, func() { st.View().PlanImage(1 << 20) }, "unchecked blocks are never written out")
}

// TestImageTwoWayCodec holds the generated codec (imageEncoder, imageDecoder) to its source,
// imageCodec with both directions behind c.dec: on the same states they write the same
// bytes and read the same state.
func TestImageTwoWayCodec(t *testing.T) {
	states := []*State{filledState(t, fillFull), filledState(t, fillOne), filledState(t, fillEmpty)}
	for _, v := range KafkaVersions {
		states = append(states, mixed(t, v))
	}
	for _, s := range states {
		plan := s.View().PlanImage(200)
		c := &imageCodec{w: imageWriter{}}
		require.NoError(t, c.head(s))
		require.Equal(t, s.View().AppendImageHead(nil), c.w.b, "head")
		got, err := twoWayDecodeHead(string(c.w.b))
		require.NoError(t, err)
		for i := range plan.NumParts() {
			part := s.View().AppendImagePart(nil, plan, i)
			c := &imageCodec{part: &partScratch{}}
			ids := plan.ids[plan.cuts[i]:plan.cuts[i+1]]
			n := len(ids)
			c.partHeader(&n)
			for j, id := range ids {
				c.entry(&imageEntry{id: id, g: s.groups[id], off: s.offsets[id]}, j, "")
			}
			require.Equal(t, part, c.w.b, "part %d", i)
			p, err := twoWayDecodePart(string(part))
			require.NoError(t, err)
			want, err := DecodeImagePart(string(part))
			require.NoError(t, err)
			require.Equal(t, want, p)
			require.NoError(t, got.AddImagePart(p))
		}
		require.NoError(t, got.FinishImage())
		requireSameInternals(t, s, got)
	}
}

func twoWayDecodeHead(head string) (*State, error) {
	c := imageCodec{dec: true, r: imageReader{s: head, what: "head"}}
	s := &State{}
	return s, c.head(s)
}

func twoWayDecodePart(data string) (*ImagePart, error) {
	c := &imageCodec{dec: true, r: imageReader{s: data, what: "part header"}, checkOffsets: true}
	n := 0
	c.partHeader(&n)
	p := &ImagePart{format: c.format, entries: make([]imageEntry, n)}
	prev := ""
	for i := range p.entries {
		e := &p.entries[i]
		if c.entry(e, i, prev); c.r.err != nil {
			return nil, c.r.err
		}
		prev = e.id
		if e.off != nil {
			p.offsets += e.off.n()
		}
	}
	return p, c.r.err
}

// TestCheckOffsetReadsWhatTheCodecReads holds checkOffset, which checks the rows of an
// offset block without building them, to the codec's offset: on every row written, on its
// truncations and on single-byte changes, both read the same bytes and fail alike.
func TestCheckOffsetReadsWhatTheCodecReads(t *testing.T) {
	var rows []OffsetAndMetadata
	for _, o := range []int64{0, 1, -1, 63, -64, 64, 1 << 40, -1 << 62, math.MaxInt64, math.MinInt64} {
		for _, e := range []int32{-1, 0, math.MaxInt32, math.MinInt32} {
			rows = append(rows, OffsetAndMetadata{CommittedOffset: o, LeaderEpoch: e, Metadata: "md", CommitTimestamp: -o, ExpireTimestamp: o ^ 5, TopicID: Uuid{byte(e), 1}, RecordOffset: o / 3})
		}
	}
	rows = append(rows, OffsetAndMetadata{}, *filled[OffsetAndMetadata](t, "row", fillFull))
	read := func(b string) (codecErr, checkErr error, codecEnd, checkEnd int) {
		c := &imageDecoder{dec: true, r: imageReader{s: b, what: "row"}}
		var o OffsetAndMetadata
		c.offset(&o)
		r := &imageReader{s: b, what: "row"}
		r.checkOffset()
		return c.r.err, r.err, c.r.i, r.i
	}
	for _, o := range rows {
		w := &imageEncoder{}
		w.offset(&o)
		b := w.w.b
		for n := 0; n <= len(b); n++ {
			for _, x := range []byte{0, 0xff, 0x01, 0x80} {
				for i := range max(n, 1) {
					d := append([]byte{}, b[:n]...)
					if i < len(d) {
						d[i] ^= x
					}
					ce, ke, cend, kend := read(string(d))
					require.Equal(t, ce == nil, ke == nil, "%x: codec %v, check %v", d, ce, ke)
					if ce == nil {
						require.Equal(t, cend, kend, "%x", d)
					}
				}
			}
		}
	}
}
