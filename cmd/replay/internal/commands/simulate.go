package commands

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/coordinator/consumer/consumertest"
	"github.com/coordlog/coordlog/coordinator/streams/streamstest"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/session"
)

type simulateFlags struct {
	scenario, db, segments, protocol, from string
	partition                              int32
	toOffset                               int64
	quiet                                  bool
}

func newSimulateCmd(stdout, stderr io.Writer) *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate --scenario FILE (--db PATH | --segments DIR) [--protocol consumer] [--from DUMP]",
		Short: "Run a streams or consumer group scenario through the coordinator into a log",
		Long: `simulate runs a scenario script (joins, heartbeats, leaves, clock steps, topic changes;
see packages coordinator/streams/streamstest and coordinator/consumer/consumertest) through
coordlog's streams group coordinator, or with --protocol consumer its KIP-848 consumer group
coordinator (commits, fetches, describe, and the JoinGroup, SyncGroup, Heartbeat and LeaveGroup
of classic-protocol members, so that a scenario can upgrade a classic group to a consumer group
and back). Every decision's records are appended as one
batch to the log and applied through replay, as a restarted coordinator would do; the
transcript (requests, responses, records) goes to stdout.

The script is plain (one command per line, '#' comments) or a datadriven test file such as
the coordinator's scenario tests (coordinator/streams/testdata/*): its directives run and its
expected-output blocks are skipped, so the transcript is the directives, each followed by
what the test file expects of it.

--db appends to a coordlog Pebble log (the partition's existing records are replayed first);
--segments writes Kafka segment files into a new __consumer_offsets-N directory.

--from starts from a dump's state instead of an empty partition: the dump (a
__consumer_offsets-N directory, a log directory or a coordlog database) is replayed up to
--to-offset (default: its end), then the scenario decides what the coordinator would do next,
for example "leave M" for a member of the dump. Only the simulated batches are written, at
offsets after the replayed ones. With --protocol consumer, members of the dump's groups are
adopted as clients (member id, epoch, owned partitions; members of a classic group, or using the
classic protocol, as classic clients); declare the topics they subscribe to
with "topic NAME PARTITIONS" (a name the dump's offset commits give an id keeps that id, or
give id=BASE64), since a dump does not hold cluster metadata.`,
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
	fl.StringVar(&f.protocol, "protocol", "streams", "the group protocol of the scenario: streams or consumer")
	fl.StringVar(&f.from, "from", "", "start from the state of this dump (segment directory, log directory or coordlog database)")
	fl.Int64Var(&f.toOffset, "to-offset", math.MaxInt64, "with --from: replay the dump's records below this offset only")
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
	if f.protocol != "streams" && f.protocol != "consumer" {
		return usageError{fmt.Errorf("--protocol %q: give streams or consumer", f.protocol)}
	}
	if f.from == "" && f.toOffset != math.MaxInt64 {
		return usageError{fmt.Errorf("--to-offset needs --from")}
	}
	if f.partition < 0 || f.toOffset < 0 {
		return usageError{fmt.Errorf("--partition and --to-offset are 0 or more (got %d and %d)", f.partition, f.toOffset)}
	}
	script, err := os.Open(f.scenario)
	if err != nil {
		return err
	}
	defer script.Close()
	eng := replay.New(f.partition, replay.Options{Mode: eventlog.Strict})
	if f.from != "" {
		if eng, err = replayDump(ctx, &f, stdout); err != nil {
			return err
		}
	}
	sink, err := openSimulationLog(ctx, &f, eng)
	if err != nil {
		return err
	}
	var out io.Writer = stdout
	if f.quiet {
		out = nil
	}
	log := simulationLog{eng, sink.Append}
	var runErr error
	var batches, records int
	// From a dump the clock starts at its last record's timestamp (assignment intervals and
	// timestamps then follow on); otherwise at the runners' 1000 ms.
	start := int64(0)
	if f.from != "" {
		start = eng.Stats().LastTimestamp
	}
	if f.protocol == "consumer" {
		r := consumertest.NewRunner(log, out)
		r.Partition = f.partition
		if start > 0 {
			r.Now = start
		}
		runErr = r.Run(script)
		batches, records = r.Batches, r.Records
	} else {
		r := streamstest.NewRunner(log, out)
		r.Partition = f.partition
		if start > 0 {
			r.Now = start
		}
		runErr = r.Run(script)
		batches, records = r.Batches, r.Records
	}
	if err := sink.Close(); runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return runErr
	}
	fmt.Fprintf(stdout, "simulated %s: %d batches, %d records, next offset %d\n", f.scenario, batches, records, eng.NextOffset())
	return nil
}

// replayDump replays --from up to --to-offset into a new engine: partition --partition, or
// the dump's only partition (f.partition is set to it).
func replayDump(ctx context.Context, f *simulateFlags, stdout io.Writer) (*replay.Engine, error) {
	in, err := session.Open(ctx, session.Input{Path: f.from, Mode: eventlog.Strict})
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", f.from, err)
	}
	defer in.Close()
	parts, err := in.Partitions()
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", f.from, err)
	}
	if !slices.Contains(parts, f.partition) {
		if len(parts) != 1 {
			return nil, usageError{fmt.Errorf("--from %s holds partitions %v: choose one with --partition", f.from, parts)}
		}
		f.partition = parts[0]
	}
	eng := replay.New(f.partition, replay.Options{Mode: eventlog.Strict})
	if err := eng.Run(ctx, in, f.toOffset); err != nil {
		return nil, fmt.Errorf("replay --from %s: %w", f.from, err)
	}
	fmt.Fprintf(stdout, "replayed %s partition %d up to offset %d: %d groups\n", f.from, f.partition, eng.NextOffset(), eng.State().NumGroups())
	return eng, nil
}

// openSimulationLog opens the log the decisions go to: a database (whose partition is
// replayed into eng first, unless the state comes from --from) or a new segment directory.
func openSimulationLog(ctx context.Context, f *simulateFlags, eng *replay.Engine) (*session.LogWriter, error) {
	if f.db == "" {
		w, err := session.CreateSegments(f.segments, "replay simulate --segments")
		return w, commandLine(err)
	}
	w, err := session.AppendToDatabase(f.db, "replay simulate --db")
	if err != nil {
		return nil, commandLine(err)
	}
	if f.from != "" {
		if parts, _ := w.DB.Partitions(); slices.Contains(parts, f.partition) {
			w.Close()
			return nil, usageError{fmt.Errorf("--db %s already holds partition %d: give --from a new database (the simulated batches follow the dump's offsets)", f.db, f.partition)}
		}
	} else if err := eng.Run(ctx, w.DB, math.MaxInt64); err != nil {
		w.Close()
		return nil, fmt.Errorf("replay the existing partition %d: %w", f.partition, err)
	}
	return w, nil
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
