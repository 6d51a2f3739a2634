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
	var k bookKey
	var p [4]byte
	binary.BigEndian.PutUint32(p[:], uint32(partition))
	for i, seed := range []maphash.Seed{h.a, h.b} {
		var m maphash.Hash
		m.SetSeed(seed)
		writeLen(&m, len(group))
		m.WriteString(group)
		writeLen(&m, len(topic))
		m.WriteString(topic)
		m.Write(p[:])
		binary.BigEndian.PutUint64(k[8*i:], m.Sum64())
	}
	return k
}

func writeLen(m *maphash.Hash, n int) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	m.Write(b[:])
}

// bucket is the part of buckets the key belongs to.
func (h keyHash) bucket(group, topic string, partition int32, buckets int) int {
	return h.bucketOf(h.key(group, topic, partition), buckets)
}

func (h keyHash) bucketOf(k bookKey, buckets int) int {
	return int(binary.BigEndian.Uint64(k[:8]) % uint64(buckets))
}

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
	key := b.hash.key(k.Group, k.Topic, k.Partition)
	b.distinct.add(binary.BigEndian.Uint64(key[8:]))
	if b.over || b.buckets > 1 && b.hash.bucketOf(key, b.buckets) != b.bucket {
		return
	}
	if ev.Record.Value == nil {
		if _, ok := b.committed[key]; ok {
			delete(b.committed, key)
			b.n--
		}
		for _, p := range b.pending {
			if _, ok := p[key]; ok {
				delete(p, key)
				b.n--
			}
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
	if _, ok := m[key]; !ok {
		if b.n++; b.n > b.limit {
			// Too many for the budget: keep replaying only to count the log's keys, which
			// says how many parts the proof needs.
			b.over = true
			b.committed, b.pending = nil, nil
			return
		}
	}
	m[key] = e
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
		if cur, ok := b.committed[k]; ok && e.record <= cur.record {
			continue
		}
		if _, ok := b.committed[k]; !ok {
			b.n++
		}
		b.committed[k] = e
	}
}

// valueHash hashes an offset commit value's fields as the replay converts them
// (GroupCoordinatorShard.convertLegacyOffsetCommitValue for record 0). The topic id is hashed
// whatever the Kafka version (4.0 does not keep it): stricter than the state, never looser.
func (b *offsetBook) valueHash(v recordcodec.Value) uint64 {
	var m maphash.Hash
	m.SetSeed(b.hash.value)
	var buf [8]byte
	put := func(x int64) {
		binary.BigEndian.PutUint64(buf[:], uint64(x))
		m.Write(buf[:])
	}
	switch v := v.(type) {
	case *recordcodec.OffsetCommitValue:
		put(v.Offset)
		put(int64(v.LeaderEpoch))
		put(v.CommitTimestamp)
		put(v.ExpireTimestamp)
		m.Write(v.TopicId[:])
		writeLen(&m, len(v.Metadata))
		m.WriteString(v.Metadata)
	case *recordcodec.LegacyOffsetCommitValue:
		put(v.Offset)
		put(-1)
		put(v.CommitTimestamp)
		put(-1)
		m.Write(make([]byte, 16))
		writeLen(&m, len(v.Metadata))
		m.WriteString(v.Metadata)
	default:
		put(math.MinInt64) // not an offset value: cannot happen for records 0 and 1
	}
	return m.Sum64()
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
