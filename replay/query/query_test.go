package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/eventlogtest"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/testcorpus"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/query"
)

// recordings returns the scenario directories of fixtures/real (or COORDLOG_RECORDINGS).
func recordings(t *testing.T) []string {
	t.Helper()
	root := testcorpus.Recordings()
	if d := os.Getenv("COORDLOG_RECORDINGS"); d != "" {
		root = d
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "__consumer_offsets-0"))
	if len(dirs) == 0 {
		t.Skipf("no recordings in %s", root)
	}
	slices.Sort(dirs)
	return dirs
}

func open(t *testing.T, dir string) *input.Input {
	t.Helper()
	in, err := input.Open(dir, eventlog.Strict)
	require.NoError(t, err)
	t.Cleanup(func() { in.Close() })
	return in
}

type rec struct {
	offset, ts int64
}

// records lists every record of partition p with Kafka's timestamp, read straight from the
// source (not through Resolve).
func records(t *testing.T, src eventlog.Source, p int32) []rec {
	t.Helper()
	it, err := src.Batches(p, 0)
	require.NoError(t, err)
	defer it.Close()
	var out []rec
	for it.Next() {
		b := it.Batch()
		for i := range b.Records {
			out = append(out, rec{b.Records[i].Offset, b.RecordTimestamp(&b.Records[i])})
		}
	}
	require.NoError(t, it.Err())
	return out
}

func replayTo(t *testing.T, src eventlog.Source, pos []query.Position) []replay.Result {
	t.Helper()
	res, err := replay.ReplayCuts(context.Background(), src, query.Cuts(pos, nil), replay.Options{}, 0)
	require.NoError(t, err)
	return res
}

// On every recording and at every instant that matters (each record's timestamp, a
// millisecond before and after it, before the first record, after the last), --at-time gives
// exactly the state --at-offset gives at the record the time resolved to, that record is the
// last one stamped at or before the instant in log order, and the next one is the first
// stamped later.
func TestAtTimeAgreesWithAtOffset(t *testing.T) {
	ctx := context.Background()
	for _, dir := range recordings(t) {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			in := open(t, dir)
			recs := records(t, in, 0)
			require.NotEmpty(t, recs)
			instants := map[int64]bool{recs[0].ts - 1000: true, recs[len(recs)-1].ts + 1000: true}
			for _, r := range recs {
				instants[r.ts-1], instants[r.ts], instants[r.ts+1] = true, true, true
			}
			checked := 0
			for inst := range instants {
				pos, err := query.Resolve(ctx, in, []int32{0}, query.AtTimeMillis(inst))
				require.NoError(t, err)
				p := pos[0]
				// The expected cut, computed here from the raw records.
				cut := len(recs)
				for i, r := range recs {
					if r.ts > inst {
						cut = i
						break
					}
				}
				if cut == len(recs) {
					require.Nil(t, p.Next, "%d", inst)
					require.Equal(t, int64(math.MaxInt64), p.Until)
				} else {
					require.NotNil(t, p.Next, "%d", inst)
					require.Equal(t, recs[cut].offset, p.Next.Offset)
					require.Equal(t, recs[cut].offset, p.Until)
					require.Greater(t, p.Next.Timestamp, inst)
				}
				atTime := replayTo(t, in, pos)[0].Engine.State()
				if cut == 0 {
					require.Nil(t, p.Last)
					require.Equal(t, 0, atTime.NumGroups()+atTime.NumOffsets(), "a time before the first record is the empty state")
					continue
				}
				require.NotNil(t, p.Last)
				require.Equal(t, recs[cut-1].offset, p.Last.Offset)
				require.LessOrEqual(t, p.Last.Timestamp, inst)
				require.Equal(t, "the records' own timestamps (CreateTime)", p.Timestamps)
				opos, err := query.Resolve(ctx, in, []int32{0}, query.AtOffset(p.Last.Offset))
				require.NoError(t, err)
				require.Equal(t, p.Last, opos[0].Last)
				atOffset := replayTo(t, in, opos)[0].Engine.State()
				if !groupstate.Equal(atTime, atOffset) {
					t.Fatalf("at %s (record %d): --at-time and --at-offset differ:\n%s", query.FormatMillis(inst), p.Last.Offset,
						strings.Join(groupstate.Diff(atOffset, atTime, 20), "\n"))
				}
				checked++
			}
			t.Logf("%d records, %d instants agree with their offsets", len(recs), checked)
		})
	}
}

type adminListing struct {
	GroupID string `json:"groupId"`
	Type    string `json:"type"`
	Proto   string `json:"protocol"`
	State   string `json:"state"`
	Simple  bool   `json:"isSimpleConsumerGroup"`
}

