package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReportCommand writes the report of a recording the way a user would, with a window and
// a topic filter, and reads back what it says: the groups, the window, and the summary line on
// stderr.
func TestReportCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "consumer.html")
	stdout, stderr, code := runCLI(t, "report", "../../fixtures/real/consumer/__consumer_offsets-0", "--html", out,
		"--since", "2026-11-29T19:05:56Z", "--topic-partition", "s2-in:4,5")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "since: partition 0: from the record at offset 35")
	require.Contains(t, stderr, "report: wrote "+out+" (")
	require.Contains(t, stderr, "2 group(s), 2 drawn")
	page, err := os.ReadFile(out)
	require.NoError(t, err)
	html := string(page)
	require.Contains(t, html, "<title>coordlog report: consumer/__consumer_offsets-0</title>")
	require.Contains(t, html, "126 records in 1 partition(s) (0), Kafka 4.4 rules; 2 group(s), 2 drawn")
	require.Contains(t, html, "(from the window&#39;s start: what was open then is drawn from there)")
	require.Contains(t, html, "drawn: since 2026-11-29T19:05:56Z, topics s2-in:4,5")
	require.Contains(t, html, ">consumer-848<")
	require.NotContains(t, html, ">s2-in-0<", "the topic filter leaves s2-in:0 out of the charts")
	require.Contains(t, html, ">s2-in-4<")
	st, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	// No temporary file is left beside it.
	entries, err := os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	require.Len(t, entries, 1)

	// Standard output: the same page, byte for byte (not fitted to a terminal's width).
	file := filepath.Join(t.TempDir(), "streams.html")
	_, stderr, code = runCLI(t, "report", "../../fixtures/real/streams/__consumer_offsets-0", "--html", file, "--group", "streams-app")
	require.Equal(t, 0, code, stderr)
	stdout, stderr, code = runCLI(t, "report", "../../fixtures/real/streams/__consumer_offsets-0", "--html", "-", "--group", "streams-app")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(stdout, "<!DOCTYPE html>"))
	want, err := os.ReadFile(file)
	require.NoError(t, err)
	require.True(t, stdout == string(want), "the page on stdout differs from the file's")
}
