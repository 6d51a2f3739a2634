package pebblelog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

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
}

// Log is a Pebble-backed append-only log of Kafka batches for any number of partitions. It
// implements eventlog.Source. Reads may run concurrently with each other and with one writer.
type Log struct {
	db *pebble.DB

	// wmu serializes writers: an Appender holds it from creation to Commit/Close, so the next
	// offsets it checks against cannot change under it.
	wmu  sync.Mutex
	mu   sync.Mutex // guards next
	next map[int32]int64

	// testHookBeforeCommit, if set, runs just before each pebble commit (crash tests).
	testHookBeforeCommit func()
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)         {}
func (quietLogger) Errorf(string, ...any)        {}
func (quietLogger) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }

// Open opens (creating if needed) the log stored in dir.
func Open(dir string, opts *Options) (*Log, error) {
	if opts == nil {
		opts = &Options{}
	}
	o := &pebble.Options{
		FS:                 opts.FS,
		Logger:             quietLogger{},
		FormatMajorVersion: pebble.FormatNewest,
		MemTableSize:       opts.MemTableSize,
		// Keys arrive in order, so L0 files do not overlap and compactions are cheap moves;
		// a higher stop-writes threshold keeps a burst of flushes from stalling an import.
		L0CompactionThreshold: 8,
		L0StopWritesThreshold: 32,
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 32 << 20
	}
	cacheSize := opts.CacheSize
	if cacheSize == 0 {
		cacheSize = 16 << 20
	}
	cache := pebble.NewCache(cacheSize)
	defer cache.Unref()
	o.Cache = cache
	db, err := pebble.Open(dir, o)
	if err != nil {
		return nil, err
	}
	return &Log{db: db, next: map[int32]int64{}}, nil
}

// Close closes the database.
func (l *Log) Close() error { return l.db.Close() }

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
		return 0, false, err
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
		return nil, err
	}
	var ps []int32
	for it.First(); it.Valid(); it.Next() {
		if len(it.Key()) == 5 {
			ps = append(ps, int32(binary.BigEndian.Uint32(it.Key()[1:])))
		}
	}
	return ps, errors.Join(it.Error(), it.Close())
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
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if _, found, err := l.readMeta(p); err != nil || found {
		return err
	}
	if err := l.db.Set(metaKey(p), binary.BigEndian.AppendUint64([]byte{metaFormat}, uint64(next)), pebble.Sync); err != nil {
		return err
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
type Appender struct {
	l        *Log
	pb       *pebble.Batch
	inflight *pebble.Batch // applied, WAL fsync possibly still running (see CommitAsync)
	next     map[int32]int64
	buf      []byte
	key      []byte
	batches  int
	closed   bool
}

// NewAppender starts a group of appends; it blocks while another Appender is open.
func (l *Log) NewAppender() *Appender {
	l.wmu.Lock()
	return &Appender{l: l, pb: l.db.NewBatch(), next: map[int32]int64{}}
}

// Add encodes b into the pending group (copying it: b may be reused by its iterator
// afterwards). It rejects a batch that starts below the partition's next offset; gaps are
// allowed, as compaction leaves them.
func (a *Appender) Add(b *eventlog.Batch) error {
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
func (a *Appender) Len() int { return a.pb.Len() }

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

// Wait waits until every group committed so far is durable.
func (a *Appender) Wait() error {
	if a.inflight == nil {
		return nil
	}
	err := a.inflight.SyncWait()
	a.inflight.Close()
	a.inflight = nil
	return err
}

// CommitAsync is Commit without waiting for the WAL fsync of this group, so that the caller
// can read and encode the next group while the disk syncs (Import's pipelining). The group is
// applied atomically (visible, and in the WAL before any later group), so the crash guarantees
// are unchanged; only durability of this last group is pending until Wait or the next commit.
func (a *Appender) CommitAsync() error {
	if a.batches == 0 {
		return nil
	}
	if err := a.Wait(); err != nil { // at most one group in flight
		return err
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
	if err := a.l.db.ApplyNoSyncWait(a.pb, pebble.Sync); err != nil {
		return err
	}
	a.l.mu.Lock()
	for p, n := range a.next {
		a.l.next[p] = n
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
	a.pb.Close()
	a.l.wmu.Unlock()
}
