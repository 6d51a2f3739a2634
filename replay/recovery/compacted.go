package recovery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/snapshot"
)

// StoreDir is where the coordlog database db keeps its snapshots: beside the Pebble files, so
// that copying the database directory copies its snapshots (Pebble ignores names it does not
// know).
func StoreDir(db string) string { return filepath.Join(db, "snapshots") }

// CompactedSnapshots gives a database compacted by eventlog/compact snapshots of its own
// (Take is a compact.SnapshotFunc). The original's snapshots cannot be carried over: a
// snapshot at offset N plus the compacted log after N is not in general the compacted log's
// state. A tombstone after N whose delete horizon had passed is removed by the cleaner, and
// the key it deleted stays alive in the snapshot; a transaction marker removed as empty
// leaves the snapshot's pending offsets pending for ever. Nor is the snapshot the compacted
// log's state at N: compaction keeps the final state, not the history.
type CompactedSnapshots struct {
	// Options are the replay rules of the snapshots (those of the compaction's proof).
	Options Options
	// CreatedAt is the creation time the snapshots record (unix ms; 0 records none).
	CreatedAt int64
}

// Take counts the snapshot files (quarantined ones included) of the database original and,
// for each partition of parts that has a snapshot there, replays the compacted log to its end
// and writes a snapshot of that state into the store of the staged database. A partition
// without snapshots gets none (a snapshot holds the whole state in memory while it is
// written: the user who never asked for one does not pay for it).
func (c CompactedSnapshots) Take(ctx context.Context, original, staged string, compacted eventlog.Source, parts []int32) (int, []string, error) {
	dir := StoreDir(original)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return 0, nil, nil
	}
	orig, err := snapshot.OpenStore(dir, snapshot.Options{ReadOnly: true})
	if err != nil {
		return 0, nil, err
	}
	infos, err := orig.List(-1)
	if err != nil {
		return 0, nil, err
	}
	broken, err := orig.Broken()
	if err != nil {
		return 0, nil, err
	}
	had := map[int32]bool{}
	for _, in := range infos {
		had[in.Partition] = true
	}
	var store *snapshot.Store
	var lines []string
	for _, p := range parts {
		if !had[p] {
			continue
		}
		if store == nil {
			if store, err = snapshot.OpenStore(StoreDir(staged), snapshot.Options{}); err != nil {
				return 0, nil, err
			}
		}
		e := replay.New(p, c.Options.Options)
		if err := e.Run(ctx, compacted, math.MaxInt64); err != nil {
			return 0, nil, fmt.Errorf("partition %d: replay the compacted log: %w", p, err)
		}
		in, err := TakeSnapshot(store, compacted, e, c.CreatedAt)
		if err != nil {
			return 0, nil, fmt.Errorf("partition %d: %w", p, err)
		}
		lines = append(lines, fmt.Sprintf("partition %d: a new one at the compacted log's end (offset %d)", p, in.NextOffset))
	}
	return len(infos) + len(broken), lines, nil
}
