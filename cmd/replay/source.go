package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// input is an opened log: segment files or a Pebble log.
type input struct {
	eventlog.Source
	path   string
	report *eventlog.Report // segment sources only
	close  func() error
}

// isPebbleDir reports whether dir holds a Pebble database.
func isPebbleDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "CURRENT"))
	if err == nil {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
	return len(m) > 0
}

// openInput opens path as a Pebble log when it holds one, otherwise as Kafka segments.
func openInput(path string, mode eventlog.Mode) (*input, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: give a __consumer_offsets-N directory, a log directory or a coordlog database", path)
	}
	if isPebbleDir(path) {
		l, err := pebblelog.Open(path, nil)
		if err != nil {
			return nil, fmt.Errorf("open coordlog database %s: %w", path, err)
		}
		return &input{Source: l, path: path, close: l.Close}, nil
	}
	r, err := segment.Open(path, segment.Options{Mode: mode})
	if err != nil {
		return nil, err
	}
	parts, _ := r.Partitions()
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s holds no __consumer_offsets segments (no NNNNNNNNNNNNNNNNNNNN.log files, no __consumer_offsets-N directories)", path)
	}
	return &input{Source: r, path: path, report: r.Report(), close: func() error { return nil }}, nil
}

// printReport writes the warnings and, in forensic mode, the problems of a segment input.
func (in *input) printReport(w io.Writer) {
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

// selectPartitions intersects the source's partitions with the requested ones.
func selectPartitions(src eventlog.Source, want []int32) ([]int32, error) {
	all, err := src.Partitions()
	if err != nil {
		return nil, err
	}
	if len(want) == 0 {
		return all, nil
	}
	have := map[int32]bool{}
	for _, p := range all {
		have[p] = true
	}
	var out []int32
	var missing []error
	for _, p := range want {
		if !have[p] {
			missing = append(missing, fmt.Errorf("partition %d is not in the input (it has %v)", p, all))
			continue
		}
		out = append(out, p)
	}
	return out, errors.Join(missing...)
}
