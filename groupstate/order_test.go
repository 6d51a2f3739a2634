package groupstate

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// memberTableOf is the member table of group id, which must be a modern group.
func memberTableOf(t *testing.T, s *State, id string) TimelineTable {
	t.Helper()
	mt, ok := s.View().MemberTable(id)
	require.True(t, ok, "group %s", id)
	return mt
}

// TestMemberTableFollowsReplay: the insertion order is the order in which members were
// created, a member removed and created again counts from its new creation, and the table
// grows as Kafka's does on every put, replaces included (the JVM checks the same rules in
// coordinator's TestTimelineOrderEqualsKafka).
func TestMemberTableFollowsReplay(t *testing.T) {
	s := New(Kafka44)
	joinConsumer(t, s, "g", "m1", 1)
	// Records 5 and 8 of m1 put it at sizes 0 and 1: 2 slots hold them.
	require.Equal(t, TimelineTable{Inserted: []string{"m1"}, Slots: 2}, memberTableOf(t, s, "g"))
	joinConsumer(t, s, "g", "m0", 2)
	// m0's record 5 is put at size 1 (2 slots), its record 8 at size 2: (2+1)*0.75 > 2.
	require.Equal(t, TimelineTable{Inserted: []string{"m1", "m0"}, Slots: 4}, memberTableOf(t, s, "g"))
	joinConsumer(t, s, "g", "m2", 3)
	removeConsumerMember(t, s, "g", "m1") // 8 tombstone: a put at size 3 (4 slots); 5 tombstone: a removal
	require.Equal(t, TimelineTable{Inserted: []string{"m0", "m2"}, Slots: 4}, memberTableOf(t, s, "g"))
	joinConsumer(t, s, "g", "m1", 4)
	for _, m := range []string{"m3", "m4"} {
		joinConsumer(t, s, "g", m, 5)
	}
	// m4's record 8 is put at size 5: (5+1)*0.75 > 4. The table never shrinks.
	require.Equal(t, TimelineTable{Inserted: []string{"m0", "m2", "m1", "m3", "m4"}, Slots: 8}, memberTableOf(t, s, "g"))
	for _, m := range []string{"m0", "m1", "m2", "m3"} {
		removeConsumerMember(t, s, "g", m)
	}
	require.Equal(t, TimelineTable{Inserted: []string{"m4"}, Slots: 8}, memberTableOf(t, s, "g"))
	// A tombstone for a missing member puts nothing.
	require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignmentTombstone("g", "gone"))
	require.Equal(t, 8, memberTableOf(t, s, "g").Slots)

	// Share groups put a new member twice (getOrMaybeCreateMember, then updateMember).
	joinShare(t, s, "sh", "a", 1)
	require.Equal(t, TimelineTable{Inserted: []string{"a"}, Slots: 2}, memberTableOf(t, s, "sh"))
	require.NoError(t, s.ReplayShareGroupMemberMetadata("sh", "b", ShareMemberMetadataValue{ClientID: "c"}))
	require.Equal(t, TimelineTable{Inserted: []string{"a", "b"}, Slots: 4}, memberTableOf(t, s, "sh"))

	// Streams groups as consumer groups.
	joinStreams(t, s, "st", "z", 1)
	joinStreams(t, s, "st", "y", 2)
	require.Equal(t, TimelineTable{Inserted: []string{"z", "y"}, Slots: 4}, memberTableOf(t, s, "st"))

	_, ok := s.View().MemberTable("missing")
	require.False(t, ok)
	require.NoError(t, s.ReplayGroupMetadata("classic", classicValue("consumer"), nil))
	_, ok = s.View().MemberTable("classic")
	require.False(t, ok)

	// A deleted group starts again from an empty table.
	removeConsumerMember(t, s, "g", "m4")
	require.NoError(t, s.ReplayConsumerGroupTargetAssignmentMetadataTombstone("g"))
	require.NoError(t, s.ReplayConsumerGroupMetadataTombstone("g"))
	joinConsumer(t, s, "g", "m9", 1)
	require.Equal(t, TimelineTable{Inserted: []string{"m9"}, Slots: 2}, memberTableOf(t, s, "g"))
}

// TestRegexTableFollowsReplay: Kafka removes a regex and puts it again on every record 16.
func TestRegexTableFollowsReplay(t *testing.T) {
	s := New(Kafka44)
	re := func(regex string) {
		require.NoError(t, s.ReplayConsumerGroupRegularExpression("g", regex, RegularExpressionValue{Topics: []string{"t"}, Version: 1}))
	}
	re("b.*")
	re("a.*")
	re("c.*")
	tb, ok := s.View().RegexTable("g")
	require.True(t, ok)
	require.Equal(t, TimelineTable{Inserted: []string{"b.*", "a.*", "c.*"}, Slots: 4}, tb)
	re("b.*") // the same value: moved to the end all the same
	require.NoError(t, s.ReplayConsumerGroupRegularExpressionTombstone("g", "a.*"))
	tb, _ = s.View().RegexTable("g")
	require.Equal(t, TimelineTable{Inserted: []string{"c.*", "b.*"}, Slots: 4}, tb)
}

