package session

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/recovery"
	"github.com/coordlog/coordlog/snapshot"
)

// Request says which partitions to bring to which point in history, and how.
type Request struct {
	// Partitions are the __consumer_offsets partitions to read; none: those At names, else
	// every partition of the source.
	Partitions []int32
	// At is the point: the end of the log (the zero value), an offset per partition, a time.
	At query.Point
	// Options are the replay's: Kafka version, layout, strict or forensic.
	Options replay.Options
	// DetectVersion replays with the rules of the Kafka release the records show wrote the
	// log (replay.DetectVersion over the selected partitions, up to
	// replay.DefaultDetectRecords records) instead of Options.Version; Trace.Detected is told
	// what was found. A replay from snapshots does not detect: it restores with
	// Options.Version's rules.
	DetectVersion bool
	// Observer, when set, makes an observer of each partition's replay.
	Observer func(p int32) replay.Observer
	// Sequential replays one partition after the other, so that observers that print as
	// they go print in partition order; otherwise partitions replay in parallel and their
	// observers must keep to their own partition.
	Sequential bool
	// FromSnapshot (a coordlog database only, no Observer: the records before the snapshot
	// are not replayed) restores each partition from its newest usable snapshot at or before
	// its point and replays only the log after it.
	FromSnapshot bool
	// PauseGC pauses the collector while a snapshot decodes (recovery.Options.PauseGC), for
	// a process that does nothing else meanwhile.
	PauseGC bool
	// Trace, when set, is told the steps as they happen.
	Trace *Trace
}

// Replayed is the state of every selected partition at the point asked for.
type Replayed struct {
	Source     *Source
	At         query.Point
	Options    replay.Options
	Partitions []Partition
	// Lock, when set, is held by Follow while it replays what the log appended: readers of
	// the states on other goroutines hold it too (a sync.RWMutex's read lock, with Lock the
	// mutex itself).
	Lock sync.Locker
}

// Partition is one replayed partition.
type Partition struct {
	Engine *replay.Engine
	// Position is where the point fell in the partition.
	Position *query.Position
	// Restored says which snapshot the state came from (FromSnapshot only; nil otherwise).
	Restored *Restored
}

// Restored is where a FromSnapshot request took a partition's state from.
type Restored struct {
	Snapshot   string // the snapshot file; "" when none was usable and the whole log was replayed
	NextOffset int64  // the snapshot's next offset: where the replay started
	Tail       int64  // the data records replayed after it
}

// RecordsReplayed is how many data records the request replayed in this partition: all of
// them, or those after the snapshot its state was restored from.
func (p *Partition) RecordsReplayed() int64 {
	if p.Restored != nil {
		return p.Restored.Tail
	}
	return p.Engine.Stats().Records
}

// Snapshot is the snapshot the state was restored from; nil when it was replayed from the
// start of the log.
func (p *Partition) Snapshot() *Restored {
	if p.Restored != nil && p.Restored.Snapshot != "" {
		return p.Restored
	}
	return nil
}

// Resolve places at in the partitions parts of src (Select picks them) and tells
// trace.Resolved. A point outside a partition's log is a *RequestError; damaged input met on
// the way a *ReplayError.
func Resolve(ctx context.Context, src eventlog.Source, parts []int32, at query.Point, trace *Trace) ([]query.Position, error) {
	pos, err := query.Resolve(ctx, src, parts, at)
	if err != nil {
		if query.IsPointError(err) {
			return nil, &RequestError{err}
		}
		var prob *eventlog.Problem
		if errors.As(err, &prob) {
			return nil, &ReplayError{Err: err}
		}
		return nil, err
	}
	trace.resolved(at, pos)
	return pos, nil
}

// Replay brings the selected partitions of src to req.At: it selects them, places the point
// in each (Resolve) and replays each up to it, in parallel unless req.Sequential. In strict
// mode a violation or damaged input stops it (*ReplayError); in forensic mode they are
// recorded (Engine.Violations, Source.Report) and the replay carries on.
func Replay(ctx context.Context, src *Source, req Request) (*Replayed, error) {
	if !req.Options.Version.Valid() {
		req.Options.Version = groupstate.DefaultKafkaVersion // as replay.New takes it
	}
	if req.FromSnapshot {
		return recoverFromSnapshots(ctx, src, req)
	}
	parts, err := Select(src, req.Partitions, req.At)
	if err != nil {
		return nil, err
	}
	pos, err := Resolve(ctx, src, parts, req.At, req.Trace)
	if err != nil {
		req.Trace.done(src)
		return nil, err
	}
	if req.DetectVersion {
		det, err := replay.DetectVersion(ctx, src, parts, replay.DefaultDetectRecords)
		if err != nil {
			req.Trace.done(src)
			return nil, err
		}
		req.Options.Version = det.Version
		req.Trace.detected(det)
	}
	r := &Replayed{Source: src, At: req.At, Options: req.Options}
	if !req.Sequential {
		res, err := replay.ReplayCuts(ctx, src, query.Cuts(pos, req.Observer), req.Options, 0)
		req.Trace.done(src)
		if err != nil {
			return nil, &ReplayError{Err: err}
		}
		for i := range res {
			r.Partitions = append(r.Partitions, Partition{Engine: res[i].Engine, Position: &pos[i]})
		}
		return r, nil
	}
	var engines []*replay.Engine
	for i, p := range pos {
		o := req.Options
		if req.Observer != nil {
			o.Observer = req.Observer(p.Partition)
		}
		e := replay.New(p.Partition, o)
		engines = append(engines, e)
		if err := e.Run(ctx, src, p.Until); err != nil {
			req.Trace.done(src)
			return nil, &ReplayError{Err: fmt.Errorf("partition %d: %w", p.Partition, err), Engines: engines}
		}
		r.Partitions = append(r.Partitions, Partition{Engine: e, Position: &pos[i]})
	}
	req.Trace.done(src)
	return r, nil
}

