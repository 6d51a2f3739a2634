package replay

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Options configure an Engine.
type Options struct {
	// Version selects Kafka's version-dependent replay rules (default 4.4).
	Version groupstate.KafkaVersion
	// Mode is eventlog.Strict (stop at the first violation) or eventlog.Forensic (record it and
	// continue). It also applies to the segment reader when the engine opens one.
	Mode eventlog.Mode
	// Layout overrides the record layout of ids whose schema changed between releases; by
	// default it follows Version (Kafka 4.0 reads ids 9, 11 and 15 in their 4.0 layout).
	Layout *recordcodec.Layout
	// Observer, when set, sees every record and marker after it was applied (or refused).
	Observer Observer
	// OffsetFilter, when set, is the state's offset filter (groupstate's SetOffsetFilter): the
	// state keeps only the offsets of the keys it accepts. For proofs that compare a large log's
	// offsets part by part; the state is then not the whole state of the log.
	OffsetFilter func(group, topic string, partition int32) bool
	// AllViolations keeps every violation of forensic mode in full (a verbose listing). By
	// default the first eventlog.MaxKeptProblems are kept and every one is counted in its
	// ViolationGroup, so that memory stays bounded whatever the log holds.
	AllViolations bool
	// ReadAhead reads the source on a goroutine of its own during Run (eventlog.ReadAhead):
	// reading, CRC checks, decompression and framing of the next batches overlap the replay of
	// the current ones. Worth it with a spare core, and only for a replay to the end (the
	// goroutine reads a little past where a bounded replay stops). ReplayCuts turns it on for
	// those cuts when fewer partitions than cores replay at once.
	ReadAhead bool
}

// Observer receives replay events in log order. The view it is given reads the engine's live
// state: read it during the callback, never keep it.
type Observer interface {
	Observe(ev *Event, st groupstate.View)
}

// KeysObserver is an Observer that reads, of each event's Record, only the key and whether it
// is a tombstone. The engine may hand it a record without decoding the value, where it has a
// path that does not need it (streams assignment records applied from the lists the state
// stored, tasklists.go): the Value is then a *recordcodec.RawValue of the value's bytes (valid
// only during the callback, as the rest of the event). query.Activity, the group list's
// observer, is one.
type KeysObserver interface {
	Observer
	// ObservesKeysOnly marks the observer; the engine never calls it.
	ObservesKeysOnly()
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(ev *Event, st groupstate.View)

// Observe calls f.
func (f ObserverFunc) Observe(ev *Event, st groupstate.View) { f(ev, st) }

// Event is one replayed record or transaction marker.
type Event struct {
	Partition int32
	Batch     *eventlog.Batch // valid only during the callback
	Offset    int64
	Timestamp int64
	// Record is the decoded coordinator record (nil Value: tombstone); zero for markers. Like
	// Batch it is valid only during the callback: its strings may alias the batch's buffers
	// and its Value is reused for the next record of its type, so an observer copies what it
	// keeps.
	Record recordcodec.Record
	// Marker is set for a COMMIT or ABORT control record.
	Marker *Marker
	// Skipped says why the record was not applied: "unknown-type" (skipped as Kafka does),
	// "control" (a control record other than COMMIT/ABORT) or "" when it was applied.
	Skipped string
	// Violation is set when the record broke a replay rule (forensic mode continues after it).
	Violation *Violation
}

// Marker is an end-of-transaction control record.
type Marker struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
}

// Violation is a record Kafka's loader would have failed on: a decode failure (other than an
// unknown record type), an unsupported value version, or a replay invariant
// (IllegalStateException in GroupCoordinatorShard.replay).
type Violation struct {
	Partition int32
	Offset    int64
	Type      recordcodec.RecordType // -1 for control records and undecodable keys
	Tombstone bool
	File      string // the segment file, when known
	Pos       int64  // the batch's byte position in File
	Err       error
}

func (v *Violation) Error() string {
	where := fmt.Sprintf("partition %d offset %d", v.Partition, v.Offset)
	if v.File != "" {
		where += fmt.Sprintf(" (%s, batch at byte %d)", v.File, v.Pos)
	}
	what := "record"
	if v.Type >= 0 {
		what = fmt.Sprintf("record type %d (%s)", int16(v.Type), v.Type)
		if v.Tombstone {
			what += " tombstone"
		}
	}
	return fmt.Sprintf("%s: %s: %v", where, what, v.Err)
}

func (v *Violation) Unwrap() error { return v.Err }

