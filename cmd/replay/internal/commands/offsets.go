package commands

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

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay/explain"
	"github.com/coordlog/coordlog/replay/jsondoc"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

type offsetsFlags struct {
	replayFlags
	selectionFlags
	live           liveFlags
	format, output string
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
	f.replayFlags.register(cmd)
	f.registerFromSnapshot(cmd)
	f.selectionFlags.register(cmd)
	cmd.Flags().StringVar(&f.format, "format", "table", "table, json or csv (kafka-consumer-groups --reset-offsets --from-file)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "with --format csv: write the file here (default: stdout) and name it in the printed command")
	f.live.registerAs(cmd, "offsets-topic")
	return cmd
}

// offsetMarks makes each partition's marks of committed offsets by the commit that wrote them
// (explain.OffsetMarks: a rewind, a commit while the group was empty or by no owner).
func offsetMarks(group string) *session.Observers[*explain.OffsetMarks] {
	return &session.Observers[*explain.OffsetMarks]{New: func(p int32) *explain.OffsetMarks {
		return explain.NewOffsetMarks(p, explain.Options{Group: group})
	}}
}

// markOf returns the mark of committed offset o of partition p, nil when it has none.
func markOf(marks *session.Observers[*explain.OffsetMarks]) func(p int32, o groupstate.CommittedOffset) *explain.OffsetMark {
	return func(p int32, o groupstate.CommittedOffset) *explain.OffsetMark {
		if om, ok := marks.Of(p); ok {
			return om.Of(o.GroupID, o.Topic, o.Partition, o.RecordOffset)
		}
		return nil
	}
}

// readOffsets replays the input (or the cluster) and checks --group: the state the offsets
// commands read. With marks (a log replayed from its start, not live) each partition's replay
// also marks the committed offsets by the commit that wrote them.
func readOffsets(cmd *cobra.Command, path string, f *replayFlags, group string, live *liveFlags, marks *session.Observers[*explain.OffsetMarks], stderr io.Writer) (*session.Replayed, error) {
	rr := replayRequest{path: path, live: live}
	if marks != nil && !live.set() && !f.fromSnapshot {
		rr.observer = marks.Observer
	}
	r, err := replayInput(cmd, f, rr, stderr)
	if err != nil {
		return nil, err
	}
	if rr.observer != nil {
		for _, om := range marks.All() {
			om.Close()
		}
	}
	if group != "" {
		if err := r.FindGroup(group); err != nil {
			r.Source.Close()
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
	sel, err := f.selection()
	if err != nil {
		return err
	}
	var marks *session.Observers[*explain.OffsetMarks]
	if f.format != "csv" {
		marks = offsetMarks(f.group)
	}
	r, err := readOffsets(cmd, path, &f.replayFlags, f.group, &f.live, marks, stderr)
	if err != nil {
		return err
	}
	defer r.Source.Close()
	for _, m := range sel.Missing(r.Views()) {
		fmt.Fprintf(stderr, "note: no committed offset of %s in the selection\n", m)
	}
	if f.format == "csv" {
		return writeOffsetsCSV(r, f, sel, stdout, stderr)
	}
	opts := jsondoc.OffsetsOptions{Mark: markOf(marks)}
	if f.live.set() && r.At.IsEnd() {
		// Committed offsets of now: each with its partition's log end offset and the lag.
		if opts.Ends, err = logEnds(cmd, &f.live, sel.Topics(r.Views())); err != nil {
			return err
		}
	}
	if f.format == "json" {
		enc := jsondoc.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(jsondoc.NewOffsets(r, sel, opts))
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	for _, p := range r.Partitions {
		printOffsetsPartition(out, p, sel, opts, widthOf(stdout))
	}
	if f.live.set() && !r.At.IsEnd() {
		fmt.Fprintln(stderr, "note: no lag: the offsets are those of a point in the past, the log end offsets those of now")
	}
	return nil
}

// logEnds reads the log end offsets of topics from the cluster.
func logEnds(cmd *cobra.Command, lf *liveFlags, topics []string) (query.LogEnds, error) {
	c, err := lf.cluster()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	logs, err := c.LogOffsets(cmd.Context(), topics)
	if err != nil {
		return nil, fmt.Errorf("log end offsets from %s: %w", lf.bootstrap, err)
	}
	return logs, nil
}

// printOffsetsPartition writes one partition's committed offsets, with their lag or their
// marks, and its open transactions.
func printOffsetsPartition(w io.Writer, p session.Partition, sel query.OffsetSelection, opts jsondoc.OffsetsOptions, width int) {
	st, part := p.Engine.State(), p.Engine.Partition()
	total := sel.Count(st)
	at := ""
	if p.Position != nil && !p.Position.AtEnd() {
		at = " at " + p.Position.Label()
	}
	fmt.Fprintf(w, "Partition %d%s (next offset %d): %s\n", part, at, p.Engine.NextOffset(), plural(int64(total), "committed offset"))
	switch {
	case total > 0 && opts.Ends != nil:
		printLag(w, st, sel, opts.Ends, width)
	case total > 0:
		printMarked(w, part, st, sel, opts.Mark, width)
	}
	for _, pt := range sel.Pending(st) {
		fmt.Fprintf(w, "Open transaction of producer %d: %s pending (not committed)\n", pt.ProducerID, plural(int64(len(pt.Offsets)), "offset"))
		t := termtext.NewTable("  ", offsetsHeader...).Demote("LEADER-EPOCH", "RECORD-OFFSET")
		for _, o := range pt.Offsets {
			t.Add(offsetCells(o)...)
		}
		t.Write(w, width)
	}
}

// printMarked writes the committed offsets of a partition, with a MARK column only where one
// has a mark (a rewind, a commit while the group was empty or by no owner): counted first, so
// that the layout of every block is known.
func printMarked(w io.Writer, part int32, st groupstate.View, sel query.OffsetSelection, mark func(int32, groupstate.CommittedOffset) *explain.OffsetMark, width int) {
	marked := map[string]int{}
	for o := range sel.All(st) {
		if mk := mark(part, o); mk != nil {
			for _, k := range mk.Marks {
				marked[string(k)]++
			}
		}
	}
	header := offsetsHeader
	if len(marked) > 0 {
		header = append(slices.Clone(offsetsHeader), "MARK")
	}
	t := termtext.NewTable("  ", header...).Demote("LEADER-EPOCH", "RECORD-OFFSET")
	for o := range sel.All(st) {
		cells := offsetCells(o)
		if len(marked) > 0 {
			cells = append(cells, "-")
			if mk := mark(part, o); mk != nil {
				cells[len(cells)-1] = mk.Label(o.CommittedOffset)
			}
		}
		t.Add(cells...)
		if t.Len() == 10000 {
			t.Write(w, width) // the layout holds for every block: memory stays bounded
		}
	}
	t.Write(w, width)
	if len(marked) > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(marked)) {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, marked[k]))
		}
		fmt.Fprintf(w, "marked by the commit that wrote them: %s (replay check and timeline say more)\n", strings.Join(kinds, ", "))
	}
}

