package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay/query"
)

type describeFlags struct {
	replayFlags
	group  string
	types  []string
	format string
	live   liveFlags // --bootstrap-server and friends (live.go)
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
	cmd.Flags().BoolVar(&f.fromSnapshot, "from-snapshot", false, fromSnapshotUsage)
	f.live.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.group, "group", "", "only this group")
	fl.StringSliceVar(&f.types, "type", nil, "only groups of these types: classic, consumer, share, streams (repeatable)")
	fl.StringVar(&f.format, "format", "table", "table or json")
	return cmd
}

// describeDoc is what describe prints, as a table or as JSON. The JSON's shape is part of
// coordlog's interface (docs/json/describe.schema.json); groups and offsets are written through
// jsondoc.go's types.
type describeDoc struct {
	SchemaVersion int    `json:"schemaVersion"`
	KafkaVersion  string `json:"kafkaVersion"`
	AtOffset      *int64 `json:"atOffset"` // null: the end of the log, a time, or P:OFFSET pairs
	// AtTime is --at-time as resolved (each partition's position says where it fell).
	AtTime     *string           `json:"atTime,omitempty"`
	Partitions []describePartDoc `json:"partitions"`
	Violations []describeViolDoc `json:"violations,omitempty"`
	// names resolves topic ids to names across every partition read (ids are the cluster's).
	names topicNames
}

type describePartDoc struct {
	state      groupstate.View // where the groups' offsets are read from, one group at a time
	Partition  int32           `json:"partition"`
	NextOffset int64           `json:"nextOffset"`
	// Position is where --at-offset or --at-time fell in this partition (absent at the end).
	Position *query.Position `json:"position,omitempty"`
	// Records is how many records this run replayed: all, or those after Snapshot.
	Records  int64         `json:"recordsReplayed"`
	Snapshot *restoredFrom `json:"snapshot,omitempty"` // --from-snapshot: the snapshot restored
	// TopicNames maps topic ids to names, as far as the log names them.
	TopicNames []topicName        `json:"topicNames,omitempty"`
	Groups     []describeGroupDoc `json:"groups"`
	// OrphanOffsets are committed offsets whose group no longer exists.
	OrphanOffsets       []groupstate.CommittedOffset    `json:"orphanOffsets,omitempty"`
	PendingTransactions []groupstate.PendingTransaction `json:"pendingTransactions,omitempty"`
}

type describeGroupDoc struct {
	groupstate.Group
	Offsets []groupstate.CommittedOffset `json:"offsets,omitempty"`
}

// withOffsets fills in the group's committed offsets from the partition's state. The document
// holds them for one group at a time, so that a log with millions of offsets prints in bounded
// memory.
func (p *describePartDoc) withOffsets(g describeGroupDoc) describeGroupDoc {
	g.Offsets = p.state.Offsets(g.GroupID)
	return g
}

type describeViolDoc struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Error     string `json:"error"`
}

type topicName struct {
	TopicID string `json:"topicId"`
	Name    string `json:"name"`
}

func parseGroupTypes(specs []string) (map[groupstate.GroupType]bool, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := map[groupstate.GroupType]bool{}
	for _, s := range specs {
		t := groupstate.GroupType(strings.ToLower(strings.TrimSpace(s)))
		switch t {
		case groupstate.GroupTypeClassic, groupstate.GroupTypeConsumer, groupstate.GroupTypeShare, groupstate.GroupTypeStreams:
			out[t] = true
		default:
			return nil, usageError{fmt.Errorf("--type %q: want classic, consumer, share or streams", s)}
		}
	}
	return out, nil
}

func runDescribe(cmd *cobra.Command, path string, f *describeFlags, stdout, stderr io.Writer) error {
	if f.format != "table" && f.format != "json" {
		return usageError{fmt.Errorf("--format must be table or json, not %q", f.format)}
	}
	types, err := parseGroupTypes(f.types)
	if err != nil {
		return err
	}
	var r *replayed
	if f.live.set() {
		r, err = replayLive(cmd, &f.replayFlags, &f.live, stderr)
	} else {
		r, err = replayInput(cmd, path, &f.replayFlags, nil, stderr)
	}
	if err != nil {
		return err
	}
	defer r.close()
	emit := func() error {
		doc := buildDescribe(r, f.group, types)
		out := bufio.NewWriter(stdout)
		defer out.Flush()
		if f.format == "json" {
			return writeDescribeJSON(out, doc)
		}
		printDescribe(out, doc, widthOf(stdout))
		return nil
	}
	if f.group != "" {
		if err := groupExists(r, f.group); err != nil {
			return err
		}
	}
	if err := emit(); err != nil {
		return err
	}
	return f.live.followUpdates(cmd.Context(), r, stderr, emit) // --follow (live.go)
}