// Stats counts what an engine replayed. All fields are plain counters so that a snapshot can
// carry them.
type Stats struct {
	Batches        int64
	EmptyBatches   int64                             // header-only batches (compaction leftovers)
	Records        int64                             // data records read (control records excluded)
	Applied        [recordcodec.NumRecordTypes]int64 // values applied, by record type
	Tombstones     [recordcodec.NumRecordTypes]int64 // tombstones applied, by record type
	UnknownTypes   int64                             // records of types Kafka skips
	Markers        int64                             // COMMIT and ABORT records
	Commits        int64
	Aborts         int64
	OtherControl   int64
	TrailingBytes  int64 // records with bytes after their key or value (Kafka ignores them)
	Violations     int64
	LastOffset     int64 // the offset of the last record seen, -1 before any
	LastTimestamp  int64
	FirstOffset    int64 // the first offset replayed, -1 before any
	TransactionBts int64 // transactional data batches
}

// Engine replays the records of one __consumer_offsets partition into a groupstate.State. It
// is not safe for concurrent use; run one engine per partition.
type Engine struct {
	partition int32
	opts      Options
	layout    recordcodec.Layout
	state     *groupstate.State
	next      int64
	stats     Stats
	// violations are kept in forensic mode (strict mode stops at the first), the first
	// eventlog.MaxKeptProblems of them unless Options.AllViolations; every one is counted in
	// vgroups (per file, record type and tombstone).
	violations []Violation
	vgroups    []*ViolationGroup
	vgroupOf   map[violationKey]*ViolationGroup
	// Records decode without copying (their strings alias the batch) into values the engine
	// reuses, one per record type (vals; ocv for offset commits), and convert into reused
	// groupstate inputs (cv, zz_dispatch.go); the state copies what it keeps. A record that
	// changes nothing allocates nothing.
	ocv      recordcodec.OffsetCommitValue
	commit   recordcodec.Record   // an offset commit being applied: Type OffsetCommit, Value &ocv
	raw      recordcodec.RawValue // a value a KeysObserver is handed undecoded
	keysOnly bool                 // the observer is a KeysObserver
	// Streams assignment records whose encoded lists were all met before replay from the
	// lists the state stored for them (tasklists.go).
	lists taskListCache
	rec   recordcodec.Record // the record being applied (decode)
	vals  [recordcodec.NumRecordTypes]recordcodec.Value
	cv    converted
	ev    Event
}

// New returns an engine with an empty state for partition p.
func New(p int32, opts Options) *Engine {
	if !opts.Version.Valid() {
		opts.Version = groupstate.DefaultKafkaVersion
	}
	e := &Engine{partition: p, opts: opts, state: groupstate.New(opts.Version)}
	if opts.OffsetFilter != nil {
		e.state.SetOffsetFilter(opts.OffsetFilter)
	}
	e.layout = recordcodec.LayoutCurrent
	if opts.Version == groupstate.Kafka40 {
		e.layout = recordcodec.Layout40
	}
	if opts.Layout != nil {
		e.layout = *opts.Layout
	}
	e.stats.LastOffset, e.stats.FirstOffset = -1, -1
	_, e.keysOnly = opts.Observer.(KeysObserver)
	e.commit = recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit}, Value: &e.ocv}
	return e
}

// Restore returns an engine that continues from a restored state: next is the offset the
// state was replayed up to (exclusive).
func Restore(p int32, st *groupstate.State, next int64, stats Stats, opts Options) *Engine {
	opts.Version = st.Version()
	e := New(p, opts)
	e.state, e.next, e.stats = st, next, stats
	return e
}

// Partition returns the engine's partition.
func (e *Engine) Partition() int32 { return e.partition }

// State returns a read-only view of the live state: it follows the engine as it replays, so
// read it between runs, never while one is in progress.
func (e *Engine) State() groupstate.View { return e.state.View() }

// ImageCache returns the image cache of the engine's state (groupstate.ImageCache), attached
// the first time: periodic snapshots of the engine then copy the entries of untouched groups.
func (e *Engine) ImageCache() *groupstate.ImageCache { return e.state.ImageCache() }

// NextOffset is the offset after the last applied batch.
func (e *Engine) NextOffset() int64 { return e.next }

// Stats returns the counters.
func (e *Engine) Stats() Stats { return e.stats }

// Violations returns the violations recorded in full in forensic mode (see
// Options.AllViolations; Stats().Violations counts them all).
func (e *Engine) Violations() []Violation { return append([]Violation(nil), e.violations...) }

