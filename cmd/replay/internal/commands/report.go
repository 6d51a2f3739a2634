package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/report"
)

type reportFlags struct {
	replayFlags
	thresholds                     thresholdFlags
	html, group, pattern           string
	since, until                   string
	types, topics, topicPartitions []string
	maxGroups                      int
}

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report <segments-dir|db> --html FILE",
		Short: "A picture of every group's history: one self-contained HTML file to open offline or attach to a ticket",
		Long: `report replays the log and draws what the timeline tells (replay timeline), group by group,
in one HTML file with inline SVG and CSS, no script and nothing fetched:
  - an overview of every group: type, state, members, rebalances, last activity, findings
    (rewinds, fenced members, stuck rebalances, open or aborted transactions, commits while
    the group was empty), each linking to its section;
  - per group, on one time axis: the group epoch (or generation) steps and the rebalances
    with their causes; one lane per member (joined, stable, reconciling, revoking, away,
    left, fenced; a static member's replacement continues its lane); the target and the
    current owner of each partition or task; the committed offset of each partition, rewinds
    in red; each producer's transactions until their commit or abort;
  - hover a mark for the record behind it (partition, offset, time, record kind); click it to
    find the event in the list under the group.
Rows with more points than pixels are aggregated (the range per pixel column), and the page
says so.

--since and --until (RFC 3339, -2h, Unix ms) draw only the records stamped within them (the
whole log is still replayed, so the picture starts in the state the group was in); --group,
--pattern and --type select groups, --topic and --topic-partition the partitions drawn.`,
		Args: argsError(1, "one input: a __consumer_offsets-N directory, a log directory or a coordlog database"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, args[0], &f, stdout, stderr)
		},
	}
	f.replayFlags.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.html, "html", "", "the HTML file to write (required; - for standard output)")
	fl.StringVar(&f.group, "group", "", "only this group")
	fl.StringVar(&f.pattern, "pattern", "", "only groups whose id matches this shell pattern (orders-*)")
	fl.StringSliceVar(&f.types, "type", nil, "only groups of these types at the end of the log: classic, consumer, share, streams (repeatable)")
	fl.StringVar(&f.since, "since", "", "draw from each partition's first record stamped at or after this time")
	fl.StringVar(&f.until, "until", "", "draw up to each partition's last record stamped at or before this time (as --at-time)")
	fl.StringSliceVar(&f.topics, "topic", nil, "draw the assignment and offsets of these topics only (repeatable)")
	fl.StringArrayVar(&f.topicPartitions, "topic-partition", nil, "draw the assignment and offsets of this partition of a topic only: TOPIC:P[,P...] (repeatable)")
	fl.IntVar(&f.maxGroups, "max-groups", 50, "draw at most this many groups (those with findings, rebalances and events first); the overview lists the others too")
	f.thresholds.register(cmd)
	return cmd
}

func runReport(cmd *cobra.Command, path string, f *reportFlags, stdout, stderr io.Writer) error {
	if f.html == "" {
		return usageError{errors.New("report needs --html FILE (or --html - for standard output)")}
	}
	if f.maxGroups < 1 {
		return usageError{fmt.Errorf("--max-groups %d: give at least 1", f.maxGroups)}
	}
	types, err := parseGroupTypes(f.types)
	if err != nil {
		return err
	}
	opts := report.Options{Group: f.group, Pattern: f.pattern, Topics: f.topics, MaxGroups: f.maxGroups}
	if types != nil {
		opts.Types = map[string]bool{}
		for t := range types {
			opts.Types[string(t)] = true
		}
	}
	if err := (query.GroupFilter{Pattern: f.pattern}).Validate(); err != nil {
		return usageError{err}
	}
	if opts.TopicPartitions, err = query.ParseTopicPartitions(f.topicPartitions); err != nil {
		return usageError{err}
	}
	if opts.Explain, err = f.thresholds.options(); err != nil {
		return err
	}
	if f.until != "" {
		if f.set() {
			return usageError{errors.New("--until is --at-time: give one of --until, --at-time and --at-offset")}
		}
		f.atTime = f.until
	}
	if f.since != "" {
		if opts.From, err = sinceOffsets(cmd, path, &f.replayFlags, f.since, true, stderr); err != nil {
			return err
		}
	}

	file, err := createReport(f.html, stdout)
	if err != nil {
		return err
	}
	defer file.abort()
	b := report.NewBuilder(opts)
	r, err := replayInput(cmd, &f.replayFlags, replayRequest{path: path, observer: b.Observer}, stderr)
	if err != nil {
		return err
	}
	defer r.Source.Close()
	states := map[int32]groupstate.View{}
	for _, p := range r.Partitions {
		states[p.Engine.Partition()] = p.Engine.State()
	}
	page := b.Finish(states)
	if f.group != "" && len(page.Overview) == 0 {
		if err := r.FindGroup(f.group); err != nil {
			return err
		}
	}
	for _, p := range r.Partitions {
		page.Partitions = append(page.Partitions, p.Engine.Partition())
		page.Records += p.Engine.Stats().Records
	}
	page.Rules = fmt.Sprintf("Kafka %s rules", r.Options.Version)
	page.Input = r.Source.Name
	page.Title = "coordlog report: " + inputName(r.Source.Name)
	page.Window = window(f)
	return file.write(page, stderr)
}

