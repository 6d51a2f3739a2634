package commands

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/audit"
	"github.com/coordlog/coordlog/replay/jsondoc"
	"github.com/coordlog/coordlog/replay/query"
)

type checkFlags struct {
	replayFlags
	thresholds          thresholdFlags
	format, minSeverity string
	numPartitions       int32
}

func newCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check <segments-dir|db>",
		Short: "Audit a log: what an operator should look at (rewinds, fenced members, slow rebalances, violations); exit 1 when something is found",
		Long: `check replays the whole log in forensic mode and reports, each finding with its partition,
offset, time and group, and what to look at next:
  - committed offsets that moved back (how far, how many partitions of the group at once, and
    which member owned them), offsets written while the group had no members (an admin tool such
    as kafka-consumer-groups --reset-offsets, or a standalone consumer), offsets committed while
    no member owned them, and offsets deleted (by the group's deletion, OffsetDelete, expiry or
    a topic's deletion, as far as the log tells);
  - members fenced by a session or rebalance timeout (told from members that left by the time
    from their last sign of life to their removal; --session-timeout for groups that set
    their own), rebalances slower than --slow-rebalance, transactions open longer than
    --long-transaction;
  - replay violations (records Kafka's loader would fail on) and damaged input;
  - target-assignment member records written without their metadata record in the same batch
    (Kafka writes them atomically, except when a static member's replacement moves a target to
    the new member id; compaction can legitimately separate them);
  - members whose epoch is ahead of their group's epoch;
  - streams tasks owned twice on one process id (an active and a standby, or two of a kind);
  - transactions still open at the end of the log;
  - committed offsets whose group no longer exists;
  - groups whose records sit in the wrong __consumer_offsets partition (Java's
    String.hashCode mapping; needs --num-partitions unless the input is a whole log directory).
Each finding has a severity (high: offsets consumers feel, a wrong log; medium: members fenced,
slow rebalances, long transactions; low: what repeats without harm, such as many short-lived
members of one client fenced, told once with the count) and says how sure its cause is: proved
by the log (by which records), likely (and why), or one of several (each with what would settle
it). Findings come by severity, then position; --min-severity leaves out the lower ones.
--format json prints the findings as JSON (docs/json/check.schema.json).
The exit status is 1 when anything is found, 0 otherwise.`,
		Args: argsError(1, "one input: a __consumer_offsets-N directory, a log directory or a coordlog database"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd, args[0], &f, stdout, stderr)
		},
	}
	f.replayFlags.register(cmd)
	cmd.Flags().Int32Var(&f.numPartitions, "num-partitions", 0, "the topic's partition count, for the partition-placement check (default: inferred from a log directory with every partition)")
	cmd.Flags().StringVar(&f.format, "format", "text", "text or json")
	cmd.Flags().StringVar(&f.minSeverity, "min-severity", "low", "only findings of this severity or higher: high, medium or low")
	f.thresholds.register(cmd)
	return cmd
}

func runCheck(cmd *cobra.Command, path string, f *checkFlags, stdout, stderr io.Writer) error {
	if f.numPartitions < 0 {
		return usageError{fmt.Errorf("--num-partitions %d: the topic's partition count is 1 or more (0, the default, infers it from a log directory)", f.numPartitions)}
	}
	if f.format != "text" && f.format != "json" {
		return usageError{fmt.Errorf("--format must be text or json, not %q", f.format)}
	}
	minSev, err := audit.ParseSeverity(f.minSeverity)
	if err != nil {
		return usageError{fmt.Errorf("--min-severity: %w", err)}
	}
	eo, err := f.thresholds.options()
	if err != nil {
		return err
	}
	f.forensic = true // an audit reports every problem instead of stopping at the first
	a := audit.NewWith(audit.Options{Explain: eo})
	r, err := replayInput(cmd, &f.replayFlags, replayRequest{path: path, observer: a.Observer}, stderr) // an Audit takes partitions concurrently
	if err != nil {
		return err
	}
	defer r.Source.Close()
	sum := jsondoc.CheckSummary{KafkaVersion: r.Options.Version.String(), NumPartitions: f.numPartitions, Thresholds: eo}
	if sum.NumPartitions == 0 {
		if parts, err := r.Source.Partitions(); err == nil {
			sum.NumPartitions = audit.PartitionCount(parts)
		}
	}
	engines := make([]*replay.Engine, len(r.Partitions))
	for i, p := range r.Partitions {
		engines[i] = p.Engine
		sum.Records += p.Engine.Stats().Records
		sum.Partitions = append(sum.Partitions, p.Engine.Partition())
	}
	findings := audit.FilterSeverity(a.Finish(engines, r.Source.Report, sum.NumPartitions), minSev)
	for i := range findings {
		findings[i].Next = strings.ReplaceAll(findings[i].Next, "INPUT", path)
	}
	if f.format == "json" {
		if err := jsondoc.NewEncoder(stdout).Encode(jsondoc.NewCheck(sum, findings)); err != nil {
			return err
		}
	} else {
		out := bufio.NewWriter(stdout)
		writeCheckText(out, sum, findings, wrapWidth(stdout))
		if err := out.Flush(); err != nil {
			return err
		}
	}
	if len(findings) == 0 {
		return nil
	}
	return exitCodeError{code: ExitFindings, msg: "check found " + plural(int64(len(findings)), "finding")}
}

func writeCheckText(out io.Writer, sum jsondoc.CheckSummary, findings []audit.Finding, width int) {
	placement := fmt.Sprintf("partition placement checked against %s", plural(int64(int(sum.NumPartitions)), "partition"))
	if sum.NumPartitions == 0 {
		placement = "partition placement not checked (give --num-partitions)"
	}
	termtext.WriteWrapped(out, "", fmt.Sprintf("checked %s, %s (Kafka %s rules); %s", plural(int64(len(sum.Partitions)), "partition"),
		plural(sum.Records, "record"), sum.KafkaVersion, placement), width)
	if len(findings) == 0 {
		fmt.Fprintln(out, "no findings")
		return
	}
	counts := map[string]int{}
	for _, fd := range findings {
		counts[fd.Kind]++
		fmt.Fprintln(out)
		writeFinding(out, fd, width)
	}
	var kinds []string
	for k, n := range counts {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	fmt.Fprintln(out)
	termtext.WriteWrapped(out, "", plural(int64(len(findings)), "finding")+": "+strings.Join(kinds, ", "), width)
}

// writeFinding writes one finding: a head line with the position (as timeline prints it),
// the time, the group, the kind, the severity and certainty (and the count); then the
// detail, the notes and what to look at next, indented.
func writeFinding(out io.Writer, fd audit.Finding, width int) {
	head := fmt.Sprintf("p%d:%d", fd.Partition, fd.Offset)
	if fd.Offset < 0 {
		head = fmt.Sprintf("p%d end of log", fd.Partition)
	}
	if fd.Time >= 0 {
		head += " " + query.FormatMillis(fd.Time)
	}
	if fd.Group != "" {
		head += " " + fd.Group
	}
	head += ": " + fd.Kind + " [" + string(fd.Severity) + ", " + fd.CertaintyText() + "]"
	if fd.Count > 1 {
		head += fmt.Sprintf(" x%d", fd.Count)
	}
	termtext.WriteWrapped(out, "", head, width)
	termtext.WriteWrapped(out, "    ", fd.Detail, width)
	for _, n := range fd.Notes() {
		termtext.WriteWrapped(out, "    ", n, width)
	}
	if fd.Next != "" {
		termtext.WriteWrapped(out, "    ", "next: "+fd.Next, width)
	}
}