// ViolationGroup counts the violations of forensic mode on records of one type (tombstones
// apart) in one segment file.
type ViolationGroup struct {
	File        string
	Type        recordcodec.RecordType
	Tombstone   bool
	Count       int64
	First, Last Violation
}

type violationKey struct {
	file string
	typ  recordcodec.RecordType
	tomb bool
}

// ViolationGroups returns every violation of forensic mode counted per file, record type and
// tombstone, in the order their first violation was found.
func (e *Engine) ViolationGroups() []ViolationGroup {
	out := make([]ViolationGroup, len(e.vgroups))
	for i, g := range e.vgroups {
		out[i] = *g
	}
	return out
}

// Options returns the engine's options.
func (e *Engine) Options() Options { return e.opts }

// Run replays src's partition from the engine's next offset up to until (exclusive: records
// at offsets >= until are not applied; math.MaxInt64 replays to the end). A batch that
// straddles until is applied up to until, and the next offset is then until.
func (e *Engine) Run(ctx context.Context, src eventlog.Source, until int64) error {
	if e.next >= until {
		return nil
	}
	it, err := src.Batches(e.partition, e.next)
	if err != nil {
		return err
	}
	if e.opts.ReadAhead && until == math.MaxInt64 {
		it = eventlog.ReadAhead(it)
	}
	defer it.Close()
	n := 0
	for it.Next() {
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b := it.Batch()
		if b.BaseOffset >= until {
			break
		}
		if err := e.apply(b, until); err != nil {
			return err
		}
	}
	return it.Err()
}

// Apply replays one batch and advances the next offset past it.
func (e *Engine) Apply(b *eventlog.Batch) error { return e.apply(b, math.MaxInt64) }

func (e *Engine) apply(b *eventlog.Batch, until int64) error {
	if b.LastOffset < e.next {
		return nil // already replayed (a batch repeated by the source)
	}
	e.stats.Batches++
	if len(b.Records) == 0 {
		e.stats.EmptyBatches++
	}
	if b.Attributes.Control() {
		for i := range b.Records {
			r := &b.Records[i]
			if r.Offset < e.next || r.Offset >= until {
				continue
			}
			if err := e.applyControl(b, r); err != nil {
				return err
			}
		}
	} else {
		if b.ProducerID != groupstate.NoProducerID {
			e.stats.TransactionBts++
		}
		for i := range b.Records {
			r := &b.Records[i]
			if r.Offset < e.next || r.Offset >= until {
				continue
			}
			if err := e.applyRecord(b, r); err != nil {
				return err
			}
		}
	}
	if until <= b.LastOffset {
		e.next = until
	} else {
		e.next = b.NextOffset()
	}
	return nil
}

func (e *Engine) seen(r *eventlog.Record) {
	if e.stats.FirstOffset < 0 {
		e.stats.FirstOffset = r.Offset
	}
	e.stats.LastOffset, e.stats.LastTimestamp = r.Offset, r.Timestamp
}

// violation records v; in strict mode it is returned and stops the replay.
func (e *Engine) violation(b *eventlog.Batch, r *eventlog.Record, typ recordcodec.RecordType, tomb bool, err error) error {
	v := Violation{Partition: e.partition, Offset: r.Offset, Type: typ, Tombstone: tomb, File: b.Origin.File, Pos: b.Origin.Pos, Err: err}
	e.stats.Violations++
	e.observe(b, r, nil, func(ev *Event) { ev.Violation = &v })
	if e.opts.Mode == eventlog.Strict {
		return &v
	}
	if e.opts.AllViolations || len(e.violations) < eventlog.MaxKeptProblems {
		e.violations = append(e.violations, v)
	}
	k := violationKey{v.File, v.Type, v.Tombstone}
	g := e.vgroupOf[k]
	if g == nil {
		if e.vgroupOf == nil {
			e.vgroupOf = map[violationKey]*ViolationGroup{}
		}
		g = &ViolationGroup{File: v.File, Type: v.Type, Tombstone: v.Tombstone, First: v}
		e.vgroupOf[k] = g
		e.vgroups = append(e.vgroups, g)
	}
	g.Count++
	g.Last = v
	return nil
}

