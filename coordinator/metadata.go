package coordinator

import (
	"encoding/binary"
	"slices"
	"unicode/utf16"

	"github.com/zeebo/xxh3"
)

// Metadata is the cluster's topic metadata as a coordinator sees it (Kafka's metadata image,
// reduced to what group coordinators use).
type Metadata struct {
	Topics map[string]TopicMetadata
	// Version changes whenever Topics changes. Kafka recomputes a group's metadata hash only
	// after a metadata notification for a topic the group uses (and once after failover); the
	// coordinator does so when Version differs from the version it last configured the group's
	// topology with. Callers that cannot track changes may bump Version on every call.
	Version int64
}

// TopicMetadata is one topic.
type TopicMetadata struct {
	ID         [16]byte
	Partitions int32
	// Racks, when set, holds the racks of each partition's replicas (index = partition).
	Racks [][]string
}

// Topic returns the topic called name; a nil Metadata has no topics.
func (m *Metadata) Topic(name string) (TopicMetadata, bool) {
	if m == nil {
		return TopicMetadata{}, false
	}
	t, ok := m.Topics[name]
	return t, ok
}

// The metadata hash is Kafka's (Utils.computeTopicHash and computeGroupHash): XXH3-64 over
// the byte stream hash4j builds, in which longs and ints are little-endian, a char is two
// little-endian bytes and putString(s) is s's UTF-16 chars followed by its length. The values
// equal the metadataHash that a Kafka 4.4 broker writes (checked against the recordings).
type hashStream []byte

func (h hashStream) putByte(b byte) hashStream   { return append(h, b) }
func (h hashStream) putInt(v int32) hashStream   { return binary.LittleEndian.AppendUint32(h, uint32(v)) }
func (h hashStream) putLong(v uint64) hashStream { return binary.LittleEndian.AppendUint64(h, v) }
func (h hashStream) putString(s string) hashStream {
	u := utf16.Encode([]rune(s))
	for _, c := range u {
		h = binary.LittleEndian.AppendUint16(h, c)
	}
	return h.putInt(int32(len(u)))
}

// topicHash is Utils.computeTopicHash: a version byte (0), the topic id, name, partition count,
// and for each partition its number and its sorted racks, each rack preceded by its length.
func topicHash(name string, t TopicMetadata) uint64 {
	h := hashStream(make([]byte, 0, 64+8*int(t.Partitions)))
	h = h.putByte(0).
		putLong(binary.BigEndian.Uint64(t.ID[:8])).
		putLong(binary.BigEndian.Uint64(t.ID[8:])).
		putString(name).
		putInt(t.Partitions)
	for p := 0; p < int(t.Partitions); p++ {
		h = h.putInt(int32(p))
		if p < len(t.Racks) {
			racks := slices.Clone(t.Racks[p])
			slices.Sort(racks) // Java sorts the rack strings by UTF-16 code units; equal for ASCII
			for _, r := range racks {
				h = h.putInt(int32(len(utf16.Encode([]rune(r))))).putString(r)
			}
		}
	}
	return xxh3.Hash(h)
}

// GroupHash is Utils.computeGroupHash over the existing topics among names, which must be
// sorted: the topic hashes in name order; missing topics contribute nothing and no topics
// give 0. It is the metadataHash of records 3, 11 and 17: a group's target assignment is
// recomputed when it changes.
func GroupHash(names []string, md *Metadata) int64 {
	var h hashStream
	for _, name := range names { // names are sorted
		t, ok := md.Topic(name)
		if !ok {
			continue
		}
		h = h.putLong(topicHash(name, t))
	}
	if len(h) == 0 {
		return 0
	}
	return int64(xxh3.Hash(h))
}
