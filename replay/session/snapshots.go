package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/recovery"
	"github.com/coordlog/coordlog/snapshot"
)

// SnapshotRequest is how TakeSnapshots brings each partition up to date and snapshots it.
type SnapshotRequest struct {
	Options replay.Options
	// EveryRecords and EveryBytes also write snapshots along the way while the log is
	// replayed (0: not).
	EveryRecords, EveryBytes int64
	// Now is the creation time stamped on the snapshots, Unix ms (nil: none, so that equal
	// states give byte-identical files).
	Now func() int64
	// PauseGC: see Request.PauseGC.
	PauseGC bool
	// Periodic is told each snapshot written along the way.
	Periodic func(p int32, in snapshot.Info)
	// Trace is told each partition's restore (Trace.Restored) before it is replayed on.
	Trace *Trace
}

// SnapshotTaken is one partition's snapshot.
type SnapshotTaken struct {
	Partition int32
	Engine    *replay.Engine
	// From is the restore the state started from (its Snapshot nil: a full replay).
	From *recovery.Recovery
	// Info is the snapshot at the end; nil when the last periodic snapshot was there already.
	Info *snapshot.Info
	// Write is how long writing the last snapshot took; Total the whole partition's.
	Write, Total time.Duration
}

// TakeSnapshots brings each partition of positions up to its point, from the newest snapshot
// of this log (one that cannot tell its log is not built on) or by a full replay, writing
// periodic snapshots on the way when asked, and snapshots it; taken is called for each
// partition before the next one starts. The database must be opened with a writable store
// (and locked: LockDatabase).
func (d *Database) TakeSnapshots(ctx context.Context, positions []query.Position, req SnapshotRequest, taken func(SnapshotTaken) error) error {
	stamp := req.Now
	if stamp == nil {
		stamp = func() int64 { return 0 }
	}
	for _, pos := range positions {
		p, until := pos.Partition, pos.Until
		start := time.Now()
		ropts := recovery.Options{Options: req.Options, PauseGC: req.PauseGC, RequireLogIdentity: true}
		rec, err := recovery.RestoreNewest(d.Log, d.Snapshots, p, ropts, until)
		if err != nil {
			return err
		}
		req.Trace.restored(p, rec)
		e := rec.Engine
		written, err := recovery.RunWithSnapshots(ctx, e, d.Log, until, recovery.SnapshotPolicy{
			Store: d.Snapshots, EveryRecords: req.EveryRecords, EveryBytes: req.EveryBytes, Now: stamp,
			OnSnapshot: func(in snapshot.Info) {
				if req.Periodic != nil {
					req.Periodic(p, in)
				}
			},
		})
		if err != nil {
			return fmt.Errorf("partition %d: %w", p, err)
		}
		t := SnapshotTaken{Partition: p, Engine: e, From: rec}
		if n := len(written); n == 0 || written[n-1].NextOffset != e.NextOffset() {
			wstart := time.Now()
			in, err := recovery.TakeSnapshot(d.Snapshots, d.Log, e, stamp())
			if err != nil {
				return fmt.Errorf("partition %d: %w", p, err)
			}
			t.Info, t.Write = &in, time.Since(wstart)
		}
		t.Total = time.Since(start)
		if err := taken(t); err != nil {
			return err
		}
	}
	return nil
}

// Restarted is a partition restored as a restarting coordinator would: the newest usable
// snapshot plus the log after it.
type Restarted struct {
	*recovery.Recovery
	// Full, when asked for, is the same partition replayed from the start of the log.
	Full *FullReplay
}

// FullReplay compares a restart with a replay of the whole log.
type FullReplay struct {
	Took time.Duration
	// Same reports whether both give the same state and next offset; Diff says how they
	// differ (at most 20 lines).
	Same bool
	Diff []string
}

// Restart restores partition pos.Partition up to pos.Until as a restarting coordinator
// would: the newest valid snapshot of this log (a corrupt one, one of another log or built
// with other Kafka rules is skipped for the next older one) and the log after it; with
// compareFull it also replays the whole log and compares the states.
func (d *Database) Restart(ctx context.Context, pos query.Position, opts replay.Options, pauseGC, compareFull bool) (*Restarted, error) {
	p := pos.Partition
	rec, err := recovery.RecoverTo(ctx, d.Log, d.Snapshots, p, recovery.Options{Options: opts, PauseGC: pauseGC}, pos.Until)
	if err != nil {
		return nil, err
	}
	r := &Restarted{Recovery: rec}
	if !compareFull {
		return r, nil
	}
	start := time.Now()
	full := replay.New(p, opts)
	if err := full.Run(ctx, d.Log, pos.Until); err != nil {
		return nil, fmt.Errorf("partition %d: full replay: %w", p, err)
	}
	r.Full = &FullReplay{Took: time.Since(start)}
	e := rec.Engine
	r.Full.Same = groupstate.Equal(full.State(), e.State()) && full.NextOffset() == e.NextOffset()
	if !r.Full.Same {
		r.Full.Diff = groupstate.Diff(full.State(), e.State(), 20)
	}
	return r, nil
}

// SnapshotCheck is what Verify found of one snapshot.
type SnapshotCheck struct {
	Name string // as asked for
	// Info and Engine are the snapshot and the state it restores (Err nil).
	Info   snapshot.Info
	Engine *replay.Engine
	// Err says why the snapshot is bad: unreadable, corrupt, or taken from another log.
	Err error
	// Note says what could not be checked: a snapshot written before snapshots recorded the
	// identity of their log.
	Note error
	Took time.Duration
}

// Verify reads each named snapshot (every one of the store when names is empty) in full:
// magic, format version, checksum, the name against the header, that it was taken from this
// database's log (the batches its header records have the same offsets and CRCs here), and
// that its payload restores a state. It changes nothing. checked is told each snapshot's check.
func (d *Database) Verify(names []string, checked func(SnapshotCheck)) error {
	if len(names) == 0 {
		infos, err := d.Snapshots.List(-1)
		if err != nil {
			return err
		}
		for _, in := range infos {
			names = append(names, in.Name)
		}
	}
	for _, name := range names {
		start := time.Now()
		e, in, err := recovery.LoadSnapshot(d.Snapshots, filepath.Base(name), replay.Options{})
		c := SnapshotCheck{Name: name, Info: in, Engine: e, Err: err}
		if err == nil {
			// Only a snapshot of this log restores to a state of it.
			switch lerr := recovery.CheckLog(d.Log, in.Header.Meta); {
			case errors.Is(lerr, recovery.ErrNoLogIdentity):
				c.Note = lerr
			case lerr != nil:
				c.Err = fmt.Errorf("snapshot %s: %w", in.Name, lerr)
			}
		}
		c.Took = time.Since(start)
		checked(c)
	}
	return nil
}
