// Package eventlog is the log itself: Kafka-shaped batches (offsets, producer id and epoch,
// transactional and control flags, timestamps, leader epoch, raw key and value bytes with null
// distinct from empty), read from Kafka's on-disk segment format (package eventlog/segment) or
// stored in a Pebble-backed append-only log (package eventlog/pebblelog). Both satisfy one read
// interface, Source, so the replay engine reads either.
//
// # Types
//
// A Batch mirrors one Kafka record batch: BaseOffset, LastOffset (= base + lastOffsetDelta),
// PartitionLeaderEpoch, Magic, Attributes (codec, timestamp type, transactional, control,
// delete horizon; kept verbatim), BaseTimestamp (the delete horizon when bit 6 is set),
// MaxTimestamp, ProducerID, ProducerEpoch, BaseSequence, CRC, NumRecords and Records, plus its
// Origin (segment file, byte position, size on disk) for error messages and dumps. A legacy
// magic 0/1 entry (one plain message, or one compressed wrapper with its inner messages) is a
// Batch too, with Magic 0/1 and the wrapper's codec; its producer fields are -1.
//
// Invariants every Source keeps:
//   - Record.Key and Record.Value are nil for null (length -1, a tombstone value) and non-nil
//     (possibly empty) otherwise, through segments, Pebble and iteration alike.
//   - Within a partition batches come in strictly increasing, non-overlapping offset order:
//     b.BaseOffset <= b.LastOffset < next.BaseOffset. Gaps are normal (compaction).
//   - A batch may hold zero records (a header-only batch left by compaction).
//   - NumRecords == len(Records) for every batch an iterator returns.
//
// # Iteration
//
// Source.Batches returns an Iterator with Next/Batch/Err/Close rather than an iter.Seq2: the
// caller needs Close (files, Pebble iterators) and Err after the loop, and an explicit iterator
// lets the returned *Batch be reused between calls. The batch and every slice in it stay valid
// only until the next Next or Close; Batch.Clone keeps one. Memory therefore stays bounded by
// the largest batch, whatever the size of the log.
//
// ReadAhead wraps an Iterator so that a goroutine of its own reads, checks and frames the
// next batches while the caller replays the current ones: it copies up to three chunks of
// batches (about 512 KiB or 4,096 records each; a larger batch makes one chunk of its own, not
// kept afterwards) into arenas it reuses, so the overlap costs a copy, not garbage. A batch
// past 4 MiB is lent rather than copied (the goroutine waits until the caller is past it), so
// that read-ahead never holds more than the iterator's own memory of the largest batches.
// Batches, their order, nulls and the final error are the iterator's; it may read a few chunks
// past where its caller stops.
//
// # Bad input
//
// Mode selects Strict (stop with a *Problem naming file, byte position, partition and base
// offset) or Forensic (record each Problem in a Report, with what was skipped, and continue).
// Report.Summary counts every problem and every skipped batch, record and byte by Kind;
// Report.Groups counts them per file and kind, and Report.Render writes them for a person, a
// line per file and kind (a stale segment's thousands of superseded batches are one line) or,
// verbose, a line each. Nothing is skipped silently. The resync rule of forensic mode is documented in eventlog/segment.
//
// This package also holds the Kafka v2 record codec (DecodeRecordsV2, AppendRecordV2) that both
// backends share.
package eventlog
