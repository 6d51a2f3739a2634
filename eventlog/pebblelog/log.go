package pebblelog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/coordlog/coordlog/eventlog"
)

const (
	prefixBatch byte = 0x01 // 0x01 | partition u32 | lastOffset u64 -> encoded batch
	prefixMeta  byte = 0x02 // 0x02 | partition u32 -> metaVersion | next offset u64
	valueFormat byte = 1
	metaFormat  byte = 1
)

// ErrOffsetRegression is wrapped by append errors for a batch that starts below the
// partition's next offset.
var ErrOffsetRegression = errors.New("batch starts below the partition's next offset")

// Options configure Open.
type Options struct {
	// FS is the filesystem (vfs.Default when nil; vfs.NewMem or vfs.NewCrashableMem in tests).
	FS vfs.FS
	// MemTableSize is Pebble's memtable size. Default 32 MiB: large enough for import throughput,
	// small enough to keep peak memory well under 256 MiB.
	MemTableSize uint64
	// CacheSize is Pebble's block cache size. Default 16 MiB.
	CacheSize int64
	// ReadOnly opens an existing database for reading only (readonly.go): no lock is taken and
	// no file is created, written, renamed or removed (Pebble's LOCK, MANIFEST, OPTIONS and WAL
	// included), so that any number of readers run beside each other and beside one writer, on
	// read-only media and as a user who cannot write the directory. A reader sees the database
	// as it was when it was opened.
	ReadOnly bool
	// Reserve is the disk space a writer sets aside in <dir>/coordlog.reserve while it is open
	// (health.go): when something else fills the filesystem, the reserve is freed so that
	// Pebble can finish the flush and the metadata writes in progress, and the writer stops
	// with an error instead of Pebble panicking or waiting forever. Default: a memtable and
	// 1 MiB; negative disables it. Only on the real filesystem; ignored when ReadOnly.
	Reserve int64
	// BeforeWrite, when set, is called before a writer's Open writes anything, with the
	// database opened read-only, under the writer's lock (no other writer can change it until
	// this one has opened); an error it returns is Open's, and leaves the directory as it was
	// (Pebble's LOCK file aside). It is not called for a new database. Import's overlap check
	// runs there (CheckOverlap), so that a refused input changes nothing. Ignored when
	// ReadOnly.
	BeforeWrite func(*Log) error
	// OnFatal is called when Pebble meets an error it cannot continue from in one of its own
	// goroutines (a MANIFEST write failing after a flush, say), where no caller can be handed
	// an error. It must not return. Default: print the error, with the database's path and what
	// to do, on stderr and exit with status 1, as Pebble's own logger does (without its
	// panic). The database stays crash-consistent: every commit is synced.
	OnFatal func(error)

	// underOwnLock is set for the read-only open of BeforeWrite, under this process's own
	// writer lock: there is no other writer to look for.
	underOwnLock bool
}

// Log is a Pebble-backed append-only log of Kafka batches for any number of partitions. It
// implements eventlog.Source. Reads may run concurrently with each other and with one writer.
type Log struct {
	db       *pebble.DB
	dir      string
	readOnly bool
	// underOwnLock: see Options.underOwnLock.
	underOwnLock bool
	// fs is the filesystem Open was given (vfs.Default when nil), without coordlog's wrappers.
	fs vfs.FS
	// health is what Pebble reported through its logger and event listener (health.go).
	health *health
	// release undoes what a writer's open set up (the reserve, the writer registration).
	release func()
	closed  bool
	// writeFailed is set once a write error was returned to a caller.
	writeFailed atomic.Bool
	// reserve and headroom size a writer's free-space check (health.go).
	reserve, headroom int64

	// wmu serializes writers: an Appender holds it from creation to Commit/Close, so the next
	// offsets it checks against cannot change under it.
	wmu  sync.Mutex
	mu   sync.Mutex // guards next
	next map[int32]int64

	// testHookBeforeCommit, if set, runs just before each pebble commit (crash tests).
	testHookBeforeCommit func()
}