func buildDescribe(r *replayed, group string, types map[groupstate.GroupType]bool) describeDoc {
	doc := describeDoc{SchemaVersion: schemaVersion, KafkaVersion: r.opts.Version.String(), Partitions: []describePartDoc{}, names: topicNames{}}
	doc.AtOffset, doc.AtTime = pointDoc(r.at)
	for i, res := range r.results {
		e := res.Engine
		st := e.State()
		pd := describePartDoc{state: st, Partition: e.Partition(), NextOffset: e.NextOffset(), Records: r.recordsReplayed(i), Snapshot: r.snapshotOf(i), Groups: []describeGroupDoc{}}
		if pos := r.position(i); pos != nil && !pos.AtEnd() {
			pd.Position = pos
		}
		for id, n := range st.TopicNames() {
			pd.TopicNames = append(pd.TopicNames, topicName{TopicID: id.String(), Name: n})
			doc.names[id.String()] = n
		}
		slices.SortFunc(pd.TopicNames, func(a, b topicName) int { return strings.Compare(a.TopicID, b.TopicID) })
		for _, g := range st.Groups() {
			if group != "" && g.GroupID != group || types != nil && !types[g.Type] {
				continue
			}
			pd.Groups = append(pd.Groups, describeGroupDoc{Group: g})
		}
		if types == nil {
			for _, gid := range st.OffsetGroupIDs() {
				if _, ok := st.GroupType(gid); ok || group != "" && gid != group {
					continue
				}
				pd.OrphanOffsets = append(pd.OrphanOffsets, st.Offsets(gid)...)
			}
			for _, pt := range st.PendingTransactions() {
				if group == "" || slices.ContainsFunc(pt.Offsets, func(o groupstate.CommittedOffset) bool { return o.GroupID == group }) {
					pd.PendingTransactions = append(pd.PendingTransactions, pt)
				}
			}
		}
		doc.Violations = append(doc.Violations, violationLines(e)...)
		doc.Partitions = append(doc.Partitions, pd)
	}
	return doc
}

func printDescribe(w io.Writer, doc describeDoc, width int) {
	for _, p := range doc.Partitions {
		replayed := plural(p.Records, "record") + " replayed"
		if p.Snapshot != nil {
			replayed = fmt.Sprintf("snapshot at offset %d and %s replayed after it", p.Snapshot.NextOffset, plural(p.Records, "record"))
		}
		fmt.Fprintf(w, "Partition %d: state at %s (next offset %d, %s, Kafka %s rules)\n",
			p.Partition, positionLabel(p.Position), p.NextOffset, replayed, doc.KafkaVersion)
		if len(p.Groups) == 0 {
			fmt.Fprintln(w, "  no groups")
		}
		for _, g := range p.Groups {
			fmt.Fprintln(w)
			printGroup(w, p.withOffsets(g), doc.names, width)
		}
		if len(p.OrphanOffsets) > 0 {
			fmt.Fprintf(w, "\nCommitted offsets of groups that no longer exist:\n")
			printOffsets(w, p.OrphanOffsets, true, width)
		}
		for _, pt := range p.PendingTransactions {
			fmt.Fprintf(w, "\nOpen transaction of producer %d (pending, not visible as committed offsets):\n", pt.ProducerID)
			printOffsets(w, pt.Offsets, true, width)
		}
		fmt.Fprintln(w)
	}
	for _, v := range doc.Violations {
		fmt.Fprintf(w, "violation: %s\n", v.Error)
	}
}

