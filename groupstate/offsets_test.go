package groupstate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func ocv(off int64) OffsetCommitValue {
	return OffsetCommitValue{Offset: off, LeaderEpoch: 3, Metadata: "md", CommitTimestamp: 1000 + off, ExpireTimestamp: -1}
}

func TestOffsetCommitAndTombstone(t *testing.T) {
	s := New(Kafka44)
	require.NoError(t, s.ReplayOffsetCommit(10, NoProducerID, "g", "t", 1, ocv(5)))
	require.NoError(t, s.ReplayOffsetCommit(11, NoProducerID, "g", "t", 0, ocv(6)))
	require.NoError(t, s.ReplayOffsetCommit(12, NoProducerID, "g", "t", 1, ocv(7)))
	require.Equal(t, 2, s.View().NumOffsets())
	om, ok := s.View().Offset("g", "t", 1)
	require.True(t, ok)
	require.Equal(t, OffsetAndMetadata{CommittedOffset: 7, LeaderEpoch: 3, Metadata: "md", CommitTimestamp: 1007, ExpireTimestamp: -1, RecordOffset: 12}, om)
	offs := s.View().Offsets("g")
	require.Equal(t, []int32{0, 1}, []int32{offs[0].Partition, offs[1].Partition})

	// Removing the group leaves offsets; an offset tombstone leaves the group.
	require.NoError(t, s.ReplayGroupMetadataTombstone("g"))
	require.Equal(t, 2, s.View().NumOffsets())
	require.NoError(t, s.ReplayOffsetCommit(13, NoProducerID, "g", "t", 2, ocv(1))) // recreates a simple group
	require.NoError(t, s.ReplayOffsetCommitTombstone("g", "t", 0))
	require.NoError(t, s.ReplayOffsetCommitTombstone("g", "t", 0))
	require.Equal(t, 2, s.View().NumOffsets())
	typ, ok := s.View().GroupType("g")
	require.True(t, ok)
	require.Equal(t, GroupTypeClassic, typ)
	require.Equal(t, []string{"g"}, s.View().OffsetGroupIDs())
	roundTrip(t, s)

	// An offset commit for an existing group of another type leaves the group alone.
	joinConsumer(t, s, "c", "m", 1)
	require.NoError(t, s.ReplayOffsetCommit(20, NoProducerID, "c", "t", 0, ocv(1)))
	typ, _ = s.View().GroupType("c")
	require.Equal(t, GroupTypeConsumer, typ)
}

