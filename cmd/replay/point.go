package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/replay/query"
)

// pointFlags name a point in history: --at-offset (one offset, or partition:offset pairs) or
// --at-time (RFC 3339, relative like -2h, or Unix ms). Resolving them is replay/query's.
type pointFlags struct {
	atOffset []string
	atTime   string
}

const atOffsetUsage = "the state after the record at this offset: N on an input of one partition, P:OFFSET pairs (3:1200,7:88) on several; default: the end of the log"
const atTimeUsage = "the state at this time: RFC 3339 (2026-02-20T14:05:00Z), relative (-2h, -1d) or Unix ms; each partition is cut before its first record stamped later"

func (f *pointFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringSliceVar(&f.atOffset, "at-offset", nil, atOffsetUsage)
	fl.StringVar(&f.atTime, "at-time", "", atTimeUsage)
}

// now is the commands' one wall clock (internal/wallclock: main sets it from COORDLOG_NOW):
// relative times count back from it and snapshots are stamped with it; tests replace it.
var now = time.Now

// point parses the flags; both at once is a usage error.
func (f *pointFlags) point() (query.Point, error) {
	switch {
	case len(f.atOffset) > 0 && f.atTime != "":
		return query.Point{}, usageError{errors.New("give --at-offset or --at-time, not both")}
	case len(f.atOffset) > 0:
		p, err := query.ParseOffsets(f.atOffset)
		if err != nil {
			return p, usageError{err}
		}
		return p, nil
	case f.atTime != "":
		t, err := query.ParseTime(f.atTime, now())
		if err != nil {
			return query.Point{}, usageError{fmt.Errorf("--at-time: %w", err)}
		}
		return query.AtTime(t), nil
	}
	return query.End(), nil
}

func (f *pointFlags) set() bool { return len(f.atOffset) > 0 || f.atTime != "" }

// selectFor picks the partitions to read: --partition when given, else those an
// --at-offset P:OFFSET list names, else all.
func selectFor(src eventlog.Source, partitions []int32, at query.Point) ([]int32, error) {
	if len(partitions) == 0 {
		partitions = at.Partitions()
	}
	parts, err := input.SelectPartitions(src, partitions)
	if err != nil {
		return nil, usageError{err}
	}
	return parts, nil
}

// resolve places the point in each partition; impossible values are usage errors. It prints
// where a time (or an offset in a gap) fell, on stderr: which record, how timestamps were read.
func resolve(cmd *cobra.Command, src eventlog.Source, parts []int32, at query.Point, stderr io.Writer) ([]query.Position, error) {
	pos, err := query.Resolve(cmd.Context(), src, parts, at)
	if err != nil {
		if query.IsPointError(err) {
			return nil, usageError{err}
		}
		var prob *eventlog.Problem
		if errors.As(err, &prob) {
			return nil, fmt.Errorf("%w (use --forensic to record it and continue)", err)
		}
		return nil, err
	}
	for i := range pos {
		if at.IsTime() || len(pos[i].Notes) > 0 {
			fmt.Fprintln(stderr, "at:", pos[i].Describe())
		}
	}
	return pos, nil
}

// positionLabel says where a partition's state is, for headers: "the end of the log",
// "offset 41", "2026-02-20T14:05:00.000Z, after offset 41".
func positionLabel(p *query.Position) string {
	switch {
	case p == nil || p.AtEnd():
		return "the end of the log"
	case strings.ContainsRune(p.Point, 'T'):
		if p.Last == nil {
			return p.Point + ", before the first record"
		}
		return fmt.Sprintf("%s, after offset %d", p.Point, p.Last.Offset)
	}
	return "offset " + p.Point
}

// positionsOn resolves the flags' point on an opened source over the selected partitions
// (the commands that replay partition by partition themselves: snapshot create, restart,
// --from-snapshot).
func (f *replayFlags) positionsOn(cmd *cobra.Command, src eventlog.Source, stderr io.Writer) (query.Point, []query.Position, error) {
	at, err := f.point()
	if err != nil {
		return at, nil, err
	}
	parts, err := selectFor(src, f.partitions, at)
	if err != nil {
		return at, nil, err
	}
	pos, err := resolve(cmd, src, parts, at, stderr)
	return at, pos, err
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
		t, err := query.ParseTime(since, now())
		if err != nil {
			return nil, usageError{fmt.Errorf("--since: %w", err)}
		}
		// The first record stamped at or after t is the first one later than t - 1 ms.
		pos, err := query.Resolve(cmd.Context(), src, parts, query.AtTimeMillis(t.UnixMilli()-1))
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
		t, err := query.ParseTime(until, now())
		if err != nil {
			return nil, usageError{fmt.Errorf("--until: %w", err)}
		}
		pos, err := resolve(cmd, src, parts, query.AtTime(t), stderr)
		if err != nil {
			return nil, err
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
