package commands

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay/jsondoc"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

type groupsFlags struct {
	replayFlags
	live            liveFlags
	types, states   []string
	pattern, format string
	includeDeleted  bool
}

func newGroupsCmd(stdout, stderr io.Writer) *cobra.Command {
	var f groupsFlags
	cmd := &cobra.Command{
		Use:   "groups <segments-dir|db> | --bootstrap-server HOST:PORT",
		Short: "One line per group across every partition: type, protocol, state, members, epochs, offsets, last activity",
		Long: `groups replays every partition of the input and lists each group on one line, as Kafka's
ListGroups would at that point (group, type, protocol type, state) with what the log adds: the
assignor (a classic group's protocol, the server assignor a consumer group's members ask for),
the __consumer_offsets partition, members, epochs, committed offsets (and those pending in open
transactions), and the last record that touched the group, with its time.

--include-deleted also lists the groups that existed and were deleted, with the record that
deleted them (state Dead). --type, --state and --pattern (shell-style: *, ?, [...]) filter the
list; --at-offset and --at-time list the groups as they were then. --format json prints a
document described by the JSON Schema docs/json/groups.schema.json.`,
		Args: f.live.args(1, "one input: a __consumer_offsets-N directory, a log directory or a coordlog database"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if !f.live.set() {
				path = args[0]
			}
			return runGroups(cmd, path, &f, stdout, stderr)
		},
	}
	f.replayFlags.register(cmd)
	f.live.registerAs(cmd, "offsets-topic")
	fl := cmd.Flags()
	fl.StringSliceVar(&f.types, "type", nil, "only groups of these types: classic, consumer, share, streams (repeatable)")
	fl.StringSliceVar(&f.states, "state", nil, "only groups in these states: Empty, Stable, Assigning, Reconciling, NotReady, Dead (repeatable)")
	fl.StringVar(&f.pattern, "pattern", "", "only groups whose id matches this shell pattern (orders-*)")
	fl.BoolVar(&f.includeDeleted, "include-deleted", false, "also list deleted groups, with the record that deleted them")
	fl.StringVar(&f.format, "format", "table", "table or json")
	return cmd
}

func runGroups(cmd *cobra.Command, path string, f *groupsFlags, stdout, stderr io.Writer) error {
	if err := f.live.noFollow(cmd); err != nil {
		return err
	}
	if f.format != "table" && f.format != "json" {
		return usageError{fmt.Errorf("--format must be table or json, not %q", f.format)}
	}
	types, err := parseGroupTypes(f.types)
	if err != nil {
		return err
	}
	filter := query.GroupFilter{Types: types, States: f.states, Pattern: f.pattern, IncludeDeleted: f.includeDeleted}
	if err := filter.Validate(); err != nil {
		return usageError{err}
	}
	acts := &session.Observers[*query.Activity]{New: func(int32) *query.Activity { return query.NewActivity() }}
	r, err := replayInput(cmd, &f.replayFlags, replayRequest{path: path, live: &f.live, observer: acts.Observer}, stderr)
	if err != nil {
		return err
	}
	defer r.Source.Close()
	rows := query.ListGroups(r.States(func(p int32) *query.Activity { a, _ := acts.Of(p); return a }), filter)
	if f.format == "json" {
		enc := jsondoc.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(jsondoc.NewGroups(r, rows))
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	printGroups(out, r, rows, f.includeDeleted, widthOf(stdout))
	return nil
}

func printGroups(w io.Writer, r *session.Replayed, rows []query.GroupRow, withDeleted bool, width int) {
	at := "the end of the log"
	if !r.At.IsEnd() {
		at = r.At.String()
		if _, ok := r.At.Offset(); ok {
			at = "offset " + at
		}
	}
	header := []string{"GROUP", "TYPE", "PROTOCOL", "ASSIGNOR", "STATE", "PARTITION", "MEMBERS", "EPOCH", "OFFSETS", "LAST-RECORD", "LAST-ACTIVITY"}
	if withDeleted {
		header = append(header, "DELETED-BY")
	}
	t := termtext.NewTable("", header...).Demote("PROTOCOL", "ASSIGNOR", "LAST-RECORD", "PARTITION")
	deleted := 0
	for _, g := range rows {
		offs := strconv.Itoa(g.Offsets)
		if g.PendingOffsets > 0 {
			offs += fmt.Sprintf(" (+%d pending)", g.PendingOffsets)
		}
		last, when := "-", "-"
		if g.LastRecord != nil {
			last, when = strconv.FormatInt(g.LastRecord.Offset, 10), query.FormatMillis(g.LastRecord.Timestamp)
		}
		members := strconv.Itoa(g.Members)
		if g.Deleted != nil {
			members = "-"
		}
		cells := []string{g.GroupID, string(g.Type), dash(g.ProtocolType), dash(g.Assignor), g.State, strconv.Itoa(int(g.Partition)), members, g.EpochLabel(), offs, last, when}
		if withDeleted {
			by := "-"
			if d := g.Deleted; d != nil {
				deleted++
				by = fmt.Sprintf("offset %d %s", d.Offset, d.Record)
			}
			cells = append(cells, by)
		}
		t.Add(cells...)
	}
	if t.Len() > 0 {
		t.Write(w, width)
	}
	summary := fmt.Sprintf("%s at %s in %s (Kafka %s rules)", plural(int64(len(rows)), "group"), at, plural(int64(len(r.Partitions)), "partition"), r.Options.Version)
	if withDeleted {
		summary += fmt.Sprintf(", %d deleted", deleted)
	}
	fmt.Fprintln(w, summary)
}
