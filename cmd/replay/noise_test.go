package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/internal/testcorpus"
)

// damagedCopy copies a recording's partition directory and flips a byte in the middle of its
// first segment file (a CRC failure forensic mode skips).
func damagedCopy(t *testing.T) string {
	t.Helper()
	in := filepath.Join(committedRecordings, "consumer", "__consumer_offsets-0")
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	files, err := filepath.Glob(filepath.Join(in, "*.log"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for i, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if i == 0 {
			b[len(b)/2] ^= 0x55
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644))
	}
	return dir
}

// TestQuietAndVerbose: --quiet leaves out notes (where a time fell) but never damaged input;
// without --verbose damaged batches are counted per file and kind, with it listed one by one.
func TestQuietAndVerbose(t *testing.T) {
	dir := damagedCopy(t)
	at := []string{"--at-time", "2026-11-29T19:06:01.400Z"}
	_, stderr, code := runCLI(t, append([]string{"describe", dir, "--forensic", "--wide"}, at...)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "at: partition 0:")
	require.Regexp(t, `(?m)^[0-9]+ problems? in the input \(--verbose lists each\):\n  .*00000000000000000000\.log: [0-9]+ bad-crc problems? \(skipped`, stderr)

	_, quiet, code := runCLI(t, append([]string{"describe", dir, "--forensic", "--quiet"}, at...)...)
	require.Equal(t, 0, code, quiet)
	require.NotContains(t, quiet, "at: partition 0:")
	require.Contains(t, quiet, "in the input (--verbose lists each):", "damage shows whatever --quiet says")

	_, verbose, code := runCLI(t, "describe", dir, "--forensic", "--verbose", "--wide")
	require.Equal(t, 0, code, verbose)
	require.Regexp(t, `(?m)^  .*00000000000000000000\.log: bad-crc at byte [0-9]+ \(partition 0, base offset [0-9]+\)`, verbose)
}

// TestSupersededBatchesSummarised: the stale segments of a public dump hold 832 batches below
// what earlier files reached; every command printed one line for each (835 lines of stderr).
// They are a note per file, every one with --verbose, none with --quiet.
func TestSupersededBatchesSummarised(t *testing.T) {
	dir := filepath.Join(testcorpus.Found(t), "LestFeeD-online-shop-user", "kafka", "data")
	_, stderr, code := runCLI(t, "describe", dir, "--wide")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Len(t, lines, 3, stderr)
	require.Regexp(t, `^rules: Kafka 4\.0, detected \(`, lines[0])
	for _, l := range lines[1:] {
		require.Regexp(t, `^note: .*/__consumer_offsets-(25|45)/0+[0-9]+\.log: [0-9]+ batches below the offsets earlier segment files reached \([0-9]+ records, base offsets [0-9]+ to [0-9]+\): superseded, skipped as Kafka's reads skip them \(--verbose lists each\)$`, l)
	}
	_, stderr, _ = runCLI(t, "describe", dir, "--verbose")
	require.Equal(t, 832, strings.Count(stderr, ": superseded at byte "), "one line per batch with --verbose")
	_, stderr, _ = runCLI(t, "describe", dir, "--quiet")
	require.Empty(t, stderr)
}
