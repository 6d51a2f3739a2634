package commands

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay/explain"
	"github.com/coordlog/coordlog/replay/jsondoc"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

type timelineFlags struct {
	replayFlags
	live                           liveFlags
	thresholds                     thresholdFlags
	group, member, format          string
	since, until                   string
	topics, topicPartitions, kinds []string
	summary                        bool
}

func newTimelineCmd(stdout, stderr io.Writer) *cobra.Command {
	var f timelineFlags
	cmd := &cobra.Command{
		Use:   "timeline <segments-dir|db> --group G | --bootstrap-server HOST:PORT --group G",
		Short: "What happened to a group, in log order: rebalances and their causes, members, offsets, transactions",
		Long: `timeline replays the log and tells what happened to one group, one line per event, each with
the time and the position (partition:offset) of the record that shows it:
  - members joining (client id, member id, host, instance id), leaving or fenced (told apart by
    the time from the member's last sign of life to its removal), static members leaving
    temporarily (epoch -2) and replaced by a new member id of the same instance;
  - rebalances with their causes (who joined, left, was fenced, changed its subscription; a
    topology, a regex or the topics' metadata changed) and what the target assignment moved;
  - the members' reconciliation: who waits for whom to revoke what, how long it took, and
    when the group converged;
  - the group's conversion between the classic and the consumer protocol, its deletion;
  - offsets committed (by which member, or while the group had no members: an admin tool or a
    standalone consumer), moved back, deleted (by the group's deletion, OffsetDelete, expiry
    or a topic's deletion, as far as the log tells), and transactions with their markers.
--summary prints one line per rebalance (its causes, what moved, how long it took) and per
conversion or deletion of the group, then the rebalances' count by cause.
--format jsonl prints the same events as JSON, one per line (docs/json/timeline.schema.json).
The records themselves: replay decode --group G.

--since and --until (RFC 3339, -2h, Unix ms) print only the events of records stamped within
them (the whole log is still replayed, so that each event is explained with what came before);
--at-time is --until and --at-offset stops after that offset, as on the other commands.`,
		Args: f.live.args(1, "one input: a __consumer_offsets-N directory, a log directory or a coordlog database"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.group == "" {
				return usageError{fmt.Errorf("timeline needs --group")}
			}
			path := ""
			if !f.live.set() {
				path = args[0]
			}
			return runTimeline(cmd, path, &f, stdout, stderr)
		},
	}
	f.replayFlags.register(cmd)
	f.live.registerAs(cmd, "offsets-topic") // --topic selects the group's topics
	fl := cmd.Flags()
	fl.StringVar(&f.group, "group", "", "the group id (required)")
	fl.StringVar(&f.since, "since", "", "only events from each partition's first record stamped at or after this time")
	fl.StringVar(&f.until, "until", "", "only events up to each partition's last record stamped at or before this time (as --at-time)")
	fl.BoolVar(&f.summary, "summary", false, "one line per rebalance: causes, what moved, how long it took to converge")
	fl.StringSliceVar(&f.topics, "topic", nil, "only events about this topic: its offsets, its partitions moved or waited for (repeatable)")
	fl.StringArrayVar(&f.topicPartitions, "topic-partition", nil, "only events about this partition of a topic: TOPIC:P[,P...] (repeatable)")
	fl.StringVar(&f.member, "member", "", "only events naming this member (member id, client id, instance id or host)")
	fl.StringSliceVar(&f.kinds, "kind", nil, "only events of these kinds, families (rebalance, member, group, offsets, transaction) or marks (rewind, while-empty, without-owner, fenced, slow, deleted)")
	fl.StringVar(&f.format, "format", "text", "text or jsonl (one JSON event per line)")
	f.thresholds.register(cmd)
	return cmd
}

