package pebblelog_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/internal/testgen"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/stretchr/testify/require"
)

// benchDump generates a dump of COORDLOG_BENCH_MB MiB (default 64; 1024 for the 1 GiB figure)
// over 4 partitions, COORDLOG_BENCH_RPB records per batch (default 50), COORDLOG_BENCH_CODEC
// (none|gzip|snappy|lz4|zstd, default none), in a temp dir that is removed afterwards.
func benchDump(b *testing.B) (root string, size int64, records int64) {
	mb := envInt("COORDLOG_BENCH_MB", 64)
	rpb := envInt("COORDLOG_BENCH_RPB", 50)
	codec := eventlog.CodecNone
	for c := eventlog.CodecNone; c <= eventlog.CodecZstd; c++ {
		if c.String() == os.Getenv("COORDLOG_BENCH_CODEC") {
			codec = c
		}
	}
	root = b.TempDir()
	records, _, err := testgen.Dump(root, 4, int64(mb)<<20/4, rpb, codec)
	require.NoError(b, err)
	require.NoError(b, filepath.Walk(root, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			size += fi.Size()
		}
		return err
	}))
	return root, size, records
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func reportRSS(b *testing.B) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peakRSS-MiB") // Linux reports KiB
	}
}

// BenchmarkRead measures reading + CRC + decompression + record framing decode of a dump.
func BenchmarkRead(b *testing.B) {
	root, size, records := benchDump(b)
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		r, err := segment.Open(root, segment.Options{})
		require.NoError(b, err)
		ps, _ := r.Partitions()
		var n int64
		for _, p := range ps {
			it, err := r.Batches(p, 0)
			require.NoError(b, err)
			for it.Next() {
				n += int64(len(it.Batch().Records))
			}
			require.NoError(b, it.Err())
			it.Close()
		}
		require.Equal(b, records, n)
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	reportRSS(b)
}

// BenchmarkImport measures importing a dump into a fresh on-disk Pebble log (synced commits).
func BenchmarkImport(b *testing.B) {
	root, size, records := benchDump(b)
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dbDir := filepath.Join(b.TempDir(), "db")
		r, err := segment.Open(root, segment.Options{})
		require.NoError(b, err)
		l, err := pebblelog.Open(dbDir, nil)
		require.NoError(b, err)
		b.StartTimer()
		st, err := pebblelog.Import(context.Background(), r, l, pebblelog.ImportOptions{})
		require.NoError(b, err)
		require.Equal(b, records, st.Records)
		require.NoError(b, l.Close())
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	reportRSS(b)
}
