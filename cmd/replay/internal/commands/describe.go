package commands

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay/jsondoc"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

type describeFlags struct {
	replayFlags
	live          liveFlags // --bootstrap-server and friends
	group, format string
	types         []string
}

func newDescribeCmd(stdout, stderr io.Writer) *cobra.Command {
	var f describeFlags
	cmd := &cobra.Command{
		Use:   "describe <segments-dir|db> | --bootstrap-server HOST:PORT",
		Short: "Rebuild the coordinator state by replay and describe its groups",
		Long: `describe replays the log (Kafka's replay rules, --kafka-version) and prints every group: type,
state, epochs, members with their current and target assignments (partitions of consumer and
share groups, tasks of streams groups), the topology of streams groups and the committed
offsets. --at-offset shows the state as it was after that offset.

The table reads like kafka-consumer-groups --describe --members --verbose and
kafka-streams-groups --describe; where the members do not fit the width, each member is a
block of one field per line (--wide keeps one line per member). --format json prints a
document described by the JSON Schema docs/json/describe.schema.json.

Topic ids are shown as names where the log itself names them (offset commits of Kafka 4.1+
carry topic ids, share-group state metadata and 4.0 partition metadata carry both).`,
		Args: f.live.args(1, "one input: a __consumer_offsets-N directory, a log directory or a coordlog database"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.live.set() {
				return runDescribe(cmd, "", &f, stdout, stderr)
			}
			return runDescribe(cmd, args[0], &f, stdout, stderr)
		},
	}
	f.register(cmd)
	f.registerFromSnapshot(cmd)
	f.live.registerAs(cmd, "topic")
	fl := cmd.Flags()
	fl.StringVar(&f.group, "group", "", "only this group")
	fl.StringSliceVar(&f.types, "type", nil, "only groups of these types: classic, consumer, share, streams (repeatable)")
	fl.StringVar(&f.format, "format", "table", "table or json")
	return cmd
}

func runDescribe(cmd *cobra.Command, path string, f *describeFlags, stdout, stderr io.Writer) error {
	if f.format != "table" && f.format != "json" {
		return usageError{fmt.Errorf("--format must be table or json, not %q", f.format)}
	}
	types, err := parseGroupTypes(f.types)
	if err != nil {
		return err
	}
	r, err := replayInput(cmd, &f.replayFlags, replayRequest{path: path, live: &f.live}, stderr)
	if err != nil {
		return err
	}
	defer r.Source.Close()
	filter := query.DescribeFilter{Group: f.group, Types: types}
	emit := func() error {
		d := query.Describe(r.Views(), filter)
		if f.format == "json" {
			enc := jsondoc.NewEncoder(stdout)
			enc.SetEscapeHTML(false)
			return enc.Encode(jsondoc.NewDescribe(r, d))
		}
		out := bufio.NewWriter(stdout)
		defer out.Flush()
		printDescribe(out, r, d, widthOf(stdout))
		return nil
	}
	if f.group != "" {
		if err := r.FindGroup(f.group); err != nil {
			return err
		}
	}
	if err := emit(); err != nil {
		return err
	}
	if !f.live.follow {
		return nil
	}
	return r.Follow(cmd.Context(), f.live.interval, func() error {
		fmt.Fprintf(stderr, "--- %s: state updated\n", time.Now().UTC().Format(time.RFC3339))
		return emit()
	})
}

