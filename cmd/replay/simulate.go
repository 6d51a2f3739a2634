package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/coordinator/streams/streamstest"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/replay"
)

type simulateFlags struct {
	scenario  string
	db        string
	segments  string
	partition int32
	quiet     bool
}

func newSimulateCmd(stdout, stderr io.Writer) *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate --scenario FILE (--db PATH | --segments DIR)",
		Short: "Run a streams group scenario through the coordinator into a log",
		Long: `simulate runs a scenario script (joins, heartbeats, leaves, clock steps, topic changes;
see package coordinator/streams/streamstest) through coordlog's streams group coordinator.
Every decision's records are appended as one batch to the log and applied through replay, as a
restarted coordinator would do; the transcript (requests, responses, records) goes to stdout.

The script is plain (one command per line, '#' comments) or a datadriven test file such as
the coordinator's scenario tests (coordinator/streams/testdata/*): its directives run and its
expected-output blocks are skipped, so the transcript is the directives, each followed by
what the test file expects of it.

--db appends to a coordlog Pebble log (the partition's existing records are replayed first);
--segments writes Kafka segment files into a new __consumer_offsets-N directory.`,
		Args: argsError(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSimulate(cmd.Context(), f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "the scenario script (plain, or a datadriven test file)")
	fl.StringVar(&f.db, "db", "", "append to this coordlog database (created when missing)")
	fl.StringVar(&f.segments, "segments", "", "write segment files into this (new or empty) partition directory")
	fl.Int32Var(&f.partition, "partition", 0, "the __consumer_offsets partition")
	fl.BoolVar(&f.quiet, "quiet", false, "print only the summary")
	_ = cmd.MarkFlagRequired("scenario")
	return cmd
}

func runSimulate(ctx context.Context, f simulateFlags, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if (f.db == "") == (f.segments == "") {
		return usageError{fmt.Errorf("give exactly one of --db and --segments")}
	}
	script, err := os.Open(f.scenario)
	if err != nil {
		return err
	}
	defer script.Close()
	eng := replay.New(f.partition, replay.Options{Mode: eventlog.Strict})
	var sink func(*eventlog.Batch) error
	var closeSink func() error
	if f.db != "" {
		l, err := pebblelog.Open(f.db, nil)
		if err != nil {
			return fmt.Errorf("open coordlog database %s: %w", f.db, err)
		}
		defer l.Close()
		if err := eng.Run(ctx, l, math.MaxInt64); err != nil {
			return fmt.Errorf("replay the existing partition %d: %w", f.partition, err)
		}
		sink, closeSink = l.Append, func() error { return nil }
	} else {
		if m, _ := filepath.Glob(filepath.Join(f.segments, "*.log")); len(m) > 0 {
			return usageError{fmt.Errorf("%s already holds segment files", f.segments)}
		}
		w, err := segment.NewWriter(f.segments, segment.WriterOptions{})
		if err != nil {
			return err
		}
		sink = func(b *eventlog.Batch) error { _, err := w.Write(b); return err }
		closeSink = w.Close
	}
	var out io.Writer = stdout
	if f.quiet {
		out = nil
	}
	r := streamstest.NewRunner(simulationLog{eng, sink}, out)
	r.Partition = f.partition
	runErr := r.Run(script)
	if err := closeSink(); runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return runErr
	}
	fmt.Fprintf(stdout, "simulated %s: %d batches, %d records, next offset %d\n", f.scenario, r.Batches, r.Records, eng.NextOffset())
	return nil
}

// simulationLog appends each decision to the output log, then replays it into the engine the
// coordinator reads.
type simulationLog struct {
	*replay.Engine
	sink func(*eventlog.Batch) error
}

func (l simulationLog) Apply(b *eventlog.Batch) error {
	if err := l.sink(b); err != nil {
		return err
	}
	return l.Engine.Apply(b)
}
