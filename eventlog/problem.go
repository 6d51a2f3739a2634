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
	KindDecompress   Kind = "decompress"    // the compressed payload does not decompress (or exceeds the size limit)
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

// Report collects warnings (files ignored on purpose) and problems (bad input) of a reader. It
// is safe for concurrent use.
type Report struct {
	mu       sync.Mutex
	warnings []string
	problems []Problem
}

// Warn records a warning, such as a transient .cleaned/.swap/.deleted file that was ignored.
func (r *Report) Warn(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// Add records a problem.
func (r *Report) Add(p Problem) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, p)
}

// Warnings returns a copy of the warnings in the order they were found.
func (r *Report) Warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.warnings...)
}

// Problems returns a copy of the problems by partition, each partition's in the order they
// were found. (Partitions are often read in parallel: the order they reported in is not
// stable from run to run, the order within one is.)
func (r *Report) Problems() []Problem {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Problem(nil), r.problems...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

// Summary counts every problem and everything skipped, by kind.
func (r *Report) Summary() map[Kind]Tally {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := map[Kind]Tally{}
	for _, p := range r.problems {
		t := s[p.Kind]
		t.Problems++
		t.Batches += p.SkippedBatches
		t.Records += p.SkippedRecords
		t.Bytes += p.SkippedBytes
		s[p.Kind] = t
	}
	return s
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
	fmt.Fprintf(&b, "%d warnings, %d problems\n", len(r.Warnings()), len(r.Problems()))
	for _, k := range kinds {
		t := s[Kind(k)]
		fmt.Fprintf(&b, "  %-14s problems %d, skipped batches %d, records %d, bytes %d\n", k, t.Problems, t.Batches, t.Records, t.Bytes)
	}
	return b.String()
}
