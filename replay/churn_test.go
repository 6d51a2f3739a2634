package replay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

var rewriteChurn = flag.Bool("rewrite-churn", false, "rewrite testdata/churn.golden")

const churnGolden = "testdata/churn.golden"

// TestChurnGolden replays random logs of every record type (groups of every type created,
// changed, emptied and deleted, members joining and leaving, assignments with repeated
// subtopologies, topics and partitions, null and empty lists, transactions, records Kafka's
// loader fails on) under every Kafka version, in forensic mode, and compares a digest of what
// came out with testdata/churn.golden: the state's Dump every 40 batches and at the end, every
// violation's message, the counters, and the state image's bytes (the snapshot payload) at the
// end. The golden digests were written by the engine before its allocation-free replay path
// (issue 17): any change of what replay computes, of the messages, or of the image bytes shows
// here. Run with -rewrite-churn only after an intended change, and say why in the commit.
//
// The source hands out each batch in a buffer it overwrites once the batch is applied, as the
// segment and Pebble readers reuse theirs: state that kept a string or slice of a record's
// bytes (or of the engine's reused decode values) would differ.
func TestChurnGolden(t *testing.T) {
	const seeds, batches = 24, 300
	var lines []string
	for _, v := range groupstate.KafkaVersions {
		for seed := range seeds {
			lines = append(lines, fmt.Sprintf("%s %d %s", v, seed, churnDigest(t, v, uint64(seed), batches)))
		}
	}
	got := strings.Join(lines, "\n") + "\n"
	if *rewriteChurn {
		if err := os.WriteFile(churnGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(churnGolden)
	if err != nil {
		t.Fatal(err)
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	if len(wl) != len(gl) {
		t.Fatalf("%d digests, golden has %d", len(gl), len(wl))
	}
	for i := range wl {
		if wl[i] != gl[i] {
			t.Errorf("digest differs: got %q, golden %q", gl[i], wl[i])
		}
	}
}

// churnDigest replays one random log and digests it.
func churnDigest(t *testing.T, v groupstate.KafkaVersion, seed uint64, batches int) string {
	t.Helper()
	g := newChurnGen(v, seed)
	e := New(0, Options{Version: v, Mode: eventlog.Forensic})
	h := sha256.New()
	for i := range batches {
		b := g.batch()
		if err := applyScribbled(e, b); err != nil {
			t.Fatalf("Kafka %s seed %d batch %d: %v", v, seed, i, err)
		}
		if i%40 == 39 {
			writeDump(t, h, e.State())
		}
	}
	writeDump(t, h, e.State())
	for _, vi := range e.Violations() {
		fmt.Fprintln(h, vi.Error())
	}
	fmt.Fprintf(h, "%+v\n", e.Stats())
	st := e.State()
	plan := st.PlanImage(4096)
	h.Write(st.AppendImageHead(nil))
	for i := range plan.NumParts() {
		h.Write(st.AppendImagePart(nil, plan, i))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func writeDump(t *testing.T, h interface{ Write([]byte) (int, error) }, st groupstate.View) {
	b, err := json.Marshal(st.Dump())
	if err != nil {
		t.Fatal(err)
	}
	h.Write(b)
}

// applyScribbled applies a copy of b and then overwrites every key and value byte of the copy
// with pseudo-random bytes (a constant fill would keep equal-length keys equal, and small Go
// maps compare keys without hashing them).
func applyScribbled(e *Engine, b *eventlog.Batch) error {
	c := b.Clone()
	err := e.Apply(c)
	seed := uint64(b.BaseOffset)
	for i := range c.Records {
		for _, p := range [][]byte{c.Records[i].Key, c.Records[i].Value} {
			for j := range p {
				seed = seed*6364136223846793005 + 1442695040888963407
				p[j] = byte(seed >> 56)
			}
		}
	}
	return err
}

// churnGen writes random batches over a small universe of groups, members, topics and
// subtopologies, so that records collide, repeat and undo each other.
type churnGen struct {
	v      groupstate.KafkaVersion
	layout recordcodec.Layout
	r      *rand.Rand
	next   int64
	ts     int64
	types  []recordcodec.RecordType
}

func newChurnGen(v groupstate.KafkaVersion, seed uint64) *churnGen {
	g := &churnGen{v: v, r: rand.New(rand.NewPCG(seed, uint64(v))), ts: 1_760_000_000_000}
	if v == groupstate.Kafka40 {
		g.layout = recordcodec.Layout40
	}
	for id := range recordcodec.NumRecordTypes {
		t := recordcodec.RecordType(id)
		if v.KnowsRecordType(int16(id)) && recordcodec.NewValue(t, g.layout) != nil {
			g.types = append(g.types, t)
		}
	}
	return g
}

func (g *churnGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

// group picks a group id for record type t: mostly one of the type's family, sometimes one
// shared by every family (wrong-type records, simple groups replaced).
func (g *churnGen) group(t recordcodec.RecordType) string {
	if g.r.IntN(8) == 0 {
		return "x"
	}
	switch {
	case t <= recordcodec.OffsetCommit:
		return g.pick("k0", "k1", "c0", "s0", "h0", "x")
	case t == recordcodec.GroupMetadata:
		return g.pick("k0", "k1")
	case t >= 17:
		return g.pick("s0", "s1")
	case t >= 9 && t <= 15:
		return g.pick("h0", "h1")
	}
	return g.pick("c0", "c1")
}

func (g *churnGen) batch() *eventlog.Batch {
	b := &eventlog.Batch{BaseOffset: g.next, Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: g.ts, MaxTimestamp: g.ts}
	g.ts++
	switch g.r.IntN(12) {
	case 0: // a transaction marker
		b.ProducerID, b.ProducerEpoch = int64(1+g.r.IntN(3)), 0
		b.Attributes = eventlog.AttrTransactional | eventlog.AttrControl
		typ := int16(g.r.IntN(2))
		k := []byte{0, 0, byte(typ >> 8), byte(typ)}
		b.Records = []eventlog.Record{{Offset: g.next, Timestamp: g.ts, Key: k, Value: []byte{0, 0, 0, 0, 0, 7}}}
	case 1: // transactional offsets
		b.ProducerID, b.ProducerEpoch = int64(1+g.r.IntN(3)), 0
		b.Attributes = eventlog.AttrTransactional
		for range 1 + g.r.IntN(3) {
			b.Records = append(b.Records, g.record(recordcodec.OffsetCommit))
		}
	default:
		for range 1 + g.r.IntN(6) {
			b.Records = append(b.Records, g.record(g.types[g.r.IntN(len(g.types))]))
		}
	}
	for i := range b.Records {
		b.Records[i].Offset, b.Records[i].Timestamp = g.next, g.ts
		g.next++
	}
	b.LastOffset, b.NumRecords = g.next-1, int32(len(b.Records))
	return b
}

func (g *churnGen) record(t recordcodec.RecordType) eventlog.Record {
	k := recordcodec.Key{Type: t, Group: g.group(t), Topic: g.pick("t0", "t1"), Partition: int32(g.r.IntN(3)),
		Member: g.pick("m0", "m1", "m2", "m3"), Regex: g.pick("t.*", "u.*")}
	kb, err := k.AppendTo(nil)
	if err != nil {
		panic(err)
	}
	if g.r.IntN(4) == 0 {
		return eventlog.Record{Key: kb} // a tombstone
	}
	for {
		v := recordcodec.NewValue(t, g.layout)
		if lo, hi, ok := recordcodec.ValueVersions(t, g.layout); ok && hi > lo {
			reflect.ValueOf(v).Elem().FieldByName("Version").SetInt(int64(lo + int16(g.r.IntN(int(hi-lo+1)))))
		}
		g.fill(reflect.ValueOf(v).Elem(), "", 0)
		if vb, err := recordcodec.EncodeValue(v); err == nil {
			return eventlog.Record{Key: kb, Value: vb}
		}
		// A field set that its version cannot carry: draw again.
	}
}

var (
	churnUUIDs = []recordcodec.UUID{{1}, {2}, {3}}
	// A consumer-protocol subscription ("foo", owned foo-0, rack) and assignment (foo-0), as a
	// Kafka 4.x client writes them, and bytes that do not decode.
	churnSubscription = mustHex("0003000000010003666f6fffffffff000000010003666f6f000000010000000000000000000004726163 6b")
	churnAssignment   = mustHex("0003000000010003666f6f0000000100000000ffffffff")
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// fill sets the exported fields of x at random, from pools that make values collide.
func (g *churnGen) fill(x reflect.Value, name string, depth int) {
	r := g.r
	switch x.Kind() {
	case reflect.Struct:
		if x.Type() == reflect.TypeOf(recordcodec.UUID{}) {
			x.Set(reflect.ValueOf(churnUUIDs[r.IntN(len(churnUUIDs))]))
			return
		}
		for i := range x.NumField() {
			f := x.Type().Field(i)
			if !f.IsExported() || f.Name == "Version" || f.Name == "UnknownTags" {
				continue
			}
			g.fill(x.Field(i), f.Name, depth+1)
		}
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			x.SetZero()
			return
		}
		p := reflect.New(x.Type().Elem())
		g.fill(p.Elem(), name, depth+1)
		x.Set(p)
	case reflect.Slice:
		if x.Type().Elem().Kind() == reflect.Uint8 { // bytes
			switch r.IntN(4) {
			case 0:
				x.SetZero()
			case 1:
				x.SetBytes([]byte{byte(r.IntN(3))})
			case 2:
				x.SetBytes(churnSubscription)
			default:
				x.SetBytes(churnAssignment)
			}
			return
		}
		if r.IntN(5) == 0 {
			x.SetZero() // null (encoded as empty where not nullable)
			return
		}
		n := [...]int{0, 0, 0, 1, 1, 1, 1, 2, 2, 3}[r.IntN(10)] // few repeated keys
		if depth > 3 {
			n = r.IntN(2)
		}
		if name == "Partitions" || name == "AssignmentEpochs" {
			n = r.IntN(5) // partition sets: repeats are normal
		}
		s := reflect.MakeSlice(x.Type(), n, n)
		for i := range n {
			g.fill(s.Index(i), name, depth+1)
		}
		x.Set(s)
	case reflect.String:
		switch name {
		case "SubtopologyId":
			x.SetString(g.pick("0", "1", "2"))
		case "ProtocolType":
			x.SetString(g.pick("", "consumer", "connect"))
		case "Key":
			x.SetString(g.pick("a", "b", "num.standby.replicas"))
		case "MemberId", "Leader":
			x.SetString(g.pick("m0", "m1", "m2", "m3"))
		default:
			x.SetString(g.pick("", "a", "b", "t0", "t1"))
		}
	case reflect.Int8:
		x.SetInt(int64(r.IntN(5)))
	case reflect.Int16:
		x.SetInt(int64(r.IntN(3)))
	case reflect.Int32:
		switch name {
		case "MemberEpoch", "PreviousMemberEpoch", "Epoch", "AssignmentEpoch", "GroupEpoch", "AssignmentEpochs":
			x.SetInt(int64(r.IntN(6) - 2))
		case "Partitions", "Partition":
			x.SetInt(int64(r.IntN(5)))
		default:
			x.SetInt(int64(r.IntN(4) - 1))
		}
	case reflect.Int64:
		x.SetInt(int64(r.IntN(5) - 1))
	case reflect.Uint16:
		x.SetUint(uint64(r.IntN(3)))
	case reflect.Bool:
		x.SetBool(r.IntN(2) == 0)
	}
}

// TestChurnRestoreEquals: a state restored from its image at any batch, then replayed to the
// end, equals the state replayed straight through (the restored state's members are updated
// in place, like replayed ones).
func TestChurnRestoreEquals(t *testing.T) {
	for _, v := range groupstate.KafkaVersions {
		for seed := range 6 {
			g := newChurnGen(v, uint64(100+seed))
			var log []*eventlog.Batch
			for range 200 {
				log = append(log, g.batch())
			}
			full := New(0, Options{Version: v, Mode: eventlog.Forensic})
			for _, b := range log {
				if err := applyScribbled(full, b); err != nil {
					t.Fatal(err)
				}
			}
			cut := 50 + seed*20
			head := New(0, Options{Version: v, Mode: eventlog.Forensic})
			for _, b := range log[:cut] {
				if err := applyScribbled(head, b); err != nil {
					t.Fatal(err)
				}
			}
			st := restoreImage(t, head.State())
			tail := Restore(0, st, head.NextOffset(), head.Stats(), Options{Mode: eventlog.Forensic})
			src := &benchSource{batches: log}
			if err := tail.Run(context.Background(), src, math.MaxInt64); err != nil {
				t.Fatal(err)
			}
			if d := groupstate.Diff(full.State(), tail.State(), 5); len(d) > 0 {
				t.Errorf("Kafka %s seed %d cut %d: restored and replayed state differ:\n%s", v, seed, cut, strings.Join(d, "\n"))
			}
		}
	}
}

// restoreImage round-trips a state through its image.
func restoreImage(t *testing.T, st groupstate.View) *groupstate.State {
	t.Helper()
	plan := st.PlanImage(2048)
	out, err := groupstate.NewFromImageHead(string(st.AppendImageHead(nil)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range plan.NumParts() {
		p, err := groupstate.DecodeImagePart(string(st.AppendImagePart(nil, plan, i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := out.AddImagePart(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := out.FinishImage(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImageCacheEqualsImage: images written with the state's image cache (entries of ids no
// mutator touched since the previous image copied from it) are byte for byte the images
// written without it, at every point of random logs of every record type: a mutator that
// changed a group or offsets without recording the id would show here.
func TestImageCacheEqualsImage(t *testing.T) {
	for _, v := range groupstate.KafkaVersions {
		for seed := range 8 {
			g := newChurnGen(v, uint64(200+seed))
			e := New(0, Options{Version: v, Mode: eventlog.Forensic})
			c := e.ImageCache()
			for i := range 300 {
				if err := applyScribbled(e, g.batch()); err != nil {
					t.Fatal(err)
				}
				if i%(7+seed) != 0 {
					continue
				}
				st := e.State()
				plan := st.PlanImage(1024)
				c.Begin(plan)
				for p := range plan.NumParts() {
					want := st.AppendImagePart(nil, plan, p)
					got := st.AppendImagePartCached(nil, plan, p, c)
					if string(got) != string(want) {
						t.Fatalf("Kafka %s seed %d batch %d part %d: the cached image differs", v, seed, i, p)
					}
				}
				c.Commit()
			}
		}
	}
}