// observe hands the observer one event: the record applied (rec), or a record or marker that
// fill describes (a skip, a violation, a marker; rec nil). It is the engine's one hand-off.
// Field by field: a composite literal of the event, built on the stack and copied in, stalled
// the store of every offset commit (a fifth of a commit's replay in profiles).
func (e *Engine) observe(b *eventlog.Batch, r *eventlog.Record, rec *recordcodec.Record, fill func(*Event)) {
	if e.opts.Observer == nil {
		return
	}
	ev := &e.ev
	ev.Partition, ev.Batch, ev.Offset, ev.Timestamp = e.partition, b, r.Offset, r.Timestamp
	if rec != nil {
		k, rk := &ev.Record.Key, &rec.Key
		k.Type, k.Group, k.Topic, k.Partition, k.Member, k.Regex, k.Raw = rk.Type, rk.Group, rk.Topic, rk.Partition, rk.Member, rk.Regex, rk.Raw
		ev.Record.Value = rec.Value
	} else {
		ev.Record = recordcodec.Record{}
	}
	ev.Marker, ev.Skipped, ev.Violation = nil, "", nil
	if fill != nil {
		fill(ev)
	}
	e.opts.Observer.Observe(ev, e.state.View())
}

func (e *Engine) applyControl(b *eventlog.Batch, r *eventlog.Record) error {
	e.seen(r)
	k, err := recordcodec.DecodeControlKey(r.Key)
	if err != nil {
		return e.violation(b, r, -1, false, err)
	}
	if k.Type != recordcodec.ControlCommit && k.Type != recordcodec.ControlAbort {
		// The loader only acts on COMMIT and ABORT.
		e.stats.OtherControl++
		e.observe(b, r, nil, func(ev *Event) { ev.Skipped = "control" })
		return nil
	}
	m, err := recordcodec.DecodeEndTxnMarker(r.Value)
	if err != nil {
		return e.violation(b, r, -1, false, err)
	}
	e.stats.Markers++
	result := groupstate.TxnAbort
	if k.Type == recordcodec.ControlCommit {
		result = groupstate.TxnCommit
		e.stats.Commits++
	} else {
		e.stats.Aborts++
	}
	if err := e.state.ReplayEndTransactionMarker(b.ProducerID, result); err != nil {
		return e.violation(b, r, -1, false, err)
	}
	e.observe(b, r, nil, func(ev *Event) {
		ev.Marker = &Marker{ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, Commit: result == groupstate.TxnCommit, CoordinatorEpoch: m.CoordinatorEpoch}
	})
	return nil
}

// decode decodes a record as recordcodec.Decoder.Record does, without copying: the key's
// strings alias it and the value is the engine's reused value of its type. Keys that do not
// decode, and unknown types, take the copying decoder (for its exact partial record and
// error).
func (e *Engine) decode(rec *recordcodec.Record, key, value []byte) (err error) {
	d := recordcodec.Decoder{Layout: e.layout, NoCopy: true}
	if rec.Key, err = d.Key(key); err != nil {
		*rec, err = recordcodec.Decoder{Layout: e.layout}.Record(key, value)
		return err
	}
	if value == nil {
		rec.Value = nil
		return nil
	}
	v := e.vals[rec.Key.Type]
	if v == nil {
		if v = recordcodec.NewValue(rec.Key.Type, e.layout); v == nil {
			*rec, err = recordcodec.Decoder{Layout: e.layout}.Record(key, value)
			return err
		}
		e.vals[rec.Key.Type] = v
	}
	rec.Value = v
	return d.DecodeInto(v, value)
}

// applyRecord decodes one data record and replays it (replay). Two kinds of records have a
// path of their own, which fills what dispatch applies and calls its case for them directly:
// offset commits, most of any real log, decode without the general reader and without
// allocating (applyOffsetCommit); streams assignment records whose task lists the cache holds
// are applied from the lists the state stored (applyStreamsLists, tasklists.go).
func (e *Engine) applyRecord(b *eventlog.Batch, r *eventlog.Record) error {
	e.seen(r)
	e.stats.Records++
	if r.Key == nil {
		return e.violation(b, r, -1, false, errors.New("record has no key"))
	}
	if len(r.Key) >= 2 && r.Key[0] == 0 && r.Key[1] == byte(recordcodec.OffsetCommit) && r.Value != nil {
		if done, err := e.applyOffsetCommit(b, r); done {
			return err
		}
	}
	if len(r.Key) >= 2 && r.Key[0] == 0 && (r.Key[1] == byte(recordcodec.StreamsGroupTargetAssignmentMember) ||
		r.Key[1] == byte(recordcodec.StreamsGroupCurrentMemberAssignment)) && r.Value != nil {
		if done, err := e.applyStreamsLists(b, r); done {
			return err
		}
	}
	rec := &e.rec
	if apply, err := e.decodeGeneral(b, r, rec); !apply {
		if e.lists.pending {
			e.lists.forget()
		}
		return err
	}
	return e.replay(b, r, rec)
}

