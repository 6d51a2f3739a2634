package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/internal/testcorpus"
)

// textCommands are the commands whose standard output is text for a person, on an input
// (timeline runs once per group: groupsOf).
var textCommands = [][]string{
	{"describe"},
	{"groups", "--include-deleted"},
	{"offsets"},
	{"diff"},
	{"check"},
}

// groupsOf lists the group ids describe --format json gives for dir.
func groupsOf(t *testing.T, dir string) []string {
	out, stderr, code := runCLI(t, "describe", dir, "--format", "json", "--forensic")
	require.Equal(t, 0, code, stderr)
	var doc struct {
		Partitions []struct {
			Groups []struct {
				GroupID string `json:"groupId"`
			} `json:"groups"`
		} `json:"partitions"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	var ids []string
	for _, p := range doc.Partitions {
		for _, g := range p.Groups {
			ids = append(ids, g.GroupID)
		}
	}
	return ids
}

// overlong returns the lines of out longer than width.
func overlong(out string, width int) []string {
	var long []string
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > width {
			long = append(long, fmt.Sprintf("%d columns: %s", utf8.RuneCountInString(l), l))
		}
	}
	return long
}

// TestOutputFitsTheWidth: on every recording (and every log directory of the public dumps, when
// they are here), no line of describe, groups, offsets, diff, check and every group's timeline
// is longer than the width, at 80 and 120 columns ($COLUMNS; stdout is not a terminal here).
// With --wide, the output is the layout of an unlimited width.
func TestOutputFitsTheWidth(t *testing.T) {
	var inputs []string
	for _, sc := range scenarios(t, committedRecordings) {
		inputs = append(inputs, filepath.Join(committedRecordings, sc, "__consumer_offsets-0"))
	}
	if _, err := os.Stat(filepath.Join(testcorpus.Root(), "..", "shared", "fixtures-found")); err == nil {
		seen := map[string]bool{}
		for _, p := range testcorpus.PartitionDirs(t, testcorpus.Found(t)) {
			if d := filepath.Dir(p); !seen[d] {
				seen[d] = true
				inputs = append(inputs, d)
			}
		}
	}
	for _, in := range inputs {
		cmds := append([][]string(nil), textCommands...)
		for _, g := range groupsOf(t, in) {
			if g != "" { // (a group of empty id, in one public dump, cannot be asked for)
				cmds = append(cmds, []string{"timeline", "--group", g})
			}
		}
		for _, c := range cmds {
			args := append([]string{c[0], in, "--forensic"}, c[1:]...)
			for _, width := range []int{80, 120} {
				t.Setenv("COLUMNS", fmt.Sprint(width))
				out, stderr, code := runCLI(t, args...)
				require.NotEqual(t, exitUsage, code, "%v: %s", args, stderr)
				require.Empty(t, overlong(out, width), "%v at %d columns", args, width)
			}
			t.Setenv("COLUMNS", "100000")
			unlimited, _, _ := runCLI(t, args...)
			t.Setenv("COLUMNS", "80")
			wide, _, _ := runCLI(t, append(args, "--wide")...)
			require.Equal(t, unlimited, wide, "%v --wide", args)
		}
	}
}

// TestTerminalCaptures runs describe, groups and timeline in tmux panes 80 and 120 columns wide
// (a real terminal: the width comes from the terminal, not from $COLUMNS) and checks that
// every line of the pane fits and that the pane shows exactly what the command prints with
// COLUMNS set to the pane's width (stdout and stderr in the order they were written; README.md
// lists stdout first). Skipped where tmux is absent, but for CI (.ci/run installs it). With
// COORDLOG_CAPTURES=DIR it writes the captures there.
func TestTerminalCaptures(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no tmux in CI: .ci/run installs it")
		}
		t.Skip("no tmux: the terminal captures are not checked")
	}
	bin := filepath.Join(t.TempDir(), "replay")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	root := testcorpus.Root()
	socket := filepath.Join(t.TempDir(), "tmux.sock")
	// A session that lives as long as the test keeps the server up between the panes (a
	// server whose last session ends exits, racing the next new-session).
	keep := exec.Command(tmux, "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "keep", "sleep 600")
	out, err = keep.CombinedOutput()
	require.NoError(t, err, "%s", out)
	defer exec.Command(tmux, "-S", socket, "kill-server").Run()
	// README.md's first transcripts, and a describe of a consumer group.
	for _, c := range []struct{ name, args string }{
		{"describe", "describe fixtures/real/streams/__consumer_offsets-0"},
		{"describe-consumer", "describe fixtures/real/consumer/__consumer_offsets-0 --at-offset 68"},
		{"groups", "groups fixtures/real/deletions/__consumer_offsets-0 --include-deleted"},
		{"timeline", "timeline fixtures/real/consumer/__consumer_offsets-0 --group consumer-848 --since 2026-11-29T19:05:53.8Z --until 2026-11-29T19:05:54.2Z"},
	} {
		for _, width := range []int{80, 120} {
			name := fmt.Sprintf("%s-%d", c.name, width)
			t.Run(name, func(t *testing.T) {
				// The pane is tall enough for the whole output; the shell line after it says
				// the command is done.
				script := fmt.Sprintf("cd %q && %q %s; echo '<<done>>'; sleep 600", root, bin, c.args)
				paneCmd := exec.Command(tmux, "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", name, "-x", fmt.Sprint(width), "-y", "400", "sh", "-c", script)
				paneCmd.Env = append(os.Environ(), "COLUMNS=", "TERM=xterm")
				out, err := paneCmd.CombinedOutput()
				require.NoError(t, err, "%s", out)
				defer exec.Command(tmux, "-S", socket, "kill-session", "-t", name).Run()
				var pane string
				for deadline := time.Now().Add(2 * time.Minute); ; {
					// -J joins lines the terminal wrapped, so that a line too long shows as one.
					b, err := exec.Command(tmux, "-S", socket, "capture-pane", "-p", "-J", "-t", name).Output()
					require.NoError(t, err)
					if pane = string(b); strings.Contains(pane, "<<done>>") || time.Now().After(deadline) {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				pane, _, _ = strings.Cut(pane, "<<done>>")
				var lines []string
				for _, l := range strings.Split(strings.TrimRight(pane, "\n"), "\n") {
					lines = append(lines, strings.TrimRight(l, " "))
				}
				pane = strings.Join(lines, "\n")
				require.Empty(t, overlong(pane, width))

				t.Setenv("COLUMNS", fmt.Sprint(width))
				t.Chdir(root)         // the same paths, so that the same lines wrap
				var both bytes.Buffer // stdout and stderr in the order they were written, as on the pane
				run(context.Background(), shellWords(c.args), &both, &both)
				want := strings.TrimRight(both.String(), "\n")
				require.Equal(t, want, pane, "the terminal of %d columns shows what COLUMNS=%d prints", width, width)
				if dir := os.Getenv("COORDLOG_CAPTURES"); dir != "" {
					require.NoError(t, os.WriteFile(filepath.Join(dir, name+".txt"), []byte("$ replay "+c.args+"\n"+pane+"\n"), 0o644))
				}
			})
		}
	}
}
