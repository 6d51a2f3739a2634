package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/snapshot"
)

// Snapshots and restart.
//
// A snapshot of an engine (TakeSnapshot) is a snapshot.Store file whose meta carries the
// partition, the next offset, the Kafka version and record layout of the rules, the payload
// kind SnapshotKind and display counters, and whose payload is imagePayload: the engine's
// Stats and its state as a groupstate image (recover_image.go), written straight from the
// state's maps and read straight back into them, part by part on every core. Snapshots of
// the previous payload kind ("replay/v1": the state's canonical Dump, its bulk in positional
// tables, recover_codec.go) still load.
//
// Invariants:
//   - Restoring a snapshot taken at offset k and replaying the log from k gives exactly the
//     state, next offset and counters of a full replay (tests: every cut point of generated
//     logs, the found corpus, the Kafka 4.4 recordings). The one exception: a snapshot taken
//     inside a batch (Run with an until inside it) counts that batch once on each side.
//   - A snapshot is used only under the rules it was built with (same Kafka version and
//     record layout), never ahead of the log, and in strict mode never after violations.
//   - Older payload kinds and layouts keep loading: every one has a committed snapshot in
//     testdata/ and TestSnapshotFormatCompatibility restores each against a full replay.
//     A field added to groupstate's internal structs fails TestImageCoversEveryField (in
//     groupstate) until the image learns it; v1 snapshots decode such a field as zero.

// SnapshotKind is the payload kind of the snapshots this package writes. Bump it (and keep
// reading the old one) when the payload changes meaning.
const SnapshotKind = "replay/v2"

// snapshotKindV1 is the previous payload kind (snapshotPayload), read but no longer written.
const snapshotKindV1 = "replay/v1"

// newSnapshotPayload is the payload of a snapshot of e. It reads e's state while the
// snapshot is written: e must not run meanwhile.
func newSnapshotPayload(e *Engine) *imagePayload {
	return &imagePayload{Stats: e.Stats(), State: stateImage{view: e.State()}}
}

// snapshotPayload is the payload of kind "replay/v1": the canonical state and the engine's
// counters. Together with the meta's next offset, that is everything an Engine needs to
// continue exactly where it stopped (the forensic-mode violation list is not kept; its count
// is).
type snapshotPayload struct {
	Stats Stats
	// State is the dump without its bulk, which the tables below carry in a compact
	// positional encoding (recover_codec.go): the committed offsets, the members and target
	// assignments of consumer groups, and the pending transactional offsets.
	State     groupstate.Dump
	Offsets   offsetTable
	Consumers consumerTable
	Pending   pendingTable
}

// dump reassembles the dump (taking over the payload's slices).
func (p *snapshotPayload) dump() (groupstate.Dump, error) {
	d := p.State
	if len(p.Offsets) > 0 {
		d.Offsets = p.Offsets
	}
	if len(p.Pending) > 0 {
		d.PendingTransactions = p.Pending
	}
	if len(p.Consumers) > 0 {
		if err := joinConsumers(&d, p.Consumers); err != nil {
			return d, fmt.Errorf("%w: %v", snapshot.ErrCorrupt, err)
		}
	}
	return d, nil
}

// decodeState decodes a snapshot payload of the given kind (decode is Snapshot.Decode) into
// a state and counters. decodeDur is the payload decode; restoreDur rebuilding the state
// from it. A v2 payload decodes its parts on every core while it reads them; its restore
// time is adding the decoded parts to the state.
//
// A v2 state's committed-offset blocks are checked after the decode (groupstate.OffsetCheck):
// with deferCheck the check is returned for the caller to run (RecoverTo runs it beside the
// tail), else it runs here, on every core, as part of the restore time.
func decodeState(kind string, decode func(any) error, deferCheck bool) (st *groupstate.State, stats Stats, decodeDur, restoreDur time.Duration, check *groupstate.OffsetCheck, err error) {
	start := time.Now()
	switch kind {
	case SnapshotKind:
		var pl imagePayload
		if err := decode(&pl); err != nil {
			return nil, stats, time.Since(start), 0, nil, err
		}
		if pl.State.st == nil {
			return nil, stats, time.Since(start), 0, nil, fmt.Errorf("%w: payload without a state", snapshot.ErrCorrupt)
		}
		decodeDur = time.Since(start) - pl.State.merge
		check = pl.State.st.OffsetCheck()
		if !deferCheck {
			err := checkOffsets(check, workers())
			return pl.State.st, pl.Stats, decodeDur, time.Since(start) - decodeDur, nil, err
		}
		return pl.State.st, pl.Stats, decodeDur, pl.State.merge, check, nil
	case snapshotKindV1:
		var pl snapshotPayload
		if err := decode(&pl); err != nil {
			return nil, stats, time.Since(start), 0, nil, err
		}
		decoded := time.Now()
		d, err := pl.dump()
		if err == nil {
			st, err = groupstate.Restore(d)
			if err != nil {
				err = fmt.Errorf("restore state: %w", err)
			}
		}
		return st, pl.Stats, decoded.Sub(start), time.Since(decoded), nil, err
	default:
		return nil, stats, 0, 0, nil, fmt.Errorf("payload kind %q, this build reads %q and %q", kind, SnapshotKind, snapshotKindV1)
	}
}