// inputName is how the page's title names the input: its last folder, with its parent when
// it is a partition's ("consumer/__consumer_offsets-0"), so that browser tabs tell reports apart.
func inputName(path string) string {
	path = filepath.Clean(path)
	name := filepath.Base(path)
	if parent := filepath.Base(filepath.Dir(path)); strings.HasPrefix(name, "__consumer_offsets-") && parent != "." && parent != string(filepath.Separator) {
		name = parent + "/" + name
	}
	return name
}

// window says which part of the log the page draws, as the flags chose it.
func window(f *reportFlags) string {
	var parts []string
	if f.since != "" {
		parts = append(parts, "since "+f.since)
	}
	switch {
	case f.atTime != "":
		parts = append(parts, "until "+f.atTime)
	case len(f.atOffset) > 0:
		parts = append(parts, "up to offset "+strings.Join(f.atOffset, ","))
	}
	if len(f.topics)+len(f.topicPartitions) > 0 {
		sel := append(append([]string{}, f.topics...), f.topicPartitions...)
		sort.Strings(sel)
		parts = append(parts, "topics "+strings.Join(sel, " "))
	}
	return strings.Join(parts, ", ")
}

// reportFile is where the page goes: standard output for "-", else a temporary file beside
// path, renamed into place once the page is whole (a failed run leaves no half page). It is
// created before the replay, so that a path where nothing can be written fails at once.
type reportFile struct {
	path   string
	tmp    *os.File
	stdout io.Writer
}

func createReport(path string, stdout io.Writer) (*reportFile, error) {
	if path == "-" {
		return &reportFile{path: path, stdout: stdout}, nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, usageError{fmt.Errorf("--html %s is a directory: give the file to write", path)}
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the temporary name would only confuse
		}
		return nil, usageError{fmt.Errorf("--html %s: cannot write in %s: %w", path, dir, err)}
	}
	return &reportFile{path: path, tmp: tmp}, nil
}

// abort removes the temporary file of a run that failed (nothing once the page is in place).
func (f *reportFile) abort() {
	if f.tmp != nil {
		f.tmp.Close()
		os.Remove(f.tmp.Name())
		f.tmp = nil
	}
}

// write writes the page and moves it into place, then says so on stderr.
func (f *reportFile) write(page *report.Page, stderr io.Writer) error {
	if f.tmp == nil {
		return report.Write(f.stdout, page)
	}
	defer f.abort()
	fail := func(err error) error { return fmt.Errorf("--html %s: %w", f.path, err) }
	if err := report.Write(f.tmp, page); err != nil {
		return fail(err)
	}
	if err := f.tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Chmod(f.tmp.Name(), 0o644); err != nil { // CreateTemp made it private
		return fail(err)
	}
	if err := os.Rename(f.tmp.Name(), f.path); err != nil {
		return fail(err)
	}
	f.tmp = nil // in place: nothing to remove
	st, err := os.Stat(f.path)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stderr, "report: wrote %s (%s): %d group(s), %d drawn\n", f.path, byteSize(st.Size()), len(page.Overview), len(page.Groups))
	return nil
}
