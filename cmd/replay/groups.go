package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/query"
)

type groupsFlags struct {
	replayFlags
	types          []string
	states         []string
	pattern        string
	includeDeleted bool
	format         string
	live           liveFlags
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
	f.register(cmd)
	f.live.registerAs(cmd, "offsets-topic")
	fl := cmd.Flags()
	fl.StringSliceVar(&f.types, "type", nil, "only groups of these types: classic, consumer, share, streams (repeatable)")
	fl.StringSliceVar(&f.states, "state", nil, "only groups in these states: Empty, Stable, Assigning, Reconciling, NotReady, Dead (repeatable)")
	fl.StringVar(&f.pattern, "pattern", "", "only groups whose id matches this shell pattern (orders-*)")
	fl.BoolVar(&f.includeDeleted, "include-deleted", false, "also list deleted groups, with the record that deleted them")
	fl.StringVar(&f.format, "format", "table", "table or json")
	return cmd
}

// groupsDoc is groups' JSON document.
type groupsDoc struct {
	SchemaVersion int              `json:"schemaVersion"`
	KafkaVersion  string           `json:"kafkaVersion"`
	AtOffset      *int64           `json:"atOffset"`
	AtTime        *string          `json:"atTime,omitempty"`
	Partitions    []partitionDoc   `json:"partitions"`
	Groups        []query.GroupRow `json:"groups"`
}

// partitionDoc is what a JSON document says of each partition read.
type partitionDoc struct {
	Partition  int32           `json:"partition"`
	NextOffset int64           `json:"nextOffset"`
	Position   *query.Position `json:"position,omitempty"`
}

func partitionDocs(r *replayed) []partitionDoc {
	out := make([]partitionDoc, 0, len(r.results))
	for i, res := range r.results {
		d := partitionDoc{Partition: res.Engine.Partition(), NextOffset: res.Engine.NextOffset()}
		if p := r.position(i); p != nil && !p.AtEnd() {
			d.Position = p
		}
		out = append(out, d)
	}
	return out
}

// pointDoc renders the point for a JSON document: a bare offset as atOffset, a time as atTime.
func pointDoc(at query.Point) (*int64, *string) {
	if o, ok := at.Offset(); ok {
		return &o, nil
	}
	if at.IsTime() {
		s := at.String()
		return nil, &s
	}
	return nil, nil
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
	if f.fromSnapshot {
		return usageError{errors.New("groups replays the whole log (it watches every record for the last activity and deletions): --from-snapshot does not apply")}
	}
	acts := map[int32]*query.Activity{}
	observer := func(p int32) replay.Observer {
		a := query.NewActivity()
		acts[p] = a
		return a
	}
	var r *replayed
	if f.live.set() {
		r, err = replayLiveObserved(cmd, &f.replayFlags, &f.live, observer, stderr)
	} else {
		r, err = replayInputParallel(cmd, path, &f.replayFlags, observer, stderr)
	}
	if err != nil {
		return err
	}
	defer r.close()
	var activity []*query.Activity
	for _, res := range r.results {
		activity = append(activity, acts[res.Engine.Partition()])
	}
	rows := query.ListGroups(r.states(activity), filter)
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if f.format == "json" {
		doc := groupsDoc{SchemaVersion: schemaVersion, KafkaVersion: r.opts.Version.String(), Partitions: partitionDocs(r), Groups: rows}
		doc.AtOffset, doc.AtTime = pointDoc(r.at)
		if doc.Groups == nil {
			doc.Groups = []query.GroupRow{}
		}
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	printGroups(out, r, rows, f.includeDeleted, widthOf(stdout))
	return nil
}

func printGroups(w io.Writer, r *replayed, rows []query.GroupRow, withDeleted bool, width int) {
	at := "the end of the log"
	if !r.at.IsEnd() {
		at = r.at.String()
		if _, ok := r.at.Offset(); ok {
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
	summary := fmt.Sprintf("%s at %s in %s (Kafka %s rules)", plural(int64(len(rows)), "group"), at, plural(int64(len(r.results)), "partition"), r.opts.Version)
	if withDeleted {
		summary += fmt.Sprintf(", %d deleted", deleted)
	}
	fmt.Fprintln(w, summary)
}

// groupExists returns an UnknownGroupError (with close matches) when no partition knows group
// at the replayed point: neither as a group nor by committed or pending offsets.
func groupExists(r *replayed, group string) error {
	var candidates []string
	for _, res := range r.results {
		st := res.Engine.State()
		if _, ok := st.GroupType(group); ok || len(st.Offsets(group)) > 0 {
			return nil
		}
		for _, pt := range st.PendingTransactions() {
			for _, o := range pt.Offsets {
				if o.GroupID == group {
					return nil
				}
			}
		}
		candidates = append(candidates, st.GroupIDs()...)
		candidates = append(candidates, st.OffsetGroupIDs()...)
	}
	where := "in the input at the end of the log"
	if !r.at.IsEnd() {
		where = "in the input at " + r.at.String()
		if _, ok := r.at.Offset(); ok {
			where = "in the input at offset " + r.at.String()
		} else if !r.at.IsTime() {
			where = "in the input at offsets " + r.at.String()
		}
	}
	return &query.UnknownGroupError{Group: group, Where: where, Suggests: query.Suggest(group, candidates, 5)}
}
