package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeTranscripts runs every `$ replay ...` line between README.md's transcripts markers
// (from the repository's root, as the README shows them) and checks that the command prints
// what follows it: stdout, then stderr. A line `$ COLUMNS=N replay ...` runs at N columns, the
// others at the default 80 (TestTerminalCaptures checks that a terminal that wide shows the
// same). Every line reads a recording shipped in fixtures/, so that the README stands on its
// own. With -rewrite (datadriven's flag) the outputs in README.md are replaced by what the
// commands print: review the diff.
func TestReadmeTranscripts(t *testing.T) {
	rewrite := false
	if f := flag.Lookup("rewrite"); f != nil {
		rewrite = f.Value.String() == "true"
	}
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	s := string(raw)
	begin, end := strings.Index(s, "<!-- transcripts:begin -->"), strings.Index(s, "<!-- transcripts:end -->")
	require.True(t, begin >= 0 && end > begin, "README.md has no transcripts block")
	lines := strings.Split(s[begin:end], "\n")
	type transcript struct {
		cmd, columns string
		want         []string
	}
	var ts []transcript
	var rewritten []string // the block with the outputs replaced (-rewrite)
	for _, l := range lines {
		if c, ok := strings.CutPrefix(l, "$ replay "); ok {
			ts = append(ts, transcript{cmd: c})
			continue
		}
		if rest, ok := strings.CutPrefix(l, "$ COLUMNS="); ok {
			cols, c, ok := strings.Cut(rest, " replay ")
			require.True(t, ok, "README.md: %s", l)
			ts = append(ts, transcript{cmd: c, columns: cols})
			continue
		}
		if len(ts) > 0 && l != "```" {
			ts[len(ts)-1].want = append(ts[len(ts)-1].want, l)
		}
	}
	require.NotEmpty(t, ts)
	outputs := map[string]string{} // command and columns -> output (-rewrite)
	for _, tr := range ts {
		args := shellWords(tr.cmd)
		for i, a := range args {
			if strings.HasPrefix(a, "fixtures/") {
				args[i] = filepath.Join("..", "..", a)
			}
		}
		require.False(t, strings.Contains(tr.cmd, "../"), "README.md: $ replay %s reads outside the repository", tr.cmd)
		if tr.columns == "" {
			tr.columns = "80" // as a terminal of 80 columns shows it: stderr's lines wrap too
		}
		t.Setenv("COLUMNS", tr.columns)
		stdout, stderr, _ := runCLI(t, args...)
		got := strings.TrimRight(stdout+stderr, "\n")
		got = strings.ReplaceAll(got, "../../fixtures/", "fixtures/")
		want := strings.TrimRight(strings.Join(tr.want, "\n"), "\n")
		if rewrite {
			outputs[tr.cmd+"\x00"+tr.columns] = got
			continue
		}
		require.Equal(t, want, got, "README.md: $ replay %s", tr.cmd)
	}
	if rewrite {
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			rewritten = append(rewritten, l)
			cmd, cols := "", "80"
			if c, ok := strings.CutPrefix(l, "$ replay "); ok {
				cmd = c
			} else if rest, ok := strings.CutPrefix(l, "$ COLUMNS="); ok {
				cols, cmd, _ = strings.Cut(rest, " replay ")
			}
			got, ok := outputs[cmd+"\x00"+cols]
			if cmd == "" || !ok {
				continue
			}
			if got != "" {
				rewritten = append(rewritten, strings.Split(got, "\n")...)
			}
			blank := false // the blank line that separates the old output from the next command
			for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "$ ") && lines[i+1] != "```" {
				i++ // the old output
				blank = lines[i] == ""
			}
			if blank {
				rewritten = append(rewritten, "")
			}
		}
		s = s[:begin] + strings.Join(rewritten, "\n") + s[end:]
		require.NoError(t, os.WriteFile("../../README.md", []byte(s), 0o644))
	}
}

// shellWords splits a command line on spaces, keeping single-quoted words whole.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				out = append(out, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}
