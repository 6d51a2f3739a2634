package pebblelog

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble reports the failures it cannot hand back to a caller through its Logger's Fatalf
// (which must not return: the default logger exits, ours used to panic) and its event
// listener; and a few I/O errors in its commit path are plain panics (a failed WAL rotation),
// and a write stall waits for a flush forever. This file keeps all of that from reaching a
// user, in layers:
//
//   - Before every commit a writer checks the filesystem's free space (checkSpace): it stops,
//     with an error naming the directory, while there is still room for the commit and two
//     memtable flushes, its reserve aside. Its own writes therefore never fill the disk.
//   - A writer keeps a reserve file (Options.Reserve: a memtable and 1 MiB) for when something
//     else fills the disk. The first ENOSPC frees it (through vfs.OnDiskFull, which then
//     retries the write that failed) and marks the disk full; from then on compactions are
//     refused at once, so that the freed space goes to what Pebble cannot survive failing: the
//     flush a waiting commit needs, WAL rotation, MANIFEST and marker writes. The next commit
//     stops with an error.
//   - A flush or compaction error (EventListener.BackgroundError) stops the next commit too,
//     and a write stall that lasts while writes must stop (a flush that cannot succeed) ends
//     the process through Options.OnFatal rather than hang.
//   - Data corruption found while reading is reported through the read's own error, never
//     through Fatalf (the default DataCorruption handler calls it).
//   - Fatalf itself records the error and panics when one of this package's calls into Pebble
//     is on the goroutine's stack (guard recovers it and returns the error); in one of Pebble's
//     own goroutines, where nothing could recover it, it calls Options.OnFatal.

// reserveName is the writer's reserve file in the database directory. Pebble ignores files
// it does not know.
const reserveName = "coordlog.reserve"

// ErrNoSpace is wrapped by the error of a write that stopped because the filesystem is full.
var ErrNoSpace = errors.New("no space left on device")

// health is what Pebble reported about one Log.
type health struct {
	dir      string
	onFatal  func(error)
	diskFull atomic.Bool
	// stalls counts write stalls begun; stalled is set while one lasts.
	stalls  atomic.Int64
	stalled atomic.Bool

	mu sync.Mutex
	// background is the first flush or compaction error; fatal the first Fatalf.
	background, fatal error
}

func newHealth(dir string) *health { return &health{dir: dir} }

func (h *health) setBackground(err error) {
	h.mu.Lock()
	if h.background == nil {
		h.background = err
	}
	h.mu.Unlock()
}

func (h *health) setFatal(err error) {
	h.mu.Lock()
	if h.fatal == nil {
		h.fatal = err
	}
	h.mu.Unlock()
}

func (h *health) fatalErr() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fatal
}

// stopErr is why writes must stop, nil while they may go on.
func (h *health) stopErr() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.fatal != nil:
		return h.fatal
	case h.diskFull.Load():
		return fmt.Errorf("the filesystem is full: %w", ErrNoSpace)
	case h.background != nil:
		return fmt.Errorf("background flush or compaction failed: %w", h.background)
	}
	return nil
}

func (h *health) listener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: h.setBackground,
		// The read that met the corruption fails with it; Pebble's default handler would call
		// Fatalf.
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			h.setBackground(fmt.Errorf("data corruption in %s: %w", info.Path, info.Details))
		},
		WriteStallBegin: func(pebble.WriteStallBeginInfo) {
			n := h.stalls.Add(1)
			h.stalled.Store(true)
			go h.watchStall(n)
		},
		WriteStallEnd: func() { h.stalled.Store(false) },
	}
}

// stallGrace is how long a write stall may last while writes must stop (stopErr) before the
// process gives up on the flush that would end it.
var stallGrace = 5 * time.Second

