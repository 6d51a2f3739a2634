// Package pebblelog is a Pebble-backed append-only log of Kafka batches, one log per
// __consumer_offsets partition, many partitions side by side in one database. It implements
// eventlog.Source, and Import copies any Source (typically a segment reader) into it.
//
// A database is a directory: Pebble's files, plus, while a writer has it open, coordlog.lock
// (the writing command, see holder.go) and coordlog.reserve (health.go), and the snapshots
// directory (replay/recovery), which Pebble ignores.
//
// # Key layout
//
// All integers are big-endian, so byte order is offset order.
//
//	0x01 | partition uint32 | lastOffset uint64  ->  one Kafka batch (value below)
//	0x02 | partition uint32                      ->  0x01 | next offset uint64
//
// One Pebble value per Kafka batch, keyed by the batch's last offset: a single SeekGE(from)
// lands on the batch containing from (or the first batch after a gap), which is exactly the
// Source contract, and the number of keys is the number of batches rather than records, which
// is what makes importing at millions of records per second possible (per-record keys cost a
// key comparison, a memtable node and an index entry each).
//
// # Batch value (format 1)
//
//	u8 format=1 | i64 baseOffset | i32 partitionLeaderEpoch | i8 magic | i16 attributes |
//	u32 crc | i64 baseTimestamp | i64 maxTimestamp | i64 producerId | i16 producerEpoch |
//	i32 baseSequence | i32 recordCount | uvarint len + origin file | varint origin pos |
//	varint origin size | records
//
// The records are Kafka's v2 record encoding, uncompressed, with deltas against baseOffset and
// baseTimestamp: the same decoder serves segments and Pebble, and key/value lengths of -1 keep
// null distinct from empty. Header fields are stored as read (attributes keep the original codec
// bits and the CRC is the original on-disk CRC), so a batch read back equals the batch appended.
// Legacy v0/v1 batches are stored the same way, records re-encoded in v2 form. Pebble compresses
// its blocks itself.
//
// # Invariants
//
//   - Batches of a partition do not overlap and are stored in offset order; an append whose
//     base offset is below the partition's next offset is rejected (ErrOffsetRegression), gaps
//     are allowed.
//   - The meta key's next offset equals the last stored batch's LastOffset+1 (0 before the
//     first append): it is written in the same pebble.Batch as the batches that move it.
//   - Every commit is one pebble.Batch committed with Sync, so after a crash at any instant
//     each Kafka batch is wholly present or absent and the next offset agrees with the entries.
//     Appender groups many Kafka batches in one commit to amortize the fsync; grouping does not
//     weaken either property because the group is atomic as a whole.
//
// # Import
//
// Import is idempotent and resumable: per partition it starts from the log's next offset, so
// re-running it after a completed or interrupted import adds exactly what is missing. In strict
// mode the first bad batch stops it after committing everything before that batch.
//
// The input's batches that the log holds already are not skipped unchecked (overlap.go):
// before anything is written, every one of them, in every partition, is compared with the log
// (offsets and CRC; record by record where the CRC differs, since Kafka's log cleaner keeps a
// batch's offsets and drops records), and an input that is another log is refused
// (ErrOtherLog, naming the first offset that differs and both records), so that a database
// never mixes two logs.
//
// # Readers and writers (readonly.go, holder.go)
//
// One process writes a database at a time: Pebble holds an fcntl lock on <dir>/LOCK while it is
// open for writing, and a second writer is refused with a message that names the holder
// (Writer: the kernel's F_GETLK says which pid, <dir>/coordlog.lock what command). Readers
// (Options.ReadOnly) take no lock and write nothing at all (no LOCK, MANIFEST, OPTIONS or WAL
// file; a filesystem wrapper refuses every write), so any number of them run beside each other
// and beside the writer, on read-only media and as users who cannot write the directory. A
// reader sees the database as it was when it opened: it opens every table file before Pebble
// reads the MANIFEST and serves Pebble from those descriptors, so the writer deleting tables it
// compacted away cannot fail the reader; opening itself is retried while a writer holds the
// database, and what still fails names the writer and says to run again.
//
// # Writing safely on a failing disk (health.go)
//
// No I/O error reaches a user as a panic: before each commit a writer checks that the disk has
// room for the commit and two memtable flushes, and stops with an error that names the
// directory, says what to do and up to which offset each partition is intact (WriteError); a
// reserve file (<dir>/coordlog.reserve, a memtable and 1 MiB, while a writer is open) is freed
// when something else fills the disk, so that Pebble finishes the flush and MANIFEST writes
// it cannot survive failing; flush and compaction errors stop the next commit; Pebble's Fatalf
// becomes an error in this package's calls and, in Pebble's own goroutines, a message and exit
// status 1 (Options.OnFatal), as does a write stall no flush can end.
package pebblelog