func printDescribe(w io.Writer, r *session.Replayed, d query.Description, width int) {
	for i, p := range r.Partitions {
		pd := &d.Partitions[i]
		replayed := plural(p.RecordsReplayed(), "record") + " replayed"
		if s := p.Snapshot(); s != nil {
			replayed = fmt.Sprintf("snapshot at offset %d and %s replayed after it", s.NextOffset, plural(p.RecordsReplayed(), "record"))
		}
		fmt.Fprintf(w, "Partition %d: state at %s (next offset %d, %s, Kafka %s rules)\n",
			p.Engine.Partition(), p.Position.Label(), p.Engine.NextOffset(), replayed, r.Options.Version)
		groups := 0
		for g := range pd.Groups() {
			fmt.Fprintln(w)
			printGroup(w, g, pd.View.Offsets(g.GroupID), d.Names, width)
			groups++
		}
		if groups == 0 {
			fmt.Fprintln(w, "  no groups")
		}
		if len(pd.OrphanOffsets) > 0 {
			fmt.Fprintf(w, "\nCommitted offsets of groups that no longer exist:\n")
			printOffsets(w, pd.OrphanOffsets, true, width)
		}
		for _, pt := range pd.PendingTransactions {
			fmt.Fprintf(w, "\nOpen transaction of producer %d (pending, not visible as committed offsets):\n", pt.ProducerID)
			printOffsets(w, pt.Offsets, true, width)
		}
		fmt.Fprintln(w)
	}
	for _, p := range r.Partitions {
		for _, v := range jsondoc.Violations(p.Engine) {
			fmt.Fprintf(w, "violation: %s\n", v.Error)
		}
	}
}

func topicLabel(id groupstate.Uuid, names map[string]string) string {
	if n, ok := names[id.String()]; ok {
		return n
	}
	return id.String()
}

// partitionsLabel renders topic partitions as "orders:0,1;payments:2".
func partitionsLabel[T any](tps []T, get func(T) (groupstate.Uuid, []int32), names map[string]string) string {
	if len(tps) == 0 {
		return "-"
	}
	var parts []string
	for _, tp := range tps {
		id, ps := get(tp)
		parts = append(parts, topicLabel(id, names)+":"+intsLabel(ps))
	}
	slices.Sort(parts)
	return strings.Join(parts, ";")
}

func withEpochs(t groupstate.TopicPartitionsWithEpochs) (groupstate.Uuid, []int32) {
	return t.TopicID, t.Partitions
}

func plain(t groupstate.TopicPartitions) (groupstate.Uuid, []int32) { return t.TopicID, t.Partitions }

func tasksLabel[T any](ts []T, get func(T) (string, []int32)) string {
	if len(ts) == 0 {
		return "-"
	}
	var parts []string
	for _, t := range ts {
		id, ps := get(t)
		parts = append(parts, id+":"+intsLabel(ps))
	}
	return strings.Join(parts, ";")
}

func taskE(t groupstate.TaskIDsWithEpochs) (string, []int32) { return t.SubtopologyID, t.Partitions }
func task(t groupstate.TaskIDs) (string, []int32)            { return t.SubtopologyID, t.Partitions }

func printGroup(w io.Writer, g groupstate.Group, offs []groupstate.CommittedOffset, names map[string]string, width int) {
	switch {
	case g.Classic != nil:
		printClassicGroup(w, g.GroupID, g.Classic, width)
	case g.Consumer != nil:
		printConsumerGroup(w, g.GroupID, g.Consumer, names, width)
	case g.Share != nil:
		printShareGroup(w, g.GroupID, g.Share, names, width)
	case g.Streams != nil:
		printStreamsGroup(w, g.GroupID, g.Streams, width)
	}
	if len(offs) > 0 {
		printOffsets(w, offs, false, width)
	}
}

func printClassicGroup(w io.Writer, id string, c *groupstate.ClassicGroup, width int) {
	fmt.Fprintf(w, "GROUP %s  TYPE classic  STATE %s  PROTOCOL-TYPE %q  GENERATION %d  PROTOCOL %s  LEADER %s  MEMBERS %d\n",
		id, c.State, c.ProtocolType, c.Generation, strp(c.Protocol), strp(c.Leader), len(c.Members))
	if len(c.Members) > 0 {
		t := termtext.NewVerticalTable("  ", "MEMBER-ID", "GROUP-INSTANCE-ID", "CLIENT-ID", "HOST", "SESSION-TIMEOUT", "REBALANCE-TIMEOUT", "SUBSCRIPTION", "ASSIGNMENT")
		for _, m := range c.Members {
			sub, asg := "(not decoded)", "(not decoded)"
			if m.ProtocolDecoded {
				sub = strings.Join(m.SubscribedTopics, ",")
				var parts []string
				for _, tp := range m.AssignedPartitions {
					parts = append(parts, tp.Topic+":"+intsLabel(tp.Partitions))
				}
				asg = strings.Join(parts, ";")
			}
			t.Add(m.MemberID, strp(m.GroupInstanceID), m.ClientID, m.ClientHost,
				strconv.Itoa(int(m.SessionTimeoutMs)), strconv.Itoa(int(m.RebalanceTimeoutMs)), dash(sub), dash(asg))
		}
		t.Write(w, width)
	}
}

