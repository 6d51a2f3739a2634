package commands

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/jsondoc"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/recovery"
	"github.com/coordlog/coordlog/replay/session"
)

// How the commands reach the log: replay/session opens and replays it; this file turns the
// flags into its requests and prints, on stderr, what it tells as it goes.

// openInput opens path as a coordlog database when it holds one, otherwise as Kafka segments
// read in mode with the root's reading flags (--max-batch-memory, --verbose).
func openInput(cmd *cobra.Command, path string, mode eventlog.Mode) (*session.Source, error) {
	rf, err := readingFlags(cmd)
	if err != nil {
		return nil, err
	}
	return session.Open(cmd.Context(), session.Input{Path: path, Mode: mode, MaxBatchMemory: rf.maxBatchMemory, KeepAllProblems: rf.verbose})
}

// openLive connects to the cluster the flags name; the source's requests are bounded by the
// command's context.
func openLive(cmd *cobra.Command, f *liveFlags) (*session.Source, error) {
	cfg := f.config()
	src, err := session.Open(cmd.Context(), session.Input{Cluster: &cfg, Topic: f.topic})
	return src, commandLine(err)
}

// trace prints on stderr what a request tells: where a time (or an offset in a gap) fell,
// which record, how timestamps were read; what the segment input skipped (warnings and notes,
// silenced by --quiet; damage always); which snapshot each partition was restored from.
func trace(stderr io.Writer) *session.Trace {
	return &session.Trace{
		Resolved: func(at query.Point, positions []query.Position) {
			for i := range positions {
				if at.IsTime() || len(positions[i].Notes) > 0 {
					fmt.Fprintln(stderr, "at:", positions[i].Describe())
				}
			}
		},
		Detected: func(det replay.VersionDetection) { fmt.Fprintln(stderr, det.Note()) },
		Restored: func(p int32, rec *recovery.Recovery) {
			for _, m := range rec.Messages() {
				fmt.Fprintf(stderr, "partition %d: %s\n", p, m)
			}
			if rec.Snapshot != nil {
				fmt.Fprintf(stderr, "partition %d: from snapshot %s at offset %d, %s replayed from the tail\n", p, rec.Snapshot.Name, rec.SnapshotOffset, plural(rec.TailRecords, "record"))
			} else {
				fmt.Fprintf(stderr, "partition %d: no usable snapshot, full replay\n", p)
			}
		},
		Done: func(src *session.Source) { printReport(src, stderr) },
	}
}

// printReport writes what the segment input skipped: files ignored on purpose (warnings),
// batches superseded by earlier segment files (notes: Kafka's reads skip them too), and, in
// forensic mode, damaged input. Without --verbose each file counts its problems per kind on one
// line; with it every problem has its own. Notes go to w (silenced by --quiet), damage always.
func printReport(src *session.Source, w io.Writer) {
	if src.Report != nil {
		src.Report.Render(w, loud(w), verbose(w))
	}
}

// printViolations prints an engine's violations, whatever --quiet says: one line per file
// and record type (every one with --verbose).
func printViolations(w io.Writer, e *replay.Engine) {
	for _, v := range jsondoc.Violations(e) {
		fmt.Fprintln(loud(w), "violation:", v.Error)
	}
}

// replayRequest is how a command replays its input: the flags, and its observers.
type replayRequest struct {
	path     string     // the input, unless live
	live     *liveFlags // --bootstrap-server and friends (nil: the command takes none)
	observer func(p int32) replay.Observer
	// sequential replays one partition after the other (observers that print as they go).
	sequential bool
}

// replayInput opens the input (or the cluster) and replays the selected partitions, each up
// to where the point (--at-offset, --at-time) falls in it, or from their snapshots
// (--from-snapshot). Violations stop strict mode with the engine's message; in forensic mode
// they are printed to stderr with the summary. Close the source when done.
func replayInput(cmd *cobra.Command, f *replayFlags, rr replayRequest, stderr io.Writer) (*session.Replayed, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	req := session.Request{Partitions: f.partitions, Options: opts, DetectVersion: f.detect(opts), Observer: rr.observer, Sequential: rr.sequential, Trace: trace(stderr)}
	var src *session.Source
	switch {
	case rr.live != nil && rr.live.set():
		if req.At, err = f.point(); err != nil {
			return nil, err
		}
		if rr.live.follow && !req.At.IsEnd() {
			return nil, usageError{fmt.Errorf("--follow and --at-offset/--at-time exclude each other")}
		}
		if f.fromSnapshot {
			return nil, usageError{fmt.Errorf("--from-snapshot reads a coordlog database, not a live cluster")}
		}
		src, err = openLive(cmd, rr.live)
	case f.fromSnapshot && rr.observer == nil:
		// Each partition from its newest usable snapshot (at or before the point) and the
		// log after it; the collector pauses while a snapshot decodes (nothing else runs).
		if !input.IsDatabase(rr.path) {
			return nil, usageError{fmt.Errorf("--from-snapshot needs a coordlog database; %s holds Kafka segments", rr.path)}
		}
		// No detection: a restore keeps to --kafka-version's rules (the default's with detect).
		req.FromSnapshot, req.PauseGC, req.DetectVersion = true, true, false
		if src, err = openInput(cmd, rr.path, opts.Mode); err == nil {
			if req.At, err = f.point(); err != nil {
				src.Close()
				return nil, err
			}
		}
	default:
		if req.At, err = f.point(); err != nil {
			return nil, err
		}
		src, err = openInput(cmd, rr.path, opts.Mode)
	}
	if err != nil {
		return nil, err
	}
	r, err := session.Replay(cmd.Context(), src, req)
	if err != nil {
		src.Close()
		return nil, replayFailed(err, stderr)
	}
	replayDone(r, !req.FromSnapshot, stderr)
	return r, nil
}

