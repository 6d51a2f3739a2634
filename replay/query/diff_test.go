package query_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/query"
)

func sideAt(t *testing.T, src eventlog.Source, until int64) query.Side {
	t.Helper()
	e := replay.New(0, replay.Options{})
	require.NoError(t, e.Run(context.Background(), src, until))
	return query.Capture([]query.PartitionState{{Partition: 0, View: e.State()}})
}

// Between every two consecutive driver steps of every recording, the diff names exactly the
// groups added and removed, the members that joined and left, and every committed offset that
// moved (with its delta), was committed or deleted: each re-derived here from the two dumps.
func TestDiffBetweenStepsNamesWhatChanged(t *testing.T) {
	for _, dir := range recordings(t) {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "steps.json"))
			require.NoError(t, err)
			var steps []struct {
				Step string `json:"step"`
				End  int64  `json:"consumerOffsetsEndOffset"`
			}
			require.NoError(t, json.Unmarshal(raw, &steps))
			in := open(t, dir)
			prev := sideAt(t, in, 0)
			require.Empty(t, query.Diff(prev, prev, query.DiffOptions{Volatile: true}))
			changes := 0
			for _, st := range steps {
				cur := sideAt(t, in, st.End)
				cs := query.Diff(prev, cur, query.DiffOptions{})
				changes += len(cs)
				checkDiff(t, st.Step, prev[0].Dump, cur[0].Dump, cs)
				require.Empty(t, query.Diff(cur, cur, query.DiffOptions{Volatile: true}))
				prev = cur
			}
			t.Logf("%d steps, %d changes", len(steps), changes)
		})
	}
}

func checkDiff(t *testing.T, step string, a, b groupstate.Dump, cs []query.Change) {
	t.Helper()
	got := map[string][]string{}
	for _, c := range cs {
		require.NotEmpty(t, c.Group)
		require.False(t, c.Volatile)
		switch c.Kind {
		case query.GroupAdded, query.GroupRemoved:
			got[c.Kind] = append(got[c.Kind], c.Group)
		case query.MemberJoined, query.MemberLeft:
			got[c.Kind] = append(got[c.Kind], c.Group+"/"+c.Member)
		case query.OffsetMoved:
			got[c.Kind] = append(got[c.Kind], fmt.Sprintf("%s/%s:%d%+d", c.Group, c.Topic, *c.TopicPartition, *c.Delta))
		case query.OffsetCommitted, query.OffsetDeleted:
			got[c.Kind] = append(got[c.Kind], fmt.Sprintf("%s/%s:%d", c.Group, c.Topic, *c.TopicPartition))
		}
	}
	want := map[string][]string{}
	groups := func(d groupstate.Dump) map[string]groupstate.Group {
		m := map[string]groupstate.Group{}
		for _, g := range d.Groups {
			m[g.GroupID] = g
		}
		return m
	}
	members := func(g groupstate.Group) []string {
		var ids []string
		switch {
		case g.Classic != nil:
			for _, m := range g.Classic.Members {
				ids = append(ids, m.MemberID)
			}
		case g.Consumer != nil:
			for _, m := range g.Consumer.Members {
				ids = append(ids, m.MemberID)
			}
		case g.Share != nil:
			for _, m := range g.Share.Members {
				ids = append(ids, m.MemberID)
			}
		case g.Streams != nil:
			for _, m := range g.Streams.Members {
				ids = append(ids, m.MemberID)
			}
		}
		return ids
	}
	ga, gb := groups(a), groups(b)
	for id, g := range gb {
		old, ok := ga[id]
		if !ok {
			want[query.GroupAdded] = append(want[query.GroupAdded], id)
		}
		for _, m := range members(g) {
			if !ok || !slices.Contains(members(old), m) {
				want[query.MemberJoined] = append(want[query.MemberJoined], id+"/"+m)
			}
		}
	}
	for id, g := range ga {
		nw, ok := gb[id]
		if !ok {
			want[query.GroupRemoved] = append(want[query.GroupRemoved], id)
			continue
		}
		for _, m := range members(g) {
			if !slices.Contains(members(nw), m) {
				want[query.MemberLeft] = append(want[query.MemberLeft], id+"/"+m)
			}
		}
	}
	type key struct {
		g, t string
		p    int32
	}
	oa := map[key]int64{}
	for _, o := range a.Offsets {
		oa[key{o.GroupID, o.Topic, o.Partition}] = o.CommittedOffset
	}
	ob := map[key]int64{}
	for _, o := range b.Offsets {
		k := key{o.GroupID, o.Topic, o.Partition}
		ob[k] = o.CommittedOffset
		old, ok := oa[k]
		switch {
		case !ok:
			want[query.OffsetCommitted] = append(want[query.OffsetCommitted], fmt.Sprintf("%s/%s:%d", k.g, k.t, k.p))
		case old != o.CommittedOffset:
			want[query.OffsetMoved] = append(want[query.OffsetMoved], fmt.Sprintf("%s/%s:%d%+d", k.g, k.t, k.p, o.CommittedOffset-old))
		}
	}
	for k := range oa {
		if _, ok := ob[k]; !ok {
			want[query.OffsetDeleted] = append(want[query.OffsetDeleted], fmt.Sprintf("%s/%s:%d", k.g, k.t, k.p))
		}
	}
	for k := range want {
		slices.Sort(want[k])
	}
	for k := range got {
		slices.Sort(got[k])
	}
	require.Equal(t, want, got, "step %q", step)
}

// Volatile changes (record offsets and timestamps alone: a re-commit of the same offset, a new
// state timestamp) are left out unless asked for, and only they are.
func TestDiffVolatile(t *testing.T) {
	vol := 0
	for _, dir := range recordings(t) {
		in := open(t, dir)
		first, next, err := in.Offsets(0)
		require.NoError(t, err)
		for cut := first; cut < next; cut += 5 {
			a, b := sideAt(t, in, cut), sideAt(t, in, next)
			all := query.Diff(a, b, query.DiffOptions{Volatile: true})
			var stable []query.Change
			for _, c := range all {
				if c.Volatile {
					vol++
				} else {
					stable = append(stable, c)
				}
			}
			if plain := query.Diff(a, b, query.DiffOptions{}); len(stable) == 0 {
				require.Empty(t, plain) // nil or empty: both say "no change"
			} else {
				require.Equal(t, stable, plain)
			}
		}
	}
	require.Positive(t, vol, "the recordings re-commit offsets and move state timestamps")
	in := open(t, filepath.Join(filepath.Dir(filepath.Dir(recordings(t)[0])), "classic", "__consumer_offsets-0"))
	one := query.Diff(sideAt(t, in, 10), sideAt(t, in, 1<<62), query.DiffOptions{Group: "classic-admin"})
	require.NotEmpty(t, one)
	for _, c := range one {
		require.Equal(t, "classic-admin", c.Group)
	}
}