func printConsumerGroup(w io.Writer, id string, c *groupstate.ConsumerGroup, names map[string]string, width int) {
	fmt.Fprintf(w, "GROUP %s  TYPE consumer  STATE %s  GROUP-EPOCH %d  ASSIGNMENT-EPOCH %d  MEMBERS %d\n",
		id, c.State, c.GroupEpoch, c.AssignmentEpoch, len(c.Members))
	target := map[string][]groupstate.TopicPartitions{}
	for _, ta := range c.TargetAssignment {
		target[ta.MemberID] = ta.Partitions
	}
	if len(c.Members) > 0 {
		t := termtext.NewVerticalTable("  ", "MEMBER-ID", "INSTANCE-ID", "CLIENT-ID", "HOST", "MEMBER-EPOCH", "STATE", "SUBSCRIPTION", "CURRENT-ASSIGNMENT", "PENDING-REVOCATION", "TARGET-ASSIGNMENT")
		for _, m := range c.Members {
			subs := slices.Clone(m.SubscribedTopicNames)
			if m.SubscribedTopicRegex != nil && *m.SubscribedTopicRegex != "" {
				subs = append(subs, "regex "+*m.SubscribedTopicRegex)
			}
			sub := strings.Join(subs, ",")
			t.Add(m.MemberID, strp(m.InstanceID), m.ClientID, m.ClientHost,
				strconv.Itoa(int(m.MemberEpoch)), m.StateName, dash(sub),
				partitionsLabel(m.AssignedPartitions, withEpochs, names), partitionsLabel(m.PartitionsPendingRevocation, withEpochs, names),
				partitionsLabel(target[m.MemberID], plain, names))
			delete(target, m.MemberID)
		}
		t.Write(w, width)
	}
	for _, mid := range slices.Sorted(maps.Keys(target)) { // targets of members without metadata
		fmt.Fprintf(w, "  target assignment for member %s that has no metadata record: %s\n", mid, partitionsLabel(target[mid], plain, names))
	}
	for _, re := range c.ResolvedRegularExpressions {
		fmt.Fprintf(w, "  regex %q resolved to [%s] (metadata version %d)\n", re.Regex, strings.Join(re.Topics, ","), re.Version)
	}
}

func printShareGroup(w io.Writer, id string, s *groupstate.ShareGroup, names map[string]string, width int) {
	fmt.Fprintf(w, "GROUP %s  TYPE share  STATE %s  GROUP-EPOCH %d  ASSIGNMENT-EPOCH %d  MEMBERS %d\n",
		id, s.State, s.GroupEpoch, s.AssignmentEpoch, len(s.Members))
	target := map[string][]groupstate.TopicPartitions{}
	for _, ta := range s.TargetAssignment {
		target[ta.MemberID] = ta.Partitions
	}
	if len(s.Members) > 0 {
		t := termtext.NewVerticalTable("  ", "MEMBER-ID", "CLIENT-ID", "HOST", "MEMBER-EPOCH", "STATE", "SUBSCRIPTION", "CURRENT-ASSIGNMENT", "TARGET-ASSIGNMENT")
		for _, m := range s.Members {
			t.Add(m.MemberID, m.ClientID, m.ClientHost, strconv.Itoa(int(m.MemberEpoch)), m.StateName,
				dash(strings.Join(m.SubscribedTopicNames, ",")), partitionsLabel(m.AssignedPartitions, plain, names),
				partitionsLabel(target[m.MemberID], plain, names))
		}
		t.Write(w, width)
	}
}

