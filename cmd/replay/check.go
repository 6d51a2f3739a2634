package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/audit"
	"github.com/coordlog/coordlog/replay/explain"
)

type checkFlags struct {
	replayFlags
	numPartitions int32
	format        string
	minSeverity   string
	thresholds    thresholdFlags
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
	f.register(cmd)
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
	r, err := replayInputParallel(cmd, path, &f.replayFlags, a.Observer, stderr) // an Audit takes partitions concurrently
	if err != nil {
		return err
	}
	defer r.close()
	numParts := f.numPartitions
	if numParts == 0 {
		if parts, err := r.in.Partitions(); err == nil {
			numParts = audit.PartitionCount(parts)
		}
	}
	engines := make([]*replay.Engine, len(r.results))
	var records int64
	var parts []int32
	for i, res := range r.results {
		engines[i] = res.Engine
		records += res.Engine.Stats().Records
		parts = append(parts, res.Engine.Partition())
	}
	findings := audit.FilterSeverity(a.Finish(engines, r.in.report, numParts), minSev)
	for i := range findings {
		findings[i].Next = strings.ReplaceAll(findings[i].Next, "INPUT", path)
	}

	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if f.format == "json" {
		if err := writeCheckJSON(out, r, parts, records, numParts, findings, eo); err != nil {
			return err
		}
	} else {
		writeCheckText(out, r, len(parts), records, numParts, findings, wrapWidth(stdout))
	}
	if len(findings) == 0 {
		return nil
	}
	out.Flush()
	return exitCodeError{code: exitFindings, msg: "check found " + plural(int64(len(findings)), "finding")}
}

func writeCheckText(out io.Writer, r *replayed, parts int, records int64, numParts int32, findings []audit.Finding, width int) {
	placement := fmt.Sprintf("partition placement checked against %s", plural(int64(int(numParts)), "partition"))
	if numParts == 0 {
		placement = "partition placement not checked (give --num-partitions)"
	}
	writeWrapped(out, "", fmt.Sprintf("checked %s, %s (Kafka %s rules); %s", plural(int64(parts), "partition"),
		plural(int64(int(records)), "record"), r.opts.Version, placement), width)
	if len(findings) == 0 {
		fmt.Fprintln(out, "no findings")
		return
	}
	counts := map[string]int{}
	for _, fd := range findings {
		counts[fd.Kind]++
		// The position (as timeline prints it), the time, the group, the kind.
		head := fmt.Sprintf("p%d:%d", fd.Partition, fd.Offset)
		if fd.Offset < 0 {
			head = fmt.Sprintf("p%d end of log", fd.Partition)
		}
		if fd.Time >= 0 {
			head += " " + msTime(fd.Time)
		}
		if fd.Group != "" {
			head += " " + fd.Group
		}
		head += ": " + fd.Kind + " [" + string(fd.Severity) + ", " + fd.CertaintyText() + "]"
		if fd.Count > 1 {
			head += fmt.Sprintf(" x%d", fd.Count)
		}
		fmt.Fprintln(out)
		writeWrapped(out, "", head, width)
		writeWrapped(out, "    ", fd.Detail, width)
		for _, n := range fd.Notes() {
			writeWrapped(out, "    ", n, width)
		}
		if fd.Next != "" {
			writeWrapped(out, "    ", "next: "+fd.Next, width)
		}
	}
	var kinds []string
	for k, n := range counts {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	fmt.Fprintln(out)
	writeWrapped(out, "", plural(int64(len(findings)), "finding")+": "+strings.Join(kinds, ", "), width)
}

// checkJSON is check's --format json (docs/json/check.schema.json).
type checkJSON struct {
	SchemaVersion int              `json:"schemaVersion"`
	KafkaVersion  string           `json:"kafkaVersion"`
	Partitions    []int32          `json:"partitions"`
	Records       int64            `json:"records"`
	Placement     checkPlacement   `json:"placement"`
	Findings      []checkFinding   `json:"findings"`
	Counts        map[string]int   `json:"counts"`
	Thresholds    map[string]int64 `json:"thresholds"`
}

type checkPlacement struct {
	Checked       bool  `json:"checked"`
	NumPartitions int32 `json:"numPartitions"`
}

type checkFinding struct {
	Partition int32          `json:"partition"`
	Offset    *int64         `json:"offset"` // null: about the state at the end of the log
	Timestamp *int64         `json:"timestamp"`
	Time      *string        `json:"time"`
	Kind      string         `json:"kind"`
	Group     *string        `json:"group"`
	Detail    string         `json:"detail"`
	Next      *string        `json:"next"`
	Event     *explain.Event `json:"event"`
	Episode   *audit.Episode `json:"episode"`
	// Severity, Certainty, Evidence, Alternatives and Count: audit.Finding's.
	Severity     string                `json:"severity"`
	Certainty    string                `json:"certainty"`
	Evidence     []string              `json:"evidence"`
	Alternatives []explain.Alternative `json:"alternatives"`
	Count        int                   `json:"count"`
}

func writeCheckJSON(out io.Writer, r *replayed, parts []int32, records int64, numParts int32, findings []audit.Finding, eo explain.Options) error {
	doc := checkJSON{SchemaVersion: 1, KafkaVersion: r.opts.Version.String(), Partitions: parts, Records: records,
		Placement: checkPlacement{Checked: numParts > 0, NumPartitions: numParts}, Findings: []checkFinding{}, Counts: map[string]int{},
		Thresholds: map[string]int64{"slowRebalanceMs": eo.SlowRebalanceMs, "longTransactionMs": eo.LongTransactionMs,
			"offsetsRetentionMs": eo.OffsetsRetentionMs, "sessionTimeoutMs": eo.SessionTimeoutMs}}
	if doc.Partitions == nil {
		doc.Partitions = []int32{}
	}
	for _, fd := range findings {
		cf := checkFinding{Partition: fd.Partition, Kind: fd.Kind, Detail: fd.Detail, Event: fd.Event, Episode: fd.Episode,
			Severity: string(fd.Severity), Certainty: string(fd.Certainty), Evidence: nonNil(fd.Evidence),
			Alternatives: nonNil(fd.Alternatives), Count: fd.Count}
		if fd.Offset >= 0 {
			o := fd.Offset
			cf.Offset = &o
		}
		if fd.Time >= 0 {
			ts, t := fd.Time, msTime(fd.Time)
			cf.Timestamp, cf.Time = &ts, &t
		}
		if fd.Group != "" {
			g := fd.Group
			cf.Group = &g
		}
		if fd.Next != "" {
			n := fd.Next
			cf.Next = &n
		}
		doc.Findings = append(doc.Findings, cf)
		doc.Counts[fd.Kind]++
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
