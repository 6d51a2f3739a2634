package compact_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/coordlog/coordlog/eventlog/compact"
	"github.com/coordlog/coordlog/eventlog/compact/compacttest"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// benchBytes is the size of the generated dump: COMPACT_BENCH_BYTES (e.g. 1073741824 for the
// 1 GiB figure of BENCHMARKS.md), 64 MiB by default so that -bench runs stay short.
func benchBytes(b *testing.B) int64 {
	if s := os.Getenv("COMPACT_BENCH_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatalf("COMPACT_BENCH_BYTES: %v", err)
		}
		return n
	}
	return 64 << 20
}

// BenchmarkCompact measures compaction of a generated dump with 90% superseded records
// (compacttest.Bench: offset commits, ten writes per key, a few tombstones and transactions):
// the index scan plus writing the compacted segments, the work of a job without its proof.
// The dump is generated once per run into COMPACT_BENCH_DIR (or a temp dir) and reused when it
// is already there. Reports MB/s of input and the process's peak RSS.
func BenchmarkCompact(b *testing.B) {
	size := benchBytes(b)
	root := os.Getenv("COMPACT_BENCH_DIR")
	if root == "" {
		root = b.TempDir()
	}
	in := filepath.Join(root, "in-"+strconv.FormatInt(size, 10))
	if _, err := os.Stat(in); err != nil {
		tmp := in + ".tmp"
		os.RemoveAll(tmp)
		if _, err := compacttest.WritePartition(tmp, compacttest.Bench(size), 100<<20); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, in); err != nil {
			b.Fatal(err)
		}
	}
	src, err := segment.Open(filepath.Join(in, "__consumer_offsets-0"), segment.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var inBytes int64
	for _, f := range src.Files(0) {
		st, _ := os.Stat(f)
		inBytes += st.Size()
	}
	b.SetBytes(inBytes)
	opts := compact.DefaultOptions(time.UnixMilli(compacttest.Bench(size).Now))
	opts.TempDir = root
	b.ResetTimer()
	var st compact.Stats
	for i := 0; i < b.N; i++ {
		out := filepath.Join(root, "out")
		os.RemoveAll(out)
		pl, err := compact.NewPlan(context.Background(), src, 0, opts)
		if err != nil {
			b.Fatal(err)
		}
		st, err = compact.WriteSegments(context.Background(), compact.NewCompacted(src, pl), 0, out, compact.SegmentOptions{})
		if err != nil {
			b.Fatal(err)
		}
		pl.Close()
	}
	b.StopTimer()
	os.RemoveAll(filepath.Join(root, "out"))
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB")
	}
	if st.InRecords > 0 {
		b.ReportMetric(100*float64(st.Removed[compact.Superseded].Records)/float64(st.InRecords), "%superseded")
	}
}
