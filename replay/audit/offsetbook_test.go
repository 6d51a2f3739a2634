package audit

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/compact/compacttest"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
)

// stateBookDigest is the offset book's digest computed from a replayed state's committed and
// pending offsets (what the book must agree with).
func stateBookDigest(h keyHash, st groupstate.View) [2]uint64 {
	b := newOffsetBook(h, 0, 1, math.MaxInt)
	value := func(om groupstate.OffsetAndMetadata) uint64 {
		var m maphash.Hash
		m.SetSeed(h.value)
		var buf [8]byte
		for _, x := range []int64{om.CommittedOffset, int64(om.LeaderEpoch), om.CommitTimestamp, om.ExpireTimestamp} {
			binary.BigEndian.PutUint64(buf[:], uint64(x))
			m.Write(buf[:])
		}
		m.Write(om.TopicID[:])
		binary.BigEndian.PutUint64(buf[:], uint64(len(om.Metadata)))
		m.Write(buf[:])
		m.WriteString(om.Metadata)
		return m.Sum64()
	}
	for _, o := range st.AllOffsets() {
		b.committed[h.key(o.GroupID, o.Topic, o.Partition)] = bookEntry{o.RecordOffset, value(o.OffsetAndMetadata)}
	}
	for _, pt := range st.PendingTransactions() {
		p := map[bookKey]bookEntry{}
		for _, o := range pt.Offsets {
			p[h.key(o.GroupID, o.Topic, o.Partition)] = bookEntry{o.RecordOffset, value(o.OffsetAndMetadata)}
		}
		b.pending[pt.ProducerID] = p
	}
	return b.digest()
}

// TestOffsetBookAgreesWithState: on logs dense in everything that moves offsets (commits,
// tombstones, transactions committed, aborted, empty and left open, group records), the offset
// book replayed from the engine's events holds exactly the state's committed and pending
// offsets and pending producers, whole and split into parts (the parts' digests add up to the
// whole's). Kafka 4.1 and later, whose state keeps every field the book hashes (4.0 drops the
// offsets' topic id, which the book keeps: stricter, checked apart).
func TestOffsetBookAgreesWithState(t *testing.T) {
	ctx := context.Background()
	for _, v := range groupstate.KafkaVersions[1:] {
		for seed := range uint64(6) {
			src, err := eventlog.NewMemory(compacttest.Batches(compacttest.Heavy(seed, 1_800_000_000_000))...)
			require.NoError(t, err)
			h := newKeyHash()
			full := replay.New(0, replay.Options{Version: v})
			require.NoError(t, full.Run(ctx, src, math.MaxInt64))
			want := stateBookDigest(h, full.State())

			var sum [2]uint64
			for _, buckets := range []int{1, 3} {
				sum = [2]uint64{}
				for k := range buckets {
					book := newOffsetBook(h, k, buckets, math.MaxInt)
					e := replay.New(0, replay.Options{Version: v, Observer: book, OffsetFilter: func(string, string, int32) bool { return false }})
					require.NoError(t, e.Run(ctx, src, math.MaxInt64))
					d := book.digest()
					sum[0], sum[1] = sum[0]+d[0], sum[1]+d[1]
					require.Equal(t, full.State().PendingProducerIDs(), book.producerIDs(), "Kafka %s seed %d: pending producers", v, seed)
					require.Zero(t, e.State().NumOffsets(), "the filtered state keeps no offset")
					require.Equal(t, full.State().GroupIDs(), e.State().GroupIDs(), "the filtered state has the same groups")
				}
				require.Equal(t, want, sum, "Kafka %s seed %d, %d part(s): book and state differ", v, seed, buckets)
			}
		}
	}
}

// TestCompactionProofInParts: with a memory budget that a log's offsets exceed, the proof
// compares them in parts (and says so), passes on a correct compaction and names the offset a
// wrong one changed, from the part that holds it.
func TestCompactionProofInParts(t *testing.T) {
	ctx := context.Background()
	batches := compacttest.Batches(compacttest.Heavy(3, 1_800_000_000_000))
	original, err := eventlog.NewMemory(batches...)
	require.NoError(t, err)
	var reported []string
	report := func(format string, args ...any) { reported = append(reported, fmt.Sprintf(format, args...)) }
	pr := CompactionProof{Report: report, MemoryBudget: 40 * offsetBookEntryBytes}
	require.NoError(t, pr.Verify(ctx, original, original, []int32{0}))
	// The last sizing says how many parts; then each part says it is done.
	last := -1
	var parts int
	for i, r := range reported {
		if j := strings.Index(r, "comparing them in"); j >= 0 {
			_, err := fmt.Sscanf(r[j:], "comparing them in %d parts", &parts)
			require.NoError(t, err, r)
			last = i
		}
	}
	require.GreaterOrEqual(t, last, 0, "no sizing line in %q", reported)
	require.Greater(t, parts, 1)
	var want []string
	for k := range parts {
		want = append(want, fmt.Sprintf("partition 0: offsets part %d of %d equal in both logs", k+1, parts))
	}
	require.Equal(t, want, reported[last+1:])

	// The same log with the committed offset of its last plain offset commit changed.
	var wrongBatches []*eventlog.Batch
	for _, b := range batches {
		wrongBatches = append(wrongBatches, b.Clone())
	}
	changed := false
	for i := len(wrongBatches) - 1; i >= 0 && !changed; i-- {
		c := wrongBatches[i]
		for j := len(c.Records) - 1; j >= 0 && c.ProducerID < 0 && !changed; j-- {
			if r := &c.Records[j]; len(r.Key) > 2 && r.Key[1] == 1 && len(r.Value) > 10 {
				r.Value[9] ^= 1 // the low byte of the committed offset (after the version)
				changed = true
			}
		}
	}
	require.True(t, changed)
	wrong, err := eventlog.NewMemory(wrongBatches...)
	require.NoError(t, err)
	err = pr.Verify(ctx, original, wrong, []int32{0})
	require.Error(t, err)
	t.Log(err)
	require.Contains(t, err.Error(), "states differ")
	require.True(t, strings.Contains(err.Error(), "~ offset") || strings.Contains(err.Error(), "offset digests differ"), err.Error())
}

// TestHLLEstimate: the sketch that sizes the proof's parts counts within a few percent.
func TestHLLEstimate(t *testing.T) {
	h := newKeyHash()
	for _, n := range []int{10, 1000, 100_000, 1_000_000} {
		var s hll
		for i := range n {
			k := h.key("group", "topic", int32(i))
			s.add(binary.BigEndian.Uint64(k[:8])) // the first hash, as offsetBook.Observe adds it
			s.add(binary.BigEndian.Uint64(k[:8])) // repeats do not count
		}
		if got := s.estimate(); math.Abs(got-float64(n)) > 0.06*float64(n)+1 {
			t.Errorf("%d distinct keys estimated as %.0f", n, got)
		}
	}
}