// groups lists every recording's groups with an Activity, as `replay groups` does.
func listGroups(t *testing.T, in eventlog.Source, until int64, f query.GroupFilter) ([]query.GroupRow, *query.Activity) {
	t.Helper()
	act := query.NewActivity()
	// From batches overwritten once applied: what the state and the activity keep is copied.
	res, err := replay.ReplayCuts(context.Background(), eventlogtest.Scribbling(in), []replay.Cut{{Partition: 0, Until: until, Observer: act}}, replay.Options{}, 0)
	require.NoError(t, err)
	return query.ListGroups([]query.PartitionState{{Partition: 0, View: res[0].Engine.State(), Activity: act}}, f), act
}

// On every recording, the group list is exactly Kafka's listGroups at capture time (group ids,
// type, protocol type, state, simple), and the groups that records name but Kafka does not
// list are the deleted ones, each with the record that deleted it.
func TestGroupsAgreeWithKafkaListGroups(t *testing.T) {
	for _, dir := range recordings(t) {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "admin.json"))
			require.NoError(t, err)
			var admin struct {
				ListGroups []adminListing `json:"listGroups"`
			}
			require.NoError(t, json.Unmarshal(raw, &admin))
			in := open(t, dir)
			rows, act := listGroups(t, in, math.MaxInt64, query.GroupFilter{})
			var ours, kafka []string
			for _, r := range rows {
				ours = append(ours, fmt.Sprintf("%s %s %q %s simple=%v", r.GroupID, r.Type, r.ProtocolType, r.State, r.Simple))
				require.NotNil(t, r.LastRecord, r.GroupID)
				require.Equal(t, int32(0), r.Partition)
			}
			listed := map[string]bool{}
			for _, l := range admin.ListGroups {
				kafka = append(kafka, fmt.Sprintf("%s %s %q %s simple=%v", l.GroupID, strings.ToLower(l.Type), l.Proto, l.State, l.Simple))
				listed[l.GroupID] = true
			}
			slices.Sort(kafka)
			require.Equal(t, kafka, ours)

			var gone []string
			for _, g := range act.KnownIDs() {
				if !listed[g] {
					gone = append(gone, g)
				}
			}
			require.Equal(t, gone, act.DeletedIDs(), "groups named by records but not listed by Kafka are the deleted ones")
			withDeleted, _ := listGroups(t, in, math.MaxInt64, query.GroupFilter{IncludeDeleted: true})
			require.Len(t, withDeleted, len(rows)+len(gone))
			for _, r := range withDeleted {
				if r.Deleted == nil {
					continue
				}
				require.Equal(t, "Dead", r.State)
				require.True(t, strings.HasSuffix(r.Deleted.Record, " tombstone"), r.Deleted.Record)
				require.LessOrEqual(t, r.Deleted.Offset, r.LastRecord.Offset)
			}
		})
	}
}

// The deletions recording deletes one group of each type with Kafka's Admin API: each is
// reported with the tombstone of its own metadata record.
func TestDeletedGroupsNameTheirTombstone(t *testing.T) {
	dir := filepath.Join(testcorpus.Recordings(), "deletions", "__consumer_offsets-0")
	if _, err := os.Stat(dir); err != nil {
		t.Skip(err)
	}
	in := open(t, dir)
	rows, _ := listGroups(t, in, math.MaxInt64, query.GroupFilter{IncludeDeleted: true, States: []string{"dead"}})
	got := map[string]string{}
	for _, r := range rows {
		got[r.GroupID] = string(r.Deleted.Type) + " " + r.Deleted.Record
	}
	require.Equal(t, map[string]string{
		"del-classic":  "classic GroupMetadata tombstone",
		"del-consumer": "consumer ConsumerGroupMetadata tombstone",
		"del-share":    "share ShareGroupMetadata tombstone",
		"del-simple":   "classic GroupMetadata tombstone",
		"del-streams":  "streams StreamsGroupMetadata tombstone",
	}, got)
}

func TestGroupFilters(t *testing.T) {
	dir := filepath.Join(testcorpus.Recordings(), "transactions", "__consumer_offsets-0")
	if _, err := os.Stat(dir); err != nil {
		t.Skip(err)
	}
	in := open(t, dir)
	ids := func(f query.GroupFilter) []string {
		rows, _ := listGroups(t, in, math.MaxInt64, f)
		var out []string
		for _, r := range rows {
			out = append(out, r.GroupID)
		}
		return out
	}
	require.Equal(t, []string{"txn-consumer"}, ids(query.GroupFilter{Types: map[groupstate.GroupType]bool{groupstate.GroupTypeConsumer: true}}))
	require.Equal(t, []string{"txn-open", "txn-simple"}, ids(query.GroupFilter{States: []string{"empty"}}))
	require.Equal(t, []string{"txn-open", "txn-simple"}, ids(query.GroupFilter{Pattern: "txn-[os]*"}))
	require.Error(t, query.GroupFilter{Pattern: "["}.Validate())
	require.Error(t, query.GroupFilter{States: []string{"Running"}}.Validate())
	rows, _ := listGroups(t, in, math.MaxInt64, query.GroupFilter{Pattern: "txn-open"})
	require.Equal(t, 1, rows[0].PendingOffsets, "txn-open's offset waits in the open transaction")
	require.Equal(t, 0, rows[0].Offsets)
}

