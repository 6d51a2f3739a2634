package streams_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/coordinator/streams"
)

// TestPropertyRandomScenarios runs random joins, heartbeats, leaves, crashes (fenced by the
// session timer), assignment configuration changes and partitions added to a source topic;
// invariants hold after every step, the group converges whenever members keep heartbeating, and
// replaying the produced records gives the coordinator's state. Topology changes are covered by
// the scenario tests (testdata/topology), not here.
func TestPropertyRandomScenarios(t *testing.T) {
	seeds := 20
	steps := 300
	if testing.Short() {
		seeds, steps = 4, 150
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			var transcript bytes.Buffer
			r, rec := newEngineRunner(&transcript)
			defer func() {
				if t.Failed() {
					out := transcript.String()
					t.Logf("transcript tail:\n%s", out[max(0, len(out)-6000):])
				}
			}()
			r.Cfg.InitialRebalanceDelayMs = 0
			r.Cfg.AssignmentIntervalMs = 0
			r.Cfg.NumStandbyReplicas = int32(seed % 3)
			r.Cfg.SessionTimeoutMs = 10000
			r.Cfg.HeartbeatIntervalMs = 1000
			for _, cmd := range []string{"topic in 6", "topic in2 6", "topic app-s-changelog 6", "sub 0 source=in changelog=app-s-changelog", "sub 1 source=in2"} {
				require.NoError(t, r.Exec(cmd))
			}
			next, in2 := 0, 6
			live := map[string]bool{}
			for step := 0; step < steps; step++ {
				switch op := rng.IntN(12); {
				case op < 3 || len(live) == 0: // join
					id := fmt.Sprintf("m%d", next)
					next++
					proc := fmt.Sprintf("p%d", rng.IntN(4))
					require.NoError(t, r.Exec("join "+id+" process="+proc))
					live[id] = true
				case op == 10: // an assignment configuration change (bumps the group epoch)
					require.NoError(t, r.Exec(fmt.Sprintf("config standby=%d", rng.IntN(3))))
				case op == 11: // partitions added to a source topic (Kafka never removes partitions)
					if in2 < 12 {
						in2 += 2
						require.NoError(t, r.Exec(fmt.Sprintf("topic in2 %d", in2)))
					}
				case op < 7: // heartbeat a random live member
					ids := sortedKeys(live)
					id := ids[rng.IntN(len(ids))]
					if c := r.Clients[id]; c != nil && c.Epoch != 0 {
						require.NoError(t, r.Exec("hb "+id))
					}
				case op < 8: // leave
					ids := sortedKeys(live)
					id := ids[rng.IntN(len(ids))]
					if c := r.Clients[id]; c != nil && c.Epoch != 0 {
						require.NoError(t, r.Exec("leave "+id))
					}
					delete(live, id)
				case op < 9: // crash: the member stops heartbeating; time passes
					ids := sortedKeys(live)
					id := ids[rng.IntN(len(ids))]
					delete(live, id)
					delete(r.Clients, id)
					for range 3 {
						r.Now += 4000
						for _, o := range sortedKeys(live) {
							if c := r.Clients[o]; c != nil && c.Epoch != 0 {
								require.NoError(t, r.Exec("hb "+o))
							}
						}
						require.NoError(t, r.Tick())
					}
				case op == 9: // converge
					_, err := r.Converge(60)
					require.NoError(t, err)
					require.NoError(t, streams.CheckConverged(r.Log.State(), "app"), "step %d", step)
				}
				require.NoError(t, streams.CheckInvariants(r.Log.State(), "app"), "step %d", step)
			}
			_, err := r.Converge(60)
			require.NoError(t, err)
			require.NoError(t, streams.CheckConverged(r.Log.State(), "app"), "step %d", steps)
			checkReplayEquivalence(t, rec)
		})
	}
}

// TestPropertyWarmups runs random scenarios with the KIP-1071 warm-up assignor: members
// sometimes report their warm-ups as caught up. The same invariants hold, and groups converge.
func TestPropertyWarmups(t *testing.T) {
	warmupsSeen := 0
	defer func() {
		if !t.Failed() {
			require.Positive(t, warmupsSeen, "no warm-up was ever assigned: the test is vacuous")
		}
	}()
	seeds, steps := 10, 250
	if testing.Short() {
		seeds, steps = 3, 120
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 17))
			r, rec := newEngineRunner(nil)
			r.Cfg.InitialRebalanceDelayMs, r.Cfg.AssignmentIntervalMs = 0, 0
			r.Cfg.Assignor, r.Cfg.NumWarmupReplicas, r.Cfg.AcceptableRecoveryLag = streams.AssignorHighlyAvailable, int32(1+seed%3), 10
			r.Cfg.NumStandbyReplicas = int32(seed % 2)
			for _, cmd := range []string{"topic in 6", "topic app-s-changelog 6", "sub 0 source=in changelog=app-s-changelog"} {
				require.NoError(t, r.Exec(cmd))
			}
			next := 0
			live := map[string]bool{}
			for step := 0; step < steps; step++ {
				switch op := rng.IntN(10); {
				case op < 3 || len(live) == 0:
					id := fmt.Sprintf("m%d", next)
					next++
					require.NoError(t, r.Exec(fmt.Sprintf("join %s process=p%d", id, rng.IntN(3))))
					live[id] = true
				case op < 8:
					ids := sortedKeys(live)
					id := ids[rng.IntN(len(ids))]
					c := r.Clients[id]
					if c == nil || c.Epoch == 0 {
						continue
					}
					cmd := "hb " + id
					if len(c.Warmup) > 0 {
						warmupsSeen++
					}
					if rng.IntN(2) == 0 && len(c.Warmup) > 0 {
						var offs []string
						for _, w := range c.Warmup {
							for _, p := range w.Partitions {
								offs = append(offs, fmt.Sprintf("%s:%d=100", w.SubtopologyID, p))
							}
						}
						o := strings.Join(offs, ",")
						cmd += " offsets=" + o + " endoffsets=" + o
					}
					require.NoError(t, r.Exec(cmd))
				case op < 9:
					ids := sortedKeys(live)
					id := ids[rng.IntN(len(ids))]
					if c := r.Clients[id]; c != nil && c.Epoch != 0 {
						require.NoError(t, r.Exec("leave "+id))
					}
					delete(live, id)
				default:
					_, err := r.Converge(60)
					require.NoError(t, err)
					require.NoError(t, streams.CheckConverged(r.Log.State(), "app"), "step %d", step)
				}
				require.NoError(t, streams.CheckInvariants(r.Log.State(), "app"), "step %d", step)
			}
			_, err := r.Converge(60)
			require.NoError(t, err)
			require.NoError(t, streams.CheckConverged(r.Log.State(), "app"), "step %d", steps)
			checkReplayEquivalence(t, rec)
		})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
