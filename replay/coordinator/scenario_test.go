package coordinator

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/stretchr/testify/require"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files of testdata/*.scenario")

// newEngineRunner runs a scenario against a replay engine: every batch the coordinator
// produces is applied through Engine.Apply, the same path as a dump.
func newEngineRunner(out *bytes.Buffer) (*Runner, *recorded) {
	e := replay.New(0, replay.Options{Mode: eventlog.Strict})
	rec := &recorded{e: e}
	apply := func(b *eventlog.Batch) error {
		rec.batches = append(rec.batches, b)
		return e.Apply(b)
	}
	var r *Runner
	if out == nil {
		r = NewRunner(e.State, apply, e.NextOffset, nil)
	} else {
		r = NewRunner(e.State, apply, e.NextOffset, out)
	}
	return r, rec
}

type recorded struct {
	e       *replay.Engine
	batches []*eventlog.Batch
}

// TestScenarios runs testdata/*.scenario and compares the transcript with *.golden.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/*.scenario")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".scenario"), func(t *testing.T) {
			script, err := os.ReadFile(f)
			require.NoError(t, err)
			var out bytes.Buffer
			r, e := newEngineRunner(&out)
			require.NoError(t, r.Run(bytes.NewReader(script)))
			checkReplayEquivalence(t, e)
			golden := strings.TrimSuffix(f, ".scenario") + ".golden"
			if *rewrite {
				require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -rewrite to create it")
			require.Equal(t, string(want), out.String())
		})
	}
}

// checkReplayEquivalence replays every batch the coordinator produced through a fresh
// engine and requires exactly the state the coordinator decided on.
func checkReplayEquivalence(t *testing.T, rec *recorded) {
	t.Helper()
	fresh := replay.New(0, replay.Options{Mode: eventlog.Strict})
	for _, b := range rec.batches {
		require.NoError(t, fresh.Apply(b))
	}
	require.True(t, groupstate.Equal(rec.e.State(), fresh.State()), "%v", groupstate.Diff(rec.e.State(), fresh.State(), 10))
}