// watchStall watches write stall number n: a commit waits in it for a flush, and if writes
// must stop meanwhile (a full disk, a failed flush), no flush will come, so after stallGrace
// the stall is turned into a fatal error instead of a hang.
func (h *health) watchStall(n int64) {
	var since time.Time
	for h.stalled.Load() && h.stalls.Load() == n {
		switch err := h.stopErr(); {
		case err == nil:
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) > stallGrace:
			h.exit(fmt.Errorf("a commit waits for a flush that cannot be written: %w", err))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exit ends the process over err, which no caller can be handed (Options.OnFatal).
func (h *health) exit(err error) {
	h.setFatal(err)
	if h.onFatal != nil {
		h.onFatal(err)
	} else {
		fmt.Fprintf(os.Stderr, "coordlog: %v\n", explainWrite(h.dir, err, "the database is crash-consistent: every commit that returned is durable"))
		os.Exit(1)
	}
	select {} // OnFatal must not return
}

// pebbleLogger is Pebble's Logger: quiet, except for Fatalf.
type pebbleLogger struct{ h *health }

func (pebbleLogger) Infof(string, ...any)  {}
func (pebbleLogger) Errorf(string, ...any) {}

func (g pebbleLogger) Fatalf(format string, args ...any) {
	err := fatalError{msg: fmt.Sprintf("pebble: "+format, args...)}
	for _, a := range args {
		if e, ok := a.(error); ok {
			err.causes = append(err.causes, e) // so that errors.Is finds ENOSPC in it
		}
	}
	g.h.setFatal(err)
	if guarded() {
		panic(fatalPanic{err})
	}
	g.h.exit(err)
}

// fatalError is a Fatalf message and the errors among its arguments.
type fatalError struct {
	msg    string
	causes []error
}

func (e fatalError) Error() string   { return e.msg }
func (e fatalError) Unwrap() []error { return e.causes }

// fatalPanic carries a Fatalf error to guard.
type fatalPanic struct{ err error }

// guard calls fn and returns a Fatalf that happened inside it as its error.
func guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fp, ok := r.(fatalPanic)
			if !ok {
				panic(r)
			}
			err = fp.err
		}
	}()
	return fn()
}

// guarded reports whether guard is on the calling goroutine's stack, i.e. whether a panic
// would be recovered. Only Fatalf asks, so the cost of reading the stack does not matter.
func guarded() bool {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, false)
		if n < len(buf) {
			return strings.Contains(string(buf[:n]), "coordlog/eventlog/pebblelog.guard(")
		}
		buf = make([]byte, 2*len(buf)) // guard is among the outermost frames: read them all
	}
}

// explainWrite says what a failed write to the database in dir means and what to do; state
// says what the database holds.
func explainWrite(dir string, err error, state string) error {
	switch {
	case errors.Is(err, ErrNoSpace) || errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("no space left on %s (%v): free space, then run the same command again; %s", dir, err, state)
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("%s is on a read-only filesystem (%v): give a --db on a writable one; %s", dir, err, state)
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		return fmt.Errorf("no permission to write %s (%v): run as its owner or give another --db; %s", dir, err, state)
	}
	return fmt.Errorf("writing %s failed: %w: fix the cause, then run the same command again; %s", dir, err, state)
}

// WriteError is a write to the database that failed: its message says where, why, what to do
// and up to which offsets the database is intact.
type WriteError struct {
	Dir string
	Err error
	// Durable is, for each partition the failed write touched, the next offset up to which the
	// database holds that partition durably.
	Durable map[int32]int64
	msg     string
}

func (e *WriteError) Error() string { return e.msg }
func (e *WriteError) Unwrap() error { return e.Err }

