package segment

import (
	"fmt"
	"hash/crc32"
	"io"
	"math"
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
	// MaxBatchMemory bounds the memory one decoded batch takes: its decompressed payload plus
	// the Record and Header structs of its records (eventlog.RecordMemory bytes each record,
	// eventlog.HeaderMemory each header), so that memory is bounded whatever a batch declares or
	// holds. A batch past it is KindTooLarge, refused before its records are allocated (and,
	// when its declared record count alone is past it, before it is decompressed). Default
	// DefaultMaxBatchMemory.
	MaxBatchMemory int
	// KeepAllProblems keeps every problem of the Report in full (eventlog.Report.KeepAll), for
	// a verbose listing; by default they are counted per file and kind and the first
	// eventlog.MaxKeptProblems are kept.
	KeepAllProblems bool
}

// DefaultMaxBatchMemory is the default Options.MaxBatchMemory, 256 MiB. Kafka has no such
// limit: a broker refuses a batch over the topic's max.message.bytes (1 MiB by default for
// __consumer_offsets), the coordinator starts a new batch before its uncompressed records pass
// it, and only a compressed atomic write may decompress to more. A real coordinator batch
// decodes to a few times its uncompressed size (records of 40 bytes or more, 88 bytes of
// Record each), so none comes near 256 MiB; a gzip batch of millions of 7-byte records does.
const DefaultMaxBatchMemory = 256 << 20

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
	warned   map[string]bool   // keys of the warnings said once
}

// warnOnce adds a warning to the report the first time key is seen: iterations and probes may
// read a file many times.
func (r *Reader) warnOnce(key, format string, args ...any) {
	r.mu.Lock()
	if r.warned[key] {
		r.mu.Unlock()
		return
	}
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	r.warned[key] = true
	r.mu.Unlock()
	r.report.Warn(format, args...)
}

var (
	partitionDirRE = regexp.MustCompile(`^(.+)-(\d+)$`)
	offsetsDirRE   = regexp.MustCompile(`^__consumer_offsets-(\d+)$`)
	segmentRE      = regexp.MustCompile(`^(\d{20})\.log$`)
)

// Open scans path. If path holds segment files (NNNNNNNNNNNNNNNNNNNN.log, or the .swap,
// .cleaned and .deleted leftovers of Kafka's log cleaner) it is one partition, numbered by its
// name's `-N` suffix (`.` and other relative names are resolved first), and it must be a
// __consumer_offsets partition: a directory of another topic (`orders-0`,
// `__transaction_state-3`) holds records that are not coordinator records and is refused. A
// directory holding `__consumer_offsets-N` directories (or symbolic links to them, followed
// and reported) is a log directory whose partitions they are, whatever its own name
// (`kafka-logs-1`); other .log files beside them (a tool's `server.log`, `driver.log`) are
// reported and ignored, and so is a `__consumer_offsets-N` whose N is no partition number. A
// `__consumer_offsets-N` directory holding only such files is an empty partition. Each
// partition's files are read as Kafka's log recovery would leave them (see recoverLeftovers),
// without changing them.
func Open(path string, opts Options) (*Reader, error) {
	opts = opts.withDefaults()
	r := &Reader{opts: opts, parts: map[int32][]segFile{}, report: &eventlog.Report{KeepAll: opts.KeepAllProblems}}
	top, err := r.listDir(path)
	if err != nil {
		return nil, err
	}
	name, err := dirName(path)
	if err != nil {
		return nil, err
	}
	m := partitionDirRE.FindStringSubmatch(name)
	if top.holdsSegments() || (len(top.otherLogs) > 0 && m != nil && m[1] == offsetsTopic && top.partitionDirs() == 0) {
		r.partitionDir = true
		if m == nil {
			return nil, fmt.Errorf("%s: holds .log files but its name does not end in -<partition>", path)
		}
		if err := offsetsPartition(path, m[1]); err != nil {
			return nil, err
		}
		p, err := strconv.ParseInt(m[2], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s: partition number %s does not fit Kafka's 32-bit partition numbers: not a partition directory", path, m[2])
		}
		r.partitionNotes(path, top)
		if r.parts[int32(p)], err = r.recoverLeftovers(path, int32(p), top); err != nil {
			return nil, err
		}
		return r, nil
	}
	for _, name := range top.otherLogs {
		r.report.Warn("%s: not a segment file (this is a log directory), ignored", filepath.Join(path, name))
	}
	for _, item := range top.items {
		if item.part == nil {
			r.report.Warn("%s", item.note)
			continue
		}
		d := item.part
		dir := filepath.Join(path, d.name)
		p, err := strconv.ParseInt(d.number, 10, 32)
		if err != nil {
			r.report.Warn("%s: partition number %s does not fit Kafka's 32-bit partition numbers: not a partition directory, skipped", dir, d.number)
			continue
		}
		if d.link != "" {
			r.report.Warn("%s: a symbolic link to %s, followed", dir, d.link)
		}
		listing, err := r.listDir(dir)
		if err != nil {
			return nil, err
		}
		r.partitionNotes(dir, listing)
		if r.parts[int32(p)], err = r.recoverLeftovers(dir, int32(p), listing); err != nil {
			return nil, err
		}
	}
	if len(r.parts) == 0 {
		if len(top.otherLogs) > 0 {
			return nil, fmt.Errorf("%s: no segment files (NNNNNNNNNNNNNNNNNNNN.log) and no __consumer_offsets-N directories; its .log files (%s) are not segments", path, strings.Join(top.otherLogs, ", "))
		}
		return nil, fmt.Errorf("%s: no .log files and no __consumer_offsets-N directories", path)
	}
	return r, nil
}