func printStreamsGroup(w io.Writer, id string, s *groupstate.StreamsGroup, width int) {
	topo := "-"
	if s.Topology != nil {
		topo = strconv.Itoa(int(s.Topology.Epoch))
	}
	fmt.Fprintf(w, "GROUP %s  TYPE streams  STATE %s  GROUP-EPOCH %d  ASSIGNMENT-EPOCH %d  TOPOLOGY-EPOCH %s  VALIDATED-TOPOLOGY-EPOCH %d  MEMBERS %d\n",
		id, s.State, s.GroupEpoch, s.AssignmentEpoch, topo, s.ValidatedTopologyEpoch, len(s.Members))
	if len(s.LastAssignmentConfigs) > 0 {
		var kv []string
		for _, c := range s.LastAssignmentConfigs {
			kv = append(kv, c.Key+"="+c.Value)
		}
		fmt.Fprintf(w, "  assignment configs: %s\n", strings.Join(kv, ", "))
	}
	if s.Topology != nil {
		// Fields two spaces apart, so that a narrow terminal wraps between them.
		for _, st := range s.Topology.Subtopologies {
			fmt.Fprintf(w, "  subtopology %s:  sources [%s]", st.SubtopologyID, strings.Join(st.SourceTopics, ","))
			if len(st.SourceTopicRegex) > 0 {
				fmt.Fprintf(w, "  source regexes [%s]", strings.Join(st.SourceTopicRegex, ","))
			}
			var rs, cl []string
			for _, t := range st.RepartitionSourceTopics {
				rs = append(rs, t.Name)
			}
			for _, t := range st.StateChangelogTopics {
				cl = append(cl, t.Name)
			}
			fmt.Fprintf(w, "  repartition sources [%s]  repartition sinks [%s]  changelogs [%s]\n",
				strings.Join(rs, ","), strings.Join(st.RepartitionSinkTopics, ","), strings.Join(cl, ","))
		}
	}
	target := map[string]groupstate.StreamsMemberTarget{}
	for _, ta := range s.TargetAssignment {
		target[ta.MemberID] = ta
	}
	if len(s.Members) > 0 {
		t := termtext.NewVerticalTable("  ", "MEMBER-ID", "PROCESS-ID", "CLIENT-ID", "HOST", "ENDPOINT", "MEMBER-EPOCH", "STATE", "ACTIVE", "STANDBY", "WARMUP", "PENDING-REVOCATION", "TARGET-ACTIVE", "TARGET-STANDBY", "TARGET-WARMUP")
		for _, m := range s.Members {
			proc, client, host, endpoint := "-", "-", "-", "-"
			if md := m.Metadata; md != nil {
				proc, client, host = md.ProcessID, md.ClientID, md.ClientHost
				if md.UserEndpoint != nil {
					endpoint = fmt.Sprintf("%s:%d", md.UserEndpoint.Host, md.UserEndpoint.Port)
				}
			}
			act, stb, wrm, pend := "-", "-", "-", "-"
			if a := m.AssignedTasks; a != nil {
				act, stb, wrm = tasksLabel(a.ActiveTasks, taskE), tasksLabel(a.StandbyTasks, task), tasksLabel(a.WarmupTasks, task)
			}
			if p := m.TasksPendingRevocation; p != nil {
				pend = tasksLabel(p.ActiveTasks, taskE)
			}
			ta := target[m.MemberID]
			t.Add(m.MemberID, proc, client, host, endpoint,
				int32p(m.MemberEpoch), dash(m.StateName), act, stb, wrm, pend,
				tasksLabel(ta.ActiveTasks, task), tasksLabel(ta.StandbyTasks, task), tasksLabel(ta.WarmupTasks, task))
		}
		t.Write(w, width)
	}
}