// replayDone prints, whatever --quiet says, the violations forensic mode recorded, then (a
// replay from the start of the log) how many records the rules did not know.
func replayDone(r *session.Replayed, unknown bool, stderr io.Writer) {
	for _, p := range r.Partitions {
		printViolations(stderr, p.Engine)
	}
	if w := r.UnknownRecordsWarning(); w != "" && unknown {
		fmt.Fprintln(stderr, w)
	}
}

// replayFailed says a replay's error as the command line caused it, after the records the
// rules did not know in what was replayed before it stopped.
func replayFailed(err error, stderr io.Writer) error {
	var stopped *session.ReplayError
	if errors.As(err, &stopped) && len(stopped.Engines) > 0 {
		if w := stopped.UnknownRecordsWarning(stopped.Engines[0].Options().Version); w != "" {
			fmt.Fprintln(stderr, w)
		}
	}
	return commandLine(err)
}

// positionsOn resolves the flags' point on an opened source over the selected partitions
// (the commands that replay partition by partition themselves: snapshot create, restart).
func (f *replayFlags) positionsOn(cmd *cobra.Command, src eventlog.Source, stderr io.Writer) ([]query.Position, error) {
	at, err := f.point()
	if err != nil {
		return nil, err
	}
	parts, err := session.Select(src, f.partitions, at)
	if err != nil {
		return nil, commandLine(err)
	}
	pos, err := session.Resolve(cmd.Context(), src, parts, at, trace(stderr))
	return pos, commandLine(err)
}

// offsetRange is the records of one partition a --since/--until window keeps: from (inclusive)
// to (inclusive); empty when from > to.
type offsetRange struct{ from, to int64 }

// timeWindow resolves --since and --until on each partition: since keeps records from the
// first stamped at or after it (Kafka's ListOffsets by timestamp), until the records up to the
// last stamped at or before it (as --at-time cuts). Either may be "".
func timeWindow(cmd *cobra.Command, src eventlog.Source, parts []int32, since, until string, stderr io.Writer) (map[int32]offsetRange, error) {
	out := map[int32]offsetRange{}
	for _, p := range parts {
		out[p] = offsetRange{0, math.MaxInt64}
	}
	if since != "" {
		t, err := parseTimeFlag("since", since)
		if err != nil {
			return nil, err
		}
		pos, err := query.Since(cmd.Context(), src, parts, t)
		if err != nil {
			return nil, err
		}
		for _, ps := range pos {
			r := out[ps.Partition]
			r.from = ps.Until
			out[ps.Partition] = r
			if ps.Next != nil {
				fmt.Fprintf(stderr, "since: partition %d: from the record at %s\n", ps.Partition, ps.Next)
			} else {
				fmt.Fprintf(stderr, "since: partition %d: no record stamped at or after %s\n", ps.Partition, query.FormatMillis(t.UnixMilli()))
			}
		}
	}
	if until != "" {
		t, err := parseTimeFlag("until", until)
		if err != nil {
			return nil, err
		}
		pos, err := session.Resolve(cmd.Context(), src, parts, query.AtTime(t), trace(stderr))
		if err != nil {
			return nil, commandLine(err)
		}
		for _, ps := range pos {
			r := out[ps.Partition]
			if ps.Until != math.MaxInt64 {
				r.to = ps.Until - 1
			}
			out[ps.Partition] = r
		}
	}
	return out, nil
}

// sinceOffsets resolves --since to the first offset kept in each selected partition of path
// (timeline and report: the whole log is still replayed, so that what comes after is told
// with what came before). A point flag that does not parse is refused here when strictPoint,
// else left for the replay to refuse.
func sinceOffsets(cmd *cobra.Command, path string, f *replayFlags, since string, strictPoint bool, stderr io.Writer) (map[int32]int64, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	src, err := openInput(cmd, path, opts.Mode)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	at, err := f.point()
	if err != nil && strictPoint {
		return nil, err
	}
	parts, err := session.Select(src, f.partitions, at)
	if err != nil {
		return nil, commandLine(err)
	}
	w, err := timeWindow(cmd, src, parts, since, "", stderr)
	if err != nil {
		return nil, err
	}
	from := map[int32]int64{}
	for p, r := range w {
		from[p] = r.from
	}
	return from, nil
}
