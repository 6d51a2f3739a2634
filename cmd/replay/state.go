package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/recovery"
)

// replayFlags are shared by the commands that rebuild state.
type replayFlags struct {
	partitions   []int32
	pointFlags   // --at-offset, --at-time (point.go)
	kafkaVersion string
	forensic     bool
	layout       string
	fromSnapshot bool // describe and offsets: --from-snapshot (snapshot.go)
	// cmd is the command the flags were registered on, for the root's reading flags.
	cmd *cobra.Command
}

func (f *replayFlags) register(cmd *cobra.Command) {
	f.cmd = cmd
	fl := cmd.Flags()
	fl.Int32SliceVar(&f.partitions, "partition", nil, "only these __consumer_offsets partitions (repeatable)")
	f.pointFlags.register(cmd)
	fl.StringVar(&f.kafkaVersion, "kafka-version", "detect", "replay rules of this Kafka version: 4.0, 4.1, 4.2, 4.3 or 4.4 (detect: the release the records show wrote the log, said on stderr)")
	fl.BoolVar(&f.forensic, "forensic", false, "record violations and damaged input and continue, instead of stopping at the first")
	fl.StringVar(&f.layout, "layout", "", "record layout of ids that changed between releases (4.1+, 4.0, 3.9, streams-preview); default: the one of --kafka-version")
}

func (f *replayFlags) options() (replay.Options, eventlog.Mode, error) {
	v := groupstate.DefaultKafkaVersion // detect: replaySelected detects it from the records
	if f.kafkaVersion != "detect" {
		var err error
		if v, err = groupstate.ParseKafkaVersion(f.kafkaVersion); err != nil {
			return replay.Options{}, 0, usageError{err}
		}
	}
	mode := eventlog.Strict
	if f.forensic {
		mode = eventlog.Forensic
	}
	rf, err := readingFlags(f.cmd)
	if err != nil {
		return replay.Options{}, 0, err
	}
	opts := replay.Options{Version: v, Mode: mode, AllViolations: rf.verbose}
	if f.layout != "" {
		l, err := recordcodec.ParseLayout(f.layout)
		if err != nil {
			return replay.Options{}, 0, usageError{err}
		}
		opts.Layout = &l
	}
	return opts, mode, nil
}

// replayed is the state of every selected partition.
type replayed struct {
	in      *source
	results []replay.Result
	opts    replay.Options
	// at is the point asked for; positions (parallel to results) where it fell in each
	// partition.
	at        query.Point
	positions []query.Position
	// restored (parallel to results, --from-snapshot only) says where each partition's state
	// came from; its records replayed are the tail's.
	restored []restoredFrom
}

// restoredFrom is where --from-snapshot took a partition's state from.
type restoredFrom struct {
	Snapshot   string `json:"name"`       // the snapshot file ("": none usable, a full replay)
	NextOffset int64  `json:"nextOffset"` // the snapshot's next offset: where the replay started
	tail       int64  // the data records replayed after it
}

// recordsReplayed is how many data records the i-th partition's replay read: all of them, or
// those after the snapshot its state was restored from.
func (r *replayed) recordsReplayed(i int) int64 {
	if i < len(r.restored) {
		return r.restored[i].tail
	}
	return r.results[i].Engine.Stats().Records
}

// snapshotOf is the snapshot the i-th partition's state was restored from (nil: none).
func (r *replayed) snapshotOf(i int) *restoredFrom {
	if i < len(r.restored) && r.restored[i].Snapshot != "" {
		return &r.restored[i]
	}
	return nil
}

// position returns where the point fell in the i-th partition.
func (r *replayed) position(i int) *query.Position {
	if i < len(r.positions) {
		return &r.positions[i]
	}
	return nil
}

// states returns the replayed partitions as the queries read them.
func (r *replayed) states(activity []*query.Activity) []query.PartitionState {
	out := make([]query.PartitionState, len(r.results))
	for i, res := range r.results {
		out[i] = query.PartitionState{Partition: res.Engine.Partition(), View: res.Engine.State()}
		if i < len(activity) {
			out[i].Activity = activity[i]
		}
	}
	return out
}

// replayInput opens path and replays the selected partitions, each up to where the point
// (--at-offset, --at-time) falls in it. Violations stop strict mode with the engine's message;
// in forensic mode they are printed to stderr with the summary. With observer, partitions
// replay one after the other (observers such as timeline print as they go); see
// replayInputParallel for observers that are independent per partition.
func replayInput(cmd *cobra.Command, path string, f *replayFlags, observer func(p int32) replay.Observer, stderr io.Writer) (*replayed, error) {
	return replayInputWith(cmd, path, f, observer, false, stderr)
}

// replayInputParallel is replayInput with observers that keep to their own partition, so that
// partitions replay in parallel.
func replayInputParallel(cmd *cobra.Command, path string, f *replayFlags, observer func(p int32) replay.Observer, stderr io.Writer) (*replayed, error) {
	return replayInputWith(cmd, path, f, observer, true, stderr)
}

