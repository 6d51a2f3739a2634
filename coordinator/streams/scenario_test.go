package streams_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/coordinator/streams/streamstest"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
)

// newEngineRunner runs a scenario against a replay engine: every batch the coordinator
// produces is applied through Engine.Apply, the same path as a dump, and kept.
func newEngineRunner(out *bytes.Buffer) (*streamstest.Runner, *recorded) {
	rec := &recorded{Engine: replay.New(0, replay.Options{Mode: eventlog.Strict})}
	if out == nil {
		return streamstest.NewRunner(rec, nil), rec // a nil *bytes.Buffer is not a nil io.Writer
	}
	return streamstest.NewRunner(rec, out), rec
}

// recorded is a streamstest.Log that keeps every batch it replays.
type recorded struct {
	*replay.Engine
	batches []*eventlog.Batch
}

func (r *recorded) Apply(b *eventlog.Batch) error {
	r.batches = append(r.batches, b)
	return r.Engine.Apply(b)
}

// TestScenarios runs the datadriven files in testdata, one scenario per file, each on a fresh
// engine. A directive is one scenario command (streamstest.Runner.Exec, given datadriven's
// rendering of the line: write `clock +MS`, datadriven cannot parse `clock =MS`); its expected
// output is what the command prints in the transcript: responses ("<"), records ("+"), fired
// timers, describe and state JSON, and for converge every heartbeat it sends with its "> "
// line. `go test -rewrite` (datadriven's flag) rewrites the expected output. After each file,
// replaying the batches the coordinator produced through a fresh engine gives its state.
//
// The files are also scripts for `replay simulate --scenario` and streamstest.Runner.Run,
// which skip the expected output; the transcript they print is each directive as a "> " line
// followed by its expected output.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var out bytes.Buffer
		r, rec := newEngineRunner(&out)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Input != "" {
				d.Fatalf(t, "a scenario command takes no input lines")
			}
			out.Reset()
			if err := r.Exec(d.FullCmd()); err != nil {
				d.Fatalf(t, "%s: %v", d.FullCmd(), err)
			}
			return out.String()
		})
		checkReplayEquivalence(t, rec)
	})
}

// checkReplayEquivalence replays every batch the coordinator produced through a fresh
// engine and requires exactly the state the coordinator decided on.
func checkReplayEquivalence(t *testing.T, rec *recorded) {
	t.Helper()
	fresh := replay.New(0, replay.Options{Mode: eventlog.Strict})
	for _, b := range rec.batches {
		require.NoError(t, fresh.Apply(b))
	}
	require.True(t, groupstate.Equal(rec.State(), fresh.State()), "%v", groupstate.Diff(rec.State(), fresh.State(), 10))
}

// TestRunnerReadsScenarioFiles runs every testdata file as a script (streamstest.Runner.Run, as
// `replay simulate` does): the expected-output blocks are skipped, and the transcript is each
// directive datadriven reads as a "> " line followed by its expected output.
func TestRunnerReadsScenarioFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			script, err := os.ReadFile(f)
			require.NoError(t, err)
			var want strings.Builder
			datadriven.RunTestFromString(t, string(script), func(t *testing.T, d *datadriven.TestData) string {
				want.WriteString("> " + d.FullCmd() + "\n" + d.Expected)
				return d.Expected
			})
			var out bytes.Buffer
			r, _ := newEngineRunner(&out)
			require.NoError(t, r.Run(bytes.NewReader(script)))
			require.Equal(t, want.String(), out.String())
		})
	}
}

// TestRunnerSkipsExpectedOutput: Run skips expected-output blocks where datadriven ends them,
// in both forms (up to a blank line; after "----" "----", up to the next "----" "----" pair),
// runs plain scripts as before, and counts lines in the file for its errors.
func TestRunnerSkipsExpectedOutput(t *testing.T) {
	run := func(script string) (string, error) {
		var out bytes.Buffer
		r, _ := newEngineRunner(&out)
		err := r.Run(strings.NewReader(script))
		return out.String(), err
	}
	plain := "# plain\nconfig delay=0 interval=0   # comment\n\ntopic in 2\nsub 0 source=in\n"
	out, err := run(plain)
	require.NoError(t, err)
	require.Equal(t, "> config delay=0 interval=0\n> topic in 2\n> sub 0 source=in\n", out)

	double := "config delay=0 interval=0\n----\n----\nnot a command\n\n----\nstill not one\n----\n----\n\n" +
		"topic in 2\n----\n\nsub 0 source=in\n----\n----\n----\n----\n\nclock +5\n----\n  < not a command either\n"
	out, err = run(double)
	require.NoError(t, err)
	require.Equal(t, "> config delay=0 interval=0\n> topic in 2\n> sub 0 source=in\n> clock +5\n", out)

	_, err = run("topic in 2\n----\n----\nx\n----\n----\ntopic in 3\n")
	require.ErrorContains(t, err, "line 7: non-blank line after the closing ----/----")
	_, err = run("topic in 2\n----\n  < skipped\n\nnope\n")
	require.EqualError(t, err, `line 5: nope: unknown command "nope"`)
}