// TestOrderOutsideDumps: views and dumps do not carry the order (Equal ignores it); a state
// restored from a Dump assumes it; Clone and images keep it.
func TestOrderOutsideDumps(t *testing.T) {
	s := New(Kafka44)
	for _, m := range []string{"c", "a", "b"} {
		joinConsumer(t, s, "g", m, 1)
	}
	require.NoError(t, s.ReplayConsumerGroupRegularExpression("g", "z", RegularExpressionValue{}))
	require.NoError(t, s.ReplayConsumerGroupRegularExpression("g", "y", RegularExpressionValue{}))
	want := TimelineTable{Inserted: []string{"c", "a", "b"}, Slots: 4}
	require.Equal(t, want, memberTableOf(t, s, "g"))

	other := New(Kafka44)
	for _, m := range []string{"a", "b", "c"} {
		joinConsumer(t, other, "g", m, 1)
	}
	require.NoError(t, other.ReplayConsumerGroupRegularExpression("g", "y", RegularExpressionValue{}))
	require.NoError(t, other.ReplayConsumerGroupRegularExpression("g", "z", RegularExpressionValue{}))
	require.True(t, Equal(s.View(), other.View()), "the order is not part of the state's Dump")

	r, err := Restore(s.View().Dump())
	require.NoError(t, err)
	require.Equal(t, TimelineTable{Inserted: []string{"a", "b", "c"}, Slots: 4, Assumed: true}, memberTableOf(t, r, "g"))
	tb, _ := r.View().RegexTable("g")
	require.Equal(t, TimelineTable{Inserted: []string{"y", "z"}, Slots: 4, Assumed: true}, tb)
	// An assumed order goes on from there and stays assumed.
	joinConsumer(t, r, "g", "0", 2)
	require.Equal(t, TimelineTable{Inserted: []string{"a", "b", "c", "0"}, Slots: 4, Assumed: true}, memberTableOf(t, r, "g"))

	require.Equal(t, want, memberTableOf(t, s.Clone(), "g"))
	head, parts := encodeImage(s, 1<<20)
	got, err := decodeImage(head, parts)
	require.NoError(t, err)
	require.Equal(t, want, memberTableOf(t, got, "g"))
	tb, _ = got.View().RegexTable("g")
	require.Equal(t, TimelineTable{Inserted: []string{"z", "y"}, Slots: 2}, tb)
}

// TestImageFormat1 reads images of format 1, written before the image kept the orders of
// Kafka's maps (testdata/image-format1-*.golden, the golden images of that format): they
// decode to the states they were written from, whose modern groups assume their orders, and
// are written again in the current format, assumption included.
func TestImageFormat1(t *testing.T) {
	states := map[string]*State{
		"mixed-4.0":   mixed(t, Kafka40),
		"mixed-4.4":   mixed(t, Kafka44),
		"filled-full": filledState(t, fillFull),
	}
	for name, want := range states {
		golden := filepath.Join("testdata", "image-format1-"+name+".golden")
		images := readGoldenImages(t, golden)
		require.Len(t, images, 2, golden)
		for _, im := range images {
			require.Equal(t, byte(1), im.head[0], "%s: a format-1 head", golden)
			got, err := decodeImage(im.head, im.parts)
			require.NoError(t, err, golden)
			require.True(t, Equal(want.View(), got.View()), "%s: %v", golden, Diff(want.View(), got.View(), 5))
			for _, id := range got.View().GroupIDs() {
				mt, ok := got.View().MemberTable(id)
				if !ok {
					continue
				}
				require.True(t, mt.Assumed, "%s: group %s", golden, id)
				require.True(t, sortedStrings(mt.Inserted), "%s: group %s assumes id order: %v", golden, id, mt.Inserted)
				require.Equal(t, assumedSlots(len(mt.Inserted)), mt.Slots, "%s: group %s", golden, id)
			}
			head, parts := encodeImage(got, 1<<20)
			require.Equal(t, byte(imageFormat), head[0])
			again, err := decodeImage(head, parts)
			require.NoError(t, err)
			requireSameInternals(t, got, again)
		}
	}
	// A part of one format under a head of the other is corrupt.
	im := readGoldenImages(t, filepath.Join("testdata", "image-format1-mixed-4.4.golden"))[0]
	head, parts := encodeImage(mixed(t, Kafka44), 1<<20)
	_, err := decodeImage(head, im.parts)
	require.ErrorIs(t, err, ErrImageCorrupt)
	require.Contains(t, err.Error(), "has image format 1, the head 2")
	_, err = decodeImage(im.head, parts)
	require.ErrorIs(t, err, ErrImageCorrupt)
	require.Contains(t, err.Error(), "has image format 2, the head 1")
	// Formats this build does not know.
	bad := append([]byte{}, head...)
	bad[0] = imageFormat + 1
	_, err = decodeImage(bad, parts)
	require.ErrorIs(t, err, ErrImageCorrupt)
	badPart := append([]byte{}, parts[0]...)
	badPart[1] = imageFormat + 1
	_, err = decodeImage(head, [][]byte{badPart})
	require.ErrorIs(t, err, ErrImageCorrupt)
	require.Contains(t, err.Error(), "part format 3")
}