func TestParseOffsets(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
		err  string
	}{
		{in: []string{"41"}, want: "41"},
		{in: []string{"0:41,3:7"}, want: "0:41,3:7"},
		{in: []string{"3:7", "0:41"}, want: "0:41,3:7"},
		{in: []string{"-5"}, err: `--at-offset "-5": offsets are 0 or more (leave --at-offset out for the end of the log)`},
		{in: []string{"-1"}, err: `offsets are 0 or more`},
		{in: []string{"2026-02-20T14:05:00Z"}, err: `--at-offset "2026-02-20T14:05:00Z" is a time, not an offset: use --at-time 2026-02-20T14:05:00Z`},
		{in: []string{"-2h"}, err: `is a time, not an offset`},
		{in: []string{"abc"}, err: `"abc" is not an offset`},
		{in: []string{"x:4"}, err: `"x" is not a __consumer_offsets partition number`},
		{in: []string{"1:4", "1:5"}, err: `names partition 1 twice`},
		{in: []string{"4,1:5"}, err: `mixes a bare offset`},
		{in: []string{"4,5"}, err: `2 bare offsets`},
		{in: []string{""}, err: `is empty`},
	} {
		p, err := query.ParseOffsets(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, "%v", tc.in)
			require.True(t, errors.Is(err, query.ErrBadPoint))
			continue
		}
		require.NoError(t, err, "%v", tc.in)
		require.Equal(t, tc.want, p.String())
	}
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 2, 20, 16, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "2026-02-20T14:05:00Z", want: "2026-02-20T14:05:00.000Z"},
		{in: "2026-02-20T15:05:00.250+01:00", want: "2026-02-20T14:05:00.250Z"},
		{in: "-2h", want: "2026-02-20T14:00:00.000Z"},
		{in: "-1h30m", want: "2026-02-20T14:30:00.000Z"},
		{in: "-2d", want: "2026-02-18T16:00:00.000Z"},
		{in: "-1d12h", want: "2026-02-19T04:00:00.000Z"},
		{in: "now", want: "2026-02-20T16:00:00.000Z"},
		{in: "1771596300000", want: "2026-02-20T14:05:00.000Z"},
		{in: "2026-02-20T14:05:00", err: "has no time zone"},
		{in: "2026-02-20", err: "a date without a time"},
		{in: "2h", err: "starts with '-'"},
		{in: "+2h", err: "in the future"},
		{in: "-2x", err: "not a relative time"},
		{in: "yesterday", err: "is not a time"},
	} {
		got, err := query.ParseTime(tc.in, now)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			require.True(t, errors.Is(err, query.ErrBadPoint))
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, query.FormatMillis(got.UnixMilli()), tc.in)
	}
}

// Impossible offsets are errors that say the partition's range, on one partition and on a
// log directory of several.
func TestResolveRefusesImpossibleOffsets(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(testcorpus.Recordings(), "deletions", "__consumer_offsets-0")
	if _, err := os.Stat(dir); err != nil {
		t.Skip(err)
	}
	in := open(t, dir)
	_, err := query.Resolve(ctx, in, []int32{0}, query.AtOffset(999999))
	require.EqualError(t, err, "--at-offset 999999 is past the end of partition 0 (offsets 0..96, next offset 97): leave --at-offset out for the end of the log")
	require.True(t, query.IsPointError(err))
	_, err = query.Resolve(ctx, in, []int32{0}, query.AtOffset(97))
	require.ErrorContains(t, err, "past the end")
	pos, err := query.Resolve(ctx, in, []int32{0}, query.AtOffset(96))
	require.NoError(t, err)
	require.Equal(t, int64(96), pos[0].Last.Offset)
	require.Nil(t, pos[0].Next)
	_, err = query.Resolve(ctx, in, []int32{0, 1}, query.AtOffset(5))
	require.ErrorContains(t, err, "give partition:offset pairs")
	_, err = query.Resolve(ctx, in, []int32{0}, query.AtOffsets(map[int32]int64{3: 5}))
	require.ErrorContains(t, err, "partition 3 is not among the partitions read (0)")
}

