package session

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/coordlog/coordlog/cluster"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/live"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/replay/query"
)

// Input names a __consumer_offsets log to open: a path (a __consumer_offsets-N directory, a
// log directory holding several, or a coordlog database) or a live cluster.
type Input struct {
	// Path is the directory or database to read; empty with Cluster.
	Path string
	// Cluster, with Path empty, reads Topic from a running cluster: up to each partition's
	// high watermark when a request is made (Follow reads on as the log grows).
	Cluster *cluster.Config
	Topic   string // default: __consumer_offsets
	// Mode is how damaged input is met: eventlog.Strict stops at it, eventlog.Forensic skips
	// it and reports it (Source.Report).
	Mode eventlog.Mode
	// MaxBatchMemory refuses a batch whose records would take more memory than this, decoded
	// (0: the segment reader's default).
	MaxBatchMemory int
	// KeepAllProblems keeps every skipped or damaged batch in the report, instead of counts
	// per file and kind past the first ones.
	KeepAllProblems bool
}

// Source is an opened log: the partitions of a directory, a database or a cluster topic.
// Close it when done.
type Source struct {
	eventlog.Source
	// Name says where the log is: the path, or kafka://BOOTSTRAP/TOPIC for a cluster.
	Name string
	// Report is what a segment input skipped: files ignored on purpose, batches superseded by
	// earlier segment files, and in forensic mode damaged input (nil for a database or a
	// cluster). It is complete once a request is done reading (Trace.Done).
	Report *eventlog.Report
	// Live is the cluster reader (nil for a path).
	Live *live.Source

	segments *segment.Reader
	close    func() error
}

// Open opens in. A path holding a coordlog database is read as one; anything else as Kafka
// segments. A cluster is connected to at once and its topic's metadata read. Errors of
// in.Cluster's settings are *cluster.ConfigError, before anything connects.
func Open(ctx context.Context, in Input) (*Source, error) {
	if in.Cluster != nil {
		if in.Path != "" {
			return nil, &RequestError{errors.New("give a path or a cluster, not both")}
		}
		return openLive(ctx, *in.Cluster, in.Topic)
	}
	src, err := input.OpenWith(in.Path, input.Options{Mode: in.Mode, MaxBatchMemory: in.MaxBatchMemory, KeepAllProblems: in.KeepAllProblems})
	if err != nil {
		return nil, err
	}
	return &Source{Source: src, Name: src.Path, Report: src.Report(), segments: src.Segments, close: src.Close}, nil
}

func openLive(ctx context.Context, cfg cluster.Config, topic string) (*Source, error) {
	opts, err := cfg.ClientOptions()
	if err != nil {
		return nil, err
	}
	if topic == "" {
		topic = live.DefaultTopic
	}
	src, err := live.Open(ctx, opts, live.Options{Topic: topic})
	if err != nil {
		return nil, fmt.Errorf("read %s from %s: %w", topic, cfg, err)
	}
	return &Source{Source: src, Name: "kafka://" + cfg.String() + "/" + topic, Live: src, close: src.Close}, nil
}

// Close releases the source; the replayed states stay readable.
func (s *Source) Close() error {
	if s.close == nil {
		return nil
	}
	c := s.close
	s.close = nil
	return c()
}

// SegmentFiles lists partition p's segment files (none for a database or a cluster).
func (s *Source) SegmentFiles(p int32) []string {
	if s.segments == nil {
		return nil
	}
	return s.segments.Files(p)
}

// SegmentBytes is the size on disk of the segment files of parts (0 for a database or a
// cluster): what reading them all goes through, for progress.
func (s *Source) SegmentBytes(parts []int32) int64 {
	var total int64
	for _, p := range parts {
		for _, f := range s.SegmentFiles(p) {
			if st, err := os.Stat(f); err == nil {
				total += st.Size()
			}
		}
	}
	return total
}

// Select returns the partitions of src to read: want when given, else those the point names
// (an --at-offset P:OFFSET list), else all of them. A partition src does not have is a
// *RequestError naming those it has.
func Select(src eventlog.Source, want []int32, at query.Point) ([]int32, error) {
	if len(want) == 0 {
		want = at.Partitions()
	}
	parts, err := input.SelectPartitions(src, want)
	if err != nil {
		return nil, &RequestError{err}
	}
	return parts, nil
}
