package groupstate

import (
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkReplayOffsetCommit measures the model's share of an offset-commit-heavy replay:
// 100 groups x 200 topics x 10 partitions, overwritten repeatedly.
func BenchmarkReplayOffsetCommit(b *testing.B) {
	groups := make([]string, 100)
	for i := range groups {
		groups[i] = "group-" + strconv.Itoa(i)
	}
	topics := make([]string, 200)
	for i := range topics {
		topics[i] = "topic-" + strconv.Itoa(i)
	}
	s := New(Kafka44)
	v := OffsetCommitValue{LeaderEpoch: 1, ExpireTimestamp: -1}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		v.Offset = int64(i)
		// Fresh strings, as a decoder would hand them over.
		g := string([]byte(groups[i%100]))
		t := string([]byte(topics[(i/100)%200]))
		_ = s.ReplayOffsetCommit(int64(i), NoProducerID, g, t, int32((i/20000)%10), v)
	}
}

// TestOffsetMemoryFootprint reports the heap cost per committed offset (a rough figure,
// logged, not asserted).
func TestOffsetMemoryFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~100 MB")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := New(Kafka44)
	const n = 500000
	for i := 0; i < n; i++ {
		g := "group-" + strconv.Itoa(i%50)
		tp := "topic-with-a-longish-name-" + strconv.Itoa((i/50)%1000)
		_ = s.ReplayOffsetCommit(int64(i), NoProducerID, g, tp, int32(i/50000), OffsetCommitValue{Offset: int64(i), LeaderEpoch: -1, ExpireTimestamp: -1})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if s.View().NumOffsets() != n {
		t.Fatalf("got %d offsets", s.View().NumOffsets())
	}
	t.Logf("%d offsets: %.0f bytes/offset", n, float64(after.HeapAlloc-before.HeapAlloc)/n)
	runtime.KeepAlive(s)
}
