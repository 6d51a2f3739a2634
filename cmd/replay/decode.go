package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/dumplog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay/query"
)

type decodeFlags struct {
	format     string
	partitions []int32
	group      string
	types      []string
	from, to   int64
	since      string
	until      string
	atTime     string
	forensic   bool
	layout     string
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

// typeFilter selects records by type; control selects control batches.
type typeFilter struct {
	set     map[recordcodec.RecordType]bool
	control bool
}

func parseTypes(specs []string) (*typeFilter, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	tf := &typeFilter{set: map[recordcodec.RecordType]bool{}}
	for _, s := range specs {
		s = strings.TrimSpace(s)
		if strings.EqualFold(s, "control") {
			tf.control = true
			continue
		}
		if n, err := strconv.ParseInt(s, 10, 16); err == nil {
			tf.set[recordcodec.RecordType(n)] = true
			continue
		}
		found := false
		for t := recordcodec.RecordType(0); t <= 23; t++ {
			if strings.EqualFold(t.String(), s) {
				tf.set[t], found = true, true
			}
		}
		if !found {
			return nil, usageError{fmt.Errorf("--type %q is not a record type id, name or 'control'", s)}
		}
	}
	return tf, nil
}

func runDecode(cmd *cobra.Command, path string, f decodeFlags, stdout, stderr io.Writer) error {
	if f.format != "text" && f.format != "jsonl" {
		return usageError{fmt.Errorf("--format must be text or jsonl, not %q", f.format)}
	}
	layout, err := recordcodec.ParseLayout(f.layout)
	if err != nil {
		return usageError{err}
	}
	types, err := parseTypes(f.types)
	if err != nil {
		return err
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
	mode := eventlog.Strict
	if f.forensic {
		mode = eventlog.Forensic
	}
	in, err := openInput(cmd, path, mode)
	if err != nil {
		return err
	}
	defer in.close()
	parts, err := input.SelectPartitions(in, f.partitions)
	if err != nil {
		return usageError{err}
	}
	var window map[int32]offsetRange
	if f.since != "" || f.until != "" {
		if window, err = timeWindow(cmd, in, parts, f.since, f.until, stderr); err != nil {
			return err
		}
	}
	out := bufio.NewWriterSize(stdout, 256<<10)
	defer out.Flush()
	var print dumplog.Printer
	var text *dumplog.TextPrinter
	if f.format == "jsonl" {
		print = &dumplog.JSONLPrinter{W: out}
	} else {
		text = &dumplog.TextPrinter{W: out}
		print = text
	}
	dec := recordcodec.Decoder{Layout: layout, NoCopy: true}
	filtering := f.group != "" || types != nil
	// Every file of the partition, empty segments included, as DumpLogSegments lists them;
	// only when nothing is filtered out (a filter prints the files it keeps records of).
	whole := !filtering && f.from == 0 && f.to == math.MaxInt64 && window == nil && in.report != nil
	var runErr error
	var seen *groupsSeen
	if f.group != "" {
		seen = &groupsSeen{others: map[string]bool{}}
	}
	for _, p := range parts {
		if text != nil && whole {
			text.SetFiles(in.segmentFiles(p))
		}
		pf := f
		if w, ok := window[p]; ok {
			pf.from, pf.to = max(f.from, w.from), min(f.to, w.to)
			if pf.from > pf.to {
				continue // no record of this partition in the window
			}
		}
		if err := decodePartition(cmd, in, p, pf, dec, types, filtering, print, seen); err != nil {
			runErr = err
			break
		}
		if text != nil && whole {
			if err := text.Finish(); err != nil {
				runErr = err
				break
			}
		}
	}
	if err := out.Flush(); err != nil && runErr == nil {
		runErr = err
	}
	in.printReport(stderr)
	if runErr == nil && seen != nil && !seen.matched {
		var names []string
		for g := range seen.others {
			names = append(names, g)
		}
		return &query.UnknownGroupError{Group: f.group, Where: "in the records read", Suggests: query.Suggest(f.group, names, 5)}
	}
	return runErr
}

// groupsSeen collects, with --group, whether the group had a record and the group ids the
// records named otherwise, for the close matches of a name that matched nothing.
type groupsSeen struct {
	matched bool
	others  map[string]bool
}

func (g *groupsSeen) see(e *dumplog.Entry, group string) {
	k := e.Decoded.Key.Group
	switch {
	case k == group:
		g.matched = true
	case k != "" && len(g.others) < 100000 && !g.others[k]:
		g.others[strings.Clone(k)] = true
	}
}

func decodePartition(cmd *cobra.Command, in *source, p int32, f decodeFlags, dec recordcodec.Decoder, types *typeFilter, filtering bool,
	print dumplog.Printer, seen *groupsSeen) error {
	it, err := in.Batches(p, f.from)
	if err != nil {
		return err
	}
	defer it.Close()
	var entries, kept []dumplog.Entry
	// producers whose records were kept: their transaction markers are kept too.
	producers := map[int64]bool{}
	for it.Next() {
		if err := cmd.Context().Err(); err != nil {
			return err
		}
		b := it.Batch()
		if b.BaseOffset > f.to {
			break
		}
		// A chunk of records at a time: a batch may hold millions of them.
		printed := false
		for i := 0; i < len(b.Records) || i == 0; i += dumplog.ChunkRecords {
			entries = dumplog.DecodeRecords(dec, b, b.Records[i:min(i+dumplog.ChunkRecords, len(b.Records))], entries)
			kept = kept[:0]
			for _, e := range entries {
				if e.Record.Offset < f.from || e.Record.Offset > f.to {
					continue
				}
				if seen != nil && e.Err == nil && !b.Attributes.Control() {
					seen.see(&e, f.group)
				}
				if filtering && !keep(b, &e, f.group, types, producers) {
					continue
				}
				kept = append(kept, e)
			}
			if filtering && len(kept) == 0 {
				continue
			}
			if !printed {
				if err := print.BatchHeader(b); err != nil {
					return err
				}
				printed = true
			}
			if err := print.Records(b, kept); err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		var prob *eventlog.Problem
		if errors.As(err, &prob) {
			return fmt.Errorf("stopped at damaged input (use --forensic to skip it and continue): %w", err)
		}
		return err
	}
	return nil
}

func keep(b *eventlog.Batch, e *dumplog.Entry, group string, types *typeFilter, producers map[int64]bool) bool {
	if b.Attributes.Control() {
		if types != nil && !types.control {
			return false
		}
		if group != "" && !producers[b.ProducerID] {
			return false
		}
		return true
	}
	k := e.Decoded.Key
	if group != "" && (e.Err != nil && k.Group == "" || k.Group != group) {
		return false
	}
	if types != nil && !types.set[k.Type] {
		return false
	}
	if b.ProducerID >= 0 {
		producers[b.ProducerID] = true
	}
	return true
}
