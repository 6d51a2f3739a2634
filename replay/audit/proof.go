package audit

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
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
type CompactionProof struct {
	// Options are the replay rules of both replays.
	Options replay.Options
	// Exact tolerates no difference at all.
	Exact bool
	// Report, when set, is told how many implicit groups differed in number (a tolerated
	// difference worth a line).
	Report func(format string, args ...any)
}

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
	// The two replays run one after the other and each state is reduced to a digest of its
	// JSON dump before the next one is built, so the proof holds one coordinator state at a
	// time (what a coordinator loading this partition holds), not two. Only when the digests
	// differ are both replayed again, to show the difference.
	sumA, nextA, implicitA, err := pr.replayDigest(ctx, original, p)
	if err != nil {
		return fmt.Errorf("partition %d: replay of the original: %w", p, err)
	}
	sumB, nextB, implicitB, err := pr.replayDigest(ctx, compacted, p)
	if err != nil {
		return fmt.Errorf("partition %d: replay of the compacted log: %w", p, err)
	}
	if nextA != nextB {
		return fmt.Errorf("partition %d: next offset %d after the original, %d after the compacted log", p, nextA, nextB)
	}
	if sumA != sumB {
		return pr.explain(ctx, original, compacted, p)
	}
	if d := implicitA - implicitB; d != 0 && pr.Report != nil {
		pr.Report("partition %d: %d implicit group(s) (no members, no metadata; created by replaying offset commits) exist on one side only, as after Kafka's own cleaner", p, max(d, -d))
	}
	return nil
}

// replayDigest replays partition p of src and returns a SHA-256 of its state (without implicit
// groups unless exact), the next offset and the number of implicit groups.
func (pr CompactionProof) replayDigest(ctx context.Context, src eventlog.Source, p int32) (sum [32]byte, next int64, implicitGroups int, err error) {
	e := replay.New(p, pr.Options)
	if err := e.Run(ctx, src, math.MaxInt64); err != nil {
		return sum, 0, 0, err
	}
	sum, implicitGroups, err = StateDigest(e.State(), pr.Exact)
	return sum, e.NextOffset(), implicitGroups, err
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

// explain replays both logs again and describes how their states differ.
func (pr CompactionProof) explain(ctx context.Context, original, compacted eventlog.Source, p int32) error {
	a, b := replay.New(p, pr.Options), replay.New(p, pr.Options)
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
