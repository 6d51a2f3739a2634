package recovery

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/snapshot"
)

// SnapshotKind is the payload kind of the snapshots this package writes and reads. Bump it
// when the payload changes meaning; a snapshot of another kind is refused (left in place and
// reported) and recovery falls back to an older snapshot or to a full replay. A snapshot is a
// cache of the log, so no older kind is kept readable. History: "replay/v1" (the state's
// canonical Dump with its bulk in positional tables, never released) was replaced by
// "replay/v2", the groupstate image.
const SnapshotKind = "replay/v2"

// Options are the engine's options plus how a restore runs.
type Options struct {
	// Options are the rules and mode of the recovered engine. A snapshot is used only when it
	// was built with the same Kafka version and record layout.
	replay.Options
	// PauseGC turns Go's garbage collector off (for the whole process) while a snapshot is
	// decoded and its tail replayed, and back to its settings after (gcpause.go): decoding
	// allocates almost only what the state keeps, so collections during a restore cost CPU and
	// free little. The tail's garbage is bounded by a memory limit (twice the decoded heap, or
	// a lower GOMEMLIMIT), past which the runtime collects as usual. Meant for processes that
	// do nothing else meanwhile, such as the replay CLI, which sets it.
	PauseGC bool
	// RequireLogIdentity refuses snapshots that record no log identity (format 1, written
	// before coordlog recorded one) instead of using them after the checks that remain
	// possible (CheckLog). Set it where a new snapshot is built on the restored state
	// (snapshot create): a state whose log cannot be checked must not be passed on under a
	// new snapshot's identity.
	RequireLogIdentity bool
}

// newSnapshotPayload is the payload of a snapshot of e. It reads e's state while the
// snapshot is written: e must not run meanwhile.
func newSnapshotPayload(e *replay.Engine) *imagePayload {
	return &imagePayload{Stats: e.Stats(), State: stateImage{view: e.State()}}
}

// decodeState decodes a snapshot payload of the given kind (decode is Snapshot.Decode) into
// a state and counters, and says how long its phases took: decode (reading the payload, whose
// parts decode on every core meanwhile) and restore (adding the decoded parts to the state).
//
// The state's committed-offset blocks are checked after the decode (groupstate.OffsetCheck):
// with deferCheck the check is returned for the caller to run (RecoverTo runs it beside the
// tail), else it runs here, on every core, as part of the restore time.
func decodeState(kind string, decode func(any) error, deferCheck bool) (*decodedState, error) {
	if kind != SnapshotKind {
		return nil, fmt.Errorf("%w: payload kind %q, this build reads %q only", errUnsupported, kind, SnapshotKind)
	}
	start := time.Now()
	var pl imagePayload
	if err := decode(&pl); err != nil {
		return &decodedState{decode: time.Since(start)}, err
	}
	if pl.State.st == nil {
		return &decodedState{decode: time.Since(start)}, fmt.Errorf("%w: payload without a state", snapshot.ErrCorrupt)
	}
	d := &decodedState{st: pl.State.st, stats: pl.Stats, decode: time.Since(start) - pl.State.merge, restore: pl.State.merge}
	d.check = pl.State.st.OffsetCheck()
	if !deferCheck {
		err := checkOffsets(d.check, workers())
		d.check, d.restore = nil, time.Since(start)-d.decode
		return d, err
	}
	return d, nil
}

// decodedState is a decoded snapshot payload and how long decoding it took.
type decodedState struct {
	st    *groupstate.State
	stats replay.Stats
	// check is the offset check left to the caller (deferCheck), nil when it ran.
	check           *groupstate.OffsetCheck
	decode, restore time.Duration
}

// errUnsupported marks a snapshot this build does not read: refused, not corrupt.
var errUnsupported = errors.New("unsupported snapshot")

// layoutName is the record-layout override as a snapshot records it ("" = the version's own).
func layoutName(o replay.Options) string {
	if o.Layout == nil {
		return ""
	}
	return o.Layout.String()
}

// effectiveVersion is the Kafka version an engine built with o applies.
func effectiveVersion(o replay.Options) groupstate.KafkaVersion {
	if o.Version.Valid() {
		return o.Version
	}
	return groupstate.DefaultKafkaVersion
}

