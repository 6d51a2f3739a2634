package eventlog

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPacked: every batch comes back as appended (header, records with null distinct from
// empty, headers), from any offset, without its Origin; offsets out of order are refused.
func TestPacked(t *testing.T) {
	rec := func(off, ts int64, k, v []byte, hs ...Header) Record {
		return Record{Offset: off, Timestamp: ts, Key: k, Value: v, Headers: hs}
	}
	in := []*Batch{
		{Partition: 7, BaseOffset: 0, LastOffset: 2, Magic: 2, CRC: 0xabcdef, BaseTimestamp: 1000, MaxTimestamp: 1002,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: 4,
			Records: []Record{rec(0, 1000, []byte("k0"), []byte("v0")), rec(1, 1001, []byte("k1"), nil), rec(2, 1002, []byte("k2"), []byte{})},
			Origin:  Origin{File: "00000000000000000000.log", Pos: 0}},
		{Partition: 7, BaseOffset: 3, LastOffset: 3, Magic: 2, Attributes: AttrTransactional, BaseTimestamp: 2000, MaxTimestamp: 2000,
			ProducerID: 9, ProducerEpoch: 1, BaseSequence: 0, Records: []Record{rec(3, 2000, []byte("k3"), []byte("v3"), Header{Key: []byte("h"), Value: []byte("x")})}},
		{Partition: 7, BaseOffset: 10, LastOffset: 12, Magic: 2, BaseTimestamp: 3000, MaxTimestamp: 3000}, // emptied by compaction
		{Partition: 7, BaseOffset: 13, LastOffset: 13, Magic: 2, Attributes: AttrTransactional | AttrControl, BaseTimestamp: 4000, MaxTimestamp: 4000,
			ProducerID: 9, ProducerEpoch: 1, Records: []Record{rec(13, 4000, []byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 0, 5})}},
	}
	m := NewPacked(7)
	for _, b := range in {
		require.NoError(t, m.Append(b))
	}
	require.EqualValues(t, 5, m.Records())
	parts, _ := m.Partitions()
	require.Equal(t, []int32{7}, parts)
	first, next, _ := m.Offsets(7)
	require.Equal(t, [2]int64{0, 14}, [2]int64{first, next})
	first, next, _ = m.Offsets(1)
	require.Equal(t, first, next, "another partition is empty")

	read := func(p int32, from int64) []*Batch {
		it, err := m.Batches(p, from)
		require.NoError(t, err)
		defer it.Close()
		var out []*Batch
		for it.Next() {
			out = append(out, it.Batch().Clone())
		}
		require.NoError(t, it.Err())
		return out
	}
	want := make([]*Batch, len(in))
	for i, b := range in {
		c := b.Clone()
		c.Origin = Origin{}
		c.NumRecords = int32(len(c.Records))
		want[i] = c
	}
	require.Equal(t, want, read(7, 0))
	require.Equal(t, want[1:], read(7, 3))
	require.Equal(t, want[2:], read(7, 5), "from in a gap: the next batch")
	require.Empty(t, read(7, 14))
	require.Empty(t, read(1, 0))
	require.ErrorContains(t, m.Append(&Batch{Partition: 7, BaseOffset: 13, LastOffset: 13}), "is not after offset 13")
	require.ErrorContains(t, m.Append(&Batch{Partition: 7, BaseOffset: 20, LastOffset: 19}), "ends before it starts")
	require.ErrorContains(t, m.Append(&Batch{Partition: 1, BaseOffset: 20, LastOffset: 20}), "partition 1 appended to a packed log of partition 7")
}