func TestTransactionalOffsets(t *testing.T) {
	t.Run("commit", func(t *testing.T) {
		s := New(Kafka44)
		require.NoError(t, s.ReplayOffsetCommit(10, 4001, "g", "t", 0, ocv(5)))
		require.NoError(t, s.ReplayOffsetCommit(11, 4001, "g", "t", 1, ocv(6)))
		_, ok := s.View().Offset("g", "t", 0)
		require.False(t, ok, "pending offsets are not visible")
		require.Equal(t, []int64{4001}, s.View().OpenTransactions("g", "t", 0))
		require.True(t, s.View().HasOpenTransactions("g"))
		typ, _ := s.View().GroupType("g")
		require.Equal(t, GroupTypeClassic, typ, "a transactional commit also creates the simple group")
		roundTrip(t, s)
		require.NoError(t, s.ReplayEndTransactionMarker(4001, TxnCommit))
		om, ok := s.View().Offset("g", "t", 0)
		require.True(t, ok)
		require.Equal(t, int64(10), om.RecordOffset)
		require.Equal(t, 2, s.View().NumOffsets())
		require.Empty(t, s.View().PendingProducerIDs())
		require.Empty(t, s.View().OpenTransactions("g", "t", 0))
		require.False(t, s.View().HasOpenTransactions("g"))
	})
	t.Run("abort", func(t *testing.T) {
		s := New(Kafka44)
		require.NoError(t, s.ReplayOffsetCommit(5, NoProducerID, "g", "t", 0, ocv(1)))
		require.NoError(t, s.ReplayOffsetCommit(10, 4001, "g", "t", 0, ocv(5)))
		require.NoError(t, s.ReplayEndTransactionMarker(4001, TxnAbort))
		om, _ := s.View().Offset("g", "t", 0)
		require.Equal(t, int64(1), om.CommittedOffset)
		require.Empty(t, s.View().PendingTransactions())
		require.Empty(t, s.View().OpenTransactions("g", "t", 0))
	})
	t.Run("open at end", func(t *testing.T) {
		s := New(Kafka44)
		require.NoError(t, s.ReplayOffsetCommit(10, 4001, "g", "t", 0, ocv(5)))
		require.NoError(t, s.ReplayOffsetCommit(11, 4002, "g", "t", 0, ocv(6)))
		require.NoError(t, s.ReplayOffsetCommit(12, 4001, "g", "t", 0, ocv(7))) // same key: last write wins
		require.NoError(t, s.ReplayEndTransactionMarker(999, TxnCommit))        // no pending: ignored
		require.Equal(t, []int64{4001, 4002}, s.View().PendingProducerIDs())
		require.Equal(t, []int64{4001, 4002}, s.View().OpenTransactions("g", "t", 0))
		p, ok := s.View().PendingOffset(4001, "g", "t", 0)
		require.True(t, ok)
		require.Equal(t, int64(7), p.CommittedOffset)
		pt := s.View().PendingTransactions()
		require.Len(t, pt, 2)
		require.Equal(t, int64(12), pt[0].Offsets[0].RecordOffset)
		require.Equal(t, 0, s.View().NumOffsets())
		roundTrip(t, s)
	})
	t.Run("commit wins only over an older record offset", func(t *testing.T) {
		s := New(Kafka44)
		require.NoError(t, s.ReplayOffsetCommit(10, 4001, "g", "t", 0, ocv(100))) // txn written first
		require.NoError(t, s.ReplayOffsetCommit(10, 4001, "g", "t", 1, ocv(100)))
		require.NoError(t, s.ReplayOffsetCommit(20, NoProducerID, "g", "t", 0, ocv(200))) // newer plain commit
		require.NoError(t, s.ReplayOffsetCommit(5, NoProducerID, "g", "t", 1, ocv(50)))   // older plain commit
		require.NoError(t, s.ReplayEndTransactionMarker(4001, TxnCommit))
		om, _ := s.View().Offset("g", "t", 0)
		require.Equal(t, int64(200), om.CommittedOffset, "the newer non-transactional commit is kept")
		om, _ = s.View().Offset("g", "t", 1)
		require.Equal(t, int64(100), om.CommittedOffset, "the transactional commit replaces the older one")
		require.Equal(t, int64(10), om.RecordOffset)
	})
	t.Run("equal record offset does not win", func(t *testing.T) {
		s := New(Kafka44)
		require.NoError(t, s.ReplayOffsetCommit(10, NoProducerID, "g", "t", 0, ocv(1)))
		require.NoError(t, s.ReplayOffsetCommit(10, 4001, "g", "t", 0, ocv(2)))
		require.NoError(t, s.ReplayEndTransactionMarker(4001, TxnCommit))
		om, _ := s.View().Offset("g", "t", 0)
		require.Equal(t, int64(1), om.CommittedOffset)
	})
	t.Run("offset tombstone cancels pending entries", func(t *testing.T) {
		s := New(Kafka44)
		require.NoError(t, s.ReplayOffsetCommit(1, NoProducerID, "g", "t", 0, ocv(1)))
		require.NoError(t, s.ReplayOffsetCommit(2, 4001, "g", "t", 0, ocv(2)))
		require.NoError(t, s.ReplayOffsetCommit(3, 4002, "g", "t", 0, ocv(3)))
		require.NoError(t, s.ReplayOffsetCommit(4, 4002, "g", "t", 1, ocv(4)))
		require.NoError(t, s.ReplayOffsetCommitTombstone("g", "t", 0))
		_, ok := s.View().Offset("g", "t", 0)
		require.False(t, ok)
		require.Empty(t, s.View().OpenTransactions("g", "t", 0))
		_, ok = s.View().PendingOffset(4001, "g", "t", 0)
		require.False(t, ok)
		// Kafka keeps producer 4001's now-empty pending entry until its marker.
		require.Equal(t, []int64{4001, 4002}, s.View().PendingProducerIDs())
		roundTrip(t, s)
		require.NoError(t, s.ReplayEndTransactionMarker(4001, TxnCommit))
		require.NoError(t, s.ReplayEndTransactionMarker(4002, TxnCommit))
		_, ok = s.View().Offset("g", "t", 0)
		require.False(t, ok, "the cancelled pending offset is not materialized")
		om, _ := s.View().Offset("g", "t", 1)
		require.Equal(t, int64(4), om.CommittedOffset)
		require.Empty(t, s.View().PendingProducerIDs())
	})
}

// TestOpenTransactionIndexInvariant replays a pseudo-random mix and checks the index equals
// what the pending map implies.
func TestOpenTransactionIndexInvariant(t *testing.T) {
	s := New(Kafka44)
	x := uint32(12345)
	next := func(n uint32) uint32 { x = x*1664525 + 1013904223; return (x >> 8) % n }
	for i := int64(0); i < 3000; i++ {
		topic := []string{"a", "b"}[next(2)]
		part := int32(next(3))
		switch next(5) {
		case 0, 1:
			pid := int64(next(4))
			if pid == 0 {
				pid = NoProducerID
			}
			require.NoError(t, s.ReplayOffsetCommit(i, pid, "g", topic, part, ocv(i)))
		case 2:
			require.NoError(t, s.ReplayOffsetCommitTombstone("g", topic, part))
		case 3:
			require.NoError(t, s.ReplayEndTransactionMarker(int64(1+next(3)), TxnResult(next(2))))
		case 4:
			require.NoError(t, s.ReplayEndTransactionMarker(int64(1+next(3)), TxnCommit))
		}
		want := map[offsetKey][]int64{}
		for _, pid := range s.View().PendingProducerIDs() {
			for k := range s.pending[pid] {
				want[k] = append(want[k], pid)
			}
		}
		require.Equal(t, want, s.open)
	}
	roundTrip(t, s)
}
