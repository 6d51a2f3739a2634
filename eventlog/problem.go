package eventlog

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Mode selects what a reader does with bad input.
type Mode int

const (
	// Strict stops at the first problem with a *Problem error naming file, byte position and
	// offset.
	Strict Mode = iota
	// Forensic records each problem in a Report, skips the damaged bytes and continues with
	// the next readable batch.
	Forensic
)

func (m Mode) String() string {
	if m == Forensic {
		return "forensic"
	}
	return "strict"
}

// Kind classifies a problem found in the input.
type Kind string

const (
	KindTruncated    Kind = "truncated"     // the file ends inside a batch (header or body): a cut tail, or a length past EOF
	KindBadLength    Kind = "bad-length"    // a length below the minimum or above the reader's limit
	KindBadMagic     Kind = "bad-magic"     // a magic byte other than 0, 1 or 2: garbage where a batch should start
	KindBadCRC       Kind = "bad-crc"       // the stored CRC does not match the bytes
	KindBadHeader    Kind = "bad-header"    // a CRC-valid header with impossible fields (negative count or delta, ...)
	KindUnknownCodec Kind = "unknown-codec" // codec bits 5-7
	KindDecompress   Kind = "decompress"    // the compressed payload does not decompress
	KindTooLarge     Kind = "too-large"     // decoded, the batch would take more memory than the reader's per-batch limit
	KindBadRecord    Kind = "bad-record"    // a record whose framing or varints run past its batch, or a count mismatch
	KindOffsetOrder  Kind = "offset-order"  // a batch that starts below the end of the previous one
	KindBelowBase    Kind = "below-base"    // a batch wholly below its segment file's base offset (renamed or mixed-up files)
	// KindSuperseded is not damage: batches at the start of a later segment file that lie wholly
	// below the end of the earlier files, left when a copy catches the log cleaner between
	// writing its output segment and deleting the segments it replaced. Kafka's offset-driven
	// reads never see them; neither does eventlog. Strict mode does not fail on them.
	KindSuperseded Kind = "superseded"
)

// Damage reports whether the kind is bad input (everything but KindSuperseded).
func (k Kind) Damage() bool { return k != KindSuperseded }

// Problem is one piece of bad input: what, where, and in forensic mode how much was skipped
// because of it. In strict mode a reader returns it as the error (use errors.As).
type Problem struct {
	Kind      Kind
	Partition int32
	File      string
	Pos       int64 // byte position in File where the bad batch (or bad bytes) start
	Offset    int64 // the batch's base offset as read from its header, -1 if unknown
	Detail    string
	// Forensic mode only: what the reader skipped because of this problem.
	SkippedBytes   int64
	SkippedRecords int64 // records declared by the skipped batch headers (untrusted when the CRC is bad)
	SkippedBatches int64
}

func (p *Problem) Error() string {
	off := "unknown"
	if p.Offset >= 0 {
		off = fmt.Sprint(p.Offset)
	}
	return fmt.Sprintf("%s: %s at byte %d (partition %d, base offset %s): %s", p.File, p.Kind, p.Pos, p.Partition, off, p.Detail)
}

// Tally counts what was skipped for one Kind.
type Tally struct {
	Problems int64
	Batches  int64
	Records  int64
	Bytes    int64
}

// MaxKeptProblems is how many problems a Report keeps in full unless KeepAll is set: enough
// to read, bounded whatever the input. Every problem is counted in its group all the same.
const MaxKeptProblems = 1000

// Report collects warnings (files ignored on purpose) and problems (bad input) of a reader. It
// is safe for concurrent use. Memory stays bounded: problems are counted per partition, file
// and kind (ProblemGroup, with the first and the last of each), and only the first
// MaxKeptProblems are kept in full unless KeepAll is set (a verbose report).
type Report struct {
	// KeepAll keeps every problem in full, for a report that lists them all (--verbose).
	KeepAll bool

	mu       sync.Mutex
	warnings []string
	problems []Problem
	total    int64
	groups   []*ProblemGroup
	byKey    map[groupKey]*ProblemGroup
}

// ProblemGroup counts the problems of one kind in one file of one partition.
type ProblemGroup struct {
	Partition int32
	File      string
	Kind      Kind
	Tally
	First, Last Problem
}

