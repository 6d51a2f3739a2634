package audit

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// offsetBook is the compaction proof's compact copy of a replay's committed and pending
// offsets: per key (a 128-bit hash of group, topic and partition) the log offset of the record
// that holds it and a hash of the value as groupstate keeps it. It follows the replay rules of
// groupstate's offsets (OffsetMetadataManager.replay and replayEndTransactionMarker), fed by
// the engine's events: a commit outside a transaction sets the key, a transactional one waits
// in its producer's pending entries, a tombstone removes the key and cancels the pending
// entries of the key, a COMMIT marker materializes its producer's entries unless the key holds
// a newer record, an ABORT drops them. TestOffsetBookAgreesWithState holds it to the state.
//
// It keeps only the keys of one part (bucket of buckets, by key hash). Past limit entries it
// drops them and only counts the log's distinct keys (a HyperLogLog sketch), so that the proof
// knows how many parts to take.
type offsetBook struct {
	hash            keyHash
	bucket, buckets int
	limit, n        int
	over            bool // past limit: the book only counts distinct keys from then on
	distinct        hll  // every key of the log, whatever the part
	committed       map[bookKey]bookEntry
	pending         map[int64]map[bookKey]bookEntry
	producers       map[int64]bool // producers with a pending transaction, whatever part
	buf             []byte         // the bytes a key or value is hashed of
}

type bookKey [16]byte

type bookEntry struct {
	record int64  // the log offset of the record that holds the key
	value  uint64 // hash of the value's fields as groupstate keeps them
}

// offsetBookEntryBytes is about what one entry costs in the maps (key, entry, map overhead
// at an average fill).
const offsetBookEntryBytes = 48

// keyHash maps offset keys to 128 bits and to parts, and hashes values and entries; one per
// proof (its seeds are random), so that both logs' books agree.
type keyHash struct{ a, b, value, entry maphash.Seed }

func newKeyHash() keyHash {
	return keyHash{maphash.MakeSeed(), maphash.MakeSeed(), maphash.MakeSeed(), maphash.MakeSeed()}
}

func (h keyHash) key(group, topic string, partition int32) bookKey {
	var buf [64]byte
	kb := appendKeyBytes(buf[:0], group, topic, partition)
	return h.keyOf(maphash.Bytes(h.a, kb), kb)
}

// appendKeyBytes appends what a key's hashes are taken of: the group and topic, each after
// its length, and the partition.
func appendKeyBytes(b []byte, group, topic string, partition int32) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(group)))
	b = append(b, group...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(topic)))
	b = append(b, topic...)
	return binary.BigEndian.AppendUint32(b, uint32(partition))
}

// keyOf is the key of key bytes kb whose first hash is a (the one that picks the part).
func (h keyHash) keyOf(a uint64, kb []byte) bookKey {
	var k bookKey
	binary.BigEndian.PutUint64(k[:8], a)
	binary.BigEndian.PutUint64(k[8:], maphash.Bytes(h.b, kb))
	return k
}

// bucket is the part of buckets the key belongs to.
func (h keyHash) bucket(group, topic string, partition int32, buckets int) int {
	return h.bucketOf(h.key(group, topic, partition), buckets)
}

func (h keyHash) bucketOf(k bookKey, buckets int) int {
	return partOf(binary.BigEndian.Uint64(k[:8]), buckets)
}

func partOf(a uint64, buckets int) int { return int(a % uint64(buckets)) }

func newOffsetBook(h keyHash, bucket, buckets, limit int) *offsetBook {
	return &offsetBook{hash: h, bucket: bucket, buckets: buckets, limit: limit,
		committed: map[bookKey]bookEntry{}, pending: map[int64]map[bookKey]bookEntry{}, producers: map[int64]bool{}}
}

// Observe implements replay.Observer.
func (b *offsetBook) Observe(ev *replay.Event, _ groupstate.View) {
	if ev.Violation != nil || ev.Skipped != "" {
		return // refused by the replay: no state change
	}
	if m := ev.Marker; m != nil {
		b.marker(m.ProducerID, m.Commit)
		return
	}
	k := ev.Record.Key
	if k.Type != recordcodec.OffsetCommit && k.Type != recordcodec.LegacyOffsetCommit {
		return
	}
	pid := ev.Batch.ProducerID
	if ev.Record.Value != nil && pid != groupstate.NoProducerID {
		b.producers[pid] = true
	}
	// The first hash picks the part and feeds the key count; the second, which completes
	// the key, is taken only for the keys of the part.
	b.buf = appendKeyBytes(b.buf[:0], k.Group, k.Topic, k.Partition)
	a := maphash.Bytes(b.hash.a, b.buf)
	b.distinct.add(a)
	if b.over || b.buckets > 1 && partOf(a, b.buckets) != b.bucket {
		return
	}
	key := b.hash.keyOf(a, b.buf)
	// One map operation per map: the books hold millions of keys, so that every access is
	// a cache miss or two; lengths say whether a delete or an insert found the key.
	if ev.Record.Value == nil {
		n := len(b.committed)
		delete(b.committed, key)
		b.n -= n - len(b.committed)
		for _, p := range b.pending {
			n := len(p)
			delete(p, key)
			b.n -= n - len(p)
		}
		return
	}
	e := bookEntry{record: ev.Offset, value: b.valueHash(ev.Record.Value)}
	m := b.committed
	if pid != groupstate.NoProducerID {
		if m = b.pending[pid]; m == nil {
			m = map[bookKey]bookEntry{}
			b.pending[pid] = m
		}
	}
	n := len(m)
	m[key] = e
	if b.n += len(m) - n; b.n > b.limit {
		// Too many for the budget: keep replaying only to count the log's keys, which says
		// how many parts the proof needs.
		b.over = true
		b.committed, b.pending = nil, nil
	}
}

