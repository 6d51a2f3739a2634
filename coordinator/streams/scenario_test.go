package streams_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/coordinator/streams/streamstest"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files of testdata/*.scenario")

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
	require.True(t, groupstate.Equal(rec.State(), fresh.State()), "%v", groupstate.Diff(rec.State(), fresh.State(), 10))
}
