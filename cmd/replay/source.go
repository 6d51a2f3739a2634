package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// source is an opened log as the commands use it: a directory or database (eventlog/input)
// or a live cluster (live.go).
type source struct {
	eventlog.Source
	path     string
	report   *eventlog.Report // segment sources only
	segments *segment.Reader  // segment sources only
	close    func() error
}

// segmentFiles lists partition p's segment files (none for a database or a live cluster).
func (in *source) segmentFiles(p int32) []string {
	if in.segments == nil {
		return nil
	}
	return in.segments.Files(p)
}

// openInput opens path as a coordlog database when it holds one, otherwise as Kafka segments
// read in mode with the root's reading flags (--max-batch-memory, --verbose).
func openInput(cmd *cobra.Command, path string, mode eventlog.Mode) (*source, error) {
	rf, err := readingFlags(cmd)
	if err != nil {
		return nil, err
	}
	in, err := input.OpenWith(path, input.Options{Mode: mode, MaxBatchMemory: rf.maxBatchMemory, KeepAllProblems: rf.verbose})
	if err != nil {
		return nil, err
	}
	return &source{Source: in, path: in.Path, report: in.Report(), segments: in.Segments, close: in.Close}, nil
}

// printReport writes what the segment input skipped: files ignored on purpose (warnings),
// batches superseded by earlier segment files (notes: Kafka's reads skip them too), and, in
// forensic mode, damaged input. Without --verbose each file counts its problems per kind on one
// line; with it every problem has its own. Notes go to w (silenced by --quiet), damage always.
func (in *source) printReport(w io.Writer) {
	if in.report != nil {
		in.report.Render(w, loud(w), verbose(w))
	}
}