// SnapshotMeta returns the meta a snapshot of e carries; src is the log e replayed, whose
// identity the meta records (LogIdentity). createdAtUnixMilli is the caller's clock (0 = not
// recorded, which keeps snapshots of equal states byte-identical).
func SnapshotMeta(src eventlog.Source, e *replay.Engine, createdAtUnixMilli int64) (snapshot.Meta, error) {
	marks, err := LogIdentity(src, e.Partition(), e.NextOffset())
	if err != nil {
		return snapshot.Meta{}, err
	}
	st := e.Stats()
	return snapshot.Meta{
		Partition:          e.Partition(),
		NextOffset:         e.NextOffset(),
		KafkaVersion:       e.State().Version().String(),
		RecordLayout:       layoutName(e.Options()),
		PayloadKind:        SnapshotKind,
		CreatedAtUnixMilli: createdAtUnixMilli,
		Counters: []snapshot.Counter{
			{Name: "records", Value: st.Records},
			{Name: "batches", Value: st.Batches},
			{Name: "markers", Value: st.Markers},
			{Name: "violations", Value: st.Violations},
			{Name: "groups", Value: int64(e.State().NumGroups())},
			{Name: "offsets", Value: int64(e.State().NumOffsets())},
		},
		Log: marks,
	}, nil
}

// TakeSnapshot writes the engine's current state to store (on demand), with the identity of
// src, the log the engine replayed. The engine must not run until it returns: the state is
// encoded straight from its maps, on every core, with no copy in between.
func TakeSnapshot(store *snapshot.Store, src eventlog.Source, e *replay.Engine, createdAtUnixMilli int64) (snapshot.Info, error) {
	m, err := SnapshotMeta(src, e, createdAtUnixMilli)
	if err != nil {
		return snapshot.Info{}, err
	}
	return store.Write(m, newSnapshotPayload(e))
}

// TakeSnapshotCached is TakeSnapshot for a running engine that takes snapshot after snapshot:
// the image entries of the groups no record touched since the engine's previous cached
// snapshot are copied from it instead of encoded again (groupstate.ImageCache), so that a
// snapshot costs about what changed since the last one. The file is byte for byte what
// TakeSnapshot writes. The cache holds about one snapshot's bytes in memory, from the first
// call on. RunWithSnapshots uses it.
func TakeSnapshotCached(store *snapshot.Store, src eventlog.Source, e *replay.Engine, createdAtUnixMilli int64) (snapshot.Info, error) {
	m, err := SnapshotMeta(src, e, createdAtUnixMilli)
	if err != nil {
		return snapshot.Info{}, err
	}
	pl := newSnapshotPayload(e)
	pl.State.cache = e.ImageCache()
	return store.Write(m, pl)
}

// Recovery reports what Recover restored and how long each phase took.
type Recovery struct {
	Engine *replay.Engine
	// Snapshot is the snapshot the state was restored from; nil means a full replay.
	Snapshot *snapshot.Info
	// SnapshotOffset is the snapshot's next offset (where the tail replay started); 0 after a
	// full replay.
	SnapshotOffset int64
	// TailRecords and TailBatches count what was replayed after the snapshot (records include
	// transaction markers and other control records).
	TailRecords int64
	TailBatches int64
	// Phase durations: finding the snapshot and checking its header, meta and trailer
	// (Verify); reading it once, matching its checksum and decoding its parts on every core
	// (Decode); adding the parts to the state (Restore); replaying the tail.
	Verify, Decode, Restore, Tail time.Duration
	// Check is how long the check of the restored offsets ran on after the tail (it runs
	// beside the tail replay, on the other cores).
	Check time.Duration
	// Loaded says which snapshots were skipped and why; Messages renders it.
	Loaded snapshot.Loaded
	// Notes are what the caller should know about the snapshot used (one without a log
	// identity).
	Notes []string
}

// Messages describes the snapshots skipped on the way (corrupt ones moved aside, refused ones
// left) and the notes on the one used, one line each.
func (r *Recovery) Messages() []string { return append(r.Loaded.Messages(), r.Notes...) }

// Total is the sum of the phase durations.
func (r *Recovery) Total() time.Duration { return r.Verify + r.Decode + r.Restore + r.Tail + r.Check }

