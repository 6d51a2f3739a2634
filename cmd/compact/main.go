package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/compact"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/buildinfo"
	"github.com/coordlog/coordlog/internal/wallclock"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/audit"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/recovery"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // bad input (strict mode), a failed proof, an I/O error
	exitUsage   = 2
)

// usageError marks errors in the command line.
type usageError struct{ error }

// clock is the wall clock, the default of --now; tests replace it.
var clock = time.Now

// defaultMemoryLimit is the Go runtime's soft memory limit for a compaction job unless
// GOMEMLIMIT says otherwise. The key index and the proof's offsets each stay within
// --index-memory (the proof compares the offsets in parts past it), and one log's groups; the
// limit keeps the garbage collector from letting the heap grow to twice that.
const defaultMemoryLimit = 448 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	// COORDLOG_NOW fixes the wall clock (internal/wallclock): the default of --now.
	c, err := wallclock.Clock()
	if err != nil {
		fmt.Fprintf(os.Stderr, "compact: %v\n", err)
		os.Exit(exitUsage)
	}
	clock = c
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type flags struct {
	out                string
	inPlace            bool
	deleteRetention    time.Duration
	producerExpiration time.Duration
	now                string
	dryRun             bool
	forensic           bool
	keepBackup         bool
	kafkaVersion       string
	layout             string
	indexMemory        int64
	tempDir            string
	segmentBytes       int64
	quiet              bool
	verbose            bool
	exact              bool
}

