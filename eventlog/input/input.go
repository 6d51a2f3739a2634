// Package input opens what a user points coordlog at, whatever it is: one __consumer_offsets-N
// directory copied off a broker, a broker's whole log directory (every __consumer_offsets-N
// in it, each partition on its own), or a coordlog database made by `replay import`. Every
// command and library caller goes through Open, so that the kinds are told apart in one place
// and by the same rules.
//
// # Detection
//
// A directory is a coordlog database when it holds Pebble's CURRENT file or a MANIFEST-N file
// (IsDatabase); it is opened read-only (pebblelog.Options.ReadOnly): reading writes nothing
// and takes no lock, beside other readers and a writer. Otherwise it is read as Kafka segments (segment.Open): a partition directory
// when it holds segment files (or a log cleaner's leftovers) itself, else a log directory whose
// __consumer_offsets-N subdirectories (symbolic links to directories included, followed and
// reported) are the partitions; a `__consumer_offsets-N` whose N does not fit a partition
// number is reported and skipped. `.` and `..` are resolved to their names, so that a command
// run inside a partition directory knows its partition. A regular file ending in .log is one
// segment (segment.OpenFile), as kafka-dump-log --files takes it. Anything else (another file,
// a named pipe or device, which is never opened, a directory with neither, a partition
// directory of another topic) is an error that says what to give instead.
package input

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// Kind is what an input directory holds.
type Kind int

const (
	// PartitionDir is one __consumer_offsets-N directory of segment files.
	PartitionDir Kind = iota + 1
	// LogDir is a broker's log directory holding __consumer_offsets-N directories.
	LogDir
	// Database is a coordlog Pebble database.
	Database
	// SegmentFile is one .log segment file (as kafka-dump-log --files takes it).
	SegmentFile
)

func (k Kind) String() string {
	switch k {
	case PartitionDir:
		return "partition directory"
	case LogDir:
		return "log directory"
	case Database:
		return "coordlog database"
	case SegmentFile:
		return "segment file"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Input is an opened input: an eventlog.Source over its partitions. Close it when done.
type Input struct {
	eventlog.Source
	Path string
	Kind Kind
	// Segments is the segment reader of a partition or log directory (nil for a database).
	Segments *segment.Reader
	// DB is the Pebble log of a database (nil for segments).
	DB *pebblelog.Log

	closed bool
}

// Report returns the warnings and problems the segment reader found so far (nil for a
// database, which holds only what an import checked).
func (in *Input) Report() *eventlog.Report {
	if in.Segments == nil {
		return nil
	}
	return in.Segments.Report()
}

// Close releases the input; a second call does nothing.
func (in *Input) Close() error {
	if in.closed {
		return nil
	}
	in.closed = true
	if in.DB != nil {
		return in.DB.Close()
	}
	return nil
}

var pebbleManifest = regexp.MustCompile(`^MANIFEST-\d+$`)

// IsDatabase reports whether dir holds a coordlog (Pebble) database.
func IsDatabase(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err == nil {
		return true
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if pebbleManifest.MatchString(e.Name()) {
			return true
		}
	}
	return false
}

// CheckDBPath checks that db can be written as a coordlog database, from inputs: it is an
// existing database, or a directory that does not exist yet, or an empty one (or one holding
// only what a writer creates before its first MANIFEST: LOCK, coordlog.lock, coordlog.reserve);
// and it is not one of the inputs nor inside one. Anything else (a Kafka partition directory,
// a directory of other files) would get Pebble's files written among its own.
func CheckDBPath(db string, inputs ...string) error {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return filepath.Clean(p)
	}
	for _, in := range inputs {
		if rel, err := filepath.Rel(abs(in), abs(db)); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			what := "inside the input " + in
			if rel == "." {
				what = "the input itself"
			}
			return fmt.Errorf("--db %s is %s: the database's files would be written among the input's; give a directory outside it", db, what)
		}
	}
	st, err := os.Stat(db)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--db %s: %w", db, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("--db %s is a file, not a directory: give a new or empty directory, or an existing coordlog database", db)
	}
	if IsDatabase(db) {
		return nil
	}
	ents, err := os.ReadDir(db)
	if err != nil {
		return fmt.Errorf("--db %s: %w", db, err)
	}
	var others []string
	for _, e := range ents {
		switch e.Name() {
		case "LOCK", "coordlog.lock", "coordlog.reserve":
			continue
		}
		others = append(others, e.Name())
	}
	if len(others) == 0 {
		return nil
	}
	shown := others
	if len(shown) > 3 {
		shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(others)-3))
	}
	return fmt.Errorf("--db %s is not a coordlog database and not empty (it holds %s): give a new or empty directory, or an existing coordlog database", db, strings.Join(shown, ", "))
}

// Options configure how segments are read (a database holds only what an import checked).
type Options struct {
	// Mode is strict (the first damaged batch is an error) or forensic (it is skipped and
	// reported).
	Mode eventlog.Mode
	// MaxBatchMemory bounds the memory of one decoded batch (segment.Options.MaxBatchMemory;
	// 0: segment.DefaultMaxBatchMemory).
	MaxBatchMemory int
	// KeepAllProblems keeps every problem of the report in full, for a verbose listing.
	KeepAllProblems bool
}

func (o Options) segments() segment.Options {
	return segment.Options{Mode: o.Mode, MaxBatchMemory: o.MaxBatchMemory, KeepAllProblems: o.KeepAllProblems}
}

// Open opens path as a database when it holds one, otherwise as Kafka segments read in mode
// (strict: the first damaged batch is an error; forensic: it is skipped and reported). A
// database is opened read-only (pebblelog.Options.ReadOnly): nothing is written, no lock is
// taken, and it reads beside other readers and a writer.
func Open(path string, mode eventlog.Mode) (*Input, error) {
	return OpenWith(path, Options{Mode: mode})
}

// OpenWith is Open with every reading option.
func OpenWith(path string, opts Options) (*Input, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file or a directory: not opened (a named pipe or a device would block or never end); give a __consumer_offsets-N directory, a log directory, a coordlog database or one .log segment file", path)
		}
		if !strings.HasSuffix(path, ".log") {
			return nil, fmt.Errorf("%s is not a directory: give a __consumer_offsets-N directory, a log directory, a coordlog database or one .log segment file", path)
		}
		r, err := segment.OpenFile(path, opts.segments())
		if err != nil {
			return nil, err
		}
		return &Input{Source: r, Path: path, Kind: SegmentFile, Segments: r}, nil
	}
	if IsDatabase(path) {
		l, err := pebblelog.Open(path, &pebblelog.Options{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		return &Input{Source: l, Path: path, Kind: Database, DB: l}, nil
	}
	r, err := segment.Open(path, opts.segments())
	if err != nil {
		return nil, err
	}
	if parts, _ := r.Partitions(); len(parts) == 0 {
		return nil, fmt.Errorf("%s holds no __consumer_offsets segments (no NNNNNNNNNNNNNNNNNNNN.log files, no __consumer_offsets-N directories)", path)
	}
	kind := LogDir
	if r.PartitionDir() {
		kind = PartitionDir
	}
	return &Input{Source: r, Path: path, Kind: kind, Segments: r}, nil
}

// Select intersects the input's partitions with want (every partition when want is empty).
// Partitions the input does not have are an error naming those it has.
func (in *Input) Select(want []int32) ([]int32, error) {
	return SelectPartitions(in, want)
}

// SelectPartitions intersects src's partitions with want (all of them when want is empty).
func SelectPartitions(src eventlog.Source, want []int32) ([]int32, error) {
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
