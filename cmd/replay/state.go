package main

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/recovery"
)

// replayFlags are shared by the commands that rebuild state.
type replayFlags struct {
	partitions   []int32
	atOffset     int64
	kafkaVersion string
	forensic     bool
	layout       string
	fromSnapshot bool // describe and offsets: --from-snapshot (snapshot.go)
}

func (f *replayFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.Int32SliceVar(&f.partitions, "partition", nil, "only these __consumer_offsets partitions (repeatable)")
	fl.Int64Var(&f.atOffset, "at-offset", -1, "the state after the record at this offset (and every earlier one); default: the end of the log")
	fl.StringVar(&f.kafkaVersion, "kafka-version", groupstate.DefaultKafkaVersion.String(), "replay rules of this Kafka version: 4.0, 4.1, 4.2, 4.3 or 4.4")
	fl.BoolVar(&f.forensic, "forensic", false, "record violations and damaged input and continue, instead of stopping at the first")
	fl.StringVar(&f.layout, "layout", "", "record layout of ids that changed between releases (4.1+, 4.0, 3.9, streams-preview); default: the one of --kafka-version")
}

func (f *replayFlags) options() (replay.Options, eventlog.Mode, error) {
	v, err := groupstate.ParseKafkaVersion(f.kafkaVersion)
	if err != nil {
		return replay.Options{}, 0, usageError{err}
	}
	mode := eventlog.Strict
	if f.forensic {
		mode = eventlog.Forensic
	}
	opts := replay.Options{Version: v, Mode: mode}
	if f.layout != "" {
		l, err := recordcodec.ParseLayout(f.layout)
		if err != nil {
			return replay.Options{}, 0, usageError{err}
		}
		opts.Layout = &l
	}
	return opts, mode, nil
}

// until converts --at-offset into the exclusive bound of replay.
func (f *replayFlags) until() int64 {
	if f.atOffset < 0 {
		return math.MaxInt64
	}
	return f.atOffset + 1
}

// replayed is the state of every selected partition.
type replayed struct {
	in      *source
	results []replay.Result
	opts    replay.Options
}

// replayInput opens path and replays the selected partitions. Violations stop strict mode
// with the engine's message; in forensic mode they are printed to stderr with the summary.
// Partitions replay in parallel, unless observer gives each partition an observer that may not
// run concurrently with the others' (concurrent false).
func replayInput(cmd *cobra.Command, path string, f *replayFlags, observer func(p int32) replay.Observer, concurrent bool, stderr io.Writer) (*replayed, error) {
	if f.fromSnapshot && observer == nil {
		return recoverInput(cmd, path, f, stderr)
	}
	opts, mode, err := f.options()
	if err != nil {
		return nil, err
	}
	in, err := openInput(path, mode)
	if err != nil {
		return nil, err
	}
	parts, err := input.SelectPartitions(in, f.partitions)
	if err != nil {
		in.close()
		return nil, usageError{err}
	}
	r := &replayed{in: in, opts: opts}
	until := f.until()
	if observer == nil {
		// Partitions are independent: replay them in parallel.
		res, err := replay.ReplaySource(cmd.Context(), in, parts, until, opts, 0)
		in.printReport(stderr)
		if err != nil {
			in.close()
			return nil, fmt.Errorf("%w (use --forensic to record it and continue)", err)
		}
		r.results = res
		r.printViolations(stderr)
		return r, nil
	}
	if concurrent {
		// The same, each partition with its own observer.
		o := opts
		o.ObserverFor = observer
		res, err := replay.ReplaySource(cmd.Context(), in, parts, until, o, 0)
		if err != nil {
			for i, res := range res {
				if res.Err != nil {
					err = fmt.Errorf("partition %d: %w", parts[i], res.Err)
					break
				}
			}
			in.printReport(stderr)
			in.close()
			return nil, fmt.Errorf("%w (use --forensic to record it and continue)", err)
		}
		r.results = res
		in.printReport(stderr)
		r.printViolations(stderr)
		return r, nil
	}
	for _, p := range parts {
		o := opts
		if observer != nil {
			o.Observer = observer(p)
		}
		e := replay.New(p, o)
		err := e.Run(cmd.Context(), in, until)
		r.results = append(r.results, replay.Result{Engine: e, Err: err})
		if err != nil {
			in.printReport(stderr)
			in.close()
			return nil, fmt.Errorf("partition %d: %w (use --forensic to record it and continue)", p, err)
		}
	}
	in.printReport(stderr)
	r.printViolations(stderr)
	return r, nil
}

func (r *replayed) printViolations(w io.Writer) {
	for _, res := range r.results {
		for _, v := range res.Engine.Violations() {
			fmt.Fprintln(w, "violation:", v.Error())
		}
	}
}

func (r *replayed) close() { r.in.close() }

// recoveryOptions are the options of a restore: the CLI does nothing else while it restores a
// snapshot, so the collector pauses while it decodes.
func recoveryOptions(opts replay.Options) recovery.Options {
	return recovery.Options{Options: opts, PauseGC: true}
}