// effectiveVersion is the Kafka version an engine built with opts applies.
func (o Options) effectiveVersion() groupstate.KafkaVersion {
	if o.Version.Valid() {
		return o.Version
	}
	return groupstate.DefaultKafkaVersion
}

// layoutName is the record-layout override as a snapshot records it ("" = the version's own).
func (o Options) layoutName() string {
	if o.Layout == nil {
		return ""
	}
	return o.Layout.String()
}

// SnapshotMeta returns the meta a snapshot of e carries. createdAtUnixMilli is the caller's
// clock (0 = not recorded, which keeps snapshots of equal states byte-identical).
func SnapshotMeta(e *Engine, createdAtUnixMilli int64) snapshot.Meta {
	st := e.Stats()
	return snapshot.Meta{
		Partition:          e.Partition(),
		NextOffset:         e.NextOffset(),
		KafkaVersion:       e.State().Version().String(),
		RecordLayout:       e.Options().layoutName(),
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
	}
}

// TakeSnapshot writes the engine's current state to store (on demand). The engine must not
// run until it returns: the state is encoded straight from its maps, on every core, with no
// copy in between.
func TakeSnapshot(store *snapshot.Store, e *Engine, createdAtUnixMilli int64) (snapshot.Info, error) {
	return store.Write(SnapshotMeta(e, createdAtUnixMilli), newSnapshotPayload(e))
}

// Recovery reports what Recover restored and how long each phase took.
type Recovery struct {
	Engine *Engine
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
}

// Messages describes the snapshots skipped on the way (corrupt ones moved aside, refused ones
// left), one line each.
func (r *Recovery) Messages() []string { return r.Loaded.Messages() }

// Total is the sum of the phase durations.
func (r *Recovery) Total() time.Duration { return r.Verify + r.Decode + r.Restore + r.Tail + r.Check }

// Recover rebuilds partition p's engine: it restores the newest usable snapshot in store
// (store may be nil) and replays src's tail from the snapshot's next offset to the end. A
// snapshot is usable when its file verifies and it was built by the same rules: the same
// payload kind, Kafka version and record layout, no violations when opts.Mode is strict (a
// strict replay would have stopped there), and an offset the log has reached (a snapshot
// ahead of the log belongs to another or a damaged log). Unusable snapshots are skipped
// (corrupt ones moved aside by the store) and reported in Recovery.Loaded; when none is
// usable Recover replays the whole log. The result is the state a full replay gives.
func Recover(ctx context.Context, src eventlog.Source, store *snapshot.Store, p int32, opts Options) (*Recovery, error) {
	return RecoverTo(ctx, src, store, p, opts, math.MaxInt64)
}

