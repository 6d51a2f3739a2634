package commands

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/jsondoc"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

type diffFlags struct {
	replayFlags
	since, until, group, format string
	fromOffset, toOffset        []string
	volatile, exitCode          bool
}

func newDiffCmd(stdout, stderr io.Writer) *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff <segments-dir|db> [<segments-dir|db>] [--since T | --from-offset O] [--until T | --to-offset O]",
		Short: "What changed between two points of one log, or between two logs: groups, members, epochs, assignments, offsets",
		Long: `diff compares the coordinator state at two points and lists what changed, group by group:
groups added, removed, or changed type or state; epochs and other group fields; members that
joined or left, their epochs, states and assignments (current, pending revocation, target);
committed offsets committed, moved (with the delta), deleted or changed; pending transactional
offsets. Groups and offsets are matched by id, whatever partition they sit in.

With one input the first point is --since (a time) or --from-offset (default: the start of the
log, an empty state) and the second --until or --to-offset (default: the end). With two inputs
(yesterday's dump and today's) the first input is read at --since/--from-offset, the second at
--until/--to-offset, each at its end by default. Offsets take P:OFFSET pairs on inputs of
several partitions, as --at-offset does.

Changes of record offsets and timestamps alone (a re-commit of the same offset, a new state
timestamp or metadata hash) are left out unless --volatile. --exit-code exits 1 when there are
changes. --format json prints a document described by the JSON Schema
docs/json/diff.schema.json.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageError{fmt.Errorf("diff needs one input (two points of it) or two inputs (got %s)", plural(int64(len(args)), "argument"))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd, args, &f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.Int32SliceVar(&f.partitions, "partition", nil, "only these __consumer_offsets partitions (repeatable)")
	fl.StringVar(&f.kafkaVersion, "kafka-version", groupstate.DefaultKafkaVersion.String(), "replay rules of this Kafka version: 4.0, 4.1, 4.2, 4.3 or 4.4")
	fl.BoolVar(&f.forensic, "forensic", false, "record violations and damaged input and continue, instead of stopping at the first")
	fl.StringVar(&f.since, "since", "", "the first point: a time (RFC 3339, -2h, Unix ms)")
	fl.StringVar(&f.until, "until", "", "the second point: a time (RFC 3339, -2h, Unix ms)")
	fl.StringSliceVar(&f.fromOffset, "from-offset", nil, "the first point: an offset, or P:OFFSET pairs")
	fl.StringSliceVar(&f.toOffset, "to-offset", nil, "the second point: an offset, or P:OFFSET pairs")
	fl.StringVar(&f.group, "group", "", "only this group")
	fl.BoolVar(&f.volatile, "volatile", false, "also list changes of record offsets and timestamps alone")
	fl.BoolVar(&f.exitCode, "exit-code", false, "exit 1 when something changed")
	fl.StringVar(&f.format, "format", "table", "table or json")
	return cmd
}

// sidePoint parses one side's flags (a time or an offset list) with what it defaults to.
func sidePoint(timeFlag, timeName string, offs []string, offName string, def query.Point) (query.Point, error) {
	switch {
	case timeFlag != "" && len(offs) > 0:
		return def, usageError{fmt.Errorf("give --%s or --%s, not both", timeName, offName)}
	case timeFlag != "":
		t, err := query.ParseTime(timeFlag, Now())
		if err != nil {
			return def, usageError{fmt.Errorf("--%s: %w", timeName, err)}
		}
		return query.AtTime(t), nil
	case len(offs) > 0:
		p, err := query.ParseOffsetsAs("--"+offName, offs)
		if err != nil {
			return def, usageError{err}
		}
		return p, nil
	}
	return def, nil
}

func runDiff(cmd *cobra.Command, args []string, f *diffFlags, stdout, stderr io.Writer) error {
	if f.format != "table" && f.format != "json" {
		return usageError{fmt.Errorf("--format must be table or json, not %q", f.format)}
	}
	// With one input and no first point the first side is the start of the log (an empty
	// state; diffOneInput cuts every partition at 0).
	atA, err := sidePoint(f.since, "since", f.fromOffset, "from-offset", query.End())
	if err != nil {
		return err
	}
	atB, err := sidePoint(f.until, "until", f.toOffset, "to-offset", query.End())
	if err != nil {
		return err
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	var a, b query.Side
	var docA, docB jsondoc.DiffSide
	if len(args) == 1 {
		a, b, docA, docB, err = diffOneInput(cmd, args[0], f, atA, atB, opts, stderr)
	} else {
		a, docA, err = diffSide(cmd, args[0], f, atA, opts, stderr)
		if err == nil {
			b, docB, err = diffSide(cmd, args[1], f, atB, opts, stderr)
		}
	}
	if err != nil {
		return err
	}
	changes := query.Diff(a, b, query.DiffOptions{Volatile: f.volatile, Group: f.group})
	if f.group != "" && len(changes) == 0 {
		if err := query.FindGroupInSides(f.group, a, b); err != nil {
			return err
		}
	}
	if f.format == "json" {
		enc := jsondoc.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(jsondoc.NewDiff(opts.Version.String(), docA, docB, changes)); err != nil {
			return err
		}
	} else {
		out := bufio.NewWriter(stdout)
		printDiff(out, docA, docB, changes, widthOf(stdout))
		if err := out.Flush(); err != nil {
			return err
		}
	}
	if f.exitCode && len(changes) > 0 {
		return exitCodeError{code: ExitFindings, msg: plural(int64(len(changes)), "change")}
	}
	return nil
}

// diffOneInput replays each partition once: up to the first point, where the state is copied,
// then on to the second.
func diffOneInput(cmd *cobra.Command, path string, f *diffFlags, atA, atB query.Point, opts replay.Options, stderr io.Writer) (a, b query.Side, da, db jsondoc.DiffSide, err error) {
	src, err := openInput(cmd, path, opts.Mode)
	if err != nil {
		return a, b, da, db, err
	}
	defer src.Close()
	sel := f.partitions
	if len(sel) == 0 {
		sel = atA.Partitions()
		for _, p := range atB.Partitions() {
			if !slices.Contains(sel, p) {
				sel = append(sel, p)
			}
		}
	}
	parts, err := session.Select(src, sel, query.End())
	if err != nil {
		return a, b, da, db, commandLine(err)
	}
	fromStart := f.since == "" && len(f.fromOffset) == 0
	pa := query.AtStart(parts)
	if !fromStart {
		if pa, err = session.Resolve(cmd.Context(), src, parts, atA, trace(stderr)); err != nil {
			return a, b, da, db, commandLine(err)
		}
	}
	pb, err := session.Resolve(cmd.Context(), src, parts, atB, trace(stderr))
	if err != nil {
		return a, b, da, db, commandLine(err)
	}
	da, db = jsondoc.DiffSide{Source: src.Name}, jsondoc.DiffSide{Source: src.Name}
	da.AtOffset, da.AtTime = jsondoc.Point(atA)
	db.AtOffset, db.AtTime = jsondoc.Point(atB)
	if fromStart {
		da.AtTime, da.Start = nil, true
	}
	a, b, err = session.Between(cmd.Context(), src, pa, pb, opts, func(e *replay.Engine, atFirst bool) {
		if atFirst {
			da.Partitions = append(da.Partitions, jsondoc.PartitionOf(e, &pa[len(da.Partitions)]))
			return
		}
		db.Partitions = append(db.Partitions, jsondoc.PartitionOf(e, &pb[len(db.Partitions)]))
		printViolations(stderr, e)
	})
	if re := (*session.RequestError)(nil); !errors.As(err, &re) {
		printReport(src, stderr) // what the replay read, unless the points were refused first
	}
	return a, b, da, db, commandLine(err)
}

// diffSide replays one input at its point (the two-input diff).
func diffSide(cmd *cobra.Command, path string, f *diffFlags, at query.Point, opts replay.Options, stderr io.Writer) (query.Side, jsondoc.DiffSide, error) {
	src, err := openInput(cmd, path, opts.Mode)
	if err != nil {
		return nil, jsondoc.DiffSide{}, err
	}
	defer src.Close()
	r, err := session.Replay(cmd.Context(), src, session.Request{Partitions: f.partitions, At: at, Options: opts, DetectVersion: f.detect(opts), Trace: trace(stderr)})
	if err != nil {
		return nil, jsondoc.DiffSide{}, replayFailed(err, stderr)
	}
	replayDone(r, true, stderr)
	d := jsondoc.DiffSide{Source: src.Name, Partitions: jsondoc.Partitions(r)}
	d.AtOffset, d.AtTime = jsondoc.Point(at)
	return query.Capture(r.States(nil)), d, nil
}

func sideLabel(d jsondoc.DiffSide) string {
	if d.Start {
		return d.Source + " at the start of the log (an empty state)"
	}
	if d.AtTime != nil {
		// One instant, a record per partition (said on stderr).
		return fmt.Sprintf("%s at %s", d.Source, *d.AtTime)
	}
	var parts []string
	for _, p := range d.Partitions {
		if p.Position != nil {
			parts = append(parts, fmt.Sprintf("p%d at %s", p.Partition, p.Position.Label()))
		}
	}
	at := "at the end of the log"
	if len(parts) > 0 {
		at = strings.Join(parts, ", ")
	}
	return d.Source + " " + at
}

func printDiff(w io.Writer, a, b jsondoc.DiffSide, changes []query.Change, width int) {
	fmt.Fprintf(w, "from %s\n  to %s\n", sideLabel(a), sideLabel(b))
	if len(changes) == 0 {
		fmt.Fprintln(w, "no changes")
		return
	}
	t := termtext.NewTable("", "GROUP", "PARTITION", "SUBJECT", "CHANGE", "FROM", "TO", "DELTA").Demote("PARTITION")
	for _, c := range changes {
		what := c.Kind
		if c.Field != "" {
			what = c.Field
		}
		delta := "-"
		if c.Delta != nil {
			delta = fmt.Sprintf("%+d", *c.Delta)
		}
		t.Add(c.Group, strconv.Itoa(int(c.Partition)), c.Subject(), what, dash(c.From), dash(c.To), delta)
	}
	t.Write(w, width)
	var kinds []string
	for _, k := range query.Summarize(changes) {
		kinds = append(kinds, fmt.Sprintf("%d %s", k.Count, k.Kind))
	}
	fmt.Fprintf(w, "%s: %s\n", plural(int64(len(changes)), "change"), strings.Join(kinds, ", "))
}