// assumedSlots is the table an assumed order gives n keys: n inserts and one more put.
func assumedSlots(n int) int {
	tb := newKafkaTable()
	for i := range n + 1 {
		tb.put(i)
	}
	return int(tb.slots)
}

func sortedStrings(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}

type goldenImage struct {
	head  []byte
	parts [][]byte
}

// readGoldenImages reads the images of a golden file of TestImageGolden: per part size, a
// head and its parts, each a hex dump under a "part size N: head" or "part size N: part i"
// line.
func readGoldenImages(t *testing.T, path string) []goldenImage {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []goldenImage
	var cur *[]byte
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "part size ") && strings.HasSuffix(line, ": head"):
			out = append(out, goldenImage{})
			cur = &out[len(out)-1].head
		case strings.HasPrefix(line, "part size "):
			im := &out[len(out)-1]
			im.parts = append(im.parts, nil)
			cur = &im.parts[len(im.parts)-1]
		case line == "":
		default:
			// "00000000  01 02 ... 08  09 ... 10  |...|": the bytes are columns 10 to 58.
			hexPart := strings.ReplaceAll(line[10:min(len(line), 58)], " ", "")
			if i := strings.IndexByte(hexPart, '|'); i >= 0 {
				hexPart = hexPart[:i]
			}
			raw, err := hex.DecodeString(hexPart)
			require.NoError(t, err, "%s: %q", path, line)
			*cur = append(*cur, raw...)
		}
	}
	return out
}

// TestAssignorTableFollowsReplay: Kafka counts the members per server assignor in a
// TimelineHashMap it updates with Map.compute on every put and removal of a member: an
// assignor named by one member is removed and inserted again by each of its records.
func TestAssignorTableFollowsReplay(t *testing.T) {
	s := New(Kafka44)
	join := func(m string, assignor *string) {
		require.NoError(t, s.ReplayConsumerGroupMemberMetadata("g", m, ConsumerMemberMetadataValue{ClientID: "c", ServerAssignor: assignor}))
		require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment("g", m, ConsumerCurrentAssignmentValue{MemberEpoch: 1}))
	}
	inserted := func() []string {
		tb, ok := s.View().AssignorTable("g")
		require.True(t, ok)
		return tb.Inserted
	}
	join("a", sp("range"))
	join("b", sp("uniform"))
	require.Equal(t, []string{"range", "uniform"}, inserted())
	// a's heartbeat: "range", named by a alone, goes to the end.
	require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment("g", "a", ConsumerCurrentAssignmentValue{MemberEpoch: 2}))
	require.Equal(t, []string{"uniform", "range"}, inserted())
	// Named by two members, "range" stays where it is.
	join("c", sp("range"))
	require.NoError(t, s.ReplayConsumerGroupCurrentMemberAssignment("g", "a", ConsumerCurrentAssignmentValue{MemberEpoch: 3}))
	require.Equal(t, []string{"uniform", "range"}, inserted())
	// b names none any more; c leaves.
	require.NoError(t, s.ReplayConsumerGroupMemberMetadata("g", "b", ConsumerMemberMetadataValue{ClientID: "c"}))
	removeConsumerMember(t, s, "g", "c")
	require.Equal(t, []string{"range"}, inserted())
	tb, _ := s.View().AssignorTable("g")
	require.Equal(t, 4, tb.Slots) // a put while it held 2
	// A Dump does not hold the order: the counts come back from the members, in name order.
	join("d", sp("uniform"))
	r, err := Restore(s.View().Dump())
	require.NoError(t, err)
	tb, _ = r.View().AssignorTable("g")
	require.Equal(t, TimelineTable{Inserted: []string{"range", "uniform"}, Slots: 4, Assumed: true}, tb)
	_, ok := s.View().AssignorTable("missing")
	require.False(t, ok)
}