// Recover rebuilds partition p's engine: it restores the newest usable snapshot in store
// (store may be nil) and replays src's tail from the snapshot's next offset to the end. A
// snapshot is usable when its file verifies, it was taken from src (CheckLog: its log
// identity matches), and it was built by the same rules: the same payload kind, Kafka version
// and record layout, no violations when opts.Mode is strict (a strict replay would have
// stopped there), and an offset the log has reached (a snapshot ahead of the log belongs to
// another or a damaged log). Unusable snapshots are skipped (corrupt ones moved aside by a
// writable store) and reported in Recovery.Loaded; when none is usable, or the store cannot
// be read, Recover replays the whole log. The result is the state a full replay gives.
func Recover(ctx context.Context, src eventlog.Source, store *snapshot.Store, p int32, opts Options) (*Recovery, error) {
	return RecoverTo(ctx, src, store, p, opts, math.MaxInt64)
}

// RecoverTo is Recover for the state as of until (exclusive, as in Engine.Run): snapshots
// taken after until are not usable and are skipped (and reported), and the tail replay stops
// at until.
func RecoverTo(ctx context.Context, src eventlog.Source, store *snapshot.Store, p int32, opts Options, until int64) (*Recovery, error) {
	return recoverTo(ctx, src, store, p, opts, until, nil)
}

// recoverTo is RecoverTo without the snapshots named in exclude (found damaged by an earlier
// attempt and left in place by a read-only store).
func recoverTo(ctx context.Context, src eventlog.Source, store *snapshot.Store, p int32, opts Options, until int64, exclude []string) (*Recovery, error) {
	gc := pauseGC(opts.PauseGC)
	defer gc.resume()
	rec, check, err := restoreNewest(src, store, p, opts, until, true, exclude)
	if err != nil {
		return nil, err
	}
	if _, next, err := src.Offsets(p); err == nil && rec.Snapshot != nil && min(next, until)-rec.SnapshotOffset <= maxPausedTail {
		gc.boundTail()
	} else {
		gc.resume() // a full replay, or a long tail: its garbage needs the collector
	}
	// The restored state's offset blocks are checked on the cores the tail replay leaves
	// idle, while it runs; the state is trusted only once the check passed.
	var checked chan error
	if check != nil && check.Len() > 0 {
		checked = make(chan error, 1)
		if workers() > 1 {
			go func() { checked <- checkOffsets(check, workers()-1) }()
		} else {
			checked <- checkOffsets(check, 1)
		}
	}
	before := rec.Engine.Stats()
	start := time.Now()
	err = rec.Engine.Run(ctx, src, until)
	rec.Tail = time.Since(start)
	if checked != nil {
		start := time.Now()
		check.Run() // help with what is left
		cerr := <-checked
		if cerr == nil {
			cerr = rec.Engine.State().ImageErr()
		}
		rec.Check = time.Since(start)
		if cerr != nil {
			gc.resume()
			return recoverAgain(ctx, src, store, p, opts, until, rec, cerr, exclude)
		}
	}
	after := rec.Engine.Stats()
	rec.TailRecords = (after.Records + after.Markers + after.OtherControl) - (before.Records + before.Markers + before.OtherControl)
	rec.TailBatches = after.Batches - before.Batches
	if err != nil {
		return rec, fmt.Errorf("replay: recover partition %d: tail from offset %d: %w", p, rec.SnapshotOffset, err)
	}
	return rec, nil
}

// recoverAgain handles a snapshot whose damage only the offset check found (its file
// checksum matched, so only a writer's bug or a crafted file can do that): it is moved
// aside like any corrupt snapshot (left in place by a read-only store) and recovery starts
// over without it.
func recoverAgain(ctx context.Context, src eventlog.Source, store *snapshot.Store, p int32, opts Options, until int64, failed *Recovery, cause error, exclude []string) (*Recovery, error) {
	sk := snapshot.Skipped{Info: *failed.Snapshot, Err: fmt.Errorf("%w: %w", snapshot.ErrCorrupt, cause)}
	moved, err := store.SetAside(failed.Snapshot.Name)
	switch {
	case errors.Is(err, snapshot.ErrReadOnly):
	case err != nil:
		return nil, fmt.Errorf("replay: recover partition %d: snapshot %s is corrupt (%v) and could not be moved aside: %w", p, failed.Snapshot.Name, cause, err)
	}
	sk.MovedTo = moved
	rec, err := recoverTo(ctx, src, store, p, opts, until, append(exclude, failed.Snapshot.Name))
	if rec != nil {
		rec.Loaded.Skipped = append(append(failed.Loaded.Skipped, sk), rec.Loaded.Skipped...)
	}
	return rec, err
}