// writeError explains err, a failed write; durable are the next offsets known to be durable
// of the partitions the write touched (nil when none).
func (l *Log) writeError(err error, durable map[int32]int64) error {
	var we *WriteError
	if errors.As(err, &we) {
		return err
	}
	state := "the database is unchanged"
	if len(durable) > 0 {
		ps := make([]int32, 0, len(durable))
		for p := range durable {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		var parts []string
		for _, p := range ps {
			if n := durable[p]; n > 0 {
				parts = append(parts, fmt.Sprintf("partition %d up to offset %d", p, n-1))
			} else {
				parts = append(parts, fmt.Sprintf("nothing of partition %d", p))
			}
		}
		state = "the database holds " + strings.Join(parts, ", ") + ", intact"
	}
	msg := explainWrite(l.dir, err, state).Error()
	if errors.Is(err, syscall.ENOSPC) && !errors.Is(err, ErrNoSpace) {
		err = fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return &WriteError{Dir: l.dir, Err: err, Durable: maps.Clone(durable), msg: msg}
}

// openWriter opens dir for writing behind the space check, the reserve and the write guard.
func openWriter(dir string, opts *Options) (*Log, error) {
	base := opts.FS
	if base == nil {
		base = vfs.Default
	}
	h := newHealth(dir)
	h.onFatal = opts.OnFatal
	l := &Log{dir: dir, fs: base, health: h, next: map[int32]int64{}}
	l.headroom = 2 * int64(memTableSize(opts))
	if base == vfs.Default { // a filesystem in memory does not fill up
		if l.reserve = opts.Reserve; l.reserve == 0 {
			l.reserve = int64(memTableSize(opts)) + 1<<20
		}
	}
	if err := base.MkdirAll(dir, 0o755); err != nil {
		return nil, explainWrite(dir, err, "nothing was written")
	}
	// Opening may flush the memtable replayed from the WAL: room for two, and the reserve.
	if err := l.checkSpace(0, true); err != nil {
		return nil, explainWrite(dir, err, "nothing was written")
	}
	// This process holds the lock from here on: nothing in it may ask the kernel who holds
	// LOCK (that would close a descriptor of it, which drops the lock), registerWriter says.
	unregister, ok := registerWriter(dir)
	if !ok {
		return nil, fmt.Errorf("coordlog database %s is in use by this process: close it before opening it again", dir)
	}
	lockFS := base
	if base == vfs.Default {
		lockFS = noTruncLockFS{base}
	}
	lock, err := pebble.LockDirectory(dir, lockFS)
	if err != nil {
		unregister()
		return nil, l.openError(err)
	}
	release := func() { _ = lock.Close(); unregister() }
	// The check before writing comes before the reserve, so that a refusal leaves the
	// directory as it was.
	if err := beforeWrite(dir, base, opts); err != nil {
		release()
		return nil, err
	}
	fs := base
	if l.reserve > 0 {
		path := filepath.Join(dir, reserveName)
		if err := writeReserve(path, l.reserve); err != nil {
			release()
			if errors.Is(err, syscall.ENOSPC) {
				err = fmt.Errorf("%w: coordlog needs %s free for its reserve (%v)", ErrNoSpace, mib(l.reserve), err)
			}
			return nil, explainWrite(dir, err, "nothing was written")
		}
		fs = vfs.OnDiskFull(base, func() {
			h.diskFull.Store(true)
			_ = os.Remove(path)
		})
		unlocked := release
		release = func() { _ = os.Remove(path); unlocked() }
	}
	o := pebbleOptions(opts, writeGuardFS{fs, h}, h)
	o.Lock = lock
	db, err := openPebble(dir, opts, o)
	if err != nil {
		release()
		return nil, l.openError(err)
	}
	l.release, l.db = release, db
	return l, nil
}

// noTruncLockFS takes Pebble's directory lock with takeLock, which leaves an existing LOCK
// file as it is.
type noTruncLockFS struct{ vfs.FS }

func (f noTruncLockFS) Lock(name string) (io.Closer, error) { return takeLock(name) }

// beforeWrite runs opts.BeforeWrite on the database in dir, opened read-only, unless it is
// new (no MANIFEST yet).
func beforeWrite(dir string, fs vfs.FS, opts *Options) error {
	if opts.BeforeWrite == nil {
		return nil
	}
	names, err := fs.List(dir)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "MANIFEST-") }) {
		return nil
	}
	ro, err := Open(dir, &Options{FS: opts.FS, CacheSize: opts.CacheSize, MemTableSize: opts.MemTableSize, ReadOnly: true, underOwnLock: true})
	if err != nil {
		return err
	}
	err = opts.BeforeWrite(ro)
	if cerr := ro.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeReserve allocates size bytes to path and syncs them.