// printLag writes committed offsets as kafka-consumer-groups --describe does: with their
// partitions' log end offsets and the lag, and why a partition has none.
func printLag(w io.Writer, st groupstate.View, sel query.OffsetSelection, ends query.LogEnds, width int) {
	t := termtext.NewTable("  ", "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "LEADER-EPOCH", "METADATA", "COMMITTED-AT", "RECORD-OFFSET").
		Demote("LEADER-EPOCH", "RECORD-OFFSET")
	var missing []query.LagRow
	for _, g := range sel.Groups(st) {
		for _, row := range query.Lag(sel.Offsets(st, g), ends) {
			end, lag := "-", "-"
			if row.LogEnd != nil {
				end, lag = strconv.FormatInt(*row.LogEnd, 10), strconv.FormatInt(*row.Lag, 10)
			}
			t.Add(row.GroupID, row.Topic, strconv.Itoa(int(row.Partition)), strconv.FormatInt(row.CommittedOffset.CommittedOffset, 10), end, lag,
				epochCell(row.LeaderEpoch), strconv.Quote(row.Metadata), query.FormatMillis(row.CommitTimestamp), strconv.FormatInt(row.RecordOffset, 10))
			if row.Missing != "" {
				missing = append(missing, row)
			}
		}
	}
	t.Write(w, width)
	for _, row := range missing {
		fmt.Fprintf(w, "  %s %s:%d: %s\n", row.GroupID, row.Topic, row.Partition, row.Missing)
	}
}

// writeOffsetsCSV writes the selected committed offsets as kafka-consumer-groups --from-file
// reads them, and the command line that applies them on stderr.
func writeOffsetsCSV(r *session.Replayed, f *offsetsFlags, sel query.OffsetSelection, stdout, stderr io.Writer) error {
	rs := sel.ForReset(r.Views())
	if len(rs.Offsets) == 0 {
		return errors.New("no committed offsets to write (nothing in the selection)")
	}
	w, file := stdout, "FILE"
	if f.output != "" {
		fh, err := os.Create(f.output)
		if err != nil {
			return err
		}
		defer fh.Close()
		w, file = fh, f.output
	}
	if err := query.WriteResetCSV(w, rs.Offsets, len(rs.Types) > 1); err != nil {
		return err
	}
	if f.output != "" {
		if err := w.(*os.File).Close(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s of %s to %s\n", plural(int64(len(rs.Offsets)), "offset"), plural(int64(len(rs.Types)), "group"), f.output)
	}
	bootstrap := f.live.bootstrap
	if bootstrap == "" {
		bootstrap = "HOST:PORT"
	}
	// Lines to paste into a shell as they are: comments say so on every line.
	fmt.Fprintln(verbatim(stderr), "# apply with Kafka's own tool (dry run first; then --execute in place of")
	fmt.Fprintln(verbatim(stderr), "# --dry-run, while the group has no members):")
	for _, c := range query.ResetCommands(rs.Types, bootstrap, file) {
		fmt.Fprintln(verbatim(stderr), c.Line())
		if c.Warning != "" {
			fmt.Fprintln(verbatim(stderr), "# note:", c.Warning)
		}
	}
	if rs.Pending > 0 {
		fmt.Fprintf(verbatim(stderr), "# note: %s pending in open transactions %s not committed and not in the file\n", plural(int64(rs.Pending), "offset"), pluralWord(rs.Pending, "is", "are"))
	}
	return nil
}