// RestoreNewest is the first phase of RecoverTo: it restores the newest usable snapshot at or
// before until (or returns a fresh engine when none is usable) and replays nothing, so that
// the caller can replay the tail its own way (RunWithSnapshots).
func RestoreNewest(src eventlog.Source, store *snapshot.Store, p int32, opts Options, until int64) (*Recovery, error) {
	gc := pauseGC(opts.PauseGC)
	defer gc.resume()
	rec, _, err := restoreNewest(src, store, p, opts, until, false, nil)
	return rec, err
}

// restoreNewest is RestoreNewest; with deferCheck it leaves the restored state's offset
// check (nil when there is none) to the caller, who must run it and act on its result
// before trusting the state.
func restoreNewest(src eventlog.Source, store *snapshot.Store, p int32, opts Options, until int64, deferCheck bool, exclude []string) (*Recovery, *groupstate.OffsetCheck, error) {
	rec := &Recovery{}
	var check *groupstate.OffsetCheck
	_, logNext, err := src.Offsets(p)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: recover partition %d: %w", p, err)
	}
	if store != nil {
		start := time.Now()
		var used *replay.Engine
		var note string
		rec.Loaded, err = store.Load(p, func(sn *snapshot.Snapshot) error {
			rec.Verify = time.Since(start)
			if slices.Contains(exclude, sn.Name) {
				return errExcluded
			}
			if sn.NextOffset > until {
				start = time.Now()
				return fmt.Errorf("taken at offset %d, after the requested offset %d", sn.NextOffset, until-1)
			}
			e, d, n, err := restoreSnapshot(sn, src, p, opts, logNext, deferCheck)
			note = n
			if d != nil {
				rec.Decode, rec.Restore = d.decode, d.restore
			}
			if err != nil {
				start = time.Now() // the next candidate's verify time
				return err
			}
			used, check = e, d.check
			return nil
		})
		// A snapshot excluded by the caller was reported already.
		rec.Loaded.Skipped = slices.DeleteFunc(rec.Loaded.Skipped, func(sk snapshot.Skipped) bool { return errors.Is(sk.Err, errExcluded) })
		switch {
		case err == nil:
			rec.Engine, rec.Snapshot, rec.SnapshotOffset = used, rec.Loaded.Used, rec.Loaded.Used.NextOffset
			if note != "" {
				rec.Notes = append(rec.Notes, fmt.Sprintf("snapshot %s: %s", rec.Snapshot.Name, note))
			}
		case errors.Is(err, snapshot.ErrNoSnapshot):
			rec.Verify, rec.Decode, rec.Restore = time.Since(start), 0, 0
		default:
			return nil, nil, fmt.Errorf("replay: recover partition %d: %w", p, err)
		}
	}
	if rec.Engine == nil {
		rec.Engine = replay.New(p, opts.Options)
	}
	return rec, check, nil
}

// errExcluded refuses a snapshot the caller excluded.
var errExcluded = errors.New("excluded")

// restoreSnapshot checks that sn was taken from src and built by opts' rules, and turns it
// into an engine. The decoded state (nil when the decode did not start) says how long the
// decode took; note is what the caller should be told about a snapshot used without a log
// identity.
func restoreSnapshot(sn *snapshot.Snapshot, src eventlog.Source, p int32, opts Options, logNext int64, deferCheck bool) (e *replay.Engine, d *decodedState, note string, err error) {
	m := sn.Meta()
	switch want := effectiveVersion(opts.Options).String(); {
	case m.KafkaVersion != want:
		return nil, nil, "", fmt.Errorf("built with Kafka %s replay rules, recovering with %s", m.KafkaVersion, want)
	case m.RecordLayout != layoutName(opts.Options):
		return nil, nil, "", fmt.Errorf("built with record layout %q, recovering with %q", m.RecordLayout, layoutName(opts.Options))
	case m.NextOffset > logNext:
		return nil, nil, "", fmt.Errorf("snapshot at offset %d is ahead of the log, which ends at %d", m.NextOffset, logNext)
	}
	if v, _ := m.Counter("violations"); v > 0 && opts.Mode == eventlog.Strict {
		return nil, nil, "", fmt.Errorf("state was built past %d violations in forensic mode; strict mode replays from the start to report them", v)
	}
	switch err := CheckLog(src, m); {
	case errors.Is(err, ErrNoLogIdentity) && opts.RequireLogIdentity:
		return nil, nil, "", fmt.Errorf("%w: it may come from another log, so no new snapshot is built on it", err)
	case errors.Is(err, ErrNoLogIdentity):
		note = fmt.Sprintf("%v; snapshot create writes one that records its log", err)
	case err != nil:
		return nil, nil, "", err
	}
	d, err = decodeState(m.PayloadKind, sn.Decode, deferCheck)
	if err != nil {
		return nil, d, "", err
	}
	if d.st.View().Version().String() != m.KafkaVersion {
		return nil, d, "", fmt.Errorf("state says Kafka %s, meta says %s", d.st.View().Version(), m.KafkaVersion)
	}
	return replay.Restore(p, d.st, m.NextOffset, d.stats, opts.Options), d, note, nil
}