func writeReserve(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = allocate(f, size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// writeZeros allocates size bytes to f by writing them.
func writeZeros(f *os.File, size int64) error {
	zeros := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(zeros)) {
		if _, err := f.Write(zeros[:min(left, int64(len(zeros)))]); err != nil {
			return err
		}
	}
	return nil
}

// checkSpace returns an ErrNoSpace error when the filesystem of the database has less free
// space than a commit of pending bytes needs to leave the database consistent: the commit and
// two memtable flushes (Pebble flushes one memtable while the next fills); when opening, the
// reserve too, which is not set aside yet. It says nothing on filesystems that do not tell
// (in memory).
func (l *Log) checkSpace(pending int64, opening bool) error {
	du, err := l.fs.GetDiskUsage(l.dir)
	if err != nil {
		return nil
	}
	e := &spaceError{free: int64(du.AvailBytes), commit: pending, memTable: l.headroom / 2, reserve: max(l.reserve, 0), opening: opening}
	if e.free < e.need() {
		return e
	}
	return nil
}

// spaceError is checkSpace's ErrNoSpace.
type spaceError struct {
	free, commit, memTable, reserve int64
	opening                         bool
}

func (e *spaceError) need() int64 {
	n := e.commit + 2*e.memTable
	if e.opening {
		n += e.reserve
	}
	return n
}

func (e *spaceError) Error() string {
	if e.opening {
		return fmt.Sprintf("%s free, coordlog needs %s to start writing safely: two %s memtable flushes and a %s reserve",
			mib(e.free), mib(e.need()), mib(e.memTable), mib(e.reserve))
	}
	return fmt.Sprintf("%s free, coordlog needs %s to go on writing safely: the next commit of %s and two %s memtable flushes",
		mib(e.free), mib(e.need()), mib(e.commit), mib(e.memTable))
}

func (e *spaceError) Is(target error) bool { return target == ErrNoSpace }

func mib(n int64) string {
	if n < 10<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// openError explains why opening for writing failed: a lock held by another process
// ("resource temporarily unavailable") names that process.
func (l *Log) openError(err error) error {
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
		if w, busy := l.writer(); busy {
			return fmt.Errorf("coordlog database %s is in use by %s: wait for it to finish, then run the command again", l.dir, w)
		}
	}
	return l.writeError(fmt.Errorf("open: %w", err), nil)
}

// writeGuardFS refuses, once the disk is full, every compaction output, so that the space the
// reserve freed goes to what Pebble cannot survive failing: the flush a commit waiting in a
// write stall needs, WAL rotation (a failed WAL close or create is a panic in its commit path),
// MANIFEST and marker writes (fatal). The WAL itself is not refused: the commit in flight
// finishes or fails on its own, and the next one is not made.
type writeGuardFS struct {
	vfs.FS
	h *health
}

// isCompaction reports whether Pebble creates a file for a compaction (its categories are
// "pebble-memtable-flush" for a flush, "pebble-compaction" and "pebble-blob-file-rewrite").
func isCompaction(c vfs.DiskWriteCategory) bool {
	return c == "pebble-compaction" || c == "pebble-blob-file-rewrite"
}

func (g writeGuardFS) full(op, name string) error {
	return &os.PathError{Op: op, Path: name, Err: syscall.ENOSPC}
}

func (g writeGuardFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if !isCompaction(c) {
		return g.FS.Create(name, c)
	}
	if g.h.diskFull.Load() {
		return nil, g.full("create", name)
	}
	f, err := g.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return guardedFile{File: f, name: name, g: g}, nil
}

func (g writeGuardFS) Unwrap() vfs.FS { return g.FS }

// guardedFile is a compaction output: its writes fail once the disk is full.
type guardedFile struct {
	vfs.File
	name string
	g    writeGuardFS
}

func (f guardedFile) Write(p []byte) (int, error) {
	if f.g.h.diskFull.Load() {
		return 0, f.g.full("write", f.name)
	}
	return f.File.Write(p)
}
