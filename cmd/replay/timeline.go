package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
	"github.com/coordlog/coordlog/replay/query"
)

type timelineFlags struct {
	replayFlags
	live            liveFlags
	group           string
	since           string
	until           string
	summary         bool
	topics          []string
	topicPartitions []string
	member          string
	kinds           []string
	format          string
	thresholds      thresholdFlags
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
	f.register(cmd)
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

// thresholdFlags set what the analysis marks (timeline and check).
type thresholdFlags struct {
	slowRebalance, longTxn, retention, session string
}

func (f *thresholdFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.slowRebalance, "slow-rebalance", "1m", "mark rebalances that take longer than this to converge")
	fl.StringVar(&f.longTxn, "long-transaction", "1m", "mark transactions open longer than this")
	fl.StringVar(&f.retention, "offsets-retention", "infer", "the brokers' offsets.retention.minutes, to tell expired offsets from deleted ones (infer: bound it from the log)")
	fl.StringVar(&f.session, "session-timeout", "", "the shortest session timeout of the brokers' consumer, share and streams groups (group.consumer.min.session.timeout.ms or a group's config), to tell a fenced member from one that left (default: Kafka's 45 s, assumed); classic members' records carry their own")
}

// options parses the threshold flags.
func (f *thresholdFlags) options() (explain.Options, error) {
	var o explain.Options
	for _, x := range []struct {
		flag, v string
		to      *int64
	}{{"--slow-rebalance", f.slowRebalance, &o.SlowRebalanceMs}, {"--long-transaction", f.longTxn, &o.LongTransactionMs},
		{"--offsets-retention", f.retention, &o.OffsetsRetentionMs}, {"--session-timeout", f.session, &o.SessionTimeoutMs}} {
		if (x.flag == "--offsets-retention" && x.v == "infer") || (x.flag == "--session-timeout" && x.v == "") {
			continue // 0: inferred from the log, or Kafka's default assumed
		}
		d, err := parseSpan(x.v)
		if err != nil {
			return o, usageError{fmt.Errorf("%s: %w", x.flag, err)}
		}
		if d <= 0 {
			return o, usageError{fmt.Errorf("%s must be longer than 0", x.flag)}
		}
		*x.to = d
	}
	return o, nil
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
		_, mode, err := f.options()
		if err != nil {
			return err
		}
		in, err := openInput(cmd, path, mode)
		if err != nil {
			return err
		}
		at, _ := f.point()
		parts, err := selectFor(in, f.partitions, at)
		if err == nil {
			var w map[int32]offsetRange
			if w, err = timeWindow(cmd, in, parts, f.since, "", stderr); err == nil {
				from = map[int32]int64{}
				for p, r := range w {
					from[p] = r.from
				}
			}
		}
		in.close()
		if err != nil {
			return err
		}
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	width := wrapWidth(stdout)
	found, shown := 0, 0
	day := "" // the date of the last line printed
	var tally rebalanceTally
	var analyzers []*explain.Analyzer
	emit := func(p int32) func(*explain.Event) {
		return func(ev *explain.Event) {
			found++
			if from != nil && ev.At.Offset < from[p] {
				return
			}
			if f.summary && !summaryKinds[ev.Kind] {
				return
			}
			if !filter.Match(ev) {
				return
			}
			shown++
			if f.format == "jsonl" {
				writeJSONLine(out, ev)
				return
			}
			day = printTimelineEvent(out, ev, f.summary, width, day)
			if f.summary {
				tally.add(ev)
			}
		}
	}
	obs := func(p int32) replay.Observer {
		o := opts
		o.Group, o.Emit = f.group, emit(p)
		a := explain.NewAnalyzer(p, o)
		analyzers = append(analyzers, a)
		return a
	}
	var r *replayed
	if f.live.set() {
		r, err = replayLiveSequential(cmd, &f.replayFlags, &f.live, obs, stderr)
	} else {
		r, err = replayInput(cmd, path, &f.replayFlags, obs, stderr)
	}
	if err != nil {
		return err
	}
	defer r.close()
	for _, a := range analyzers {
		a.Close() // what is still open at the end of each partition's log
	}
	if found == 0 {
		out.Flush()
		if err := groupExists(r, f.group); err != nil {
			return err
		}
		return fmt.Errorf("no record of group %q in the log", f.group)
	}
	if f.summary && f.format == "text" && tally.n > 0 {
		fmt.Fprintln(out)
		writeWrapped(out, "", tally.String(), width)
	}
	if shown == 0 && f.format == "text" {
		what := "event"
		if f.summary {
			what = "rebalance"
		}
		fmt.Fprintf(out, "no %s of group %q selected (%s in the log)\n", what, f.group, plural(int64(found), "event"))
	}
	return nil
}

