package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/cluster"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay/jsondoc"
	"github.com/coordlog/coordlog/replay/session"
)

type restoreFlags struct {
	replayFlags
	selectionFlags
	live                             liveFlags
	format                           string
	waitForEmpty                     time.Duration
	execute, dryRun, allowOutOfRange bool
}

func newRestoreCmd(stdout, stderr io.Writer) *cobra.Command {
	var f restoreFlags
	cmd := &cobra.Command{
		Use:   "restore [<segments-dir|db>] --group G --bootstrap-server HOST:PORT [--at-time T | --at-offset N] [--execute]",
		Short: "Commit a group's offsets of a point in history back to a live cluster: preview, dry run by default, read-back",
		Long: `restore takes group G's committed offsets at a point of a log's history (--at-time, --at-offset;
default: the end of the log) and commits them to the live cluster named by --bootstrap-server:
the offsets to restore after an accidental reset, or after a consumer skipped ahead.

The log is the input given (a __consumer_offsets-N directory, a log directory, a coordlog
database), or without one the cluster's own __consumer_offsets. restore first prints a preview:
per partition the live offset, the restored one, the delta, the partition's log start and end
and what will happen. It is a dry run unless --execute is given. It refuses, as Kafka would,
while the group has active members (--wait-for-empty waits for them to leave), refuses share
groups (their positions are not committed offsets) and offsets outside their partition's log
(--allow-out-of-range commits them anyway). A partition the live group has but the restore
point does not is left as it is. After committing (streams groups through the same OffsetCommit
as Kafka's alterStreamsGroupOffsets, after describing them with StreamsGroupDescribe) it reads
the group's offsets back and checks each one; any difference exits 1.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Errorf("restore takes at most one input (got %d): without one it reads the cluster's __consumer_offsets", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			return runRestore(cmd, path, &f, stdout, stderr)
		},
	}
	f.replayFlags.register(cmd)
	f.registerFromSnapshot(cmd)
	f.selectionFlags.register(cmd)
	f.live.registerAs(cmd, "offsets-topic")
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "table", "table or json")
	fl.BoolVar(&f.execute, "execute", false, "commit the offsets (default: a dry run that changes nothing)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "only preview (the default)")
	fl.DurationVar(&f.waitForEmpty, "wait-for-empty", 0, "with --execute: wait up to this long for the group's members to leave")
	fl.BoolVar(&f.allowOutOfRange, "allow-out-of-range", false, "also commit offsets outside their partition's log now (consumers then reset by auto.offset.reset)")
	return cmd
}

func runRestore(cmd *cobra.Command, path string, f *restoreFlags, stdout, stderr io.Writer) error {
	switch {
	case f.group == "":
		return usageError{errors.New("restore needs --group")}
	case !f.live.set():
		return usageError{errors.New("restore needs --bootstrap-server: the cluster to restore the offsets to")}
	case f.execute && f.dryRun:
		return usageError{errors.New("--execute and --dry-run exclude each other")}
	case f.live.follow:
		return usageError{errors.New("--follow does not apply to restore")}
	case f.format != "table" && f.format != "json":
		return usageError{fmt.Errorf("--format must be table or json, not %q", f.format)}
	case f.waitForEmpty < 0:
		return usageError{errors.New("--wait-for-empty must not be negative")}
	}
	sel, err := f.selection()
	if err != nil {
		return err
	}
	rr := replayRequest{path: path}
	if path == "" {
		rr.live = &f.live // the cluster's own __consumer_offsets
	}
	r, err := replayInput(cmd, &f.replayFlags, rr, stderr)
	if err != nil {
		return err
	}
	defer r.Source.Close()
	if err := r.FindGroup(f.group); err != nil {
		return err
	}
	restore, logType := sel.GroupOffsets(r.Views())
	for _, m := range sel.Filter.Missing(restore) {
		fmt.Fprintf(stderr, "note: group %s has no committed offset of %s at the restore point\n", f.group, m)
	}
	c, err := f.live.cluster()
	if err != nil {
		return err
	}
	defer c.Close()
	plan, err := planRestore(cmd.Context(), c, f, logType, restore)
	if err != nil {
		return err
	}
	doc := jsondoc.NewRestore(r, f.live.bootstrap, plan)
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if f.format == "table" {
		printPlan(out, r, &doc.Plan, f.live.bootstrap, widthOf(stdout))
		out.Flush()
	}
	if err := waitForEmpty(cmd.Context(), c, f, r, &doc.Plan, logType, restore, out, widthOf(stdout), stderr); err != nil {
		return err
	}
	err = commitRestore(cmd.Context(), c, f, doc, out, widthOf(stdout))
	if f.format == "json" {
		enc := jsondoc.NewEncoder(out)
		enc.SetEscapeHTML(false)
		if jerr := enc.Encode(doc); jerr != nil {
			return jerr
		}
	}
	return err
}

// waitForEmpty, with --execute and --wait-for-empty, waits for the members of a group that
// refuses the plan to leave, then plans again.
func waitForEmpty(ctx context.Context, c *cluster.Client, f *restoreFlags, r *session.Replayed, plan *cluster.Plan, logType groupstate.GroupType, restore []groupstate.CommittedOffset, out *bufio.Writer, width int, stderr io.Writer) error {
	if !f.execute || len(plan.Refusals) == 0 || f.waitForEmpty <= 0 || plan.Live.Empty() {
		return nil
	}
	fmt.Fprintf(stderr, "waiting up to %s for the %s of %s to leave\n", f.waitForEmpty, plural(int64(len(plan.Live.Members)), "member"), f.group)
	wctx, cancel := context.WithTimeout(ctx, f.waitForEmpty)
	_, err := c.WaitForEmpty(wctx, f.group, time.Second)
	cancel()
	if err != nil {
		return err
	}
	if *plan, err = planRestore(ctx, c, f, logType, restore); err != nil {
		return err
	}
	if f.format == "table" {
		fmt.Fprintln(out, "\nthe group is empty now; the plan again:")
		printPlan(out, r, plan, f.live.bootstrap, width)
		out.Flush()
	}
	return nil
}

// commitRestore refuses the plan, stops at the dry run, or commits it and reads it back,
// recording what was applied in doc.
func commitRestore(ctx context.Context, c *cluster.Client, f *restoreFlags, doc *jsondoc.Restore, out io.Writer, width int) error {
	plan := &doc.Plan
	if len(plan.Refusals) > 0 {
		msg := fmt.Sprintf("restore of %s refused: nothing committed", f.group)
		if !f.execute {
			msg = fmt.Sprintf("restore of %s would be refused (dry run: nothing committed)", f.group)
		}
		return exitCodeError{code: ExitFailure, msg: msg}
	}
	if !f.execute {
		if f.format == "table" {
			fmt.Fprintf(out, "dry run (the default): nothing committed; --execute commits %s\n", plural(int64(len(plan.Commits())), "offset"))
		}
		return nil
	}
	applied, err := c.Apply(ctx, plan)
	if err != nil {
		return err
	}
	doc.Executed, doc.Applied = true, &applied
	if f.format == "table" {
		printApplied(out, &applied, f.group, width)
	}
	if !applied.OK() {
		return exitCodeError{code: ExitFailure, msg: fmt.Sprintf("restore of %s incomplete: see the read-back above", f.group)}
	}
	return nil
}

func planRestore(ctx context.Context, c *cluster.Client, f *restoreFlags, logType groupstate.GroupType, restore []groupstate.CommittedOffset) (cluster.Plan, error) {
	live, err := c.Inspect(ctx, f.group, cluster.Topics(restore))
	if err != nil {
		return cluster.Plan{}, fmt.Errorf("read group %s from %s: %w", f.group, f.live.bootstrap, err)
	}
	return cluster.NewPlan(f.group, logType, restore, live, cluster.PlanOptions{AllowOutOfRange: f.allowOutOfRange}), nil
}

func printPlan(w io.Writer, r *session.Replayed, p *cluster.Plan, bootstrap string, width int) {
	fmt.Fprintf(w, "Restore of group %s (%s group at the restore point) to %s\n", p.Group, p.LogType, bootstrap)
	for _, rp := range r.Partitions {
		if _, ok := rp.Engine.State().GroupType(p.Group); ok || len(rp.Engine.State().Offsets(p.Group)) > 0 {
			fmt.Fprintf(w, "  restore point: %s partition %d at %s\n", r.Source.Name, rp.Engine.Partition(), rp.Position.Label())
		}
	}
	g := p.Live
	if g.Exists {
		fmt.Fprintf(w, "  live group: %s, %s, %s\n", g.Type, g.State, plural(int64(len(g.Members)), "member"))
	} else {
		fmt.Fprintln(w, "  live group: none (not listed by the cluster)")
	}
	t := termtext.NewTable("  ", "TOPIC", "PARTITION", "LIVE-OFFSET", "RESTORED-OFFSET", "DELTA", "LOG-START", "LOG-END", "ACTION", "NOTE").Demote("LOG-START", "LOG-END")
	opt := func(v *int64) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatInt(*v, 10)
	}
	for _, row := range p.Rows {
		delta := "-"
		if row.Delta != nil {
			delta = fmt.Sprintf("%+d", *row.Delta)
		}
		t.Add(row.Topic, strconv.Itoa(int(row.Partition)), opt(row.Live), opt(row.Restored), delta, opt(row.LogStart), opt(row.LogEnd), row.Action, dash(row.Note))
	}
	t.Write(w, width)
	for _, m := range g.Members {
		fmt.Fprintf(w, "  active member %s (client %s, host %s)\n", m.MemberID, dash(m.ClientID), dash(m.ClientHost))
	}
	for _, n := range p.Notes {
		fmt.Fprintln(w, "  note:", n)
	}
	for _, n := range p.Refusals {
		fmt.Fprintln(w, "  refused:", n)
	}
}

func printApplied(w io.Writer, a *cluster.Applied, group string, width int) {
	fmt.Fprintf(w, "committed %s of %s; read back:\n", plural(int64(a.Committed), "offset"), group)
	t := termtext.NewTable("  ", "TOPIC", "PARTITION", "RESTORED-OFFSET", "READ-BACK", "RESULT")
	ok := 0
	for _, v := range a.Verified {
		got, res := "-", "MISSING"
		if v.Got != nil {
			got = strconv.FormatInt(*v.Got, 10)
			res = "DIFFERS"
		}
		if v.OK {
			res = "ok"
			ok++
		}
		t.Add(v.Topic, strconv.Itoa(int(v.Partition)), strconv.FormatInt(v.Want, 10), got, res)
	}
	t.Write(w, width)
	for tp, e := range a.Failed {
		fmt.Fprintf(w, "  commit of %s failed: %s\n", tp, e)
	}
	fmt.Fprintf(w, "%d of %d restored offsets read back as restored\n", ok, len(a.Verified))
}
