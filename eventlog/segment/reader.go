package segment

import (
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/coordlog/coordlog/eventlog"
)

// Options configure a Reader.
type Options struct {
	// Mode is eventlog.Strict (the zero value) or eventlog.Forensic.
	Mode eventlog.Mode
	// MaxBatchBytes bounds the on-disk size of one batch; a larger declared length is treated as
	// damage (KindBadLength). It bounds the reader's buffer. Default 64 MiB.
	MaxBatchBytes int
	// MaxDecompressedBytes bounds the decompressed payload of one batch (KindDecompress past it).
	// Default 64 MiB.
	MaxDecompressedBytes int
}

const (
	defaultMaxBatch = 64 << 20
	windowSize      = 1 << 20
	v2HeaderLen     = 61
	logOverhead     = 12 // int64 offset + int32 length before every batch / legacy message
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type segFile struct {
	path string
	base int64
}

// Reader reads Kafka segment files: one partition directory (`<topic>-N`) or a log directory
// holding `__consumer_offsets-N` partition directories. It implements eventlog.Source. A Reader
// is safe for concurrent use by iterators of different partitions; each iterator is not.
type Reader struct {
	opts   Options
	parts  map[int32][]segFile
	report *eventlog.Report
	// partitionDir says the path was one partition's directory, not a log directory.
	partitionDir bool

	mu       sync.Mutex
	lastOffs map[segFile]int64 // a file's last offset, read from its batch headers (cached)
}

var (
	partitionDirRE = regexp.MustCompile(`^(.+)-(\d+)$`)
	offsetsDirRE   = regexp.MustCompile(`^__consumer_offsets-(\d+)$`)
	segmentRE      = regexp.MustCompile(`^(\d{20})\.log$`)
	transientRE    = regexp.MustCompile(`\.(cleaned|swap|deleted)$`)
)

// Open scans path. If path holds segment files (NNNNNNNNNNNNNNNNNNNN.log) it is one partition,
// numbered by its name's `-N` suffix, and it must be a __consumer_offsets partition: a
// directory of another topic (`orders-0`, `__transaction_state-3`) holds records that are not
// coordinator records and is refused. A directory holding `__consumer_offsets-N` directories is
// a log directory whose partitions they are, whatever its own name (`kafka-logs-1`); other
// .log files beside them (a tool's `server.log`, `driver.log`) are reported and ignored. A
// `__consumer_offsets-N` directory holding only such files is an empty partition. Transient
// .cleaned/.swap/.deleted files are reported as warnings and ignored.
func Open(path string, opts Options) (*Reader, error) {
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = defaultMaxBatch
	}
	if opts.MaxDecompressedBytes <= 0 {
		opts.MaxDecompressedBytes = defaultMaxBatch
	}
	r := &Reader{opts: opts, parts: map[int32][]segFile{}, report: &eventlog.Report{}}
	files, segments, otherLogs, err := r.scanDir(path)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	offsetsDirs := false
	for _, e := range ents {
		if e.IsDir() && offsetsDirRE.MatchString(e.Name()) {
			offsetsDirs = true
		}
	}
	m := partitionDirRE.FindStringSubmatch(filepath.Base(filepath.Clean(path)))
	if segments || (len(otherLogs) > 0 && m != nil && m[1] == offsetsTopic && !offsetsDirs) {
		r.partitionDir = true
		for _, name := range otherLogs {
			r.report.Warn("%s: .log file without a 20-digit base offset name, ignored", filepath.Join(path, name))
		}
		if m == nil {
			return nil, fmt.Errorf("%s: holds .log files but its name does not end in -<partition>", path)
		}
		if err := offsetsPartition(path, m[1]); err != nil {
			return nil, err
		}
		p, err := strconv.ParseInt(m[2], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s: partition number: %w", path, err)
		}
		r.parts[int32(p)] = files
		return r, nil
	}
	for _, name := range otherLogs {
		r.report.Warn("%s: not a segment file (this is a log directory), ignored", filepath.Join(path, name))
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		m := offsetsDirRE.FindStringSubmatch(e.Name())
		if m == nil {
			if strings.HasPrefix(e.Name(), "__consumer_offsets-") {
				r.report.Warn("%s: not a partition directory (deleted or future replica?), ignored", filepath.Join(path, e.Name()))
			}
			continue
		}
		p, err := strconv.ParseInt(m[1], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s: partition number: %w", e.Name(), err)
		}
		dir := filepath.Join(path, e.Name())
		files, _, otherLogs, err := r.scanDir(dir)
		if err != nil {
			return nil, err
		}
		for _, name := range otherLogs {
			r.report.Warn("%s: .log file without a 20-digit base offset name, ignored", filepath.Join(dir, name))
		}
		r.parts[int32(p)] = files
	}
	if len(r.parts) == 0 {
		if len(otherLogs) > 0 {
			return nil, fmt.Errorf("%s: no segment files (NNNNNNNNNNNNNNNNNNNN.log) and no __consumer_offsets-N directories; its .log files (%s) are not segments", path, strings.Join(otherLogs, ", "))
		}
		return nil, fmt.Errorf("%s: no .log files and no __consumer_offsets-N directories", path)
	}
	return r, nil
}