func (b *offsetBook) marker(pid int64, commit bool) {
	delete(b.producers, pid)
	if b.over {
		return
	}
	p, ok := b.pending[pid]
	if !ok {
		return
	}
	delete(b.pending, pid)
	b.n -= len(p)
	if !commit {
		return
	}
	for k, e := range p {
		cur, ok := b.committed[k]
		if ok && e.record <= cur.record {
			continue
		}
		if !ok {
			b.n++
		}
		b.committed[k] = e
	}
}

// valueHash hashes an offset commit value's fields as the replay converts them
// (GroupCoordinatorShard.convertLegacyOffsetCommitValue for record 0). The topic id is hashed
// whatever the Kafka version (4.0 does not keep it): stricter than the state, never looser.
func (b *offsetBook) valueHash(v recordcodec.Value) uint64 {
	switch v := v.(type) {
	case *recordcodec.OffsetCommitValue:
		b.buf = appendValueBytes(b.buf[:0], v.Offset, v.LeaderEpoch, v.CommitTimestamp, v.ExpireTimestamp, v.TopicId, v.Metadata)
	case *recordcodec.LegacyOffsetCommitValue:
		b.buf = appendValueBytes(b.buf[:0], v.Offset, -1, v.CommitTimestamp, -1, recordcodec.UUID{}, v.Metadata)
	default:
		b.buf = binary.BigEndian.AppendUint64(b.buf[:0], 1<<63) // not an offset value: cannot happen for records 0 and 1
	}
	return maphash.Bytes(b.hash.value, b.buf)
}

// appendValueBytes appends what an offset's value hash is taken of.
func appendValueBytes(b []byte, offset int64, leaderEpoch int32, commitTimestamp, expireTimestamp int64, topicID [16]byte, metadata string) []byte {
	for _, x := range [4]int64{offset, int64(leaderEpoch), commitTimestamp, expireTimestamp} {
		b = binary.BigEndian.AppendUint64(b, uint64(x))
	}
	b = append(b, topicID[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(metadata)))
	return append(b, metadata...)
}

// digest is an order-independent digest of the book: two sums of a hash per committed entry
// and per pending entry (with its producer).
func (b *offsetBook) digest() [2]uint64 {
	var d [2]uint64
	add := func(kind, pid int64, k bookKey, e bookEntry) {
		var m maphash.Hash
		m.SetSeed(b.hash.entry)
		var buf [32]byte
		binary.BigEndian.PutUint64(buf[0:], uint64(kind))
		binary.BigEndian.PutUint64(buf[8:], uint64(pid))
		binary.BigEndian.PutUint64(buf[16:], uint64(e.record))
		binary.BigEndian.PutUint64(buf[24:], e.value)
		m.Write(k[:])
		m.Write(buf[:])
		h := m.Sum64()
		d[0] += h
		d[1] += h*0x9e3779b97f4a7c15 ^ h>>29
	}
	for k, e := range b.committed {
		add(0, 0, k, e)
	}
	for pid, p := range b.pending {
		for k, e := range p {
			add(1, pid, k, e)
		}
	}
	return d
}

// producerIDs are the producers with a pending transaction at the end, sorted (groupstate
// keeps a producer whose pending offsets were all cancelled until its marker, and so does the
// book, in every part).
func (b *offsetBook) producerIDs() []int64 {
	ids := make([]int64, 0, len(b.producers))
	for id := range b.producers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// hll is a HyperLogLog sketch of the distinct keys of a log (4096 registers: about 1.6%
// standard error), for sizing the proof's parts.
type hll [1 << 12]uint8

func (h *hll) add(x uint64) {
	i := x >> 52 // the top 12 bits pick the register
	rank := uint8(bits.LeadingZeros64(x<<12|1<<11) + 1)
	if rank > h[i] {
		h[i] = rank
	}
}

// estimate is the number of distinct values added.
func (h *hll) estimate() float64 {
	const m = float64(len(h))
	sum, zeros := 0.0, 0
	for _, r := range h {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	e := 0.7213 / (1 + 1.079/m) * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(m/float64(zeros)) // few values: linear counting
	}
	return e
}
