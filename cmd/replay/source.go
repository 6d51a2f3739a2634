package main

import (
	"fmt"
	"io"

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

// openInput opens path as a coordlog database when it holds one, otherwise as Kafka segments.
func openInput(path string, mode eventlog.Mode) (*source, error) {
	in, err := input.Open(path, mode)
	if err != nil {
		return nil, err
	}
	return &source{Source: in, path: in.Path, report: in.Report(), segments: in.Segments, close: in.Close}, nil
}

// printReport writes the warnings and, in forensic mode, the problems of a segment input.
func (in *source) printReport(w io.Writer) {
	if in.report == nil {
		return
	}
	for _, warn := range in.report.Warnings() {
		fmt.Fprintln(w, "warning:", warn)
	}
	problems := in.report.Problems()
	if len(problems) == 0 {
		return
	}
	fmt.Fprintf(w, "%d problem(s) in the input:\n", len(problems))
	for _, p := range problems {
		fmt.Fprintf(w, "  %s (skipped %d batches, %d records, %d bytes)\n", p.Error(), p.SkippedBatches, p.SkippedRecords, p.SkippedBytes)
	}
	fmt.Fprint(w, in.report.String())
}