// decodeGeneral decodes a record on the general path and checks that the engine's version
// replays its type. It reports false when the record is not to be applied: skipped as Kafka
// skips it, or a violation (with its error in strict mode).
func (e *Engine) decodeGeneral(b *eventlog.Batch, r *eventlog.Record, rec *recordcodec.Record) (apply bool, err error) {
	if err = e.decode(rec, r.Key, r.Value); err != nil {
		var ue *recordcodec.UnknownTypeError
		var te *recordcodec.TrailingBytesError
		switch {
		case errors.As(err, &ue):
			e.stats.UnknownTypes++
			e.observe(b, r, rec, func(ev *Event) { ev.Skipped = "unknown-type" })
			return false, nil
		case errors.As(err, &te):
			e.stats.TrailingBytes++ // Kafka's readers ignore trailing bytes
		default:
			return false, e.violation(b, r, rec.Key.Type, r.Value == nil, err)
		}
	}
	t := rec.Key.Type
	if e.opts.Layout == nil && !e.opts.Version.KnowsRecordType(int16(t)) {
		// Unknown to the version's serde (Kafka 4.0 knows ids 0-16 only: the streams ids are
		// unknown to it) and skipped as its loader does. An explicit layout decodes them on
		// purpose.
		e.stats.UnknownTypes++
		e.observe(b, r, rec, func(ev *Event) { ev.Skipped = "unknown-type" })
		return false, nil
	}
	if !e.opts.Version.ReplaysRecordType(int16(t)) {
		// Known to the decoder of this layout, but not replayed by this Kafka version's shard
		// (e.g. id 15 on 4.0, which has no case for it and throws).
		return false, e.violation(b, r, t, rec.Value == nil, fmt.Errorf("Kafka %s does not replay record type %d", e.opts.Version, int16(t)))
	}
	return true, nil
}

// replay applies a decoded record through dispatch, counts it and hands it to the observer.
func (e *Engine) replay(b *eventlog.Batch, r *eventlog.Record, rec *recordcodec.Record) error {
	t := rec.Key.Type
	err := e.dispatch(rec, r.Offset, b.ProducerID)
	if e.lists.pending {
		e.lists.settle(e.state.View(), rec, err == nil)
	}
	if err != nil {
		return e.violation(b, r, t, rec.Value == nil, err)
	}
	if rec.Value == nil {
		e.stats.Tombstones[t]++
	} else {
		e.stats.Applied[t]++
	}
	if e.opts.Observer != nil {
		e.observe(b, r, rec, nil)
	}
	return nil
}

// applyOffsetCommit decodes an offset commit's key and value (not a tombstone) without
// allocating, into the engine's offset-commit record (commit, whose type and value, ocv,
// never change: the key's strings and the value's metadata alias the batch), and replays it
// as replay does, with dispatch's case for it (dispatchOffsetCommit): an offset commit's
// replay is short enough that the switches and a call more show. A key it does not read is
// left to the general path (done false), which names the problem; trailing bytes after the
// value are counted and ignored, as there.
func (e *Engine) applyOffsetCommit(b *eventlog.Batch, r *eventlog.Record) (done bool, err error) {
	rec := &e.commit
	k := &rec.Key
	var ok bool
	if _, k.Group, k.Topic, k.Partition, ok = recordcodec.OffsetCommitKeyNoCopy(r.Key); !ok {
		return false, nil
	}
	if err := (recordcodec.Decoder{Layout: e.layout, NoCopy: true}).DecodeOffsetCommitInto(&e.ocv, r.Value); err != nil {
		var te *recordcodec.TrailingBytesError
		if !errors.As(err, &te) {
			return true, e.violation(b, r, recordcodec.OffsetCommit, false, err)
		}
		e.stats.TrailingBytes++
	}
	if err := e.dispatchOffsetCommit(k, &e.ocv, r.Offset, b.ProducerID); err != nil {
		return true, e.violation(b, r, recordcodec.OffsetCommit, false, err)
	}
	e.stats.Applied[recordcodec.OffsetCommit]++
	if e.opts.Observer != nil {
		e.observe(b, r, rec, nil)
	}
	return true, nil
}
