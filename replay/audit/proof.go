package audit

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
)

// CompactionProof proves that a compacted log replays to the state of its original.
//
// Unless Exact, one difference is tolerated, because Kafka's own cleaner and loader produce
// it and it carries no data: an implicit group (a classic group with no protocol type,
// members, generation, protocol, leader or state timestamp: what replaying an offset commit
// creates for a group it does not know) that exists on one side only. Compaction creates such
// differences in two ways, both Kafka's: offset commits superseded by their tombstones no
// longer create the group on replay, and an offset commit that outlives an expired group
// tombstone creates it again. Offsets, pending transactions and every other group are compared
// exactly.
//
// The proof runs in bounded memory, whatever the size of the logs. The groups are replayed
// into a state (what a coordinator loading the partition holds of them), the committed and
// pending offsets into an offset book (offsetBook: per key, the record that holds it, 48 bytes
// or so instead of the state's few hundred). When a log's offsets do not fit MemoryBudget, the
// keys are split by hash into parts, and each part is compared by replaying both logs again,
// holding only that part's offsets. The compacted log is replayed first, so that finding out
// and counting the keys costs a replay of the shorter log (a part of the original that still
// does not fit, with keys the cleaner removed, sizes the parts again).
type CompactionProof struct {
	// Options are the replay rules of both replays.
	Options replay.Options
	// Exact tolerates no difference at all.
	Exact bool
	// Report, when set, is told how many implicit groups differed in number (a tolerated
	// difference worth a line), when the offsets are compared in parts, and as each part is.
	Report func(format string, args ...any)
	// MemoryBudget bounds the bytes of offsets the proof holds at once (default
	// DefaultProofMemory).
	MemoryBudget int64
}

// DefaultProofMemory is the default CompactionProof.MemoryBudget.
const DefaultProofMemory = 160 << 20

// Verify replays each partition in parts of original and compacted to its end and returns an
// error naming the first partition whose next offset or state differs (it satisfies
// eventlog/compact's VerifyFunc).
func (pr CompactionProof) Verify(ctx context.Context, original, compacted eventlog.Source, parts []int32) error {
	for _, p := range parts {
		if err := pr.verifyPartition(ctx, original, compacted, p); err != nil {
			return err
		}
	}
	return nil
}

func (pr CompactionProof) verifyPartition(ctx context.Context, original, compacted eventlog.Source, p int32) error {
	budget := pr.MemoryBudget
	if budget <= 0 {
		budget = DefaultProofMemory
	}
	limit := max(int(budget/offsetBookEntryBytes), 16)
	hash := newKeyHash()
	for buckets := 1; ; {
		done, distinct, err := pr.verifyBuckets(ctx, original, compacted, p, hash, buckets, limit)
		if err != nil || done {
			return err
		}
		// A part held more than the budget: the log has about distinct keys (counted by the
		// pass that stopped keeping them), to spread over enough parts, with a margin for the
		// estimate and for pending entries, and at least twice as many as before.
		buckets = max(2*buckets, int(math.Ceil(distinct*1.25/float64(limit))))
		if pr.Report != nil {
			pr.Report("partition %d: about %.0f offset keys exceed the proof's memory budget (%d MiB): comparing them in %d parts, each replayed from both logs", p, distinct, budget>>20, buckets)
		}
	}
}

// verifyBuckets compares partition p in the given number of key parts. done is false when a
// part's offsets exceeded limit entries (more parts are needed).
func (pr CompactionProof) verifyBuckets(ctx context.Context, original, compacted eventlog.Source, p int32, hash keyHash, buckets, limit int) (done bool, distinct float64, err error) {
	for k := range buckets {
		// One log after the other: the proof holds one log's groups and one part of its
		// offsets at a time. The compacted log first: when the offsets do not fit, its pass
		// (a fraction of the original's length) is the one that finds out and counts the keys
		// to size the parts by; a part of the original that still does not fit (its deleted
		// keys) sizes them again.
		b, err := pr.pass(ctx, compacted, p, hash, k, buckets, limit, k == 0)
		if err != nil || b.over {
			return false, b.distinct, wrapPass(p, "compacted log", err)
		}
		a, err := pr.pass(ctx, original, p, hash, k, buckets, limit, k == 0)
		if err != nil || a.over {
			return false, max(a.distinct, b.distinct), wrapPass(p, "original", err)
		}
		if k == 0 {
			if a.next != b.next {
				return false, 0, fmt.Errorf("partition %d: next offset %d after the original, %d after the compacted log", p, a.next, b.next)
			}
			if a.groups != b.groups || !slices.Equal(a.producers, b.producers) {
				return false, 0, pr.explain(ctx, original, compacted, p, hash, k, buckets)
			}
			if d := a.implicit - b.implicit; d != 0 && pr.Report != nil {
				pr.Report("partition %d: %d implicit group(s) (no members, no metadata; created by replaying offset commits) exist on one side only, as after Kafka's own cleaner", p, max(d, -d))
			}
		}
		if a.offsets != b.offsets {
			return false, 0, pr.explain(ctx, original, compacted, p, hash, k, buckets)
		}
		if buckets > 1 && pr.Report != nil {
			// Each part replays both logs again: say how far the proof is.
			pr.Report("partition %d: offsets part %d of %d equal in both logs", p, k+1, buckets)
		}
	}
	return true, 0, nil
}

func wrapPass(p int32, which string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("partition %d: replay of the %s: %w", p, which, err)
}