// partitionNotes reports what a partition directory holds besides segments and leftovers.
func (r *Reader) partitionNotes(dir string, l *listing) {
	for _, item := range l.items {
		if item.part == nil {
			r.report.Warn("%s", item.note)
		}
	}
	for _, name := range l.otherLogs {
		r.report.Warn("%s: .log file without a 20-digit base offset name, ignored", filepath.Join(dir, name))
	}
}

// dirName is the name of directory path, resolved when path is `.`, `..` or ends in one, so
// that `replay describe .` inside a partition directory knows its partition.
func dirName(path string) (string, error) {
	name := filepath.Base(filepath.Clean(path))
	if name != "." && name != ".." && name != string(filepath.Separator) {
		return name, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return filepath.Base(abs), nil
}

func (o Options) withDefaults() Options {
	if o.MaxBatchBytes <= 0 {
		o.MaxBatchBytes = defaultMaxBatch
	}
	if o.MaxBatchMemory <= 0 {
		o.MaxBatchMemory = DefaultMaxBatchMemory
	}
	return o
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
// not name one; a file in another topic's directory is refused, and so is anything but a
// regular file (a named pipe would block the reader forever).
func OpenFile(path string, opts Options) (*Reader, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() || !strings.HasSuffix(path, ".log") {
		return nil, fmt.Errorf("%s is not a .log segment file", path)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): not opened; give a segment file copied off a broker", path, fileType(st.Mode()))
	}
	r := &Reader{opts: opts.withDefaults(), parts: map[int32][]segFile{}, report: &eventlog.Report{KeepAll: opts.KeepAllProblems}, partitionDir: true}
	var base int64
	if m := segmentRE.FindStringSubmatch(filepath.Base(path)); m != nil {
		base, _ = strconv.ParseInt(m[1], 10, 64)
	} else {
		r.report.Warn("%s: not named by a 20-digit base offset: read from its first batch", path)
	}
	var part int64
	dir, err := dirName(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	if m := partitionDirRE.FindStringSubmatch(dir); m != nil && m[1] != offsetsTopic {
		return nil, offsetsPartition(filepath.Dir(path), m[1])
	} else if m != nil {
		if part, err = strconv.ParseInt(m[2], 10, 32); err != nil {
			return nil, fmt.Errorf("%s: partition number %s does not fit Kafka's 32-bit partition numbers", dir, m[2])
		}
	} else {
		r.report.Warn("%s: its directory does not name a __consumer_offsets partition: read as partition 0", path)
	}
	r.parts[int32(part)] = []segFile{{path: path, base: base}}
	return r, nil
}

// fileType names a non-regular file's type for messages.
func fileType(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// listing is what one directory holds, by name, before Kafka's recovery rules are applied.
type listing struct {
	logs      []segFile // NNNNNNNNNNNNNNNNNNNN.log regular files
	swaps     []string  // *.swap files (a segment's or an index's)
	cleaned   []string  // *.cleaned files
	deleted   []string  // *.log.deleted files (an index's .deleted carries nothing to read)
	leftovers bool      // any .swap, .cleaned or .deleted file, index ones included
	otherLogs []string  // other .log files, for the caller to judge and report
	// items are, in name order, the __consumer_offsets-N directories (or links to directories)
	// in it and the notes on entries ignored for a reason that is not the caller's to judge.
	items []dirItem
}

// dirItem is a partition directory or a note.
type dirItem struct {
	part *partitionDirEntry
	note string
}

func (l *listing) note(format string, args ...any) {
	l.items = append(l.items, dirItem{note: fmt.Sprintf(format, args...)})
}

// partitionDirs counts the partition directories listed.
func (l *listing) partitionDirs() int {
	n := 0
	for _, item := range l.items {
		if item.part != nil {
			n++
		}
	}
	return n
}

type partitionDirEntry struct {
	name, number string
	link         string // the link's target when the entry is a symbolic link
}

// holdsSegments says the directory is a partition directory: it holds segment files or the
// leftovers of Kafka's log cleaner, which only ever sit beside segments.
func (l *listing) holdsSegments() bool { return len(l.logs) > 0 || l.leftovers }

// listDir lists one directory. Directory entries are looked at through symbolic links, as
// Kafka's loader does (File.isFile follows them); anything named like a segment that is not a
// regular file (a named pipe, a socket, a device) is noted and never opened.
func (r *Reader) listDir(dir string) (*listing, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	l := &listing{}
	for _, e := range ents {
		name := e.Name()
		path := filepath.Join(dir, name)
		mode := e.Type()
		link := ""
		if mode&os.ModeSymlink != 0 {
			st, err := os.Stat(path)
			if err != nil {
				l.note("%s: a symbolic link that cannot be followed (%v), ignored", path, err)
				continue
			}
			mode = st.Mode().Type()
			if link, err = os.Readlink(path); err != nil {
				link = "?"
			}
		}
		if mode.IsDir() {
			if m := offsetsDirRE.FindStringSubmatch(name); m != nil {
				l.items = append(l.items, dirItem{part: &partitionDirEntry{name: name, number: m[1], link: link}})
			} else if strings.HasPrefix(name, offsetsTopic+"-") {
				l.note("%s: not a partition directory (deleted or future replica?), ignored", path)
			}
			continue
		}
		leftover := strings.HasSuffix(name, deletedSuffix) || strings.HasSuffix(name, cleanedSuffix) || strings.HasSuffix(name, swapSuffix)
		if !leftover && !strings.HasSuffix(name, ".log") {
			continue // indexes, producer snapshots, checkpoints: nothing a replay needs
		}
		if !mode.IsRegular() {
			l.note("%s: not a regular file (%s): not opened, ignored (Kafka's log loader skips it too)", path, fileType(mode))
			continue
		}
		switch {
		case strings.HasSuffix(name, deletedSuffix):
			l.leftovers = true
			if strings.HasSuffix(name, ".log"+deletedSuffix) {
				l.deleted = append(l.deleted, name)
			}
		case strings.HasSuffix(name, cleanedSuffix):
			l.leftovers = true
			l.cleaned = append(l.cleaned, name)
		case strings.HasSuffix(name, swapSuffix):
			l.leftovers = true
			l.swaps = append(l.swaps, name)
		default:
			m := segmentRE.FindStringSubmatch(name)
			if m == nil {
				l.otherLogs = append(l.otherLogs, name)
				continue
			}
			base, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil {
				l.note("%s: base offset out of range, ignored", path)
				continue
			}
			l.logs = append(l.logs, segFile{path: path, base: base})
		}
	}
	return l, nil
}

// The suffixes of Kafka's LogFileUtils.
const (
	deletedSuffix = ".deleted"
	cleanedSuffix = ".cleaned"
	swapSuffix    = ".swap"
)

// offsetFromName is Kafka's LogFileUtils.offsetFromFileName: the number before the first dot.
func offsetFromName(name string) (int64, bool) {
	i := strings.IndexByte(name, '.')
	if i <= 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(name[:i], 10, 64)
	return n, err == nil
}

// recoverLeftovers returns partition p's segment files in base-offset order as Kafka's log
// recovery (LogLoader.load, Kafka 4.4) would leave the directory at startup, and says on the
// report what it did with each leftover and why. It changes no file. Kafka's rules:
//
//   - `.deleted` files were scheduled for deletion (by retention, or by a cleaner swap that had
//     already renamed the segments it replaced): deleted, so never read.
//   - `.cleaned` files are the log cleaner's unfinished output: deleted. A `.swap` file whose
//     offset is at or above the lowest `.cleaned` offset belongs to an interrupted segment
//     split (KAFKA-6264) and is deleted too.
//   - Every other `NNN.log.swap` is a finished cleaner (or split) output whose swap was
//     interrupted: it becomes `NNN.log`, and the segments whose base offsets lie in
//     [lowest swap base offset, highest swap next offset) are the ones it replaced: deleted.
func (r *Reader) recoverLeftovers(dir string, p int32, l *listing) ([]segFile, error) {
	minCleaned := int64(math.MaxInt64)
	for _, name := range l.cleaned {
		if off, ok := offsetFromName(name); ok {
			minCleaned = min(minCleaned, off)
		}
		if strings.HasSuffix(name, ".log"+cleanedSuffix) {
			r.report.Warn("%s: ignored: the log cleaner's unfinished output (Kafka's log recovery deletes .cleaned files at startup)", filepath.Join(dir, name))
		}
	}
	for _, name := range l.deleted {
		r.report.Warn("%s: ignored: a segment Kafka had scheduled for deletion (its log recovery deletes .deleted files at startup)", filepath.Join(dir, name))
	}
	var swaps []segFile
	for _, name := range l.swaps {
		path := filepath.Join(dir, name)
		off, ok := offsetFromName(name)
		isLog := strings.HasSuffix(name, ".log"+swapSuffix) && segmentRE.MatchString(strings.TrimSuffix(name, swapSuffix))
		switch {
		case !ok:
			r.report.Warn("%s: ignored: a .swap file not named by an offset", path)
		case off >= minCleaned:
			if isLog {
				r.report.Warn("%s: ignored: a .swap file at or above the lowest .cleaned offset %d is part of an interrupted segment split (Kafka's log recovery deletes it)", path, minCleaned)
			}
		case isLog:
			swaps = append(swaps, segFile{path: path, base: off})
		}
	}
	files := l.logs
	if len(swaps) > 0 {
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, f := range swaps {
			last, err := r.lastOffset(p, f)
			if err != nil {
				return nil, err
			}
			lo, hi = min(lo, f.base), max(hi, max(last+1, f.base))
		}
		isSwapBase := map[int64]bool{}
		for _, f := range swaps {
			isSwapBase[f.base] = true
		}
		var kept, replaced []segFile
		for _, f := range l.logs {
			if (f.base >= lo && f.base < hi) || isSwapBase[f.base] {
				replaced = append(replaced, f)
				continue
			}
			kept = append(kept, f)
		}
		for _, f := range swaps {
			r.report.Warn("%s: read as %s: the output of a log-cleaner swap interrupted by a broker stop, which Kafka's log recovery completes (it renames the .swap file and deletes the segments it replaces, those with base offsets in [%d, %d))",
				f.path, FileName(f.base), lo, hi)
		}
		for _, f := range replaced {
			r.report.Warn("%s: ignored: replaced by the .swap file(s) beside it (Kafka's log recovery deletes it)", f.path)
		}
		files = append(kept, swaps...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].base < files[j].base })
	return files, nil
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
		reader:      r,
		opts:        r.opts,
		report:      report,
		part:        p,
		files:       files,
		from:        from,
		headersOnly: headersOnly,
		prevNext:    -1,
		dec:         decompressor{maxMemory: r.opts.MaxBatchMemory},
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
	reader      *Reader // for warnings said once per reader (a file's zero tail)
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
