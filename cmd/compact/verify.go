package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/compact"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
)

// verifier is the proof: each partition of the original and of the compacted log is replayed
// to its end (the two concurrently); the next offsets must be equal and so must the states,
// as dumps and as JSON bytes.
//
// With exact false, one difference is tolerated, because Kafka's own cleaner and loader
// produce it and it carries no data: an implicit group (a classic group with no protocol
// type, members, generation, protocol, leader or state timestamp: what replaying an offset
// commit creates for a group it does not know) that exists on one side only. Compaction
// creates such differences in two ways, both Kafka's: offset commits superseded by their
// tombstones no longer create the group on replay, and an offset commit that outlives an
// expired group tombstone creates it again. Offsets, pending transactions and every other
// group are compared exactly. report is told how many implicit groups differed.
func verifier(opts replay.Options, exact bool, report func(string, ...any)) compact.VerifyFunc {
	return func(ctx context.Context, original, compacted eventlog.Source, parts []int32) error {
		for _, p := range parts {
			if err := verifyPartition(ctx, original, compacted, p, opts, exact, report); err != nil {
				return err
			}
		}
		return nil
	}
}

func verifyPartition(ctx context.Context, original, compacted eventlog.Source, p int32, opts replay.Options, exact bool, report func(string, ...any)) error {
	a, b := replay.New(p, opts), replay.New(p, opts)
	errc := make(chan error, 1)
	go func() { errc <- a.Run(ctx, original, math.MaxInt64) }()
	errB := b.Run(ctx, compacted, math.MaxInt64)
	if err := <-errc; err != nil {
		return fmt.Errorf("partition %d: replay of the original: %w", p, err)
	}
	if errB != nil {
		return fmt.Errorf("partition %d: replay of the compacted log: %w", p, errB)
	}
	if a.NextOffset() != b.NextOffset() {
		return fmt.Errorf("partition %d: next offset %d after the original, %d after the compacted log", p, a.NextOffset(), b.NextOffset())
	}
	da, db := a.State().Dump(), b.State().Dump()
	ignored := 0
	if !exact {
		da, db, ignored = dropOneSidedImplicitGroups(da, db)
	}
	if !reflect.DeepEqual(da, db) {
		sa, err := groupstate.Restore(da)
		if err != nil {
			return err
		}
		sb, err := groupstate.Restore(db)
		if err != nil {
			return err
		}
		return fmt.Errorf("partition %d: states differ (original -> compacted):\n  %s", p, strings.Join(groupstate.Diff(sa, sb, 20), "\n  "))
	}
	ja, err := json.Marshal(da)
	if err != nil {
		return err
	}
	jb, err := json.Marshal(db)
	if err != nil {
		return err
	}
	if !bytes.Equal(ja, jb) {
		return fmt.Errorf("partition %d: state JSON differs (%d vs %d bytes)", p, len(ja), len(jb))
	}
	if ignored > 0 && report != nil {
		report("partition %d: %d implicit group(s) (no members, no metadata; created by replaying offset commits) exist on one side only, as after Kafka's own cleaner", p, ignored)
	}
	return nil
}

// implicit reports whether g is the group replay creates for an offset commit of an unknown
// group, and nothing more.
func implicit(g *groupstate.Group) bool {
	c := g.Classic
	return g.Type == groupstate.GroupTypeClassic && c != nil && c.Simple && c.ProtocolType == "" && c.Generation == 0 &&
		c.Protocol == nil && c.Leader == nil && c.CurrentStateTimestamp == -1 && len(c.Members) == 0
}

func dropOneSidedImplicitGroups(a, b groupstate.Dump) (groupstate.Dump, groupstate.Dump, int) {
	ids := func(d groupstate.Dump) map[string]bool {
		m := map[string]bool{}
		for _, g := range d.Groups {
			m[g.GroupID] = true
		}
		return m
	}
	ia, ib := ids(a), ids(b)
	n := 0
	filter := func(d groupstate.Dump, other map[string]bool) groupstate.Dump {
		var keep []groupstate.Group
		for i := range d.Groups {
			g := &d.Groups[i]
			if !other[g.GroupID] && implicit(g) {
				n++
				continue
			}
			keep = append(keep, *g)
		}
		d.Groups = keep
		return d
	}
	return filter(a, ib), filter(b, ia), n
}
