package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
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

type finding struct {
	partition int32
	offset    int64 // -1 when the finding is about the end state
	kind      string
	detail    string
}

// batchAudit checks Kafka's write atomicity of target assignments while the log replays.
type batchAudit struct {
	partition int32
	base      int64
	members   map[string]int  // group -> target member values minus tombstones in the current batch
	meta      map[string]bool // group -> target metadata value in the current batch
	findings  *[]finding
	groups    map[string]bool // groups with records in this partition
}

func (a *batchAudit) flush() {
	groups := make([]string, 0, len(a.members))
	for g := range a.members {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		n := a.members[g]
		// A static member's replacement moves one target from the old member id to the new
		// one (a tombstone and a value, no metadata record): only a surplus of values needs
		// the metadata record.
		if n > 0 && !a.meta[g] {
			*a.findings = append(*a.findings, finding{a.partition, a.base, "target-assignment-split",
				fmt.Sprintf("group %s: %d target-assignment member record(s) in the batch at offset %d without the target-assignment metadata record", g, n, a.base)})
		}
	}
	clear(a.members)
	clear(a.meta)
}

func (a *batchAudit) observe(ev *replay.Event, _ groupstate.View) {
	if ev.Batch.BaseOffset != a.base {
		a.flush()
		a.base = ev.Batch.BaseOffset
	}
	if ev.Violation != nil {
		*a.findings = append(*a.findings, finding{a.partition, ev.Offset, "violation", ev.Violation.Error()})
	}
	k := ev.Record.Key
	if ev.Marker != nil || ev.Skipped != "" {
		return
	}
	if !a.groups[k.Group] {
		a.groups[strings.Clone(k.Group)] = true // the event's strings alias the batch
	}
	tomb := ev.Record.Value == nil
	switch k.Type {
	case recordcodec.ConsumerGroupTargetAssignmentMember, recordcodec.ShareGroupTargetAssignmentMember, recordcodec.StreamsGroupTargetAssignmentMember:
		if tomb {
			a.members[k.Group]--
		} else {
			a.members[k.Group]++
		}
		return
	}
	if tomb {
		return
	}
	switch k.Type {
	case recordcodec.ConsumerGroupTargetAssignmentMetadata, recordcodec.ShareGroupTargetAssignmentMetadata, recordcodec.StreamsGroupTargetAssignmentMetadata:
		a.meta[k.Group] = true
	}
}

