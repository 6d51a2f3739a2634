package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// TestCompletion asks for completions as a shell does (replay __complete ARGS... PREFIX): the
// values of flags that take a fixed set, and the group ids of the input on the command line.
func TestCompletion(t *testing.T) {
	dir := filepath.Join(committedRecordings, "consumer", "__consumer_offsets-0")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"describe", dir, "--group", "cons"}, []string{"consumer-848", "consumer-regex"}},
		{[]string{"timeline", dir, "--group", "consumer-r"}, []string{"consumer-regex"}},
		{[]string{"describe", dir, "--format", ""}, []string{"table", "json"}},
		{[]string{"offsets", dir, "--format", ""}, []string{"table", "json", "csv"}},
		{[]string{"decode", dir, "--format", ""}, []string{"text", "jsonl"}},
		{[]string{"describe", dir, "--kafka-version", ""}, []string{"4.0", "4.1", "4.2", "4.3", "4.4"}},
		{[]string{"groups", dir, "--type", ""}, []string{"classic", "consumer", "share", "streams"}},
		{[]string{"groups", dir, "--state", ""}, []string{"Empty", "Stable", "Assigning", "Reconciling", "NotReady", "PreparingRebalance", "CompletingRebalance", "Dead"}},
		{[]string{"descr"}, []string{"describe\tRebuild the coordinator state by replay and describe its groups"}},
	} {
		out, stderr, code := runCLI(t, append([]string{cobra.ShellCompRequestCmd}, c.args...)...)
		require.Equal(t, 0, code, stderr)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Equal(t, ":4", lines[len(lines)-1], "%v: directive NoFileComp", c.args)
		require.Equal(t, c.want, lines[:len(lines)-1], "%v", c.args)
	}
	out, _, _ := runCLI(t, cobra.ShellCompRequestCmd, "decode", dir, "--type", "")
	require.Contains(t, out, "OffsetCommit\n")
	require.Contains(t, out, "control\n")
}