func runTimeline(cmd *cobra.Command, path string, f *timelineFlags, stdout, stderr io.Writer) error {
	if err := f.live.noFollow(cmd); err != nil {
		return err
	}
	if f.format != "text" && f.format != "jsonl" {
		return usageError{fmt.Errorf("--format must be text or jsonl, not %q", f.format)}
	}
	tps, err := query.ParseTopicPartitions(f.topicPartitions)
	if err != nil {
		return usageError{err}
	}
	filter := explain.Filter{Topics: f.topics, TopicPartitions: tps, Member: f.member, Kinds: f.kinds}
	if err := filter.Validate(); err != nil {
		return usageError{fmt.Errorf("--kind: %w", err)}
	}
	opts, err := f.thresholds.options()
	if err != nil {
		return err
	}
	if f.until != "" {
		if f.set() {
			return usageError{fmt.Errorf("--until is --at-time: give one of --until, --at-time and --at-offset")}
		}
		f.atTime = f.until
	}
	var from map[int32]int64
	if f.since != "" {
		if f.live.set() {
			return usageError{fmt.Errorf("--since reads the log twice: not on a live cluster")}
		}
		if from, err = sinceOffsets(cmd, path, &f.replayFlags, f.since, false, stderr); err != nil {
			return err
		}
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	p := &timelinePrinter{f: f, filter: filter, from: from, w: out, width: wrapWidth(stdout)}
	analyzers := &session.Observers[*explain.Analyzer]{New: func(part int32) *explain.Analyzer {
		o := opts
		o.Group, o.Emit = f.group, p.emitter(part)
		return explain.NewAnalyzer(part, o)
	}}
	r, err := replayInput(cmd, &f.replayFlags, replayRequest{path: path, live: &f.live, observer: analyzers.Observer, sequential: true}, stderr)
	if err != nil {
		return err
	}
	defer r.Source.Close()
	for _, a := range analyzers.All() {
		a.Close() // what is still open at the end of each partition's log
	}
	return p.finish(r)
}

// timelinePrinter prints the events of a timeline as the analysis emits them.
type timelinePrinter struct {
	f            *timelineFlags
	filter       explain.Filter
	from         map[int32]int64 // --since: the first offset shown in each partition
	w            *bufio.Writer
	width        int
	found, shown int
	day          string // the date of the last line printed
	tally        query.RebalanceTally
}

// emitter prints partition part's events that the flags select.
func (p *timelinePrinter) emitter(part int32) func(*explain.Event) {
	return func(ev *explain.Event) {
		p.found++
		if p.from != nil && ev.At.Offset < p.from[part] {
			return
		}
		if p.f.summary && !summaryKinds[ev.Kind] {
			return
		}
		if !p.filter.Match(ev) {
			return
		}
		p.shown++
		if p.f.format == "jsonl" {
			p.w.Write(jsondoc.TimelineLine(ev))
			return
		}
		p.day = printTimelineEvent(p.w, ev, p.f.summary, p.width, p.day)
		if p.f.summary {
			p.tally.Add(ev)
		}
	}
}

// finish says what the timeline found: the rebalances' tally (--summary), or that nothing was
// selected; a group the log has no record of is an error.
func (p *timelinePrinter) finish(r *session.Replayed) error {
	if p.found == 0 {
		p.w.Flush()
		if err := r.FindGroup(p.f.group); err != nil {
			return err
		}
		return fmt.Errorf("no record of group %q in the log", p.f.group)
	}
	if p.f.summary && p.f.format == "text" && p.tally.Rebalances > 0 {
		fmt.Fprintln(p.w)
		termtext.WriteWrapped(p.w, "", p.tally.String(), p.width)
	}
	if p.shown == 0 && p.f.format == "text" {
		what := "event"
		if p.f.summary {
			what = "rebalance"
		}
		fmt.Fprintf(p.w, "no %s of group %q selected (%s in the log)\n", what, p.f.group, plural(int64(p.found), "event"))
	}
	return nil
}

// summaryKinds are the events --summary prints: the rebalances, and the conversions and
// deletions between them.
var summaryKinds = map[explain.Kind]bool{explain.KindRebalanceEnd: true, explain.KindGroupConverted: true, explain.KindGroupDeleted: true}

// printTimelineEvent writes one event: its time, its position (partition:offset) and what
// happened, wrapped to width. A line with the date (UTC) comes first whenever the date is not
// the last line's, day; it returns the event's.
func printTimelineEvent(w io.Writer, ev *explain.Event, summary bool, width int, day string) string {
	at := ev.At
	text := ev.Text
	if summary && ev.Kind == explain.KindRebalanceEnd {
		at = ev.Rebalance.Start
		text = explain.SummaryText(ev)
	}
	if len(ev.Marks) > 0 && !summary {
		var ms []string
		for _, m := range ev.Marks {
			ms = append(ms, string(m))
		}
		text = "[" + strings.Join(ms, ",") + "] " + text
	}
	clock := "-"
	if at.Timestamp >= 0 {
		t := at.Time()
		if d := t.Format("2006-01-02"); d != day {
			fmt.Fprintf(w, "%s (UTC)\n", d)
			day = d
		}
		clock = t.Format("15:04:05.000")
	}
	prefix := fmt.Sprintf("%-12s %-7s ", clock, fmt.Sprintf("p%d:%d", at.Partition, at.Offset))
	termtext.WriteWrapped(w, prefix, text, width)
	return day
}