func runCheck(cmd *cobra.Command, path string, f *checkFlags, stdout, stderr io.Writer) error {
	f.forensic = true // an audit reports every problem instead of stopping at the first
	var findings []finding
	audits := map[int32]*batchAudit{}
	obs := func(p int32) replay.Observer {
		a := &batchAudit{partition: p, base: -1, members: map[string]int{}, meta: map[string]bool{}, findings: &findings, groups: map[string]bool{}}
		audits[p] = a
		return replay.ObserverFunc(a.observe)
	}
	r, err := replayInput(cmd, path, &f.replayFlags, obs, stderr)
	if err != nil {
		return err
	}
	defer r.close()
	for _, a := range audits {
		a.flush()
	}
	if r.in.report != nil {
		for _, p := range r.in.report.Problems() {
			if p.Kind.Damage() {
				findings = append(findings, finding{p.Partition, p.Offset, "damaged-input", p.Error()})
			}
		}
	}
	numParts := f.numPartitions
	if numParts == 0 {
		numParts = inferPartitionCount(r)
	}
	for _, res := range r.results {
		p := res.Engine.Partition()
		st := res.Engine.State()
		findings = append(findings, stateFindings(p, st)...)
		if numParts > 0 {
			var groups []string
			for g := range audits[p].groups {
				groups = append(groups, g)
			}
			sort.Strings(groups)
			for _, g := range groups {
				if want := recordcodec.PartitionFor(g, numParts); want != p {
					findings = append(findings, finding{p, -1, "wrong-partition",
						fmt.Sprintf("group %q has records in partition %d but maps to partition %d of %d", g, p, want, numParts)})
				}
			}
		}
	}
	sort.SliceStable(findings, func(i, j int) bool {
		a, b := findings[i], findings[j]
		if a.partition != b.partition {
			return a.partition < b.partition
		}
		return a.offset < b.offset
	})
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	var records int64
	for _, res := range r.results {
		records += res.Engine.Stats().Records
	}
	placement := fmt.Sprintf("partition placement checked against %d partitions", numParts)
	if numParts == 0 {
		placement = "partition placement not checked (give --num-partitions)"
	}
	fmt.Fprintf(out, "checked %d partitions, %d records (Kafka %s rules); %s\n", len(r.results), records, r.opts.Version, placement)
	if len(findings) == 0 {
		fmt.Fprintln(out, "no findings")
		return nil
	}
	counts := map[string]int{}
	for _, fd := range findings {
		counts[fd.kind]++
		at := "end of log"
		if fd.offset >= 0 {
			at = fmt.Sprintf("offset %d", fd.offset)
		}
		fmt.Fprintf(out, "p%d %s: %s: %s\n", fd.partition, at, fd.kind, fd.detail)
	}
	var kinds []string
	for k, n := range counts {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	fmt.Fprintf(out, "%d findings: %s\n", len(findings), strings.Join(kinds, ", "))
	out.Flush()
	return exitCodeError{code: exitFindings, msg: fmt.Sprintf("check found %d problems", len(findings))}
}

// inferPartitionCount returns the partition count when the input looks like a whole
// __consumer_offsets topic (partitions 0..n-1 all present), 0 otherwise.
func inferPartitionCount(r *replayed) int32 {
	parts, err := r.in.Partitions()
	if err != nil || len(parts) < 2 {
		return 0
	}
	for i, p := range parts {
		if p != int32(i) {
			return 0
		}
	}
	return int32(len(parts))
}

func stateFindings(p int32, st groupstate.View) []finding {
	var out []finding
	add := func(kind, format string, args ...any) {
		out = append(out, finding{p, -1, kind, fmt.Sprintf(format, args...)})
	}
	for _, g := range st.Groups() {
		switch {
		case g.Consumer != nil:
			for _, m := range g.Consumer.Members {
				if m.MemberEpoch > g.Consumer.GroupEpoch {
					add("member-epoch-ahead", "consumer group %s: member %s at epoch %d, group epoch %d", g.GroupID, m.MemberID, m.MemberEpoch, g.Consumer.GroupEpoch)
				}
			}
		case g.Share != nil:
			for _, m := range g.Share.Members {
				if m.MemberEpoch > g.Share.GroupEpoch {
					add("member-epoch-ahead", "share group %s: member %s at epoch %d, group epoch %d", g.GroupID, m.MemberID, m.MemberEpoch, g.Share.GroupEpoch)
				}
			}
		case g.Streams != nil:
			s := g.Streams
			owners := map[string][]string{} // process|subtopology|partition -> roles
			for _, m := range s.Members {
				if m.MemberEpoch != nil && *m.MemberEpoch > s.GroupEpoch {
					add("member-epoch-ahead", "streams group %s: member %s at epoch %d, group epoch %d", g.GroupID, m.MemberID, *m.MemberEpoch, s.GroupEpoch)
				}
				if m.Metadata == nil || m.AssignedTasks == nil {
					continue
				}
				proc := m.Metadata.ProcessID
				for _, t := range m.AssignedTasks.ActiveTasks {
					for _, part := range t.Partitions {
						key := fmt.Sprintf("%s|%s|%d", proc, t.SubtopologyID, part)
						owners[key] = append(owners[key], "active on "+m.MemberID)
					}
				}
				for _, list := range [][]groupstate.TaskIDs{m.AssignedTasks.StandbyTasks, m.AssignedTasks.WarmupTasks} {
					for _, t := range list {
						for _, part := range t.Partitions {
							key := fmt.Sprintf("%s|%s|%d", proc, t.SubtopologyID, part)
							owners[key] = append(owners[key], "standby/warm-up on "+m.MemberID)
						}
					}
				}
			}
			var keys []string
			for k, roles := range owners {
				if len(roles) > 1 {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				parts := strings.SplitN(k, "|", 3)
				add("task-twice-on-process", "streams group %s: task %s_%s is owned %d times on process %s (%s)", g.GroupID, parts[1], parts[2], len(owners[k]), parts[0], strings.Join(owners[k], ", "))
			}
		}
	}
	for _, pt := range st.PendingTransactions() {
		var tps []string
		for _, o := range pt.Offsets {
			tps = append(tps, fmt.Sprintf("%s/%s-%d", o.GroupID, o.Topic, o.Partition))
		}
		add("open-transaction", "producer %d has a transaction open at the end of the log with %d pending offsets: %s", pt.ProducerID, len(pt.Offsets), strings.Join(tps, ", "))
	}
	for _, gid := range st.OffsetGroupIDs() {
		if _, ok := st.GroupType(gid); !ok {
			add("offsets-of-deleted-group", "group %s does not exist but has %d committed offsets", gid, len(st.Offsets(gid)))
		}
	}
	return out
}
