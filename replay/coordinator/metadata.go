package coordinator

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
)

// Metadata is the cluster's topic metadata as the coordinator sees it (Kafka's metadata
// image, reduced to what streams groups use).
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

func (m *Metadata) topic(name string) (TopicMetadata, bool) {
	if m == nil {
		return TopicMetadata{}, false
	}
	t, ok := m.Topics[name]
	return t, ok
}

// topicHash hashes what Kafka's Utils.computeTopicHash covers (a version byte, the topic id,
// name, partition count and each partition's sorted racks) with 64-bit FNV-1a. Kafka uses
// XXH3 over hash4j's byte stream, so the value written to record 17 differs from Kafka's;
// it is only ever compared with values this coordinator computed (documented in doc.go).
func topicHash(name string, t TopicMetadata) uint64 {
	h := fnv.New64a()
	var b [8]byte
	h.Write([]byte{0})
	h.Write(t.ID[:])
	binary.BigEndian.PutUint32(b[:4], uint32(len(name)))
	h.Write(b[:4])
	h.Write([]byte(name))
	binary.BigEndian.PutUint32(b[:4], uint32(t.Partitions))
	h.Write(b[:4])
	for p := 0; p < int(t.Partitions); p++ {
		binary.BigEndian.PutUint32(b[:4], uint32(p))
		h.Write(b[:4])
		if p < len(t.Racks) {
			racks := slices.Clone(t.Racks[p])
			slices.Sort(racks)
			for _, r := range racks {
				binary.BigEndian.PutUint32(b[:4], uint32(len(r)))
				h.Write(b[:4])
				h.Write([]byte(r))
			}
		}
	}
	return h.Sum64()
}

// groupHash is Utils.computeGroupHash over the existing topics among names (sorted by name);
// missing topics contribute nothing and no topics give 0.
func groupHash(names []string, md *Metadata) int64 {
	h := fnv.New64a()
	var b [8]byte
	n := 0
	for _, name := range names { // names are sorted
		t, ok := md.topic(name)
		if !ok {
			continue
		}
		binary.BigEndian.PutUint64(b[:], topicHash(name, t))
		h.Write(b[:])
		n++
	}
	if n == 0 {
		return 0
	}
	return int64(h.Sum64())
}
