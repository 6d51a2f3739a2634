package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/cluster"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
	"github.com/coordlog/coordlog/replay/query"
)

type offsetsFlags struct {
	replayFlags
	group           string
	topics          []string
	topicPartitions []string
	format          string
	output          string
	live            liveFlags
}

func (f *offsetsFlags) registerSelection(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.group, "group", "", "only this group")
	fl.StringSliceVar(&f.topics, "topic", nil, "only offsets of this topic (repeatable)")
	fl.StringArrayVar(&f.topicPartitions, "topic-partition", nil, "only offsets of this partition of a topic: TOPIC:P[,P...] (repeatable; --partition selects __consumer_offsets partitions)")
}

func (f *offsetsFlags) filter() (query.OffsetFilter, error) {
	tps, err := query.ParseTopicPartitions(f.topicPartitions)
	if err != nil {
		return query.OffsetFilter{}, usageError{err}
	}
	flt := query.OffsetFilter{TopicPartitions: tps}
	if len(f.topics) > 0 {
		flt.Topics = map[string]bool{}
		for _, t := range f.topics {
			flt.Topics[t] = true
		}
	}
	return flt, nil
}

func newOffsetsCmd(stdout, stderr io.Writer) *cobra.Command {
	var f offsetsFlags
	cmd := &cobra.Command{
		Use:   "offsets <segments-dir|db> | --bootstrap-server HOST:PORT",
		Short: "Committed offsets, with the record that wrote each, and open transactional offsets",
		Long: `offsets replays the log and lists every committed offset with the log offset of the record that
wrote it and its commit time, then the offsets of transactions still open at that point
(pending: written by a producer whose COMMIT or ABORT marker has not been replayed), by producer
id. --at-offset and --at-time show them as they were then.

--topic and --topic-partition select partitions of the groups' topics (--partition selects
__consumer_offsets partitions, as everywhere). With --bootstrap-server the log is read from the
cluster and each offset is shown with its partition's log end offset and the lag, as
kafka-consumer-groups --describe prints them.

--format csv writes the committed offsets exactly as kafka-consumer-groups --reset-offsets
--from-file reads them (topic,partition,offset for one group; group,topic,partition,offset for
several) and prints on stderr the kafka-consumer-groups (or kafka-streams-groups) command line
that applies the file. "offsets restore" applies them itself, with a preview and a read-back.
--format json prints a document described by the JSON Schema docs/json/offsets.schema.json.`,
		Args: f.live.args(1, "one input: a __consumer_offsets-N directory, a log directory or a coordlog database"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if !f.live.set() {
				path = args[0]
			}
			return runOffsets(cmd, path, &f, stdout, stderr)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&f.fromSnapshot, "from-snapshot", false, fromSnapshotUsage)
	f.registerSelection(cmd)
	cmd.Flags().StringVar(&f.format, "format", "table", "table, json or csv (kafka-consumer-groups --reset-offsets --from-file)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "with --format csv: write the file here (default: stdout) and name it in the printed command")
	f.live.registerAs(cmd, "offsets-topic")
	cmd.AddCommand(newRestoreCmd(stdout, stderr))
	return cmd
}

// offsetsDoc is what offsets prints. Its JSON is written piece by piece (see runOffsets) and
// described by docs/json/offsets.schema.json.
type offsetsDoc struct {
	KafkaVersion string           `json:"kafkaVersion"`
	AtOffset     *int64           `json:"atOffset"`
	AtTime       *string          `json:"atTime,omitempty"`
	Partitions   []offsetsPartDoc `json:"partitions"`
}

type offsetsPartDoc struct {
	Partition           int32                           `json:"partition"`
	NextOffset          int64                           `json:"nextOffset"`
	Position            *query.Position                 `json:"position,omitempty"`
	Offsets             []groupstate.CommittedOffset    `json:"offsets"`
	PendingTransactions []groupstate.PendingTransaction `json:"pendingTransactions"`
}

// readOffsets replays the input (or the cluster) and checks --group: the state the offsets
// commands read. With marks (a log replayed from its start, not live) each partition's replay
// also marks the committed offsets by the commit that wrote them (explain.OffsetMarks).
func readOffsets(cmd *cobra.Command, path string, f *offsetsFlags, marks *offsetMarks, stderr io.Writer) (*replayed, error) {
	var r *replayed
	var err error
	switch {
	case f.live.set():
		r, err = replayLive(cmd, &f.replayFlags, &f.live, stderr)
	case marks != nil && !f.fromSnapshot:
		r, err = replayInputParallel(cmd, path, &f.replayFlags, marks.observer(f.group), stderr)
		marks.close()
	default:
		r, err = replayInput(cmd, path, &f.replayFlags, nil, stderr)
	}
	if err != nil {
		return nil, err
	}
	if f.group != "" {
		if err := groupExists(r, f.group); err != nil {
			r.close()
			var ue *query.UnknownGroupError
			if len(f.partitions) > 0 && errors.As(err, &ue) {
				return nil, fmt.Errorf("%w (only __consumer_offsets %s %s read: --partition selects them; a partition of the group's topic is --topic-partition TOPIC:N)", err, pluralWord(len(f.partitions), "partition", "partitions"), intsLabel(f.partitions)+pluralWord(len(f.partitions), " was", " were"))
			}
			return nil, err
		}
	}
	return r, nil
}

func runOffsets(cmd *cobra.Command, path string, f *offsetsFlags, stdout, stderr io.Writer) error {
	if err := f.live.noFollow(cmd); err != nil {
		return err
	}
	switch f.format {
	case "table", "json", "csv":
	default:
		return usageError{fmt.Errorf("--format must be table, json or csv, not %q", f.format)}
	}
	if f.output != "" && f.format != "csv" {
		return usageError{errors.New("--output goes with --format csv")}
	}
	flt, err := f.filter()
	if err != nil {
		return err
	}
	var marks *offsetMarks
	if f.format != "csv" {
		marks = &offsetMarks{}
	}
	r, err := readOffsets(cmd, path, f, marks, stderr)
	if err != nil {
		return err
	}
	defer r.close()
	keep := func(o groupstate.CommittedOffset) bool { return flt.Keep(o.Topic, o.Partition) }
	// Committed offsets are read from the state one group at a time while printing, so that
	// millions of them print in bounded memory.
	groupsOf := func(i int) []string {
		if f.group != "" {
			return []string{f.group}
		}
		return r.results[i].Engine.State().OffsetGroupIDs()
	}
	offsetsOf := func(i int, g string) []groupstate.CommittedOffset {
		offs := r.results[i].Engine.State().Offsets(g)
		if flt.Empty() {
			return offs
		}
		return slices.DeleteFunc(offs, func(o groupstate.CommittedOffset) bool { return !keep(o) })
	}
	if !flt.Empty() {
		var all []groupstate.CommittedOffset
		for i := range r.results {
			for _, g := range groupsOf(i) {
				all = append(all, r.results[i].Engine.State().Offsets(g)...)
			}
		}
		for _, m := range flt.Missing(all) {
			fmt.Fprintf(stderr, "note: no committed offset of %s in the selection\n", m)
		}
	}
	if f.format == "csv" {
		return writeOffsetsCSV(r, f, groupsOf, offsetsOf, stdout, stderr)
	}
	lagOn := f.live.set() && r.at.IsEnd()
	var logs cluster.TopicLogs
	if lagOn {
		if logs, err = liveLogs(cmd, &f.live, r, groupsOf, offsetsOf); err != nil {
			return err
		}
	}
	doc := offsetsDoc{KafkaVersion: r.opts.Version.String(), Partitions: []offsetsPartDoc{}}
	doc.AtOffset, doc.AtTime = pointDoc(r.at)
	for i, res := range r.results {
		st := res.Engine.State()
		pd := offsetsPartDoc{Partition: res.Engine.Partition(), NextOffset: res.Engine.NextOffset(),
			PendingTransactions: []groupstate.PendingTransaction{}}
		if pos := r.position(i); pos != nil && !pos.AtEnd() {
			pd.Position = pos
		}
		for _, pt := range st.PendingTransactions() {
			var kept []groupstate.CommittedOffset
			for _, o := range pt.Offsets {
				if (f.group == "" || o.GroupID == f.group) && keep(o) {
					kept = append(kept, o)
				}
			}
			if len(kept) > 0 {
				pd.PendingTransactions = append(pd.PendingTransactions, groupstate.PendingTransaction{ProducerID: pt.ProducerID, Offsets: kept})
			}
		}
		doc.Partitions = append(doc.Partitions, pd)
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	width := widthOf(stdout)
	if f.format == "json" {
		js := &jsonStream{w: out}
		js.raw("{\n")
		js.field(1, "schemaVersion", schemaVersion, true)
		js.field(1, "kafkaVersion", doc.KafkaVersion, true)
		js.field(1, "atOffset", doc.AtOffset, true)
		if doc.AtTime != nil {
			js.field(1, "atTime", doc.AtTime, true)
		}
		js.raw(indent(1) + `"partitions": [`)
		for i, p := range doc.Partitions {
			js.sep(i, 2)
			js.raw("{\n")
			js.field(3, "partition", p.Partition, true)
			js.field(3, "nextOffset", p.NextOffset, true)
			if p.Position != nil {
				js.field(3, "position", p.Position, true)
			}
			js.raw(indent(3) + `"offsets": [`)
			n := 0
			for _, g := range groupsOf(i) {
				offs := offsetsOf(i, g)
				if lagOn {
					for _, row := range cluster.Lag(offs, logs) {
						js.sep(n, 4)
						js.value(4, lagJSON(row))
						n++
					}
					continue
				}
				for _, o := range offs {
					js.sep(n, 4)
					d := offsetJSON(o)
					d.Mark = markJSON(marks.of(p.Partition, o))
					js.value(4, d)
					n++
				}
			}
			js.close(n, 3, "],\n")
			js.field(3, "pendingTransactions", pendingJSON(p.PendingTransactions), false)
			js.raw("\n" + indent(2) + "}")
		}
		js.close(len(doc.Partitions), 1, "]")
		js.raw("\n}\n")
		return js.err
	}
	for i, p := range doc.Partitions {
		total := 0
		for _, g := range groupsOf(i) {
			total += len(offsetsOf(i, g))
		}
		at := ""
		if p.Position != nil {
			at = " at " + positionLabel(p.Position)
		}
		fmt.Fprintf(out, "Partition %d%s (next offset %d): %s\n", p.Partition, at, p.NextOffset, plural(int64(total), "committed offset"))
		if total > 0 {
			if lagOn {
				printLag(out, groupsOf(i), func(g string) []groupstate.CommittedOffset { return offsetsOf(i, g) }, logs, width)
			} else {
				// A MARK column only where a committed offset has one (a rewind, a commit while
				// the group was empty or by no owner): counted first, so that the layout of
				// every block is known.
				marked := map[string]int{}
				for _, g := range groupsOf(i) {
					for _, o := range offsetsOf(i, g) {
						if mk := marks.of(p.Partition, o); mk != nil {
							for _, k := range mk.Marks {
								marked[string(k)]++
							}
						}
					}
				}
				header := offsetsHeader
				if len(marked) > 0 {
					header = append(slices.Clone(offsetsHeader), "MARK")
				}
				t := termtext.NewTable("  ", header...).Demote("LEADER-EPOCH", "RECORD-OFFSET")
				for _, g := range groupsOf(i) {
					for _, o := range offsetsOf(i, g) {
						cells := offsetCells(o)
						if len(marked) > 0 {
							cells = append(cells, "-")
							if mk := marks.of(p.Partition, o); mk != nil {
								cells[len(cells)-1] = mk.Label(o.CommittedOffset)
							}
						}
						t.Add(cells...)
						if t.Len() == 10000 {
							t.Write(out, width) // the layout holds for every block: memory stays bounded
						}
					}
				}
				t.Write(out, width)
				if len(marked) > 0 {
					var kinds []string
					for _, k := range slices.Sorted(maps.Keys(marked)) {
						kinds = append(kinds, fmt.Sprintf("%s %d", k, marked[k]))
					}
					fmt.Fprintf(out, "marked by the commit that wrote them: %s (replay check and timeline say more)\n", strings.Join(kinds, ", "))
				}
			}
		}
		for _, pt := range p.PendingTransactions {
			fmt.Fprintf(out, "Open transaction of producer %d: %s pending (not committed)\n", pt.ProducerID, plural(int64(len(pt.Offsets)), "offset"))
			t := termtext.NewTable("  ", offsetsHeader...).Demote("LEADER-EPOCH", "RECORD-OFFSET")
			for _, o := range pt.Offsets {
				t.Add(offsetCells(o)...)
			}
			t.Write(out, width)
		}
	}
	if f.live.set() && !r.at.IsEnd() {
		fmt.Fprintln(stderr, "note: no lag: the offsets are those of a point in the past, the log end offsets those of now")
	}
	return nil
}

// offsetMarks are the marks of every replayed partition's committed offsets (a nil
// *offsetMarks marks nothing).
type offsetMarks struct {
	mu    sync.Mutex
	parts map[int32]*explain.OffsetMarks
}

// observer makes each partition's marks (partitions may replay in parallel).
func (m *offsetMarks) observer(group string) func(p int32) replay.Observer {
	return func(p int32) replay.Observer {
		om := explain.NewOffsetMarks(p, explain.Options{Group: group})
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.parts == nil {
			m.parts = map[int32]*explain.OffsetMarks{}
		}
		m.parts[p] = om
		return om
	}
}

func (m *offsetMarks) close() {
	for _, om := range m.parts {
		om.Close()
	}
}

// of returns the mark of committed offset o of partition p, nil when it has none.
func (m *offsetMarks) of(p int32, o groupstate.CommittedOffset) *explain.OffsetMark {
	if m == nil || m.parts[p] == nil {
		return nil
	}
	return m.parts[p].Of(o.GroupID, o.Topic, o.Partition, o.RecordOffset)
}

// liveLogs reads the log end offsets of every topic the selected offsets name.
func liveLogs(cmd *cobra.Command, lf *liveFlags, r *replayed, groupsOf func(int) []string, offsetsOf func(int, string) []groupstate.CommittedOffset) (cluster.TopicLogs, error) {
	var topics []string
	for i := range r.results {
		for _, g := range groupsOf(i) {
			topics = append(topics, cluster.Topics(offsetsOf(i, g))...)
		}
	}
	slices.Sort(topics)
	c, err := lf.cluster()
	if err != nil {
		return cluster.TopicLogs{}, err
	}
	defer c.Close()
	logs, err := c.LogOffsets(cmd.Context(), slices.Compact(topics))
	if err != nil {
		return logs, fmt.Errorf("log end offsets from %s: %w", lf.bootstrap, err)
	}
	return logs, nil
}

func printLag(w io.Writer, groups []string, offsetsOf func(string) []groupstate.CommittedOffset, logs cluster.TopicLogs, width int) {
	t := termtext.NewTable("  ", "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "LEADER-EPOCH", "METADATA", "COMMITTED-AT", "RECORD-OFFSET").
		Demote("LEADER-EPOCH", "RECORD-OFFSET")
	for _, g := range groups {
		for _, row := range cluster.Lag(offsetsOf(g), logs) {
			end, lag := "-", "-"
			if row.LogEnd != nil {
				end, lag = strconv.FormatInt(*row.LogEnd, 10), strconv.FormatInt(*row.Lag, 10)
			}
			t.Add(row.GroupID, row.Topic, strconv.Itoa(int(row.Partition)), strconv.FormatInt(row.CommittedOffset.CommittedOffset, 10), end, lag,
				epochCell(row.LeaderEpoch), strconv.Quote(row.Metadata), msTime(row.CommitTimestamp), strconv.FormatInt(row.RecordOffset, 10))
		}
	}
	t.Write(w, width)
	for _, g := range groups {
		for _, row := range cluster.Lag(offsetsOf(g), logs) {
			if row.Missing != "" {
				fmt.Fprintf(w, "  %s %s:%d: %s\n", row.GroupID, row.Topic, row.Partition, row.Missing)
			}
		}
	}
}

// writeOffsetsCSV writes the selected committed offsets as kafka-consumer-groups --from-file
// reads them, and the command line that applies them on stderr.
func writeOffsetsCSV(r *replayed, f *offsetsFlags, groupsOf func(int) []string, offsetsOf func(int, string) []groupstate.CommittedOffset, stdout, stderr io.Writer) error {
	var all []groupstate.CommittedOffset
	types := map[string]groupstate.GroupType{}
	pending := 0
	for i, res := range r.results {
		st := res.Engine.State()
		for _, g := range groupsOf(i) {
			offs := offsetsOf(i, g)
			if len(offs) == 0 {
				continue
			}
			all = append(all, offs...)
			t, ok := st.GroupType(g)
			if !ok {
				t = groupstate.GroupTypeClassic // offsets of a deleted group: a simple group again
			}
			types[g] = t
		}
		for _, pt := range st.PendingTransactions() {
			for _, o := range pt.Offsets {
				if f.group == "" || o.GroupID == f.group {
					pending++
				}
			}
		}
	}
	if len(all) == 0 {
		return errors.New("no committed offsets to write (nothing in the selection)")
	}
	slices.SortFunc(all, func(a, b groupstate.CommittedOffset) int {
		if c := strings.Compare(a.GroupID, b.GroupID); c != 0 {
			return c
		}
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	w, file := stdout, "FILE"
	if f.output != "" {
		fh, err := os.Create(f.output)
		if err != nil {
			return err
		}
		defer fh.Close()
		w, file = fh, f.output
	}
	if err := query.WriteResetCSV(w, all, len(types) > 1); err != nil {
		return err
	}
	if f.output != "" {
		if err := w.(*os.File).Close(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s of %s to %s\n", plural(int64(len(all)), "offset"), plural(int64(len(types)), "group"), f.output)
	}
	bootstrap := f.live.bootstrap
	if bootstrap == "" {
		bootstrap = "HOST:PORT"
	}
	// Lines to paste into a shell as they are: comments say so on every line.
	fmt.Fprintln(verbatim(stderr), "# apply with Kafka's own tool (dry run first; then --execute in place of")
	fmt.Fprintln(verbatim(stderr), "# --dry-run, while the group has no members):")
	for _, c := range query.ResetCommands(types, bootstrap, file) {
		fmt.Fprintln(verbatim(stderr), c.Line())
		if c.Warning != "" {
			fmt.Fprintln(verbatim(stderr), "# note:", c.Warning)
		}
	}
	if pending > 0 {
		fmt.Fprintf(verbatim(stderr), "# note: %s pending in open transactions %s not committed and not in the file\n", plural(int64(pending), "offset"), pluralWord(pending, "is", "are"))
	}
	return nil
}

var offsetsHeader = []string{"GROUP", "TOPIC", "PARTITION", "COMMITTED-OFFSET", "LEADER-EPOCH", "METADATA", "COMMITTED-AT", "RECORD-OFFSET"}

func offsetCells(o groupstate.CommittedOffset) []string {
	return []string{o.GroupID, o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.CommittedOffset, 10), epochCell(o.LeaderEpoch),
		strconv.Quote(o.Metadata), msTime(o.CommitTimestamp), strconv.FormatInt(o.RecordOffset, 10)}
}

// epochCell renders a leader epoch for a table: "-" for none (-1), as kafka-consumer-groups
// prints it.
func epochCell(e int32) string {
	if e < 0 {
		return "-"
	}
	return strconv.Itoa(int(e))
}

// msTime renders a Kafka millisecond timestamp in UTC.
func msTime(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
