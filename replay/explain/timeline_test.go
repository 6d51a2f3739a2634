package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/eventlogtest"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/internal/testcorpus"
	"github.com/coordlog/coordlog/replay"
)

// events replays a recording up to until and returns the events of group.
func events(t *testing.T, scenario string, opts Options, until int64) []*Event {
	return eventsFrom(t, scenario, opts, until, false)
}

// eventsFrom is events, from batches overwritten once the engine moves past them when
// scribble is set (eventlogtest.Scribbling).
func eventsFrom(t *testing.T, scenario string, opts Options, until int64, scribble bool) []*Event {
	t.Helper()
	var src eventlog.Source
	src, err := segment.Open(filepath.Join(testcorpus.Recordings(), scenario, "__consumer_offsets-0"), segment.Options{})
	require.NoError(t, err)
	if scribble {
		src = eventlogtest.Scribbling(src)
	}
	var out []*Event
	opts.Emit = func(ev *Event) { out = append(out, ev) }
	a := NewAnalyzer(0, opts)
	e := replay.New(0, replay.Options{Mode: eventlog.Strict, Observer: a})
	require.NoError(t, e.Run(context.Background(), src, until))
	a.Close()
	return out
}

func ofKind(evs []*Event, k Kind) []*Event {
	var out []*Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// TestConversionStory: the online upgrade (classic -> consumer, when n1 joins with the
// consumer protocol) and downgrade (consumer -> classic, when the last consumer-protocol
// member leaves) of fixtures/real/conversion are conversions of one group, not deletions:
// the members carry over, the group epoch continues from the classic generation and back.
func TestConversionStory(t *testing.T) {
	evs := events(t, "conversion", Options{Group: "convert"}, math.MaxInt64)
	require.Empty(t, ofKind(evs, KindGroupDeleted), "a conversion deletes no group")
	conv := ofKind(evs, KindGroupConverted)
	require.Len(t, conv, 2)

	up := conv[0]
	require.Equal(t, int64(8), up.At.Offset, "the classic group's tombstone starts the upgrade")
	require.Equal(t, Conversion{From: "classic", To: "consumer", Epoch: 3}, Conversion{From: up.Conversion.From, To: up.Conversion.To, Epoch: up.Conversion.Epoch})
	require.Equal(t, "n1", up.Conversion.Trigger.ClientID)
	require.Equal(t, []string{"k2", "k1"}, memberNamesOf(up.Conversion.Members))
	require.Equal(t, "converted from a classic group to a consumer group at epoch 3 (online upgrade, KIP-848): n1 joined "+
		"with the consumer protocol; k2, k1 carry on as classic-protocol members", up.Text)

	down := conv[1]
	require.Equal(t, int64(86), down.At.Offset)
	require.Equal(t, "consumer", down.Conversion.From)
	require.Equal(t, "classic", down.Conversion.To)
	require.Equal(t, int32(11), down.Conversion.Epoch, "the classic generation continues the group epoch")
	require.Equal(t, "n3", down.Conversion.Trigger.ClientID)
	require.Equal(t, []string{"k3"}, memberNamesOf(down.Conversion.Members))
	require.Equal(t, "converted back from a consumer group to a classic group at generation 11 (online downgrade): n3 left "+
		"and only classic-protocol members remain (k3)", down.Text)

	// The rebalances around them: epoch 4 follows the upgrade's epoch 3, generation 12 the
	// downgrade's 11.
	var ends []string
	for _, e := range ofKind(evs, KindRebalanceEnd) {
		ends = append(ends, SummaryText(e))
	}
	require.Contains(t, ends, "epoch 4: n1 joined; s3-in:1 k2 -> n1; converged in 361 ms")
	require.Contains(t, ends, "epoch 11: n2 left; ended by the group's conversion")
	require.Contains(t, ends, "generation 12: the rebalance that follows the conversion back to a classic group; k3 gets s3-in:0-2")
	for _, e := range evs {
		require.NotContains(t, e.Text, "generation 3 -> 11")
	}
}

func memberNamesOf(ms []Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// TestStaticMemberStory: in fixtures/real/consumer the static member c3 (instance
// static-848) leaves temporarily (epoch -2), then restarts as a new member id that takes its
// partitions over without a rebalance.
func TestStaticMemberStory(t *testing.T) {
	evs := events(t, "consumer", Options{Group: "consumer-848"}, math.MaxInt64)
	away := ofKind(evs, KindMemberTemporaryLeave)
	require.Len(t, away, 1)
	require.Equal(t, int64(74), away[0].At.Offset)
	require.Equal(t, "static-848", *away[0].Member.InstanceID)
	require.Equal(t, "c3 (static member static-848) left temporarily (epoch -2): s2-in:2-4 stay assigned to it until it "+
		"rejoins with the same instance id or its session times out", away[0].Text)

	rep := ofKind(evs, KindMemberReplaced)
	require.Len(t, rep, 1)
	r := rep[0].Replacement
	require.Equal(t, "ECDg_i2EQ46K8Hjii1dsRQ", r.Previous.ID)
	require.Equal(t, "s7g17GuwThqk2ywlEyPtLA", r.Member.ID)
	require.Equal(t, "c3-restarted", r.Member.ClientID)
	require.False(t, r.Rebalance)
	require.Equal(t, r.Previous.Lane, r.Member.Lane, "the replacement continues the static member's lane")
	require.Equal(t, "instance static-848", r.Member.Lane)
	require.Equal(t, "static member static-848 restarted: c3-restarted (member s7g17GuwThqk2ywlEyPtLA) replaces c3 (member "+
		"ECDg_i2EQ46K8Hjii1dsRQ) and keeps s2-in:2-4, without a rebalance", rep[0].Text)
	for _, e := range evs {
		if e.Member != nil && e.Member.ID == "ECDg_i2EQ46K8Hjii1dsRQ" {
			require.NotContains(t, []Kind{KindMemberLeft, KindMemberFenced}, e.Kind, "a replaced member neither leaves nor is fenced")
		}
	}
	// No rebalance between the temporary leave and the replacement.
	for _, e := range ofKind(evs, KindRebalance) {
		require.False(t, e.At.Offset > 74 && e.At.Offset < 83, "rebalance at %d", e.At.Offset)
	}
}

// TestReconciliationStory: when c2 joins consumer-848, it waits for partitions c1 still owns;
// c1 is asked to revoke them, revokes them, and the group converges; cut before c1 revoked,
// the rebalance is open and says who waits for whom since when.
func TestReconciliationStory(t *testing.T) {
	evs := events(t, "consumer", Options{Group: "consumer-848"}, math.MaxInt64)
	var texts []string
	for _, e := range evs {
		if e.At.Offset >= 11 && e.At.Offset <= 20 {
			texts = append(texts, e.Text)
		}
	}
	require.Equal(t, []string{
		"c2 joined (member t6x8kk4pR8G1DJvvv_q4Iw, host 127.0.0.1), subscribed to s2-in",
		"rebalance to epoch 3: c2 joined; target: s2-in:3-5 c1 -> c2",
		"c2 waits for s2-in:3-5, still owned by c1 (epoch 3)",
		"c1 must revoke s2-in:3-5, which c2 waits for",
		"c1 revoked s2-in:3-5 after 155 ms; owns s2-in:0-2 at epoch 3",
		"c2 got s2-in:3-5 after waiting 585 ms; owns s2-in:3-5 at epoch 3",
		"epoch 3 converged in 585 ms",
	}, texts)

	cut := events(t, "consumer", Options{Group: "consumer-848"}, 19) // up to c1's UNREVOKED record
	last := cut[len(cut)-1]
	require.Equal(t, KindRebalanceEnd, last.Kind)
	require.Equal(t, "open", last.Rebalance.Outcome)
	require.Len(t, last.Rebalance.Waits, 2)
	require.Contains(t, last.Text, "c1 has not revoked s2-in:3-5, since 2026-11-29T19:05:54.192Z")
	require.Contains(t, last.Text, "c2 waits for c1 to revoke s2-in:3-5, since 2026-11-29T19:05:53.848Z")

	// The first rebalance is told with the topic's name although the record naming the topic
	// id comes later (offset 5).
	first := ofKind(evs, KindRebalance)[0]
	require.Equal(t, "s2-in", first.Rebalance.Moves[0].Topic)
	require.Equal(t, "KBRHv04FSnKzpnPI8cJpSw", first.Rebalance.Moves[0].TopicID)
}

// TestLeftAndFenced: c2 leaves consumer-848 (removed 25 ms after its last commit); c4-fenced is
// killed and removed by the session timeout the recording sets (3 s) about 3 s after its last
// commit. With Kafka's default of 45 s assumed, the log cannot take c4-fenced's 3 s silence
// for a timeout.
func TestLeftAndFenced(t *testing.T) {
	evs := events(t, "consumer", Options{Group: "consumer-848", SessionTimeoutMs: 3000}, math.MaxInt64)
	left, fenced := ofKind(evs, KindMemberLeft), ofKind(evs, KindMemberFenced)
	require.Len(t, left, 1)
	require.Equal(t, "c2", left[0].Member.ClientID)
	require.Equal(t, "left", left[0].Removal.Cause)
	require.Equal(t, int64(25), left[0].Removal.SilentMs)
	require.Len(t, fenced, 1)
	require.Equal(t, "c4-fenced", fenced[0].Member.ClientID)
	require.Equal(t, "fenced-session-timeout", fenced[0].Removal.Cause)
	require.Equal(t, int64(2997), fenced[0].Removal.SilentMs)
	require.Equal(t, int64(64), fenced[0].Removal.LastSeen.Offset, "its last commit")
	require.Equal(t, []Mark{MarkFenced}, fenced[0].Marks)

	evs = events(t, "consumer", Options{Group: "consumer-848"}, math.MaxInt64)
	require.Empty(t, ofKind(evs, KindMemberFenced))
	require.Len(t, ofKind(evs, KindMemberLeft), 2)
}

// TestStreamsStory: streams-app's rebalances say why: the topology's validation assigns the
// tasks, instance B's join moves active tasks from A, which revokes them first.
func TestStreamsStory(t *testing.T) {
	evs := events(t, "streams", Options{Group: "streams-app"}, math.MaxInt64)
	var ends []string
	for _, e := range ofKind(evs, KindRebalanceEnd) {
		ends = append(ends, SummaryText(e))
	}
	require.Equal(t, []string{
		"epoch 2: streams-app-A-StreamThread-1 joined; converged at once",
		"epoch 3: topology epoch 0 validated (its internal topics exist); streams-app-A-StreamThread-1 gets active " +
			"0_0,0_1,1_0,1_1; converged at once",
		"epoch 4: streams-app-B-StreamThread-1 joined; streams-app-A-StreamThread-1 gets standby 1_1, " +
			"streams-app-B-StreamThread-1 gets standby 1_0, active 0_1,1_1 streams-app-A-StreamThread-1 -> " +
			"streams-app-B-StreamThread-1; converged in 1.076 s",
		"epoch 5: streams-app-B-StreamThread-1 left; streams-app-A-StreamThread-1 gives up standby 1_1, " +
			"streams-app-B-StreamThread-1 gives up standby 1_0, active 0_1,1_1 streams-app-B-StreamThread-1 -> " +
			"streams-app-A-StreamThread-1; converged in 232 ms",
	}, ends)
	var waits []string
	for _, e := range ofKind(evs, KindReconcile) {
		if e.Reconcile.Step == "waiting" || e.Reconcile.Step == "revoking" {
			waits = append(waits, e.Text)
		}
	}
	require.Equal(t, []string{
		"streams-app-B-StreamThread-1 waits for active 0_1,1_1, still owned by streams-app-A-StreamThread-1 (epoch 4)",
		"streams-app-A-StreamThread-1 must revoke active 0_1,1_1, which streams-app-B-StreamThread-1 waits for",
	}, waits)
	// B's transactional commits (its producer's) are its signs of life: it left 76 ms after
	// the last one.
	left := ofKind(evs, KindMemberLeft)
	require.Len(t, left, 1)
	require.Equal(t, int64(35), left[0].Removal.LastSeen.Offset)
}

// TestClassicStaticReplacement: in classic-eager the static member restarts with a new member
// id and the same generation: a replacement, not a rebalance.
func TestClassicStaticReplacement(t *testing.T) {
	evs := events(t, "classic", Options{Group: "classic-eager"}, math.MaxInt64)
	rep := ofKind(evs, KindMemberReplaced)
	require.Len(t, rep, 1)
	require.Equal(t, int64(12), rep[0].At.Offset)
	require.Equal(t, "eager-static-1", *rep[0].Member.InstanceID)
	require.False(t, rep[0].Replacement.Rebalance)
	for _, e := range ofKind(evs, KindRebalanceEnd) {
		require.NotEqual(t, int64(12), e.At.Offset)
	}
	left := ofKind(evs, KindMemberLeft)
	require.Len(t, left, 1)
	require.Equal(t, "eager-2", left[0].Member.ClientID)
	require.Equal(t, "left", left[0].Removal.Cause, "383 ms after its commit, within its 10 s session timeout")
}

// TestEveryRecordingIsExplained: on every recording and every group, events come in log order,
// every text is said, no event is left without a position, the same log gives the same
// events, and every event survives JSON.
func TestEveryRecordingIsExplained(t *testing.T) {
	for _, sc := range []string{"classic", "compaction", "consumer", "conversion", "deletions", "share", "streams", "transactions", "diagnoses"} {
		t.Run(sc, func(t *testing.T) {
			all := events(t, sc, Options{}, math.MaxInt64)
			// Again from batches overwritten once applied: what the events keep is copied.
			again := eventsFrom(t, sc, Options{}, math.MaxInt64, true)
			require.NotEmpty(t, all)
			a, _ := json.Marshal(all)
			b, _ := json.Marshal(again)
			require.JSONEq(t, string(a), string(b), "deterministic, and nothing aliases a batch")
			groups := map[string]int64{}
			for _, e := range all {
				require.NotEmpty(t, e.Text, "%+v", e)
				require.NotEmpty(t, e.Group)
				require.NotContains(t, e.Text, "topic-id", "every topic id of the recordings is named by some record")
				if last, ok := groups[e.Group]; ok && e.Kind != KindRebalanceEnd && e.Kind != KindTransactionOpen {
					require.GreaterOrEqual(t, e.At.Offset, last, "log order in group %s: %s", e.Group, e.Text)
				}
				if e.Kind != KindRebalanceEnd && e.Kind != KindTransactionOpen {
					groups[e.Group] = e.At.Offset
				}
			}
			// One group's timeline is that group's events of the whole partition's analysis,
			// but for a deletion's cause, which reads the other groups (doc.go): the same
			// deletion, its cause one the whole analysis names or does not rule out.
			text := func(e *Event) string {
				if e.Deletion != nil {
					return string(e.Kind) + " " + deletedList(e.Deletion.Offsets)
				}
				return e.Text
			}
			for g := range groups {
				one := events(t, sc, Options{Group: g}, math.MaxInt64)
				var want []string
				var whole []*Event
				for _, e := range all {
					if e.Group == g {
						want = append(want, text(e))
						whole = append(whole, e)
					}
				}
				var got []string
				for i, e := range one {
					got = append(got, text(e))
					if d := e.Deletion; d != nil && i < len(whole) && whole[i].Deletion != nil {
						w := whole[i]
						require.Contains(t, append([]string{d.Cause}, d.Alternatives...), w.Deletion.Cause, "%s: %s", g, e.Text)
						if e.Certainty == CertaintyProved {
							require.Equal(t, w.Deletion.Cause, d.Cause, "%s: %s", g, e.Text)
						}
					}
				}
				require.Equal(t, want, got, g)
			}
		})
	}
}

// TestMarkedOnly: an analysis that emits only marked events (check's) emits exactly the marked
// events of the full one.
func TestMarkedOnly(t *testing.T) {
	for _, sc := range []string{"consumer", "deletions", "transactions", "compaction", "diagnoses"} {
		full := events(t, sc, Options{SessionTimeoutMs: 3000}, math.MaxInt64)
		marked := events(t, sc, Options{SessionTimeoutMs: 3000, MarkedOnly: true}, math.MaxInt64)
		var want, got []string
		for _, e := range full {
			if len(e.Marks) > 0 {
				want = append(want, e.Text)
			}
		}
		for _, e := range marked {
			got = append(got, e.Text)
		}
		require.Equal(t, want, got, sc)
		require.NotEmpty(t, got, sc)
	}
}

func TestDuration(t *testing.T) {
	for ms, want := range map[int64]string{0: "0 ms", 585: "585 ms", 1000: "1 s", 2997: "2.997 s", 59_999: "59.999 s",
		60_000: "1m00s", 263_000: "4m23s", 3_600_000: "1h00m", 43_500_000: "12h05m", 7*86_400_000 + 18*3_600_000: "7d18h", -1: "an unknown time"} {
		require.Equal(t, want, Duration(ms), "%d", ms)
	}
}

func TestRangesLabel(t *testing.T) {
	require.Equal(t, "0-5", rangesLabel([]int32{0, 1, 2, 3, 4, 5}))
	require.Equal(t, "0,1", rangesLabel([]int32{0, 1}))
	require.Equal(t, "0,2-4,7", rangesLabel([]int32{0, 2, 3, 4, 7}))
	require.Equal(t, "nothing", assignmentsLabel(nil))
	require.Equal(t, "active 0_1,1_1 standby 1_0", assignmentsLabel([]Assignment{
		{Subtopology: "0", Role: "active", Partitions: []int32{1}}, {Subtopology: "1", Role: "active", Partitions: []int32{1}},
		{Subtopology: "1", Role: "standby", Partitions: []int32{0}}}))
	require.Equal(t, "topic-id KBRHv04F:0", assignmentsLabel([]Assignment{{TopicID: "KBRHv04FSnKzpnPI8cJpSw", Partitions: []int32{0}}}))
}

// TestDeletionDiagnosis: the causes a batch of tombstones fits, by doc.go's rule table, and
// how sure the one named is.
func TestDeletionDiagnosis(t *testing.T) {
	const day = 24 * 3600 * 1000
	const now = 100 * day
	type offs map[string]int64 // "topic/partition" -> commit time
	type grp struct {
		id     string
		offs   offs
		member string // a member's subscription ("" for none)
	}
	cases := []struct {
		name      string
		retention int64
		others    []grp // the partition's other groups (after the batch)
		lost      []offs
		deleted   bool
		keeps     offs // what the first group keeps
		cause     string
		certainty Certainty
		alts      string
	}{
		{name: "group and young offsets", lost: []offs{{"t/0": now - 5000}}, deleted: true,
			cause: "group-deletion", certainty: CertaintyProved},
		{name: "group without offsets", lost: []offs{{}}, deleted: true,
			cause: "group-deletion", certainty: CertaintyOneOfSeveral, alts: "cleanup"},
		{name: "group and old offsets, younger ones kept", others: []grp{{id: "o", offs: offs{"u/0": now - day}}},
			lost: []offs{{"t/0": now - 8*day}}, deleted: true, cause: "expiry", certainty: CertaintyLikely, alts: "group-deletion"},
		{name: "group and old offsets, older ones kept", others: []grp{{id: "o", offs: offs{"u/0": now - 9*day}}},
			lost: []offs{{"t/0": now - 8*day}}, deleted: true, cause: "group-deletion", certainty: CertaintyProved},
		{name: "group and old offsets, nothing to compare", lost: []offs{{"t/0": now - 8*day}}, deleted: true,
			cause: "group-deletion", certainty: CertaintyOneOfSeveral, alts: "expiry"},
		{name: "one group's young offsets, it stays", lost: []offs{{"t/0": now - 1000}}, keeps: offs{"u/0": now - 1000},
			cause: "offset-delete", certainty: CertaintyOneOfSeveral, alts: "topic-deletion"},
		{name: "another group keeps the partition", others: []grp{{id: "o", offs: offs{"t/0": now - 1000}, member: "t"}},
			lost: []offs{{"t/0": now - 1000}}, keeps: offs{"u/0": now - 1000}, cause: "offset-delete", certainty: CertaintyProved},
		{name: "several groups' young offsets", lost: []offs{{"t/0": now - 1000}, {"t/0": now - 2000}},
			cause: "topic-deletion", certainty: CertaintyLikely, alts: "offset-delete"},
		{name: "several groups' offsets younger than the given retention", retention: 7 * day,
			lost: []offs{{"t/0": now - day}, {"t/0": now - day}}, cause: "topic-deletion", certainty: CertaintyLikely, alts: "offset-delete"},
		{name: "several groups' offsets, one keeping another partition of the topic", lost: []offs{{"t/0": now - 1000}, {"t/0": now - 2000}},
			keeps: offs{"t/1": now - 1000}, cause: "offset-delete", certainty: CertaintyProved},
		{name: "a topic its members subscribe to", lost: []offs{{"t/0": now - 1000}}, keeps: offs{"u/0": now - 1000},
			others: []grp{{id: "g0", member: "t"}}, cause: "topic-deletion", certainty: CertaintyProved},
	}
	put := func(g *groupModel, o offs) {
		for k, ts := range o {
			topic, part, _ := strings.Cut(k, "/")
			p, _ := strconv.Atoi(part)
			g.offsets.put(offKey{g.topic(topic), int32(p)}, offState{offset: 1, ts: ts})
		}
	}
	for _, c := range cases {
		a := NewAnalyzer(0, Options{OffsetsRetentionMs: c.retention})
		var dels []delGroup
		for i, lost := range c.lost {
			g := a.group("g" + strconv.Itoa(i))
			g.typ = typeConsumer
			d := &Deletion{GroupDeleted: c.deleted, YoungestAgeMs: -1}
			for k, ts := range lost {
				topic, part, _ := strings.Cut(k, "/")
				p, _ := strconv.Atoi(part)
				d.Offsets = append(d.Offsets, OffsetChange{Topic: topic, Partition: int32(p), CommittedAt: ts})
				if age := now - ts; d.YoungestAgeMs < 0 || age < d.YoungestAgeMs {
					d.YoungestAgeMs = age
				}
			}
			if i == 0 {
				put(g, c.keeps)
			}
			dels = append(dels, delGroup{g: g, d: d, acc: &tombAcc{}, deleted: c.deleted})
		}
		for _, o := range c.others {
			g := a.group(o.id)
			g.typ = typeConsumer
			put(g, o.offs)
			if o.member != "" {
				g.members["m"] = &memberModel{id: "m", subscription: o.member}
			}
		}
		diag := a.diagnoseDeletions(dels, len(c.lost), now)[0]
		d := dels[0].d
		require.Equal(t, c.cause, d.Cause, c.name)
		require.Equal(t, c.certainty, diag.certainty, c.name)
		require.Equal(t, c.alts, strings.Join(d.Alternatives, ","), c.name)
		require.NotEmpty(t, diag.evidence, c.name)
	}
}

// TestClassifyRemoval: doc.go's leave-or-fence rule: sooner than a timeout after the member's
// own last record is a leave, proved (likely when the group's session timeout is assumed);
// about a timeout later, likely that timeout; longer, the log cannot tell.
func TestClassifyRemoval(t *testing.T) {
	g := newGroupModel("g")
	at := func(ms int64) Position { return Position{Offset: ms, Timestamp: ms} }
	member := func(sessionMs int32) *memberModel {
		return &memberModel{id: "m", clientID: "c", protocol: typeConsumer, sessionTimeoutMs: sessionMs, rebalanceTimeoutMs: 300_000,
			lastSeen: at(1000), lastOwn: at(1000), ownSet: true}
	}
	classic := func(sessionMs int32) func() *memberModel {
		return func() *memberModel {
			m := member(sessionMs)
			m.protocol = typeClassic
			return m
		}
	}
	consumer := func() *memberModel { return member(-1) }
	cases := []struct {
		name      string
		session   int64 // Options.SessionTimeoutMs (0: assumed)
		m         func() *memberModel
		at        int64
		cause     string
		certainty Certainty
	}{
		{"removed right after its heartbeat", 45_000, consumer, 1025, "left", CertaintyProved},
		{"the same, the group's session timeout assumed", 0, consumer, 1025, "left", CertaintyLikely},
		{"removed a session timeout later", 45_000, consumer, 1000 + 45_010, "fenced-session-timeout", CertaintyLikely},
		{"removed just before a timeout could fire", 45_000, consumer, 1000 + 41_000, "left", CertaintyProved},
		{"silent far longer than a timeout", 45_000, consumer, 1000 + 3_600_000, "unknown", CertaintyOneOfSeveral},
		{"classic member: 7 s of its 10 s session", 0, classic(10_000), 1000 + 7_024, "left", CertaintyProved},
		{"classic member: its own session timeout", 0, classic(10_000), 1000 + 10_100, "fenced-session-timeout", CertaintyLikely},
		{"revoking past its rebalance timeout", 45_000, func() *memberModel {
			m := member(-1)
			m.pending = items{{name: "t", part: 0}}
			m.revoking, m.revokingAt = true, at(1000)
			return m
		}, 1000 + 300_000, "fenced-rebalance-timeout", CertaintyLikely},
		{"static member on temporary leave", 45_000, func() *memberModel {
			m := member(-1)
			away := at(5000)
			m.awayAt = &away
			return m
		}, 50_000, "expired-after-temporary-leave", CertaintyLikely},
	}
	for _, c := range cases {
		a := NewAnalyzer(0, Options{SessionTimeoutMs: c.session})
		r, d := a.classifyRemoval(g, c.m(), at(c.at))
		require.Equal(t, c.cause, r.Cause, c.name)
		require.Equal(t, c.certainty, d.certainty, c.name)
		require.NotEmpty(t, d.evidence, c.name)
		if d.certainty != CertaintyProved {
			require.NotEmpty(t, d.alternatives, c.name)
		}
	}
}

// TestOffsetMarks: in the transactions recording, producer 1's second transaction moved
// txn-consumer's s6-in-1 back from 14 to 11: that committed offset carries the rewind, the
// others no mark.
func TestOffsetMarks(t *testing.T) {
	src, err := segment.Open(filepath.Join(testcorpus.Recordings(), "transactions", "__consumer_offsets-0"), segment.Options{})
	require.NoError(t, err)
	m := NewOffsetMarks(0, Options{})
	e := replay.New(0, replay.Options{Mode: eventlog.Strict, Observer: m})
	require.NoError(t, e.Run(context.Background(), src, math.MaxInt64))
	m.Close()
	var labels []string
	unmarked := 0
	for _, g := range e.State().OffsetGroupIDs() {
		for _, o := range e.State().Offsets(g) {
			if mk := m.Of(g, o.Topic, o.Partition, o.RecordOffset); mk != nil {
				labels = append(labels, fmt.Sprintf("%s %s-%d %s", g, o.Topic, o.Partition, mk.Label(o.CommittedOffset)))
			} else {
				unmarked++
			}
		}
	}
	require.Equal(t, []string{"txn-consumer s6-in-1 rewind 14->11 (-3)"}, labels)
	require.Greater(t, unmarked, 0)
}