// RecoverTo is Recover for the state as of until (exclusive, as in Engine.Run): snapshots
// taken after until are not usable and are skipped (and reported), and the tail replay stops
// at until.
func RecoverTo(ctx context.Context, src eventlog.Source, store *snapshot.Store, p int32, opts Options, until int64) (*Recovery, error) {
	gc := pauseGC(opts.PauseGCWhileRestoring)
	defer gc.resume()
	rec, check, err := restoreNewest(src, store, p, opts, until, true)
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
			return recoverAgain(ctx, src, store, p, opts, until, rec, cerr)
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
// aside like any corrupt snapshot and recovery starts over without it.
func recoverAgain(ctx context.Context, src eventlog.Source, store *snapshot.Store, p int32, opts Options, until int64, failed *Recovery, cause error) (*Recovery, error) {
	sk := snapshot.Skipped{Info: *failed.Snapshot, Err: cause}
	moved, err := store.SetAside(failed.Snapshot.Name)
	if err != nil {
		return nil, fmt.Errorf("replay: recover partition %d: snapshot %s is corrupt (%v) and could not be moved aside: %w", p, failed.Snapshot.Name, cause, err)
	}
	sk.MovedTo = moved
	rec, err := RecoverTo(ctx, src, store, p, opts, until)
	if rec != nil {
		rec.Loaded.Skipped = append(append(failed.Loaded.Skipped, sk), rec.Loaded.Skipped...)
	}
	return rec, err
}

// RestoreNewest is the first phase of RecoverTo: it restores the newest usable snapshot at or
// before until (or returns a fresh engine when none is usable) and replays nothing, so that
// the caller can replay the tail its own way (RunWithSnapshots).
func RestoreNewest(src eventlog.Source, store *snapshot.Store, p int32, opts Options, until int64) (*Recovery, error) {
	gc := pauseGC(opts.PauseGCWhileRestoring)
	defer gc.resume()
	rec, _, err := restoreNewest(src, store, p, opts, until, false)
	return rec, err
}

// restoreNewest is RestoreNewest; with deferCheck it leaves the restored state's offset
// check (nil when there is none) to the caller, who must run it and act on its result
// before trusting the state.
func restoreNewest(src eventlog.Source, store *snapshot.Store, p int32, opts Options, until int64, deferCheck bool) (*Recovery, *groupstate.OffsetCheck, error) {
	rec := &Recovery{}
	var check *groupstate.OffsetCheck
	_, logNext, err := src.Offsets(p)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: recover partition %d: %w", p, err)
	}
	if store != nil {
		start := time.Now()
		var used *Engine
		rec.Loaded, err = store.Load(p, func(sn *snapshot.Snapshot) error {
			rec.Verify = time.Since(start)
			if sn.NextOffset > until {
				start = time.Now()
				return fmt.Errorf("taken at offset %d, after the requested offset %d", sn.NextOffset, until-1)
			}
			e, dec, res, c, err := restoreSnapshot(sn, p, opts, logNext, deferCheck)
			rec.Decode, rec.Restore = dec, res
			if err != nil {
				start = time.Now() // the next candidate's verify time
				return err
			}
			used, check = e, c
			return nil
		})
		switch {
		case err == nil:
			rec.Engine, rec.Snapshot, rec.SnapshotOffset = used, rec.Loaded.Used, rec.Loaded.Used.NextOffset
		case errors.Is(err, snapshot.ErrNoSnapshot):
			rec.Verify, rec.Decode, rec.Restore = time.Since(start), 0, 0
		default:
			return nil, nil, fmt.Errorf("replay: recover partition %d: %w", p, err)
		}
	}
	if rec.Engine == nil {
		rec.Engine = New(p, opts)
	}
	return rec, check, nil
}

// restoreSnapshot checks that sn was built by opts' rules and turns it into an engine.
func restoreSnapshot(sn *snapshot.Snapshot, p int32, opts Options, logNext int64, deferCheck bool) (*Engine, time.Duration, time.Duration, *groupstate.OffsetCheck, error) {
	m := sn.Meta()
	switch want := opts.effectiveVersion().String(); {
	case m.KafkaVersion != want:
		return nil, 0, 0, nil, fmt.Errorf("built with Kafka %s replay rules, recovering with %s", m.KafkaVersion, want)
	case m.RecordLayout != opts.layoutName():
		return nil, 0, 0, nil, fmt.Errorf("built with record layout %q, recovering with %q", m.RecordLayout, opts.layoutName())
	case m.NextOffset > logNext:
		return nil, 0, 0, nil, fmt.Errorf("snapshot at offset %d is ahead of the log, which ends at %d", m.NextOffset, logNext)
	}
	if v, _ := m.Counter("violations"); v > 0 && opts.Mode == eventlog.Strict {
		return nil, 0, 0, nil, fmt.Errorf("state was built past %d violations in forensic mode; strict mode replays from the start to report them", v)
	}
	st, stats, dec, res, check, err := decodeState(m.PayloadKind, sn.Decode, deferCheck)
	if err != nil {
		return nil, dec, res, nil, err
	}
	if st.Version().String() != m.KafkaVersion {
		return nil, dec, res, nil, fmt.Errorf("state says Kafka %s, meta says %s", st.Version(), m.KafkaVersion)
	}
	return Restore(p, st, m.NextOffset, stats, opts), dec, res, check, nil
}

// LoadSnapshot verifies the snapshot file name in store and restores an engine from it,
// without replaying anything and without moving anything aside (for inspection: verify,
// describe of a snapshot). It checks the payload kind, not the rules: opts.Version and
// opts.Layout are taken from the snapshot.
func LoadSnapshot(store *snapshot.Store, name string, opts Options) (*Engine, snapshot.Info, error) {
	sn, err := store.Open(name)
	if err != nil {
		return nil, snapshot.Info{Name: name}, err
	}
	defer sn.Close()
	m := sn.Meta()
	st, stats, _, _, _, err := decodeState(m.PayloadKind, sn.Decode, false)
	if err != nil {
		return nil, sn.Info, fmt.Errorf("snapshot %s: %w", name, err)
	}
	return Restore(m.Partition, st, m.NextOffset, stats, opts), sn.Info, nil
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
func RunWithSnapshots(ctx context.Context, e *Engine, src eventlog.Source, until int64, pol SnapshotPolicy) ([]snapshot.Info, error) {
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
			info, err := TakeSnapshot(pol.Store, e, now)
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