// LoadSnapshot verifies the snapshot file name in store and restores an engine from it,
// without replaying anything and without moving anything aside (for inspection: verify,
// describe of a snapshot). It checks the payload kind, not the rules: opts.Version and
// opts.Layout are taken from the snapshot.
func LoadSnapshot(store *snapshot.Store, name string, opts replay.Options) (*replay.Engine, snapshot.Info, error) {
	sn, err := store.Open(name)
	if err != nil {
		return nil, snapshot.Info{Name: name}, err
	}
	defer sn.Close()
	m := sn.Meta()
	d, err := decodeState(m.PayloadKind, sn.Decode, false)
	if err != nil {
		return nil, sn.Info, fmt.Errorf("snapshot %s: %w", name, err)
	}
	return replay.Restore(m.Partition, d.st, m.NextOffset, d.stats, opts), sn.Info, nil
}

// SnapshotPolicy says when RunWithSnapshots takes snapshots.
type SnapshotPolicy struct {
	Store *snapshot.Store
	// EveryRecords takes a snapshot once at least this many records (control records
	// included) were replayed since the last one; 0 disables the record trigger.
	EveryRecords int64
	// EveryBytes takes a snapshot once at least this many record bytes (keys, values and
	// headers) were replayed since the last one; 0 disables the byte trigger.
	EveryBytes int64
	// Now supplies snapshot creation times (unix ms); nil records none, which keeps the
	// snapshots of a replay byte-identical from run to run.
	Now func() int64
	// OnSnapshot, when set, is called after each snapshot is written.
	OnSnapshot func(snapshot.Info)
}

// RunWithSnapshots is Engine.Run that takes a snapshot (at a batch boundary) whenever the
// policy's record or byte threshold is crossed. It returns the snapshots written. Retention
// is the store's (snapshot.Options.Retain).
func RunWithSnapshots(ctx context.Context, e *replay.Engine, src eventlog.Source, until int64, pol SnapshotPolicy) ([]snapshot.Info, error) {
	if pol.Store == nil || (pol.EveryRecords <= 0 && pol.EveryBytes <= 0) {
		return nil, e.Run(ctx, src, until)
	}
	var written []snapshot.Info
	it, err := src.Batches(e.Partition(), e.NextOffset())
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var records, bytes int64
	n := 0
	for it.Next() {
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return written, err
			}
		}
		b := it.Batch()
		if b.BaseOffset >= until {
			break
		}
		if b.LastOffset >= until {
			// The batch straddles until: Run applies it up to until.
			it.Close()
			return written, e.Run(ctx, src, until)
		}
		if b.LastOffset < e.NextOffset() {
			continue
		}
		if err := e.Apply(b); err != nil {
			return written, err
		}
		records += int64(len(b.Records))
		for i := range b.Records {
			r := &b.Records[i]
			bytes += int64(len(r.Key) + len(r.Value))
			for _, h := range r.Headers {
				bytes += int64(len(h.Key) + len(h.Value))
			}
		}
		if (pol.EveryRecords > 0 && records >= pol.EveryRecords) || (pol.EveryBytes > 0 && bytes >= pol.EveryBytes) {
			var now int64
			if pol.Now != nil {
				now = pol.Now()
			}
			info, err := TakeSnapshotCached(pol.Store, src, e, now)
			if err != nil {
				return written, err
			}
			written = append(written, info)
			if pol.OnSnapshot != nil {
				pol.OnSnapshot(info)
			}
			records, bytes = 0, 0
		}
	}
	return written, it.Err()
}