// Open opens the log stored in dir: for writing (creating it if needed) or, with
// Options.ReadOnly, for reading an existing one.
func Open(dir string, opts *Options) (*Log, error) {
	if opts == nil {
		opts = &Options{}
	}
	if opts.ReadOnly {
		return openReadOnly(dir, opts)
	}
	return openWriter(dir, opts)
}

// pebbleOptions are the Pebble options of both kinds of opening, reporting to h.
func pebbleOptions(opts *Options, fs vfs.FS, h *health) *pebble.Options {
	o := &pebble.Options{
		FS:                 fs,
		Logger:             pebbleLogger{h},
		EventListener:      h.listener(),
		FormatMajorVersion: pebble.FormatNewest,
		MemTableSize:       memTableSize(opts),
		ReadOnly:           opts.ReadOnly,
		// Keys arrive in order, so L0 files do not overlap and compactions are cheap moves;
		// a higher stop-writes threshold keeps a burst of flushes from stalling an import.
		L0CompactionThreshold: 8,
		L0StopWritesThreshold: 32,
	}
	return o
}

// memTableSize is Options.MemTableSize or its default.
func memTableSize(opts *Options) uint64 {
	if opts.MemTableSize == 0 {
		return 32 << 20
	}
	return opts.MemTableSize
}

// openPebble opens the database with a block cache of the configured size. Open's panics
// through Pebble's Fatalf (health.go) come back as errors.
func openPebble(dir string, opts *Options, o *pebble.Options) (*pebble.DB, error) {
	cacheSize := opts.CacheSize
	if cacheSize == 0 {
		cacheSize = 16 << 20
	}
	cache := pebble.NewCache(cacheSize)
	defer cache.Unref()
	o.Cache = cache
	var db *pebble.DB
	err := guard(func() error {
		var err error
		db, err = pebble.Open(dir, o)
		return err
	})
	return db, err
}

// Close closes the database. After a fatal error of Pebble's the database is left as it is
// (crash-consistent) and Close returns that error. A write error already returned to the
// caller (the WAL write that failed, which Pebble's Close reports again) is not repeated.
func (l *Log) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	var err error
	if fatal := l.health.fatalErr(); fatal != nil {
		err = l.writeError(fatal, nil)
	} else if err = guard(l.db.Close); err != nil && l.writeFailed.Load() {
		err = nil
	}
	if l.release != nil {
		l.release()
	}
	return err
}

// Dir returns the database's directory.
func (l *Log) Dir() string { return l.dir }

// ReadOnly reports whether the log was opened read-only.
func (l *Log) ReadOnly() bool { return l.readOnly }

func batchKey(dst []byte, p int32, lastOffset int64) []byte {
	dst = append(dst, prefixBatch)
	dst = binary.BigEndian.AppendUint32(dst, uint32(p))
	return binary.BigEndian.AppendUint64(dst, uint64(lastOffset))
}

func metaKey(p int32) []byte {
	return binary.BigEndian.AppendUint32([]byte{prefixMeta}, uint32(p))
}

// partitionBounds are the key bounds of partition p's batches.
func partitionBounds(p int32) (lo, hi []byte) {
	lo = binary.BigEndian.AppendUint32([]byte{prefixBatch}, uint32(p))
	hi = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32([]byte{prefixBatch}, uint32(p)), ^uint64(0))
	hi = append(hi, 0) // past every 13-byte key of p
	return lo, hi
}

// NextOffset returns the offset the next batch of p must start at or after (0 for a partition
// the log has never seen).
func (l *Log) NextOffset(p int32) (int64, error) {
	l.mu.Lock()
	n, ok := l.next[p]
	l.mu.Unlock()
	if ok {
		return n, nil
	}
	n, _, err := l.readMeta(p)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	l.next[p] = n
	l.mu.Unlock()
	return n, nil
}

func (l *Log) readMeta(p int32) (next int64, found bool, err error) {
	v, closer, err := l.db.Get(metaKey(p))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, l.readError(err)
	}
	defer closer.Close()
	if len(v) != 9 || v[0] != metaFormat {
		return 0, false, fmt.Errorf("partition %d: corrupt meta value %x", p, v)
	}
	return int64(binary.BigEndian.Uint64(v[1:])), true, nil
}