// run executes the compact CLI with args and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f flags
	cmd := &cobra.Command{
		Use:   "compact <segments-dir|db> (--out DIR | --in-place | --dry-run)",
		Short: "Compact a __consumer_offsets log with Kafka's log-cleaner semantics, proven by replay",
		Long: `compact reads a __consumer_offsets log (a __consumer_offsets-N directory, a log directory
holding several, or a coordlog Pebble log) and compacts it as one pass of Kafka's log cleaner:
the latest record of each key stays, aborted transactions go, tombstones and empty transaction
markers go once their batch's delete horizon has passed (a first pass stamps the horizon
now + --delete-retention), and nothing at or after the first open transaction changes.

Before anything is published, the original and the compacted log are replayed and their group
coordinator states must be equal. The output is written next to its destination, synced, and
renamed into place (--out) or swapped with the input atomically (--in-place); a re-run
completes an interrupted swap.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("compact needs one input: a __consumer_offsets-N directory, a log directory or a coordlog database (got %d)", len(args))}
			}
			return nil
		},
		Version:       buildinfo.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompact(cmd.Context(), args[0], f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "", "write the compacted log here (a new directory; same format as the input)")
	fl.BoolVar(&f.inPlace, "in-place", false, "replace the input with the compacted log (atomic swap, after the proof)")
	fl.DurationVar(&f.deleteRetention, "delete-retention", compact.DefaultDeleteRetention, "delete.retention.ms: how long tombstones and empty markers stay after the pass that stamps their horizon")
	fl.DurationVar(&f.producerExpiration, "producer-expiration", compact.DefaultProducerExpiration, "producer.id.expiration.ms: producers idle longer lose their header-only batches")
	fl.StringVar(&f.now, "now", "", "the cleaning time (RFC 3339); default: the wall clock")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would be removed, by reason, and write nothing")
	fl.BoolVar(&f.forensic, "forensic", false, "skip and report damaged input (and record replay violations) instead of stopping")
	fl.BoolVar(&f.keepBackup, "keep-backup", false, "with --in-place, keep the replaced log as <input>.compact-old")
	fl.StringVar(&f.kafkaVersion, "kafka-version", groupstate.DefaultKafkaVersion.String(), "replay rules of this Kafka version for the proof: 4.0 to 4.4")
	fl.StringVar(&f.layout, "layout", "", "record layout of ids that changed between releases (see replay --help)")
	fl.Int64Var(&f.indexMemory, "index-memory", compact.DefaultIndexMemory, "bytes of key index kept in memory before spilling sorted runs to disk")
	fl.StringVar(&f.tempDir, "temp-dir", "", "where spilled index runs go (default: the system temp directory)")
	fl.Int64Var(&f.segmentBytes, "segment-bytes", 100<<20, "roll output segment files at this size")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines or notes on stderr (damaged input and errors still)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "every skipped batch and ignored file on its own line, instead of counts per file and kind")
	fl.BoolVar(&f.exact, "exact", false, "the proof tolerates no difference at all, not even an implicit group (no members or metadata, created by replaying offset commits) that Kafka's cleaner also makes appear or vanish")
	cmd.SetFlagErrorFunc(flagError)
	cmd.SetVersionTemplate("compact {{.Version}}\n")
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "compact:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}

// flagError turns pflag's parse errors into usage errors; an unknown flag gets the flags
// closest to it.
func flagError(c *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || ne.GetSpecifiedName() == "" {
		return usageError{err}
	}
	name := ne.GetSpecifiedName()
	var flags []string
	c.Flags().VisitAll(func(f *pflag.Flag) { flags = append(flags, f.Name) })
	msg := fmt.Sprintf("unknown flag --%s", name)
	if s := query.Suggest(name, flags, 3); len(s) > 0 {
		msg += "; did you mean --" + strings.Join(s, " or --") + "?"
	} else {
		msg += " (compact --help lists the flags)"
	}
	return usageError{errors.New(msg)}
}

// minIndexMemory is the smallest --index-memory: below it the key index spills a sorted run
// every few thousand keys and the proof replays the log once per few thousand keys.
const minIndexMemory = 1 << 20

// check refuses flag values that cannot be meant.
func (f *flags) check() error {
	switch {
	case f.quiet && f.verbose:
		return errors.New("--quiet and --verbose exclude each other")
	case f.segmentBytes <= 0:
		return fmt.Errorf("--segment-bytes %d: output segments need a positive size (Kafka's offsets.topic.segment.bytes is 104857600)", f.segmentBytes)
	case f.indexMemory < minIndexMemory:
		return fmt.Errorf("--index-memory %d: give at least %d bytes (1 MiB; the default is %d)", f.indexMemory, minIndexMemory, compact.DefaultIndexMemory)
	case f.deleteRetention < 0:
		return fmt.Errorf("--delete-retention %s: a retention is 0 or more", f.deleteRetention)
	case f.producerExpiration < 0:
		return fmt.Errorf("--producer-expiration %s: an expiration is 0 or more", f.producerExpiration)
	}
	return nil
}

func runCompact(ctx context.Context, path string, f flags, stdout, stderr io.Writer) error {
	if !f.dryRun && f.inPlace == (f.out != "") {
		return usageError{errors.New("give --out DIR or --in-place (or --dry-run)")}
	}
	if err := f.check(); err != nil {
		return usageError{err}
	}
	now := clock()
	if f.now != "" {
		t, err := time.Parse(time.RFC3339, f.now)
		if err != nil {
			return usageError{fmt.Errorf("--now: %w", err)}
		}
		now = t
	}
	v, err := groupstate.ParseKafkaVersion(f.kafkaVersion)
	if err != nil {
		return usageError{err}
	}
	mode := eventlog.Strict
	if f.forensic {
		mode = eventlog.Forensic
	}
	ropts := replay.Options{Version: v, Mode: mode}
	if f.layout != "" {
		l, err := recordcodec.ParseLayout(f.layout)
		if err != nil {
			return usageError{err}
		}
		ropts.Layout = &l
	}
	opts := compact.DefaultOptions(now)
	opts.DeleteRetention = f.deleteRetention
	opts.ProducerExpiration = f.producerExpiration
	opts.IndexMemory = f.indexMemory
	opts.TempDir = f.tempDir
	job := &compact.Job{
		Input: path, Output: f.out, InPlace: f.inPlace, Options: opts, Mode: mode, KeepAllProblems: f.verbose,
		SegmentBytes: f.segmentBytes, DryRun: f.dryRun, KeepBackup: f.keepBackup,
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "compact: "+format+"\n", args...) }
	if !f.quiet {
		job.Log = logf
	}
	// The proof holds at most as many bytes of offsets as the index did (they run one after
	// the other).
	job.Verify = audit.CompactionProof{Options: ropts, Exact: f.exact, Report: logf, MemoryBudget: f.indexMemory}.Verify
	// A database's snapshots are replaced by one of the compacted log's end per partition
	// that had any (the original's describe another log: see recovery.CompactedSnapshots).
	job.Snapshot = recovery.CompactedSnapshots{Options: recovery.Options{Options: ropts}, CreatedAt: now.UnixMilli()}.Take
	start := time.Now()
	res, err := job.Run(ctx)
	if res != nil && res.Report != nil {
		notes := stderr
		if f.quiet {
			notes = io.Discard
		}
		res.Report.Render(notes, stderr, f.verbose)
	}
	if err != nil {
		var p *eventlog.Problem
		if errors.As(err, &p) && !f.forensic {
			return fmt.Errorf("%w (nothing written; use --forensic to skip damaged input)", err)
		}
		return err
	}
	if res.Already {
		fmt.Fprintf(stdout, "%s already holds this compaction of %s\n", f.out, path)
		return nil
	}
	printStats(stdout, res, f.dryRun, now, time.Since(start))
	return nil
}

func printStats(w io.Writer, res *compact.Result, dry bool, now time.Time, took time.Duration) {
	verb := "removed"
	if dry {
		verb = "would remove"
	}
	for _, p := range res.Partitions {
		st := res.Stats[p]
		fmt.Fprintf(w, "partition %d: in  %d batches, %d records, %d bytes\n", p, st.InBatches, st.InRecords, st.InBytes)
		fmt.Fprintf(w, "%s out %d batches (%d header-only), %d records", strings.Repeat(" ", len(fmt.Sprintf("partition %d:", p))),
			st.OutBatches, st.EmptyBatches, st.OutRecords)
		if !dry {
			fmt.Fprintf(w, ", %d bytes", st.OutBytes)
		}
		fmt.Fprintln(w)
	}
	t := res.Total
	fmt.Fprintf(w, "cleaning time %s; %s:\n", now.UTC().Format(time.RFC3339), verb)
	for _, r := range compact.Reasons() {
		c := t.Removed[r]
		fmt.Fprintf(w, "  %-18s %10d records %12d bytes\n", r, c.Records, c.Bytes)
	}
	tot := t.RemovedTotal()
	fmt.Fprintf(w, "  %-18s %10d records %12d bytes\n", "total", tot.Records, tot.Bytes)
	fmt.Fprintf(w, "batches: %d dropped, %d rebuilt, %d newly stamped with a delete horizon,\n", t.DroppedBatches, t.Rebuilt, t.Stamped)
	fmt.Fprintf(w, "  %d past the last stable offset kept as they are\n", t.Uncleanable)
	if !dry {
		for _, line := range res.Snapshots {
			fmt.Fprintf(w, "snapshots: %s\n", line)
		}
		fmt.Fprintln(w, "proof: original and compacted logs replay to equal state")
		fmt.Fprintf(w, "published %s (%s)\n", res.Published, took.Round(time.Millisecond))
	}
}