// Two partitions with unrelated offsets: pairs cut each where asked, an unnamed partition
// stays at its end.
func TestResolvePairsOnALogDirectory(t *testing.T) {
	found := testcorpus.Found(t)
	dir := filepath.Join(found, "Bheem6005-kafka")
	parts := testcorpus.PartitionDirs(t, dir)
	if len(parts) < 2 {
		t.Skip("need a log directory of several partitions")
	}
	in := open(t, filepath.Dir(parts[0]))
	ps, err := in.Partitions()
	require.NoError(t, err)
	var withRecords []int32
	for _, p := range ps {
		if f, n, _ := in.Offsets(p); n > f {
			withRecords = append(withRecords, p)
		}
	}
	if len(withRecords) < 2 {
		t.Skip("need two partitions with records")
	}
	p0, p1 := withRecords[0], withRecords[1]
	_, n0, _ := in.Offsets(p0)
	pos, err := query.Resolve(context.Background(), in, []int32{p0, p1}, query.AtOffsets(map[int32]int64{p0: n0 - 1}))
	require.NoError(t, err)
	require.Equal(t, n0, pos[0].Until)
	require.True(t, pos[1].AtEnd())
	require.Equal(t, int64(math.MaxInt64), pos[1].Until)
}

func TestSuggest(t *testing.T) {
	names := []string{"orders-app", "orders-app-v2", "payments", "Orders-App", "audit"}
	require.Equal(t, []string{"Orders-App", "orders-app-v2"}, query.Suggest("orders-app", names, 5))
	require.Equal(t, []string{"payments"}, query.Suggest("paymnets", names, 5))
	require.Equal(t, []string{"audit"}, query.Suggest("aduit", names, 5), "a swap of two letters is one edit")
	require.Equal(t, []string{"Orders-App", "orders-app", "orders-app-v2"}, query.Suggest("orders", names, 5))
	require.Empty(t, query.Suggest("zzz", names, 5))
}

// The group list reads each group's summary in place (groupstate.View.GroupSummary) instead
// of copying the group with its members: on every recording, after every batch, every group's
// row equals the one built from the full copy (View.Group, the way the list was built before),
// and the offset counts equal the lengths of the offset lists.
func TestGroupRowsAgreeWithFullViews(t *testing.T) {
	for _, dir := range recordings(t) {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			in := open(t, dir)
			e := replay.New(0, replay.Options{})
			it, err := in.Batches(0, 0)
			require.NoError(t, err)
			defer it.Close()
			checked := 0
			for it.Next() {
				require.NoError(t, e.Apply(it.Batch()))
				st := e.State()
				rows := query.ListGroups([]query.PartitionState{{Partition: 0, View: st}}, query.GroupFilter{})
				require.Len(t, rows, st.NumGroups())
				for _, r := range rows {
					g, ok := st.Group(r.GroupID)
					require.True(t, ok)
					want := rowFromFullView(g)
					want.Offsets = len(st.Offsets(r.GroupID))
					got := r
					got.Partition, got.PendingOffsets, got.LastRecord = 0, 0, nil
					require.Equal(t, want, got, "group %s at offset %d", r.GroupID, e.NextOffset())
					checked++
				}
			}
			require.NoError(t, it.Err())
			require.Positive(t, checked)
		})
	}
}

// rowFromFullView is the group list's row as it was built from a copy of the whole group.
func rowFromFullView(g groupstate.Group) query.GroupRow {
	r := query.GroupRow{GroupID: g.GroupID, Type: g.Type, State: g.State}
	i32 := func(v int32) *int32 { return &v }
	switch {
	case g.Classic != nil:
		c := g.Classic
		r.ProtocolType, r.Simple, r.Members, r.Generation = c.ProtocolType, c.Simple, len(c.Members), i32(c.Generation)
		if c.Protocol != nil {
			r.Assignor = *c.Protocol
		}
	case g.Consumer != nil:
		c := g.Consumer
		r.ProtocolType, r.Members = "consumer", len(c.Members)
		r.GroupEpoch, r.AssignmentEpoch = i32(c.GroupEpoch), i32(c.AssignmentEpoch)
		count := map[string]int{}
		for _, m := range c.Members {
			if m.ServerAssignor != nil && *m.ServerAssignor != "" {
				count[*m.ServerAssignor]++
			}
		}
		n := 0
		for a, k := range count {
			if k > n || k == n && a < r.Assignor {
				r.Assignor, n = a, k
			}
		}
	case g.Share != nil:
		s := g.Share
		r.ProtocolType, r.Members = "share", len(s.Members)
		r.GroupEpoch, r.AssignmentEpoch = i32(s.GroupEpoch), i32(s.AssignmentEpoch)
	case g.Streams != nil:
		s := g.Streams
		r.ProtocolType, r.Members = "streams", len(s.Members)
		r.GroupEpoch, r.AssignmentEpoch = i32(s.GroupEpoch), i32(s.AssignmentEpoch)
		if s.Topology != nil {
			r.TopologyEpoch = i32(s.Topology.Epoch)
		}
	}
	return r
}