// recoverFromSnapshots is Replay for req.FromSnapshot: each partition is restored from its
// newest usable snapshot (at or before its point) and the rest of the log is replayed.
func recoverFromSnapshots(ctx context.Context, src *Source, req Request) (*Replayed, error) {
	if req.Observer != nil {
		return nil, &RequestError{errors.New("a replay from snapshots has no observer: the records before each snapshot are not replayed")}
	}
	if !input.IsDatabase(src.Name) {
		return nil, &RequestError{fmt.Errorf("replay from snapshots needs a coordlog database; %s is not one", src.Name)}
	}
	parts, err := Select(src, req.Partitions, req.At)
	if err != nil {
		return nil, err
	}
	pos, err := Resolve(ctx, src, parts, req.At, req.Trace)
	if err != nil {
		return nil, err
	}
	store, err := snapshot.OpenStore(recovery.StoreDir(src.Name), snapshot.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	r := &Replayed{Source: src, At: req.At, Options: req.Options}
	for i, p := range pos {
		rec, err := recovery.RecoverTo(ctx, src, store, p.Partition, recovery.Options{Options: req.Options, PauseGC: req.PauseGC}, p.Until)
		if err != nil {
			return nil, &ReplayError{Err: err}
		}
		req.Trace.restored(p.Partition, rec)
		from := &Restored{Tail: rec.Engine.Stats().Records}
		if rec.Snapshot != nil {
			from.Snapshot, from.NextOffset = rec.Snapshot.Name, rec.SnapshotOffset
			if n, ok := rec.Snapshot.Header.Meta.Counter("records"); ok {
				from.Tail -= n
			}
		}
		r.Partitions = append(r.Partitions, Partition{Engine: rec.Engine, Position: &pos[i], Restored: from})
	}
	return r, nil
}

// UnknownRecordsWarning says how many records of types the replay's Kafka rules do not know
// were skipped ("" for none): a newer release's records, read with older rules.
func (r *Replayed) UnknownRecordsWarning() string {
	return unknownRecords(r.Options.Version, r.engines())
}

func unknownRecords(v groupstate.KafkaVersion, engines []*replay.Engine) string {
	res := make([]replay.Result, len(engines))
	for i, e := range engines {
		res[i].Engine = e
	}
	return replay.UnknownRecordsWarning(v, res)
}

func (r *Replayed) engines() []*replay.Engine {
	out := make([]*replay.Engine, len(r.Partitions))
	for i, p := range r.Partitions {
		out[i] = p.Engine
	}
	return out
}

// Views returns the replayed partitions' states, in partition order.
func (r *Replayed) Views() []groupstate.View {
	out := make([]groupstate.View, len(r.Partitions))
	for i, p := range r.Partitions {
		out[i] = p.Engine.State()
	}
	return out
}

// States returns the replayed partitions as replay/query reads them, each with its Activity
// when activity has one for it (nil: none).
func (r *Replayed) States(activity func(p int32) *query.Activity) []query.PartitionState {
	out := make([]query.PartitionState, len(r.Partitions))
	for i, p := range r.Partitions {
		out[i] = query.PartitionState{Partition: p.Engine.Partition(), View: p.Engine.State()}
		if activity != nil {
			out[i].Activity = activity(p.Engine.Partition())
		}
	}
	return out
}

// FindGroup returns a *query.UnknownGroupError (with the close names) when no partition
// knows group at the replayed point: neither as a group nor by committed or pending offsets.
func (r *Replayed) FindGroup(group string) error {
	var candidates []string
	for _, p := range r.Partitions {
		st := p.Engine.State()
		if _, ok := st.GroupType(group); ok || len(st.Offsets(group)) > 0 {
			return nil
		}
		for _, pt := range st.PendingTransactions() {
			for _, o := range pt.Offsets {
				if o.GroupID == group {
					return nil
				}
			}
		}
		candidates = append(candidates, st.GroupIDs()...)
		candidates = append(candidates, st.OffsetGroupIDs()...)
	}
	where := "in the input at the end of the log"
	if !r.At.IsEnd() {
		where = "in the input at " + r.At.String()
		if _, ok := r.At.Offset(); ok {
			where = "in the input at offset " + r.At.String()
		} else if !r.At.IsTime() {
			where = "in the input at offsets " + r.At.String()
		}
	}
	return &query.UnknownGroupError{Group: group, Where: where, Suggests: query.Suggest(group, candidates, 5)}
}
