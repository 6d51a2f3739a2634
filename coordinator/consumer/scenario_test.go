package consumer_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/coordinator/consumer/consumertest"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
)

// recorded is a coordinator.Log that keeps every batch it replays.
type recorded struct {
	*replay.Engine
	batches []*eventlog.Batch
}

func (r *recorded) Apply(b *eventlog.Batch) error {
	r.batches = append(r.batches, b)
	return r.Engine.Apply(b)
}

func newEngineRunner(out *bytes.Buffer) (*consumertest.Runner, *recorded) {
	rec := &recorded{Engine: replay.New(0, replay.Options{Mode: eventlog.Strict})}
	if out == nil {
		return consumertest.NewRunner(rec, nil), rec
	}
	return consumertest.NewRunner(rec, out), rec
}

// TestScenarios runs the datadriven files in testdata, one scenario per file, each on a
// fresh engine: a directive is one scenario command (consumertest.Runner.Exec), its expected
// output the transcript lines it prints: responses ("<"), records ("+"), fired timers, regex
// resolutions and state JSON. `go test -rewrite` rewrites them. After each file, replaying the
// batches the coordinator produced through a fresh engine must give its state, and the
// invariants (no partition owned twice) must hold after every command.
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
			requireInvariants(t, rec.State())
			return out.String()
		})
		checkReplayEquivalence(t, rec)
	})
}

func checkReplayEquivalence(t *testing.T, rec *recorded) {
	t.Helper()
	fresh := replay.New(0, replay.Options{Mode: eventlog.Strict})
	for _, b := range rec.batches {
		require.NoError(t, fresh.Apply(b))
	}
	require.True(t, groupstate.Equal(rec.State(), fresh.State()), "%v", groupstate.Diff(rec.State(), fresh.State(), 10))
	requireSameOrders(t, rec.State(), fresh.State())
}

// requireSameOrders: the orders of Kafka's maps of members, regexes and server assignors
// (groupstate/order.go), which groupstate.Equal does not compare, are the same in both
// states.
func requireSameOrders(t *testing.T, want, got groupstate.View) {
	t.Helper()
	for _, id := range want.GroupIDs() {
		wm, _ := want.MemberTable(id)
		gm, _ := got.MemberTable(id)
		require.Equal(t, wm, gm, "group %s: member table", id)
		wr, _ := want.RegexTable(id)
		gr, _ := got.RegexTable(id)
		require.Equal(t, wr, gr, "group %s: regex table", id)
		wa, _ := want.AssignorTable(id)
		ga, _ := got.AssignorTable(id)
		require.Equal(t, wa, ga, "group %s: server assignor table", id)
	}
}

// requireInvariants: in every consumer group, no partition is owned (assigned or pending
// revocation) by two members, and no partition is in two members' targets.
func requireInvariants(t *testing.T, st groupstate.View) {
	t.Helper()
	for _, id := range st.GroupIDs() {
		g, ok := st.ConsumerGroup(id)
		if !ok {
			continue
		}
		owner := map[string]string{}
		for _, m := range g.Members {
			for _, l := range [][]groupstate.TopicPartitionsWithEpochs{m.AssignedPartitions, m.PartitionsPendingRevocation} {
				for _, tp := range l {
					for _, p := range tp.Partitions {
						k := fmt.Sprintf("%s-%d", tp.TopicID, p)
						if o, dup := owner[k]; dup && o != m.MemberID {
							t.Fatalf("group %s: partition %s-%d owned by %s and %s", id, tp.TopicID, p, o, m.MemberID)
						}
						owner[k] = m.MemberID
					}
				}
			}
		}
		target := map[string]string{}
		for _, ta := range g.TargetAssignment {
			for _, tp := range ta.Partitions {
				for _, p := range tp.Partitions {
					k := fmt.Sprintf("%s-%d", tp.TopicID, p)
					if o, dup := target[k]; dup {
						t.Fatalf("group %s: partition %s-%d in the targets of %s and %s", id, tp.TopicID, p, o, ta.MemberID)
					}
					target[k] = ta.MemberID
				}
			}
		}
	}
}

// TestRunnerReadsScenarioFiles runs every testdata file as a script (Runner.Run, as `replay
// simulate --scenario` does): the transcript is each directive as a "> " line followed by its
// expected output, and the expected outputs are what TestScenarios checks.
func TestRunnerReadsScenarioFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		script, err := os.ReadFile(f)
		require.NoError(t, err)
		var out bytes.Buffer
		r, _ := newEngineRunner(&out)
		require.NoError(t, r.Run(bytes.NewReader(script)), f)
		var want strings.Builder
		datadriven.RunTest(t, f, func(t *testing.T, d *datadriven.TestData) string {
			want.WriteString("> " + d.FullCmd() + "\n" + d.Expected)
			return d.Expected
		})
		require.Equal(t, want.String(), out.String(), f)
	}
}