func strp(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func int32p(v *int32) string {
	if v == nil {
		return "-"
	}
	return strconv.Itoa(int(*v))
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

func intsLabel(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
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

func printGroup(w io.Writer, g describeGroupDoc, names map[string]string, width int) {
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
	if len(g.Offsets) > 0 {
		printOffsets(w, g.Offsets, false, width)
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

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func printOffsets(w io.Writer, offs []groupstate.CommittedOffset, withGroup bool, width int) {
	header := []string{"TOPIC", "PARTITION", "COMMITTED-OFFSET", "LEADER-EPOCH", "METADATA", "COMMITTED-AT", "RECORD-OFFSET"}
	if withGroup {
		header = append([]string{"GROUP"}, header...)
	}
	t := termtext.NewTable("  ", header...).Demote("LEADER-EPOCH", "RECORD-OFFSET")
	for _, o := range offs {
		cells := []string{o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.CommittedOffset, 10), epochCell(o.LeaderEpoch),
			strconv.Quote(o.Metadata), msTime(o.CommitTimestamp), strconv.FormatInt(o.RecordOffset, 10)}
		if withGroup {
			cells = append([]string{o.GroupID}, cells...)
		}
		t.Add(cells...)
	}
	t.Write(w, width)
}

// writeDescribeJSON writes doc exactly as json.Encoder with two-space indentation and no HTML
// escaping would, but one group at a time, each with its offsets read from the state just
// then: the whole document is never held.
func writeDescribeJSON(w *bufio.Writer, doc describeDoc) error {
	js := &jsonStream{w: w}
	js.raw("{\n")
	js.field(1, "schemaVersion", doc.SchemaVersion, true)
	js.field(1, "kafkaVersion", doc.KafkaVersion, true)
	js.field(1, "atOffset", doc.AtOffset, true)
	if doc.AtTime != nil {
		js.field(1, "atTime", doc.AtTime, true)
	}
	js.raw(indent(1) + `"partitions": [`)
	for i := range doc.Partitions {
		p := &doc.Partitions[i]
		js.sep(i, 2)
		js.raw("{\n")
		js.field(3, "partition", p.Partition, true)
		js.field(3, "nextOffset", p.NextOffset, true)
		if p.Position != nil {
			js.field(3, "position", p.Position, true)
		}
		js.field(3, "recordsReplayed", p.Records, true)
		if p.Snapshot != nil {
			js.field(3, "snapshot", p.Snapshot, true)
		}
		if len(p.TopicNames) > 0 {
			js.field(3, "topicNames", p.TopicNames, true)
		}
		js.raw(indent(3) + `"groups": [`)
		for j := range p.Groups {
			js.sep(j, 4)
			g := p.Groups[j].Group
			js.value(4, groupJSON(g, p.state.Offsets(g.GroupID), doc.names))
		}
		js.close(len(p.Groups), 3, "]")
		if len(p.OrphanOffsets) > 0 {
			js.raw(",\n")
			js.field(3, "orphanOffsets", offsetsJSON(p.OrphanOffsets), false)
		}
		if len(p.PendingTransactions) > 0 {
			js.raw(",\n")
			js.field(3, "pendingTransactions", pendingJSON(p.PendingTransactions), false)
		}
		js.raw("\n" + indent(2) + "}")
	}
	js.close(len(doc.Partitions), 1, "]")
	if len(doc.Violations) > 0 {
		js.raw(",\n")
		js.field(1, "violations", doc.Violations, false)
	}
	js.raw("\n}\n")
	return js.err
}

// jsonStream writes an indented JSON document piece by piece, matching json.Encoder's
// SetIndent("", "  ") output with HTML escaping off.
type jsonStream struct {
	w   *bufio.Writer
	err error
	buf bytes.Buffer
}

func indent(depth int) string { return strings.Repeat("  ", depth) }

func (j *jsonStream) raw(s string) {
	if j.err == nil {
		_, j.err = j.w.WriteString(s)
	}
}

// value writes v indented as an element at depth.
func (j *jsonStream) value(depth int, v any) {
	if j.err != nil {
		return
	}
	j.buf.Reset()
	enc := json.NewEncoder(&j.buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(indent(depth), "  ")
	if j.err = enc.Encode(v); j.err == nil {
		_, j.err = j.w.Write(bytes.TrimSuffix(j.buf.Bytes(), []byte("\n")))
	}
}

// field writes `"name": value` at depth, with a comma and newline when more follow.
func (j *jsonStream) field(depth int, name string, v any, more bool) {
	j.raw(indent(depth) + strconv.Quote(name) + ": ")
	j.value(depth, v)
	if more {
		j.raw(",\n")
	}
}

// sep starts element i of an array whose elements are at depth.
func (j *jsonStream) sep(i, depth int) {
	if i > 0 {
		j.raw(",")
	}
	j.raw("\n" + indent(depth))
}

// close ends an array of n elements whose key is at depth.
func (j *jsonStream) close(n, depth int, bracket string) {
	if n > 0 {
		j.raw("\n" + indent(depth))
	}
	j.raw(bracket)
}
