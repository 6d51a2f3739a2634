package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/compact"
	"github.com/coordlog/coordlog/eventlog/compact/compacttest"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/audit"
)

var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func replayOpts() replay.Options {
	return replay.Options{Version: groupstate.DefaultKafkaVersion}
}

// compactAndProve compacts src (all partitions) at now through the virtual Compacted source,
// proves it by replay, and returns the compacted view with its plans (closed by cleanup).
func compactAndProve(t *testing.T, src eventlog.Source, opts compact.Options) (*compact.Compacted, compact.Stats) {
	t.Helper()
	ctx := context.Background()
	parts, err := src.Partitions()
	require.NoError(t, err)
	var plans []*compact.Plan
	for _, p := range parts {
		pl, err := compact.NewPlan(ctx, src, p, opts)
		require.NoError(t, err)
		t.Cleanup(func() { pl.Close() })
		plans = append(plans, pl)
	}
	c := compact.NewCompacted(src, plans...)
	var total compact.Stats
	for _, p := range parts {
		st, err := compact.Each(ctx, c, p, nil)
		require.NoError(t, err)
		total.Add(st)
	}
	require.NoError(t, audit.CompactionProof{Options: replayOpts(), Report: t.Logf}.Verify(ctx, src, c, parts))
	return c, total
}

// TestGeneratedEquivalence: heavily overwritten logs with tombstones, group records, earlier
// horizons and transactions (committed, aborted, empty, open at the end) compact to logs that
// replay to the same state, written as segments and read back, in a first pass (stamping
// horizons) and in a second pass two days later (dropping tombstones and empty markers).
func TestGeneratedEquivalence(t *testing.T) {
	for _, codec := range []eventlog.Codec{eventlog.CodecNone, eventlog.CodecZstd} {
		for seed := uint64(1); seed <= 4; seed++ {
			cfg := compacttest.Heavy(seed, testNow.UnixMilli())
			cfg.Codec = codec
			dir := t.TempDir()
			_, err := compacttest.WritePartition(dir, cfg, 64<<10)
			require.NoError(t, err)
			in := filepath.Join(dir, "__consumer_offsets-0")
			now := testNow
			for pass := 1; pass <= 3; pass++ {
				out := filepath.Join(dir, "pass"+string(rune('0'+pass)))
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), []string{in, "--out", out, "--now", now.Format(time.RFC3339), "--segment-bytes", "65536", "--quiet"}, &stdout, &stderr)
				require.Equal(t, 0, code, "seed %d codec %s pass %d: %s", seed, codec, pass, stderr.String())
				if pass == 1 {
					require.Contains(t, stdout.String(), "superseded")
				}
				// The output re-reads with the segment reader and replays to the original state.
				orig, err := segment.Open(filepath.Join(dir, "__consumer_offsets-0"), segment.Options{})
				require.NoError(t, err)
				got, err := segment.Open(out, segment.Options{})
				require.NoError(t, err)
				require.NoError(t, audit.CompactionProof{Options: replayOpts(), Exact: true}.Verify(context.Background(), orig, got, []int32{0}))
				in = filepath.Join(out, "__consumer_offsets-0")
				now = now.Add(48 * time.Hour)
			}
		}
	}
}

// TestSpillSameDecisions: a key index that spills at every few keys, and a survivor list that
// spills too, give exactly the batches of the in-memory index.
func TestSpillSameDecisions(t *testing.T) {
	cfg := compacttest.Heavy(9, testNow.UnixMilli())
	dir := t.TempDir()
	_, err := compacttest.WritePartition(dir, cfg, 1<<20)
	require.NoError(t, err)
	src, err := segment.Open(filepath.Join(dir, "__consumer_offsets-0"), segment.Options{})
	require.NoError(t, err)
	render := func(mem int64) (string, bool) {
		opts := compact.DefaultOptions(testNow)
		opts.IndexMemory = mem
		pl, err := compact.NewPlan(context.Background(), src, 0, opts)
		require.NoError(t, err)
		defer pl.Close()
		var sb strings.Builder
		_, err = compact.Each(context.Background(), compact.NewCompacted(src, pl), 0, func(b *eventlog.Batch, raw []byte) error {
			sb.WriteString(b.String())
			for _, r := range b.Records {
				sb.WriteString(" ")
				sb.WriteString(string(rune('0' + r.Offset%10)))
			}
			sb.WriteString("\n")
			return nil
		})
		require.NoError(t, err)
		return sb.String(), pl.Spilled()
	}
	want, spilled := render(compact.DefaultIndexMemory)
	require.False(t, spilled)
	got, spilled := render(2000)
	require.True(t, spilled)
	require.Equal(t, want, got)
	// Equivalence with a spilled index, by replay.
	opts := compact.DefaultOptions(testNow)
	opts.IndexMemory = 1500
	compactAndProve(t, src, opts)
}

// kafkaLib is where the harness leaves Kafka 4.4's jars.
const kafkaLib = "../../fixtures/kafka/target/lib"

// dumpLogSegments runs Kafka's DumpLogSegments on the given .log files and returns its output,
// or skips when Java or the jars are missing.
func dumpLogSegments(t *testing.T, files []string) string {
	t.Helper()
	if _, err := os.Stat(kafkaLib); err != nil {
		t.Skipf("Kafka jars not found in %s (run fixtures/kafka/record.sh once): %v", kafkaLib, err)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("java not found: skipping the check with Kafka's DumpLogSegments")
	}
	abs, _ := filepath.Abs(kafkaLib)
	args := []string{"-cp", abs + "/*", "org.apache.kafka.tools.DumpLogSegments", "--deep-iteration", "--offsets-decoder", "--files", strings.Join(files, ",")}
	out, err := exec.Command(java, args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}
