package groupstate

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// topicOffsets against a map on random commits and deletions of partitions of every kind:
// dense runs from 0, scattered high ones, negative ones, huge ones. After every step the
// offsets, their count and what each lists are the map's, and the slice is never longer than
// twice the most offsets held so far (plus a few): deletions do not shrink it.
func TestTopicOffsetsAgreeWithAMap(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 17))
		var to topicOffsets
		ref := map[int32]OffsetAndMetadata{}
		span := []int32{8, 64, 1000, 100000}[seed%4]
		peak := 0
		for step := range 600 {
			var p int32
			switch r := rng.IntN(20); {
			case r < 14:
				p = rng.Int32N(span)
			case r < 16:
				p = -1 - rng.Int32N(3)
			case r < 18:
				p = 1<<30 + rng.Int32N(4)
			default:
				p = int32(step % int(span)) // runs in partition order, as consumers commit
			}
			if rng.IntN(4) == 0 {
				_, had := ref[p]
				delete(ref, p)
				require.Equal(t, had, to.del(p), "seed %d step %d: del %d", seed, step, p)
			} else {
				om := OffsetAndMetadata{CommittedOffset: int64(step), Metadata: "m", RecordOffset: int64(step)}
				_, had := ref[p]
				ref[p] = om
				require.Equal(t, !had, to.put(p, om), "seed %d step %d: put %d", seed, step, p)
			}
			require.Equal(t, len(ref), to.len())
			peak = max(peak, to.len())
			require.LessOrEqual(t, len(to.slots), 2*(peak+1)+16, "seed %d step %d: the slice outgrew its offsets", seed, step)
			got := map[int32]OffsetAndMetadata{}
			var order []int32
			to.each(func(p int32, om *OffsetAndMetadata) {
				_, dup := got[p]
				require.False(t, dup, "partition %d listed twice", p)
				got[p] = *om
				if p >= 0 && int(p) < len(to.slots) {
					order = append(order, p)
				}
			})
			require.Equal(t, ref, got, "seed %d step %d", seed, step)
			require.True(t, slices.IsSorted(order), "the slice's partitions come in order")
			for _, q := range []int32{p, p + 1, -7, 0} {
				om, ok := to.get(q)
				want, wantOK := ref[q]
				require.Equal(t, wantOK, ok)
				require.Equal(t, want, om)
			}
		}
	}
}

// The slice grows only while it stays dense: one high partition alone goes to the map, and
// the slice takes it once the partitions below it are committed.
func TestTopicOffsetsStayDense(t *testing.T) {
	var to topicOffsets
	to.put(5000, OffsetAndMetadata{CommittedOffset: 1})
	require.Empty(t, to.slots)
	require.Len(t, to.sparse, 1)
	for p := range int32(5000) {
		to.put(p, OffsetAndMetadata{CommittedOffset: int64(p)})
		require.LessOrEqual(t, len(to.slots), 2*(to.len()+1)+16)
	}
	require.Empty(t, to.sparse, "partition 5000 moved into the slice")
	om, ok := to.get(5000)
	require.True(t, ok)
	require.Equal(t, int64(1), om.CommittedOffset)
	require.Equal(t, 5001, to.len())
}