func replayInputWith(cmd *cobra.Command, path string, f *replayFlags, observer func(p int32) replay.Observer, parallel bool, stderr io.Writer) (*replayed, error) {
	if f.fromSnapshot && observer == nil {
		return recoverInput(cmd, path, f, stderr)
	}
	opts, mode, err := f.options()
	if err != nil {
		return nil, err
	}
	at, err := f.point()
	if err != nil {
		return nil, err
	}
	in, err := openInput(cmd, path, mode)
	if err != nil {
		return nil, err
	}
	r, err := replaySelected(cmd, in, f, at, opts, observer, parallel, stderr)
	if err != nil {
		in.close()
		return nil, err
	}
	return r, nil
}

// replaySelected replays the selected partitions of an opened input (files, database or live
// cluster) up to the point.
func replaySelected(cmd *cobra.Command, in *source, f *replayFlags, at query.Point, opts replay.Options, observer func(p int32) replay.Observer, parallel bool, stderr io.Writer) (*replayed, error) {
	parts, err := selectFor(in, f.partitions, at)
	if err != nil {
		return nil, err
	}
	pos, err := resolve(cmd, in, parts, at, stderr)
	if err != nil {
		in.printReport(stderr)
		return nil, err
	}
	if f.kafkaVersion == "detect" && opts.Layout == nil {
		det, err := replay.DetectVersion(cmd.Context(), in, parts, replay.DefaultDetectRecords)
		if err != nil {
			in.printReport(stderr)
			return nil, err
		}
		opts.Version = det.Version
		fmt.Fprintln(stderr, det.Note())
	}
	r := &replayed{in: in, opts: opts, at: at, positions: pos}
	defer func() {
		if w := replay.UnknownRecordsWarning(opts.Version, r.results); w != "" {
			fmt.Fprintln(stderr, w)
		}
	}()
	if observer == nil || parallel {
		// Partitions are independent: replay them in parallel.
		res, err := replay.ReplayCuts(cmd.Context(), in, query.Cuts(pos, observer), opts, 0)
		in.printReport(stderr)
		if err != nil {
			return nil, fmt.Errorf("%w (use --forensic to record it and continue)", err)
		}
		r.results = res
		r.printViolations(stderr)
		return r, nil
	}
	for _, p := range pos {
		o := opts
		o.Observer = observer(p.Partition)
		e := replay.New(p.Partition, o)
		err := e.Run(cmd.Context(), in, p.Until)
		r.results = append(r.results, replay.Result{Engine: e, Err: err})
		if err != nil {
			in.printReport(stderr)
			return nil, fmt.Errorf("partition %d: %w (use --forensic to record it and continue)", p.Partition, err)
		}
	}
	in.printReport(stderr)
	r.printViolations(stderr)
	return r, nil
}

// printViolations writes the violations forensic mode recorded, whatever --quiet says.
func (r *replayed) printViolations(w io.Writer) {
	for _, res := range r.results {
		printEngineViolations(w, res.Engine)
	}
}

// printEngineViolations prints an engine's violations, whatever --quiet says: one line per
// file and record type (every one with --verbose).
func printEngineViolations(w io.Writer, e *replay.Engine) {
	for _, v := range violationLines(e) {
		fmt.Fprintln(loud(w), "violation:", v.Error)
	}
}

// violationLines renders an engine's violations: every one when the engine kept them all
// (--verbose), else one per file, record type and tombstone: the violation itself when it is
// alone, or how many, their offsets and the first one.
func violationLines(e *replay.Engine) []describeViolDoc {
	var out []describeViolDoc
	if e.Options().AllViolations {
		for _, v := range e.Violations() {
			out = append(out, describeViolDoc{Partition: v.Partition, Offset: v.Offset, Error: v.Error()})
		}
		return out
	}
	for _, g := range e.ViolationGroups() {
		line := describeViolDoc{Partition: g.First.Partition, Offset: g.First.Offset, Error: g.First.Error()}
		if g.Count > 1 {
			what := "records"
			if g.Type >= 0 {
				what = fmt.Sprintf("records of type %d (%s)", int16(g.Type), g.Type)
				if g.Tombstone {
					what = fmt.Sprintf("tombstones of type %d (%s)", int16(g.Type), g.Type)
				}
			}
			file := g.File
			if file == "" {
				file = fmt.Sprintf("partition %d", g.First.Partition)
			}
			line.Error = fmt.Sprintf("%d violations in %s on %s, offsets %d to %d (--verbose lists each); the first: %s",
				g.Count, file, what, g.First.Offset, g.Last.Offset, g.First.Error())
		}
		out = append(out, line)
	}
	return out
}

func (r *replayed) close() { r.in.close() }

// recoveryOptions are the options of a restore: the CLI does nothing else while it restores a
// snapshot, so the collector pauses while it decodes.
func recoveryOptions(opts replay.Options) recovery.Options {
	return recovery.Options{Options: opts, PauseGC: true}
}