type groupKey struct {
	partition int32
	file      string
	kind      Kind
}

// Warn records a warning, such as a leftover .cleaned/.swap/.deleted file and what was done with it.
func (r *Report) Warn(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// Add records a problem.
func (r *Report) Add(p Problem) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total++
	if r.KeepAll || len(r.problems) < MaxKeptProblems {
		r.problems = append(r.problems, p)
	}
	k := groupKey{p.Partition, p.File, p.Kind}
	g := r.byKey[k]
	if g == nil {
		if r.byKey == nil {
			r.byKey = map[groupKey]*ProblemGroup{}
		}
		g = &ProblemGroup{Partition: p.Partition, File: p.File, Kind: p.Kind, First: p}
		r.byKey[k] = g
		r.groups = append(r.groups, g)
	}
	g.Problems++
	g.Batches += p.SkippedBatches
	g.Records += p.SkippedRecords
	g.Bytes += p.SkippedBytes
	g.Last = p
}

// Warnings returns a copy of the warnings in the order they were found.
func (r *Report) Warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.warnings...)
}

// Problems returns a copy of the problems kept in full (all of them, unless there were more
// than MaxKeptProblems and KeepAll is not set: see Count), by partition, each partition's in
// the order they were found. (Partitions are often read in parallel: the order they reported
// in is not stable from run to run, the order within one is.)
func (r *Report) Problems() []Problem {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Problem(nil), r.problems...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

// Count returns the number of problems recorded, kept in full or not.
func (r *Report) Count() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// Groups returns the problems counted per partition, file and kind, by partition, each
// partition's in the order their first problem was found.
func (r *Report) Groups() []ProblemGroup {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ProblemGroup, len(r.groups))
	for i, g := range r.groups {
		out[i] = *g
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

// Summary counts every problem and everything skipped, by kind.
func (r *Report) Summary() map[Kind]Tally {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := map[Kind]Tally{}
	for _, g := range r.groups {
		t := s[g.Kind]
		t.Problems += g.Problems
		t.Batches += g.Batches
		t.Records += g.Records
		t.Bytes += g.Bytes
		s[g.Kind] = t
	}
	return s
}

// ProblemLines renders the problems for a person: one line per problem when the report keeps
// them all (KeepAll), otherwise one line per partition, file and kind, the problem itself when
// it is alone in its group, else how many, where, what was skipped and the first one's detail.
func (r *Report) ProblemLines() []string {
	skipped := func(t Tally) string {
		return fmt.Sprintf("skipped %d batches, %d records, %d bytes", t.Batches, t.Records, t.Bytes)
	}
	var out []string
	if r.KeepAll {
		for _, p := range r.Problems() {
			out = append(out, fmt.Sprintf("%s (%s)", p.Error(), skipped(Tally{Batches: p.SkippedBatches, Records: p.SkippedRecords, Bytes: p.SkippedBytes})))
		}
		return out
	}
	for _, g := range r.Groups() {
		if g.Problems == 1 {
			out = append(out, fmt.Sprintf("%s (%s)", g.First.Error(), skipped(g.Tally)))
			continue
		}
		offsets := "unknown base offsets"
		if g.First.Offset >= 0 && g.Last.Offset >= 0 {
			offsets = fmt.Sprintf("base offsets %d..%d", g.First.Offset, g.Last.Offset)
		}
		out = append(out, fmt.Sprintf("%s: %d %s problems from byte %d to %d (partition %d, %s; %s); the first: %s",
			g.File, g.Problems, g.Kind, g.First.Pos, g.Last.Pos, g.Partition, offsets, skipped(g.Tally), g.First.Detail))
	}
	return out
}

// String renders the summary, one line per kind in a stable order.
func (r *Report) String() string {
	s := r.Summary()
	kinds := make([]string, 0, len(s))
	for k := range s {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	var b strings.Builder
	fmt.Fprintf(&b, "%d warnings, %d problems\n", len(r.Warnings()), r.Count())
	for _, k := range kinds {
		t := s[Kind(k)]
		fmt.Fprintf(&b, "  %-14s problems %d, skipped batches %d, records %d, bytes %d\n", k, t.Problems, t.Batches, t.Records, t.Bytes)
	}
	return b.String()
}