const offsetsTopic = "__consumer_offsets"

// offsetsPartition refuses a partition directory of another topic than __consumer_offsets.
func offsetsPartition(path, topic string) error {
	if topic == offsetsTopic {
		return nil
	}
	return fmt.Errorf("%s is a partition of topic %q, not of %s: its records are not group coordinator records; give a %s-N directory (or the log directory that holds them)",
		path, topic, offsetsTopic, offsetsTopic)
}

// OpenFile reads one segment file, as kafka-dump-log --files does: the partition is the one of
// its directory's `__consumer_offsets-N` name, or 0 (said in a warning) when the directory does
// not name one; a file in another topic's directory is refused.
func OpenFile(path string, opts Options) (*Reader, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() || !strings.HasSuffix(path, ".log") {
		return nil, fmt.Errorf("%s is not a .log segment file", path)
	}
	r := &Reader{opts: opts, parts: map[int32][]segFile{}, report: &eventlog.Report{}, partitionDir: true}
	if r.opts.MaxBatchBytes <= 0 {
		r.opts.MaxBatchBytes = defaultMaxBatch
	}
	if r.opts.MaxDecompressedBytes <= 0 {
		r.opts.MaxDecompressedBytes = defaultMaxBatch
	}
	var base int64
	if m := segmentRE.FindStringSubmatch(filepath.Base(path)); m != nil {
		base, _ = strconv.ParseInt(m[1], 10, 64)
	} else {
		r.report.Warn("%s: not named by a 20-digit base offset: read from its first batch", path)
	}
	var part int64
	dir := filepath.Base(filepath.Dir(filepath.Clean(path)))
	if m := partitionDirRE.FindStringSubmatch(dir); m != nil && m[1] != offsetsTopic {
		return nil, offsetsPartition(filepath.Dir(path), m[1])
	} else if m != nil {
		if part, err = strconv.ParseInt(m[2], 10, 32); err != nil {
			return nil, fmt.Errorf("%s: partition number: %w", dir, err)
		}
	} else {
		r.report.Warn("%s: its directory does not name a __consumer_offsets partition: read as partition 0", path)
	}
	r.parts[int32(part)] = []segFile{{path: path, base: base}}
	return r, nil
}

// scanDir lists the segment files of one directory in base-offset order. segments says it
// holds segment files (or transient ones, which are only ever segments); otherLogs are its
// other .log files, for the caller to judge and report.
func (r *Reader) scanDir(dir string) (files []segFile, segments bool, otherLogs []string, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, nil, err
	}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		if transientRE.MatchString(name) {
			r.report.Warn("%s: transient file ignored", filepath.Join(dir, name))
			segments = true
			continue
		}
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		m := segmentRE.FindStringSubmatch(name)
		if m == nil {
			otherLogs = append(otherLogs, name)
			continue
		}
		segments = true
		base, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			r.report.Warn("%s: base offset out of range, ignored", filepath.Join(dir, name))
			continue
		}
		files = append(files, segFile{path: filepath.Join(dir, name), base: base})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].base < files[j].base })
	return files, segments, otherLogs, nil
}

// PartitionDir reports whether the reader was opened on one partition's directory (rather
// than a log directory holding __consumer_offsets-N directories).
func (r *Reader) PartitionDir() bool { return r.partitionDir }

// Report returns the reader's warnings and problems. Every iteration adds the problems it meets.
func (r *Reader) Report() *eventlog.Report { return r.report }

