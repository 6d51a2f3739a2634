package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestTranscripts runs the command lines in testdata/transcripts (datadriven files: a
// directive `replay ARGS...` runs the CLI in-process, from this directory; its expected output
// is the command's stdout, then its stderr with every line prefixed "stderr: ", then "exit N"
// when N is not 0), at the default width of 80 columns. Run with -rewrite after an intended
// change and review the diff: these are what a user reads.
func TestTranscripts(t *testing.T) {
	t.Setenv("COLUMNS", "") // 80, whatever the shell running the tests exports
	datadriven.Walk(t, "testdata/transcripts", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			if td.Cmd != "replay" {
				td.Fatalf(t, "unknown command %q: a transcript runs `replay ARGS...`", td.Cmd)
			}
			var args []string
			for _, a := range td.CmdArgs {
				if len(a.Vals) == 0 {
					args = append(args, a.Key)
				} else {
					args = append(args, a.Key+"="+strings.Join(a.Vals, ","))
				}
			}
			stdout, stderr, code := runCLI(t, args...)
			var b strings.Builder
			b.WriteString(stdout)
			for _, line := range strings.SplitAfter(stderr, "\n") {
				if line != "" {
					b.WriteString("stderr: " + line)
				}
			}
			if stderr != "" && !strings.HasSuffix(stderr, "\n") {
				b.WriteString("\n")
			}
			if code != 0 {
				fmt.Fprintf(&b, "exit %d\n", code)
			}
			return b.String()
		})
	})
}