// Partitions implements eventlog.Source: every partition that has had a batch appended.
func (l *Log) Partitions() ([]int32, error) {
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixMeta}, UpperBound: []byte{prefixMeta + 1}})
	if err != nil {
		return nil, l.readError(err)
	}
	var ps []int32
	for it.First(); it.Valid(); it.Next() {
		if len(it.Key()) == 5 {
			ps = append(ps, int32(binary.BigEndian.Uint32(it.Key()[1:])))
		}
	}
	return ps, l.readError(errors.Join(it.Error(), it.Close()))
}

// Offsets implements eventlog.Source.
func (l *Log) Offsets(p int32) (first, next int64, err error) {
	next, found, err := l.readMeta(p)
	if err != nil {
		return 0, 0, err
	}
	if !found {
		return 0, 0, fmt.Errorf("partition %d not found", p)
	}
	it, err := l.Batches(p, 0)
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	first = next
	if it.(*iter).nextHeader() {
		first = it.Batch().BaseOffset
	}
	return first, next, it.Err()
}

// AddPartition records partition p, with no batch, as ending at next: an empty partition of
// the input (every record removed by retention, or never written) is a partition of the log
// too, so that its readers see as many partitions as the input had. It does nothing when the
// log already holds p.
func (l *Log) AddPartition(p int32, next int64) error {
	if p < 0 || next < 0 {
		return fmt.Errorf("partition %d: bad partition or next offset %d", p, next)
	}
	if l.readOnly {
		return fmt.Errorf("partition %d: %s: %w", p, l.dir, ErrReadOnly)
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if _, found, err := l.readMeta(p); err != nil || found {
		return err
	}
	if err := l.health.stopErr(); err != nil {
		return l.writeError(err, nil)
	}
	if err := l.checkSpace(64, false); err != nil {
		return l.writeError(err, nil)
	}
	if err := guard(func() error {
		return l.db.Set(metaKey(p), binary.BigEndian.AppendUint64([]byte{metaFormat}, uint64(next)), pebble.Sync)
	}); err != nil {
		l.writeFailed.Store(true)
		return l.writeError(err, nil)
	}
	l.mu.Lock()
	l.next[p] = next
	l.mu.Unlock()
	return nil
}

// Append appends one batch atomically and durably (one pebble batch, Sync).
func (l *Log) Append(b *eventlog.Batch) error {
	a := l.NewAppender()
	defer a.Close()
	if err := a.Add(b); err != nil {
		return err
	}
	return a.Commit()
}

// Appender groups several Kafka batches into one Pebble commit. Each Commit is one pebble.Batch
// holding the batches' values and the new next offset of each touched partition, committed with
// Sync: after a crash a Kafka batch is wholly present or absent and the stored next offset
// always agrees with the stored batches. Grouping amortizes the fsync, which is what makes a
// million records per second reachable. An Appender holds the log's writer lock until Close.
//
// A commit that fails (a full disk, an I/O error, a flush that failed in the background)
// returns an error that names the directory, says what to do and up to which offset of each
// partition the database is intact; the Appender refuses further commits.
type Appender struct {
	l        *Log
	pb       *pebble.Batch
	inflight *pebble.Batch // applied, WAL fsync possibly still running (see CommitAsync)
	next     map[int32]int64
	// committed is next as of the last CommitAsync (what inflight makes durable), durable the
	// next offsets known to be durable (from the log when first touched, then after each Wait).
	committed, durable map[int32]int64
	failed             error
	buf                []byte
	key                []byte
	batches            int
	closed             bool
}

// NewAppender starts a group of appends; it blocks while another Appender is open.
func (l *Log) NewAppender() *Appender {
	l.wmu.Lock()
	a := &Appender{l: l, next: map[int32]int64{}, committed: map[int32]int64{}, durable: map[int32]int64{}}
	if l.readOnly {
		a.failed = fmt.Errorf("append to %s: %w", l.dir, ErrReadOnly)
	} else {
		a.pb = l.db.NewBatch()
	}
	return a
}

// Add encodes b into the pending group (copying it: b may be reused by its iterator
// afterwards). It rejects a batch that starts below the partition's next offset; gaps are
// allowed, as compaction leaves them.
func (a *Appender) Add(b *eventlog.Batch) error {
	if a.failed != nil {
		return a.failed
	}
	if b.Partition < 0 {
		return fmt.Errorf("partition %d: negative partition", b.Partition)
	}
	if b.LastOffset < b.BaseOffset || b.BaseOffset < 0 {
		return fmt.Errorf("partition %d: batch [%d..%d]: bad offsets", b.Partition, b.BaseOffset, b.LastOffset)
	}
	next, ok := a.next[b.Partition]
	if !ok {
		var err error
		if next, err = a.l.NextOffset(b.Partition); err != nil {
			return err
		}
		a.durable[b.Partition] = next
	}
	if b.BaseOffset < next {
		return fmt.Errorf("partition %d: batch [%d..%d] from %s: %w (%d)", b.Partition, b.BaseOffset, b.LastOffset, b.Origin, ErrOffsetRegression, next)
	}
	a.buf = encodeBatch(a.buf[:0], b)
	a.key = batchKey(a.key[:0], b.Partition, b.LastOffset)
	if err := a.pb.Set(a.key, a.buf, nil); err != nil {
		return err
	}
	a.next[b.Partition] = b.LastOffset + 1
	a.batches++
	return nil
}

// Len returns the pending size in bytes.
func (a *Appender) Len() int {
	if a.pb == nil {
		return 0
	}
	return a.pb.Len()
}

// Batches returns the number of pending Kafka batches.
func (a *Appender) Batches() int { return a.batches }

// Commit writes the pending batches and next offsets in one synced pebble batch and waits for
// the fsync. The Appender stays usable for another group.
func (a *Appender) Commit() error {
	if err := a.CommitAsync(); err != nil {
		return err
	}
	return a.Wait()
}

// fail records err as the reason the Appender stops and returns it explained.
func (a *Appender) fail(err error) error {
	if a.failed == nil {
		a.failed = a.l.writeError(err, a.durable)
		a.l.writeFailed.Store(true)
	}
	return a.failed
}

// Wait waits until every group committed so far is durable.
func (a *Appender) Wait() error {
	if a.inflight == nil {
		return a.failed
	}
	err := guard(a.inflight.SyncWait)
	a.inflight.Close()
	a.inflight = nil
	if err != nil {
		return a.fail(err)
	}
	for p, n := range a.committed {
		a.durable[p] = n
	}
	return nil
}

// CommitAsync is Commit without waiting for the WAL fsync of this group, so that the caller
// can read and encode the next group while the disk syncs (Import's pipelining). The group is
// applied atomically (visible, and in the WAL before any later group), so the crash guarantees
// are unchanged; only durability of this last group is pending until Wait or the next commit.
func (a *Appender) CommitAsync() error {
	if a.failed != nil {
		return a.failed
	}
	if a.batches == 0 {
		return nil
	}
	if err := a.Wait(); err != nil { // at most one group in flight
		return err
	}
	// A full disk or a failed flush stops the writer before its next commit: Pebble would
	// treat a failed commit as fatal.
	if err := a.l.health.stopErr(); err != nil {
		return a.fail(err)
	}
	if err := a.l.checkSpace(int64(a.pb.Len()), false); err != nil {
		return a.fail(err)
	}
	for p, n := range a.next {
		v := binary.BigEndian.AppendUint64([]byte{metaFormat}, uint64(n))
		if err := a.pb.Set(metaKey(p), v, nil); err != nil {
			return err
		}
	}
	if h := a.l.testHookBeforeCommit; h != nil {
		h()
	}
	if err := guard(func() error { return a.l.db.ApplyNoSyncWait(a.pb, pebble.Sync) }); err != nil {
		return a.fail(err)
	}
	a.l.mu.Lock()
	for p, n := range a.next {
		a.l.next[p] = n
		a.committed[p] = n
	}
	a.l.mu.Unlock()
	a.inflight = a.pb
	a.pb = a.l.db.NewBatch()
	a.batches = 0
	return nil
}

// Close waits for an in-flight group, discards anything not committed and releases the writer
// lock.
func (a *Appender) Close() {
	if a.closed {
		return
	}
	a.closed = true
	_ = a.Wait()
	if a.pb != nil {
		a.pb.Close()
	}
	a.l.wmu.Unlock()
}