// Partitions implements eventlog.Source.
func (r *Reader) Partitions() ([]int32, error) {
	ps := make([]int32, 0, len(r.parts))
	for p := range r.parts {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps, nil
}

// Files returns the segment files of partition p in read order.
func (r *Reader) Files(p int32) []string {
	var out []string
	for _, f := range r.parts[p] {
		out = append(out, f.path)
	}
	return out
}

// Batches implements eventlog.Source. Reading starts in the last file whose base offset is at
// most from, or earlier while an earlier file still reaches from: a copy taken while the log
// cleaner swapped segments can hold the cleaned output (covering offsets past the next file's
// base) beside the stale file it replaced, and offset-driven reads take the earlier file's
// batches, as they do when reading the partition from its start.
func (r *Reader) Batches(p int32, from int64) (eventlog.Iterator, error) {
	files, ok := r.parts[p]
	if !ok {
		return nil, fmt.Errorf("partition %d not found", p)
	}
	start := max(sort.Search(len(files), func(i int) bool { return files[i].base > from })-1, 0)
	for start > 0 {
		last, err := r.lastOffset(p, files[start-1])
		if err != nil {
			return nil, err
		}
		if last < from {
			break
		}
		start--
	}
	return r.newIter(p, files[start:], from, r.report, false), nil
}

// lastOffset returns the last offset of file f from its batch headers (-1 when it has none).
func (r *Reader) lastOffset(p int32, f segFile) (int64, error) {
	r.mu.Lock()
	last, ok := r.lastOffs[f]
	r.mu.Unlock()
	if ok {
		return last, nil
	}
	last = -1
	it := r.newIter(p, []segFile{f}, 0, &eventlog.Report{}, true) // a probe: real reads report problems
	for it.Next() {
		last = it.batch.LastOffset
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	if r.lastOffs == nil {
		r.lastOffs = map[segFile]int64{}
	}
	r.lastOffs[f] = last
	r.mu.Unlock()
	return last, nil
}

// Offsets implements eventlog.Source. It reads batch headers (CRC-checked, not decompressed)
// of the first non-empty file and of the last non-empty file.
func (r *Reader) Offsets(p int32) (first, next int64, err error) {
	files, ok := r.parts[p]
	if !ok {
		return 0, 0, fmt.Errorf("partition %d not found", p)
	}
	if len(files) == 0 {
		return 0, 0, nil
	}
	scratch := &eventlog.Report{} // problems are reported by real iterations, not by this probe
	found := false
	for i := len(files) - 1; i >= 0 && !found; i-- {
		it := r.newIter(p, files[i:i+1], 0, scratch, true)
		for it.Next() {
			next, found = it.batch.LastOffset+1, true
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return 0, 0, err
		}
	}
	next = max(next, files[len(files)-1].base)
	first = next
	it := r.newIter(p, files, 0, scratch, true)
	defer it.Close()
	if it.Next() {
		first = it.batch.BaseOffset
	}
	return first, next, it.Err()
}

func (r *Reader) newIter(p int32, files []segFile, from int64, report *eventlog.Report, headersOnly bool) *iter {
	return &iter{
		opts:        r.opts,
		report:      report,
		part:        p,
		files:       files,
		from:        from,
		headersOnly: headersOnly,
		prevNext:    -1,
		dec:         decompressor{limit: r.opts.MaxDecompressedBytes},
	}
}

// window is a read buffer over one file. at(pos, n) returns file[pos:pos+n], aliasing the
// buffer until the next call; it refills from pos with one large pread when needed, so
// sequential reading costs one syscall per MiB and memory stays at max(1 MiB, largest batch).
type window struct {
	f    *os.File
	buf  []byte
	off  int64
	n    int
	size int64
}

func (w *window) at(pos int64, n int) ([]byte, error) {
	if pos >= w.off && pos+int64(n) <= w.off+int64(w.n) {
		s := int(pos - w.off)
		return w.buf[s : s+n], nil
	}
	if n > len(w.buf) {
		w.buf = make([]byte, max(n, windowSize))
	}
	want := int(min(int64(len(w.buf)), w.size-pos))
	m, err := w.f.ReadAt(w.buf[:want], pos)
	if m < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		w.n = 0
		return nil, fmt.Errorf("%s: read %d bytes at %d: %w", w.f.Name(), n, pos, err)
	}
	w.off, w.n = pos, m
	return w.buf[:n], nil
}

// bad describes damage found by decodeAt, before it becomes a Problem.
type bad struct {
	kind eventlog.Kind
	// offset is the base offset read from the header, -1 when none could be read.
	offset int64
	detail string
	// trusted: the batch's CRC matched, so its length is trusted and the reader skips exactly
	// size bytes. Otherwise the reader scans forward for the next valid batch.
	trusted  bool
	size     int64
	declared int64 // records declared by the header, -1 if unknown
}

type iter struct {
	opts        Options
	report      *eventlog.Report
	part        int32
	files       []segFile
	fi          int
	from        int64
	headersOnly bool

	f        *os.File
	w        window
	pos      int64
	prevNext int64
	// fileAccepted: a batch of the current file has been accepted, so a batch below prevNext is
	// damage (KindOffsetOrder) rather than a superseded leftover (KindSuperseded).
	fileAccepted bool

	batch  eventlog.Batch
	dec    decompressor
	legacy []legacyMsg
	err    error
	closed bool
}
