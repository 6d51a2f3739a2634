package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/audit"
)

type checkFlags struct {
	replayFlags
	numPartitions int32
}

func newCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check <segments-dir|db>",
		Short: "Audit a log: replay violations and suspicious coordinator state; exit 1 when something is found",
		Long: `check replays the whole log in forensic mode and reports:
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
The exit status is 1 when anything is found, 0 otherwise.`,
		Args: argsError(1, "one input: a __consumer_offsets-N directory, a log directory or a coordlog database"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd, args[0], &f, stdout, stderr)
		},
	}
	f.register(cmd)
	cmd.Flags().Int32Var(&f.numPartitions, "num-partitions", 0, "the topic's partition count, for the partition-placement check (default: inferred from a log directory with every partition)")
	return cmd
}

func runCheck(cmd *cobra.Command, path string, f *checkFlags, stdout, stderr io.Writer) error {
	if f.numPartitions < 0 {
		return usageError{fmt.Errorf("--num-partitions %d: the topic's partition count is 1 or more (0, the default, infers it from a log directory)", f.numPartitions)}
	}
	f.forensic = true // an audit reports every problem instead of stopping at the first
	a := audit.New()
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
	for i, res := range r.results {
		engines[i] = res.Engine
		records += res.Engine.Stats().Records
	}
	findings := a.Finish(engines, r.in.report, numParts)

	out := bufio.NewWriter(stdout)
	defer out.Flush()
	placement := "partition placement checked against " + plural(int64(numParts), "partition")
	if numParts == 0 {
		placement = "partition placement not checked (give --num-partitions)"
	}
	fmt.Fprintf(out, "checked %s, %s (Kafka %s rules); %s\n", plural(int64(len(r.results)), "partition"), plural(records, "record"), r.opts.Version, placement)
	if len(findings) == 0 {
		fmt.Fprintln(out, "no findings")
		return nil
	}
	counts := map[string]int{}
	for _, fd := range findings {
		counts[fd.Kind]++
		at := "end of log"
		if fd.Offset >= 0 {
			at = fmt.Sprintf("offset %d", fd.Offset)
		}
		fmt.Fprintf(out, "p%d %s: %s: %s\n", fd.Partition, at, fd.Kind, fd.Detail)
	}
	var kinds []string
	for k, n := range counts {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	fmt.Fprintf(out, "%s: %s\n", plural(int64(len(findings)), "finding"), strings.Join(kinds, ", "))
	out.Flush()
	return exitCodeError{code: exitFindings, msg: "check found " + plural(int64(len(findings)), "problem")}
}
