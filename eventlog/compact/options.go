package compact

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of Kafka's broker configuration that the cleaner's decisions depend on.
const (
	// DefaultDeleteRetention is Kafka's delete.retention.ms default (1 day).
	DefaultDeleteRetention = 24 * time.Hour
	// DefaultProducerExpiration is Kafka's producer.id.expiration.ms default (1 day).
	DefaultProducerExpiration = 24 * time.Hour
	// DefaultIndexMemory bounds the in-memory key index before it spills sorted runs to disk.
	DefaultIndexMemory = 192 << 20
)

// Options configure a compaction. Build them with DefaultOptions and override fields: the zero
// value of a duration means zero (Kafka allows delete.retention.ms=0), not "default".
type Options struct {
	// Now is the cleaning time, the "currentTime" of Kafka's cleaner: a batch's tombstones and
	// empty markers go when Now >= its delete horizon, and the first pass stamps the horizon
	// Now+DeleteRetention. It is an explicit input because an offline job must be
	// deterministic and testable: the same input and Now give the same bytes. Required.
	Now time.Time
	// DeleteRetention is delete.retention.ms.
	DeleteRetention time.Duration
	// ProducerExpiration is producer.id.expiration.ms: a producer whose last batch is older
	// than this at Now (and has no open transaction) is no longer active, so its last batch
	// need not be kept as an empty header.
	ProducerExpiration time.Duration
	// IndexMemory is the budget in bytes of the in-memory key index (and of the in-memory
	// survivor list); past it sorted runs go to TempDir.
	IndexMemory int64
	// TempDir holds spilled runs (os.TempDir() when empty). Each plan uses its own
	// subdirectory and removes it on Close.
	TempDir string
	// Progress, when set, is called about every ProgressBytes of input read.
	Progress func(Progress)
	// ProgressBytes is the input volume between two Progress calls (default 64 MiB).
	ProgressBytes int64
}

// Progress reports long work.
type Progress struct {
	Phase     string // "index", "reindex" (open transaction at the end), "write", "verify"
	Partition int32
	Bytes     int64 // input bytes read in this phase so far (batch sizes on disk)
	Total     int64 // input bytes of the partition, when known (0 otherwise)
}

// DefaultOptions returns Kafka's defaults with the given cleaning time.
func DefaultOptions(now time.Time) Options {
	return Options{
		Now:                now,
		DeleteRetention:    DefaultDeleteRetention,
		ProducerExpiration: DefaultProducerExpiration,
		IndexMemory:        DefaultIndexMemory,
	}
}

func (o *Options) check() error {
	if o.Now.IsZero() {
		return errors.New("compact: Options.Now is required (the cleaning time decides which tombstones expire)")
	}
	if o.DeleteRetention < 0 || o.ProducerExpiration < 0 {
		return fmt.Errorf("compact: negative retention (delete %v, producer %v)", o.DeleteRetention, o.ProducerExpiration)
	}
	if o.IndexMemory <= 0 {
		o.IndexMemory = DefaultIndexMemory
	}
	if o.ProgressBytes <= 0 {
		o.ProgressBytes = 64 << 20
	}
	return nil
}

func (o *Options) nowMs() int64 { return o.Now.UnixMilli() }

// Reason says why compaction removed a record.
type Reason int

const (
	// Superseded: a later record with the same key exists in the cleaned range.
	Superseded Reason = iota
	// ExpiredTombstone: the latest record of its key, a tombstone, in a batch whose delete
	// horizon has passed.
	ExpiredTombstone
	// Aborted: a record of an aborted transaction.
	Aborted
	// EmptyMarker: a COMMIT/ABORT marker whose transaction has no data left, past its horizon.
	EmptyMarker
	// NoKey: a data record without a key (Kafka's cleaner drops these as invalid).
	NoKey
	numReasons
)

func (r Reason) String() string {
	switch r {
	case Superseded:
		return "superseded"
	case ExpiredTombstone:
		return "expired-tombstone"
	case Aborted:
		return "aborted"
	case EmptyMarker:
		return "empty-marker"
	case NoKey:
		return "no-key"
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// Reasons lists every reason in report order.
func Reasons() []Reason { return []Reason{Superseded, ExpiredTombstone, Aborted, EmptyMarker, NoKey} }

// Count is a number of records and their bytes (each record's v2 encoding, uncompressed).
type Count struct {
	Records int64
	Bytes   int64
}

// Stats describe what a compaction keeps and removes. Records are data and control records.
type Stats struct {
	InBatches, InRecords, InBytes int64 // InBytes: batch sizes on disk (eventlog.Origin.Size)
	// OutBatches and OutRecords are the batches and records of the compacted log;
	// EmptyBatches of them are header-only batches kept for producer state or the log end.
	OutBatches, OutRecords, EmptyBatches int64
	// OutBytes is the size of the written output (0 for a dry run).
	OutBytes int64
	// Removed counts removed records by reason; DroppedBatches counts batches that vanished.
	Removed        [numReasons]Count
	DroppedBatches int64
	// Rebuilt counts batches rewritten with fewer records or a new horizon; Stamped counts
	// the batches that got a delete horizon in this pass.
	Rebuilt, Stamped int64
	// Uncleanable counts batches at or after the first open transaction's start (Kafka's last
	// stable offset), copied as they are.
	Uncleanable int64
}

// Add adds s2 to s.
func (s *Stats) Add(s2 Stats) {
	s.InBatches += s2.InBatches
	s.InRecords += s2.InRecords
	s.InBytes += s2.InBytes
	s.OutBatches += s2.OutBatches
	s.OutRecords += s2.OutRecords
	s.EmptyBatches += s2.EmptyBatches
	s.OutBytes += s2.OutBytes
	for i := range s.Removed {
		s.Removed[i].Records += s2.Removed[i].Records
		s.Removed[i].Bytes += s2.Removed[i].Bytes
	}
	s.DroppedBatches += s2.DroppedBatches
	s.Rebuilt += s2.Rebuilt
	s.Stamped += s2.Stamped
	s.Uncleanable += s2.Uncleanable
}

// RemovedTotal sums Removed over every reason.
func (s *Stats) RemovedTotal() Count {
	var c Count
	for _, r := range s.Removed {
		c.Records += r.Records
		c.Bytes += r.Bytes
	}
	return c
}