// passResult is what one replay of a log gives the proof.
type passResult struct {
	next      int64
	over      bool     // the part's offsets exceeded the limit: only distinct is set
	distinct  float64  // the log's offset keys, estimated (when over)
	groups    [32]byte // the groups' digest (first part only)
	implicit  int
	producers []int64   // the producers with a pending transaction at the end (first part)
	offsets   [2]uint64 // the part's committed and pending offsets
}

// pass replays partition p of src: the groups into the engine's state (which keeps no
// offsets), part k of the offsets into a book.
func (pr CompactionProof) pass(ctx context.Context, src eventlog.Source, p int32, hash keyHash, k, buckets, limit int, groups bool) (passResult, error) {
	book := newOffsetBook(hash, k, buckets, limit)
	opts := pr.Options
	opts.OffsetFilter = func(string, string, int32) bool { return false }
	if o := pr.Options.Observer; o != nil {
		opts.Observer = replay.ObserverFunc(func(ev *replay.Event, st groupstate.View) { o.Observe(ev, st); book.Observe(ev, st) })
	} else {
		opts.Observer = book
	}
	e := replay.New(p, opts)
	err := e.Run(ctx, src, math.MaxInt64)
	if book.over && err == nil {
		return passResult{over: true, distinct: book.distinct.estimate()}, nil
	}
	if err != nil {
		return passResult{}, err
	}
	r := passResult{next: e.NextOffset(), offsets: book.digest()}
	if groups {
		if r.groups, r.implicit, err = StateDigest(e.State(), pr.Exact); err != nil {
			return passResult{}, err
		}
		r.producers = book.producerIDs()
	}
	return r, nil
}

// StateDigest is the SHA-256 of the state's canonical JSON, written piece by piece in the
// order of its Dump (groups by id, offsets by group, topic and partition, pending transactions,
// share metadata), without the implicit groups unless exact (their number is returned). It
// reads the state one group at a time, so that beside the replayed state only the largest
// group's copy is held: building the whole Dump of a large log would double the memory.
func StateDigest(st groupstate.View, exact bool) (sum [32]byte, implicitGroups int, err error) {
	h := sha256.New()
	put := func(v any) {
		if err != nil {
			return
		}
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			h.Write(b)
			h.Write([]byte{'\n'})
		}
	}
	put(st.Version())
	for _, id := range st.GroupIDs() {
		g, _ := st.Group(id)
		if !exact && Implicit(&g) {
			implicitGroups++
			continue
		}
		put(&g)
	}
	h.Write([]byte("offsets\n"))
	for _, id := range st.OffsetGroupIDs() {
		offs := st.Offsets(id)
		for i := range offs {
			put(&offs[i])
		}
	}
	h.Write([]byte("pending\n"))
	for _, pt := range st.PendingTransactions() {
		put(&pt)
	}
	h.Write([]byte("share\n"))
	for _, id := range st.ShareGroupStatePartitionMetadataGroupIDs() {
		m, _ := st.ShareGroupStatePartitionMetadata(id)
		put(&m)
	}
	copy(sum[:], h.Sum(nil))
	return sum, implicitGroups, err
}

// explain replays both logs again, with the offsets of part k of buckets (all of them when
// there is one part) in their states, and describes how the states differ.
func (pr CompactionProof) explain(ctx context.Context, original, compacted eventlog.Source, p int32, hash keyHash, k, buckets int) error {
	opts := pr.Options
	if buckets > 1 {
		opts.OffsetFilter = func(group, topic string, partition int32) bool {
			return hash.bucket(group, topic, partition, buckets) == k
		}
	}
	a, b := replay.New(p, opts), replay.New(p, opts)
	if err := a.Run(ctx, original, math.MaxInt64); err != nil {
		return err
	}
	if err := b.Run(ctx, compacted, math.MaxInt64); err != nil {
		return err
	}
	da, db := a.State().Dump(), b.State().Dump()
	if !pr.Exact {
		da, _ = dropImplicitGroups(da)
		db, _ = dropImplicitGroups(db)
	}
	sa, err := groupstate.Restore(da)
	if err != nil {
		return err
	}
	sb, err := groupstate.Restore(db)
	if err != nil {
		return err
	}
	lines := groupstate.Diff(sa.View(), sb.View(), 20)
	if len(lines) == 0 && !reflect.DeepEqual(da, db) {
		lines = []string{"(the dumps differ in a way Diff does not show)"}
	}
	if len(lines) == 0 {
		lines = []string{"(the offset digests differ, the states do not: a difference groupstate does not keep, such as the topic id of an offset under Kafka 4.0)"}
	}
	return fmt.Errorf("partition %d: states differ (original -> compacted):\n  %s", p, strings.Join(lines, "\n  "))
}

// Implicit reports whether g is the group replay creates for an offset commit of an unknown
// group, and nothing more.
func Implicit(g *groupstate.Group) bool {
	c := g.Classic
	return g.Type == groupstate.GroupTypeClassic && c != nil && c.Simple && c.ProtocolType == "" && c.Generation == 0 &&
		c.Protocol == nil && c.Leader == nil && c.CurrentStateTimestamp == -1 && len(c.Members) == 0
}

// dropImplicitGroups removes the implicit groups of d. Dropping them from both sides hides
// nothing that matters: one present on both sides is equal on both (it has no content), and
// one present on one side only is the tolerated difference.
func dropImplicitGroups(d groupstate.Dump) (groupstate.Dump, int) {
	var keep []groupstate.Group
	n := 0
	for i := range d.Groups {
		if Implicit(&d.Groups[i]) {
			n++
			continue
		}
		keep = append(keep, d.Groups[i])
	}
	d.Groups = keep
	return d, n
}
