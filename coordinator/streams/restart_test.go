package streams_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/coordinator/streams"
	"github.com/coordlog/coordlog/coordinator/streams/streamstest"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
)

// clientName is the name (and member id) of the n-th client: names come in fours whose
// String.hashCode is the same ("Aa" and "BB" hash alike), so that they share a slot of
// Kafka's TimelineHashMap of members and a bucket of every HashMap of members, where the
// order members were inserted decides (groupstate/order.go); they are made in descending
// order, so that id order, which a state without the order would assume, is another.
func clientName(n int) string {
	return "m" + [4]string{"BBBB", "BBAa", "AaBB", "AaAa"}[n%4] + strconv.Itoa(n/4)
}

// randomOps drives a runner through n random steps from rng. restart, when set, is called
// before step restartAt.
func randomOps(t *testing.T, r *streamstest.Runner, rng *rand.Rand, n int, crashes bool, restartAt int, restart func()) {
	t.Helper()
	next := 0
	live := map[string]bool{}
	for step := 0; step < n; step++ {
		if step == restartAt && restart != nil {
			restart()
		}
		op := rng.IntN(10)
		if !crashes && op == 8 {
			op = 5
		}
		switch {
		case op < 3 || len(live) == 0:
			id := clientName(next)
			next++
			require.NoError(t, r.Exec(fmt.Sprintf("join %s process=p%d", id, rng.IntN(4))))
			live[id] = true
		case op < 7:
			ids := sortedKeys(live)
			id := ids[rng.IntN(len(ids))]
			if c := r.Clients[id]; c != nil && c.Epoch != 0 {
				require.NoError(t, r.Exec("hb "+id))
			}
		case op < 8:
			ids := sortedKeys(live)
			id := ids[rng.IntN(len(ids))]
			if c := r.Clients[id]; c != nil && c.Epoch != 0 {
				require.NoError(t, r.Exec("leave "+id))
			}
			delete(live, id)
		case op < 9:
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
		default:
			_, err := r.Converge(60)
			require.NoError(t, err)
		}
		r.Now += 10
	}
}

func setupRandom(t *testing.T, out *bytes.Buffer, seed int) *streamstest.Runner {
	r, _ := newEngineRunner(out)
	r.Cfg.InitialRebalanceDelayMs, r.Cfg.AssignmentIntervalMs = 0, 0
	r.Cfg.NumStandbyReplicas = int32(seed % 2)
	r.Cfg.SessionTimeoutMs, r.Cfg.HeartbeatIntervalMs = 10000, 1000
	for _, cmd := range []string{"topic in 6", "topic in2 6", "topic app-s-changelog 6", "sub 0 source=in changelog=app-s-changelog", "sub 1 source=in2"} {
		require.NoError(t, r.Exec(cmd))
	}
	return r
}

// restartFromSnapshot swaps the runner's engine for one restored from a snapshot of the state
// at the current offset: its groupstate image, as snapshot files hold it (package
// replay/recovery), parts of a few hundred bytes. The restored state must keep the orders of
// Kafka's maps of members (groupstate/order.go).
func restartFromSnapshot(t *testing.T, r *streamstest.Runner) {
	t.Helper()
	v := r.Log.State()
	plan := v.PlanImage(300)
	st, err := groupstate.NewFromImageHead(string(v.AppendImageHead(nil)))
	require.NoError(t, err)
	for i := range plan.NumParts() {
		p, err := groupstate.DecodeImagePart(string(v.AppendImagePart(nil, plan, i)))
		require.NoError(t, err)
		require.NoError(t, st.AddImagePart(p))
	}
	require.NoError(t, st.FinishImage())
	require.True(t, groupstate.Equal(v, st.View()))
	for _, id := range v.GroupIDs() {
		want, _ := v.MemberTable(id)
		got, _ := st.View().MemberTable(id)
		require.Equal(t, want, got, "group %s: member table", id)
	}
	r.Log = replay.Restore(0, st, r.Log.NextOffset(), replay.Stats{}, replay.Options{Mode: eventlog.Strict})
}

// TestRestartFromSnapshotSameDecisions: a coordinator restored from a snapshot of the state
// (and a copy of its soft state) mid-scenario makes exactly the decisions of one that never
// stopped.
func TestRestartFromSnapshotSameDecisions(t *testing.T) {
	for seed := range 6 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			var a, b bytes.Buffer
			ra := setupRandom(t, &a, seed)
			randomOps(t, ra, rand.New(rand.NewPCG(uint64(seed), 11)), 200, true, -1, nil)
			rb := setupRandom(t, &b, seed)
			randomOps(t, rb, rand.New(rand.NewPCG(uint64(seed), 11)), 200, true, 100, func() {
				restartFromSnapshot(t, rb)
				rb.Soft = rb.Soft.Clone()
			})
			require.Equal(t, a.String(), b.String())
		})
	}
}

var responseLine = regexp.MustCompile(`(?m)^  < .*\n`)

// TestFailoverSameRecords: after a failover (state from a snapshot, soft state lost and
// rebuilt by Soft.Restore) the records are the same as without it. Responses may differ in
// soft-only fields (endpoint-information epoch), so only records and requests are compared;
// crashes are left out because timers are re-armed from the load time, as in Kafka.
func TestFailoverSameRecords(t *testing.T) {
	for seed := range 6 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			var a, b bytes.Buffer
			ra := setupRandom(t, &a, seed)
			randomOps(t, ra, rand.New(rand.NewPCG(uint64(seed), 13)), 200, false, -1, nil)
			rb := setupRandom(t, &b, seed)
			randomOps(t, rb, rand.New(rand.NewPCG(uint64(seed), 13)), 200, false, 100, func() {
				restartFromSnapshot(t, rb)
				rb.Soft = streams.NewSoft()
				rb.Soft.Restore(rb.Log.State(), func(string) streams.Config { return rb.Cfg }, rb.Now)
			})
			require.Equal(t, responseLine.ReplaceAllString(a.String(), ""), responseLine.ReplaceAllString(b.String(), ""))
		})
	}
}
