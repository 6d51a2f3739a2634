package commands

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

type importFlags struct {
	live         liveFlags // --bootstrap-server and friends
	db, progress string
	partitions   []int32
	forensic     bool
}

func newImportCmd(stdout, stderr io.Writer) *cobra.Command {
	var f importFlags
	cmd := &cobra.Command{
		Use:   "import (<segments-dir> | --bootstrap-server HOST:PORT) --db <path>",
		Short: "Import Kafka segment files into a coordlog Pebble log",
		Long: `import copies the batches of a __consumer_offsets-N directory (or of every partition of a log
directory) into a coordlog Pebble log, keeping offsets, batch boundaries, producer ids and
epochs, transactional and control flags, timestamps and raw key/value bytes.

It is idempotent (re-importing the same input adds nothing) and resumable (an interrupted
import starts again where its last commit ended). Strict mode (the default) stops at the first
damaged batch, leaving every batch before it imported; --forensic skips damaged input, reports
it, and imports the rest.`,
		Args: f.live.args(1, "one input directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.live.set() {
				return runImportLive(cmd, f, stdout)
			}
			return runImport(cmd, args[0], f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.db, "db", "", "the coordlog database directory (created when missing)")
	fl.Int32SliceVar(&f.partitions, "partition", nil, "only these partitions (repeatable)")
	fl.BoolVar(&f.forensic, "forensic", false, "skip damaged input, report it and import the rest")
	fl.StringVar(&f.progress, "progress", "auto", "progress display: auto (a bar on a terminal, lines otherwise), bar, lines or none")
	f.live.registerAs(cmd, "topic")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

func runImport(cmd *cobra.Command, dir string, f importFlags, stdout, stderr io.Writer) error {
	switch f.progress {
	case "auto", "bar", "lines", "none":
	default:
		return usageError{fmt.Errorf("--progress must be auto, bar, lines or none, not %q", f.progress)}
	}
	if input.IsDatabase(dir) {
		return usageError{fmt.Errorf("%s is a coordlog database; import reads Kafka segment directories", dir)}
	}
	src, err := session.Open(cmd.Context(), session.Input{Path: dir, Mode: modeOf(f.forensic)})
	if err != nil {
		return err
	}
	defer src.Close()
	parts, err := session.Select(src, f.partitions, query.End())
	if err != nil {
		return commandLine(err)
	}
	show := newProgress(f.progress, stderr, src.SegmentBytes(parts))
	start := time.Now()
	im, err := session.OpenImport(cmd.Context(), src, f.db, session.ImportRequest{Partitions: parts, Holder: "replay import", Inputs: []string{dir}, Progress: show.update})
	if err != nil {
		if errors.Is(err, pebblelog.ErrOtherLog) {
			show.finish()
		}
		return commandLine(err)
	}
	defer im.Close()
	res, err := im.Round(cmd.Context())
	show.finish()
	elapsed := time.Since(start)
	printReport(src, stderr)
	if res.Checked > 0 {
		fmt.Fprintf(stdout, "checked %d batches of the input against the database, which held them already: the same log", res.Checked)
		if res.Rewritten > 0 {
			fmt.Fprintf(stdout, " (%d rewritten by log cleaning on one side, their common records identical)", res.Rewritten)
		}
		fmt.Fprintln(stdout)
	}
	if res.BeforeStart > 0 {
		fmt.Fprintf(stderr, "warning: %d batches of the input lie below the database's first offset and were not imported (a database only grows at its end)\n", res.BeforeStart)
	}
	// After a failed write the database's view in memory may hold a commit that was not made
	// durable: the error says what the database holds instead.
	var we *pebblelog.WriteError
	if !errors.As(err, &we) {
		printImported(stdout, im, true)
	}
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(res.Bytes) / s / (1 << 20)
	}
	fmt.Fprintf(stdout, "imported %s, %s, %s in %s (%.1f MB/s) into %s\n",
		plural(res.Batches, "batch/batches"), plural(res.Records, "record"), plural(res.Bytes, "byte"), elapsed.Round(time.Millisecond), rate, f.db)
	return importStopped(err)
}

// importStopped says how far an import that failed got: everything before the error is
// imported and a re-run resumes, unless a write failed (the error says what the database
// holds then).
func importStopped(err error) error {
	var we *pebblelog.WriteError
	switch {
	case errors.As(err, &we):
		return fmt.Errorf("import stopped: %w", err)
	case err != nil:
		return fmt.Errorf("import stopped; everything before it is imported and a re-run resumes: %w", err)
	}
	return nil
}

// printImported writes where each partition's log stands in the database (with where a
// resumed import started, after a file import).
func printImported(w io.Writer, im *session.Importer, withBefore bool) {
	for _, p := range im.Partitions {
		first, next, err := im.Log.Offsets(p)
		switch {
		case err != nil:
		case !withBefore:
			fmt.Fprintf(w, "partition %d: offsets %d..%d in the log (next offset %d)\n", p, first, next-1, next)
		case first == next:
			fmt.Fprintf(w, "partition %d: no record in the log (empty; next offset %d, was %d before this import)\n", p, next, im.Before(p))
		default:
			fmt.Fprintf(w, "partition %d: offsets %d..%d in the log (next offset %d, was %d before this import)\n", p, first, next-1, next, im.Before(p))
		}
	}
}

// runImportLive imports from a running cluster into a Pebble log; with --follow it keeps
// importing what the cluster appends (each round resumes where the database ends).
func runImportLive(cmd *cobra.Command, f importFlags, stdout io.Writer) error {
	ctx := cmd.Context()
	src, err := openLive(cmd, &f.live)
	if err != nil {
		return err
	}
	defer src.Close()
	// What the database holds already is compared with the topic once, before the database
	// is opened for writing (a refused topic leaves it as it was); each later round only
	// appends what this command read from the same topic.
	im, err := session.OpenImport(ctx, src, f.db, session.ImportRequest{Partitions: f.partitions, Holder: "replay import --bootstrap-server"})
	if err != nil {
		return commandLine(err)
	}
	defer im.Close()
	report := func(res pebblelog.ImportProgress, elapsed time.Duration) {
		printImported(stdout, im, false)
		fmt.Fprintf(stdout, "imported %s, %s, %s from %s in %s into %s\n",
			plural(res.Batches, "batch/batches"), plural(res.Records, "record"), plural(res.Bytes, "byte"), src.Name, elapsed.Round(time.Millisecond), f.db)
	}
	start := time.Now()
	res, err := im.Round(ctx)
	report(res, time.Since(start))
	if err == nil && f.live.follow {
		err = im.Follow(ctx, f.live.interval, report)
	}
	if err != nil {
		return fmt.Errorf("import stopped; everything before it is imported and a re-run resumes: %w", err)
	}
	return nil
}

// progress shows import progress as a bar on a terminal or as plain lines.
type progress struct {
	bar      *progressbar.ProgressBar
	w        io.Writer
	total    int64
	start    time.Time
	lastLine time.Time
	last     pebblelog.ImportProgress
	lines    bool
}

func newProgress(mode string, w io.Writer, total int64) *progress {
	p := &progress{w: w, total: total, start: time.Now()}
	if mode == "auto" {
		mode = "lines"
		if isTerminal(w) {
			mode = "bar"
		}
	}
	switch mode {
	case "bar":
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetDescription("import"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionFullWidth(),
		)
	case "lines":
		p.lines = true
	}
	return p
}

func (p *progress) update(ip pebblelog.ImportProgress) {
	ip.Bytes += ip.CheckedBytes // the input read so far: checked against the database, or imported
	p.last = ip
	switch {
	case p.bar != nil:
		p.bar.Describe(fmt.Sprintf("import p%d %d records", ip.Partition, ip.Records))
		_ = p.bar.Set64(ip.Bytes)
	case p.lines:
		if time.Since(p.lastLine) < 2*time.Second {
			return
		}
		p.lastLine = time.Now()
		p.line(ip)
	}
}

func (p *progress) line(ip pebblelog.ImportProgress) {
	el := time.Since(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(ip.Bytes) / el
	}
	pct, eta := 100.0, ""
	if p.total > 0 {
		pct = 100 * float64(ip.Bytes) / float64(p.total)
		if rate > 0 && ip.Bytes < p.total {
			eta = fmt.Sprintf(" ETA %s", time.Duration(float64(p.total-ip.Bytes)/rate*float64(time.Second)).Round(time.Second))
		}
	}
	fmt.Fprintf(p.w, "import: partition %d, %.0f%% (%d of %d bytes), %d records, %.1f MB/s, %.0f records/s%s\n",
		ip.Partition, pct, ip.Bytes, p.total, ip.Records, rate/(1<<20), float64(ip.Records)/max(el, 1e-9), eta)
}

func (p *progress) finish() {
	switch {
	case p.bar != nil:
		_ = p.bar.Finish()
		fmt.Fprintln(p.w)
	case p.lines:
		p.line(p.last)
	}
}