// summaryKinds are the events --summary prints: the rebalances, and the conversions and
// deletions between them.
var summaryKinds = map[explain.Kind]bool{explain.KindRebalanceEnd: true, explain.KindGroupConverted: true, explain.KindGroupDeleted: true}

// timelineJSON is one line of --format jsonl.
type timelineJSON struct {
	SchemaVersion int `json:"schemaVersion"`
	*explain.Event
}

func writeJSONLine(w io.Writer, ev *explain.Event) {
	b, err := json.Marshal(timelineJSON{SchemaVersion: 1, Event: ev})
	if err != nil {
		fmt.Fprintf(w, "{\"schemaVersion\":1,\"error\":%q}\n", err.Error())
		return
	}
	w.Write(append(b, '\n'))
}

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
	writeWrapped(w, prefix, text, width)
	return day
}

// rebalanceTally sums up the rebalances --summary printed: how many, for which causes, the
// longest.
type rebalanceTally struct {
	n, open, superseded int
	causes              map[string]int
	order               []string
	longest             *explain.Rebalance
}

func (t *rebalanceTally) add(ev *explain.Event) {
	r := ev.Rebalance
	if ev.Kind != explain.KindRebalanceEnd {
		return
	}
	t.n++
	switch r.Outcome {
	case "open":
		t.open++
	case "superseded":
		t.superseded++
	}
	if t.causes == nil {
		t.causes = map[string]int{}
	}
	for _, c := range r.Causes {
		k := c.Kind
		if k == "member-left" && c.Detail == "unknown" {
			k = "member-left-or-fenced"
		}
		if t.causes[k] == 0 {
			t.order = append(t.order, k)
		}
		t.causes[k]++
	}
	if r.DurationMs >= 0 && (t.longest == nil || r.DurationMs > t.longest.DurationMs) {
		t.longest = r
	}
}

// causeWords names a cause kind in the tally, singular and plural.
var causeWords = map[string][2]string{
	"member-joined": {"join", "joins"}, "member-left": {"leave", "leaves"}, "member-fenced": {"member fenced", "members fenced"},
	"member-left-or-fenced": {"member gone (left or fenced)", "members gone (left or fenced)"},
	"member-replaced":       {"static member replaced", "static members replaced"},
	"subscription-changed":  {"subscription change", "subscription changes"}, "topology-changed": {"topology change", "topology changes"},
	"topology-validated": {"topology validated", "topologies validated"}, "regex-resolved": {"regex resolution", "regex resolutions"},
	"metadata-changed":             {"topic metadata change", "topic metadata changes"},
	"assignment-configs-changed":   {"assignment configs change", "assignment configs changes"},
	"share-partitions-initialized": {"share partitions initialized", "share partitions initialized"},
	"group-converted":              {"conversion", "conversions"}, "cooperative-second-round": {"cooperative second round", "cooperative second rounds"},
	"rejoin": {"rejoin without a member change", "rejoins without a member change"}, "unknown": {"unknown cause", "unknown causes"},
}

func (t *rebalanceTally) String() string {
	var parts []string
	for _, k := range t.order {
		w, ok := causeWords[k]
		if !ok {
			w = [2]string{k, k}
		}
		if t.causes[k] == 1 {
			parts = append(parts, "1 "+w[0])
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", t.causes[k], w[1]))
		}
	}
	s := plural(int64(t.n), "rebalance") + ": " + strings.Join(parts, ", ")
	if t.superseded > 0 {
		s += fmt.Sprintf("; %d superseded before converging", t.superseded)
	}
	if t.open > 0 {
		s += fmt.Sprintf("; %d not converged at the end", t.open)
	}
	if t.longest != nil && t.longest.DurationMs > 0 {
		s += fmt.Sprintf("; the longest took %s (epoch %d)", explain.Duration(t.longest.DurationMs), t.longest.Epoch)
	}
	return s
}

// parseSpan reads a span of time flag in milliseconds.
func parseSpan(s string) (int64, error) {
	d, err := query.ParseSpan(s)
	if err != nil {
		return 0, err
	}
	return d.Milliseconds(), nil
}
