package commands

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/dumplog"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

type decodeFlags struct {
	format, group, layout string
	since, until, atTime  string
	partitions            []int32
	types                 []string
	from, to              int64
	forensic              bool
}

func newDecodeCmd(stdout, stderr io.Writer) *cobra.Command {
	var f decodeFlags
	cmd := &cobra.Command{
		Use:   "decode <segments-dir|db|segment.log>",
		Short: "Print records as kafka-dump-log --offsets-decoder does, or as JSON lines",
		Long: `decode prints every batch and record of a __consumer_offsets log. The text format is
kafka-dump-log --deep-iteration --offsets-decoder's; --format jsonl prints one JSON object per
record (offset, batch attributes, key, value, tombstone flag).

With --group or --type only matching records are printed, each under its batch header; a
control batch (transaction marker) is kept when its producer wrote a kept record before it.
--from-offset and --to-offset bound the record offsets of every partition; --since and --until
(or --at-time) bound them by time, resolved in each partition to its own records.`,
		Args: argsError(1, "one input: a __consumer_offsets-N directory, a log directory, a coordlog database or a .log segment file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDecode(cmd, args[0], f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "text", "output format: text (kafka-dump-log) or jsonl")
	fl.Int32SliceVar(&f.partitions, "partition", nil, "only these __consumer_offsets partitions (repeatable)")
	fl.StringVar(&f.group, "group", "", "only records of this group id")
	fl.StringSliceVar(&f.types, "type", nil, "only these record types: ids (1), names (OffsetCommit) or 'control' (repeatable)")
	fl.Int64Var(&f.from, "from-offset", 0, "start at the batch holding this offset")
	fl.Int64Var(&f.to, "to-offset", math.MaxInt64, "stop after this offset")
	fl.StringVar(&f.since, "since", "", "start at each partition's first record stamped at or after this time (RFC 3339, -2h, Unix ms)")
	fl.StringVar(&f.until, "until", "", "stop after each partition's last record stamped at or before this time")
	fl.StringVar(&f.atTime, "at-time", "", "the same as --until (the records of the state at that time)")
	fl.BoolVar(&f.forensic, "forensic", false, "report damaged input and continue instead of stopping at it")
	fl.StringVar(&f.layout, "layout", "4.1+", "record layout of ids that changed between releases: 4.1+, 4.0, 3.9 or streams-preview")
	return cmd
}

func runDecode(cmd *cobra.Command, path string, f decodeFlags, stdout, stderr io.Writer) error {
	if f.format != "text" && f.format != "jsonl" {
		return usageError{fmt.Errorf("--format must be text or jsonl, not %q", f.format)}
	}
	layout, err := recordcodec.ParseLayout(f.layout)
	if err != nil {
		return usageError{err}
	}
	filter := dumplog.Filter{From: f.from, To: f.to, Group: f.group}
	if err := filter.ParseTypes(f.types); err != nil {
		return usageError{err}
	}
	switch {
	case f.from < 0 || f.to < 0:
		return usageError{fmt.Errorf("--from-offset and --to-offset are offsets, 0 or more (got %d and %d)", f.from, f.to)}
	case f.from > f.to:
		return usageError{fmt.Errorf("--from-offset %d is after --to-offset %d", f.from, f.to)}
	case f.until != "" && f.atTime != "":
		return usageError{fmt.Errorf("--at-time is --until: give one of them")}
	}
	if f.atTime != "" {
		f.until = f.atTime
	}
	in, err := openInput(cmd, path, modeOf(f.forensic))
	if err != nil {
		return err
	}
	defer in.Close()
	parts, err := session.Select(in, f.partitions, query.End())
	if err != nil {
		return commandLine(err)
	}
	var window map[int32]offsetRange
	if f.since != "" || f.until != "" {
		if window, err = timeWindow(cmd, in, parts, f.since, f.until, stderr); err != nil {
			return err
		}
	}
	out := bufio.NewWriterSize(stdout, 256<<10)
	var print dumplog.Printer
	var text *dumplog.TextPrinter
	if f.format == "jsonl" {
		print = &dumplog.JSONLPrinter{W: out}
	} else {
		text = &dumplog.TextPrinter{W: out}
		print = text
	}
	var seen *dumplog.GroupsSeen
	if f.group != "" {
		seen = &dumplog.GroupsSeen{}
	}
	// Every file of the partition, empty segments included, as DumpLogSegments lists them;
	// only when nothing is filtered out (a filter prints the files it keeps records of).
	whole := filter.Group == "" && filter.Types == nil && f.from == 0 && f.to == math.MaxInt64 && window == nil && in.Report != nil
	var runErr error
	for _, p := range parts {
		pf := filter
		if w, ok := window[p]; ok {
			if pf.From, pf.To = max(f.from, w.from), min(f.to, w.to); pf.From > pf.To {
				continue // no record of this partition in the window
			}
		}
		if text != nil && whole {
			text.SetFiles(in.SegmentFiles(p))
		}
		if runErr = dumplog.Dump(cmd.Context(), in, p, pf, recordcodec.Decoder{Layout: layout, NoCopy: true}, print, seen); runErr == nil && text != nil && whole {
			runErr = text.Finish()
		}
		if runErr != nil {
			break
		}
	}
	if err := out.Flush(); err != nil && runErr == nil {
		runErr = err
	}
	printReport(in, stderr)
	if prob := (*eventlog.Problem)(nil); errors.As(runErr, &prob) {
		return fmt.Errorf("stopped at damaged input (use --forensic to skip it and continue): %w", runErr)
	}
	if runErr == nil && seen != nil && !seen.Matched {
		return &query.UnknownGroupError{Group: f.group, Where: "in the records read", Suggests: query.Suggest(f.group, slices.Collect(maps.Keys(seen.Others)), 5)}
	}
	return runErr
}
