// Package compact compacts a __consumer_offsets partition offline with the semantics of one
// pass of Kafka's log cleaner (Kafka 4.4 Cleaner, CleanedTransactionMetadata and
// MemoryRecords.filterTo), in bounded memory, and publishes the result atomically.
//
// # Passes
//
// NewPlan scans the partition once. It builds the key index (exact key bytes, the int16 type
// prefix included, to the offset of the key's latest record), learns every transaction
// (aborted spans per producer, markers of transactions without data batches) and the producer
// state Kafka keeps (epoch, last data batch in that epoch, last timestamp, open transaction).
// Records of a transaction are held back until its marker, because an aborted record must
// never supersede a committed one (Kafka's cleaner reads the transaction index to the same
// end). If a transaction is still open at the end of the log, cleaning stops at its first
// offset (Kafka's last stable offset): when records at or past it were indexed, a second scan
// indexes only the cleanable range.
//
// Compacted then reads the input again through the plan and is itself an eventlog.Source: the
// writers (WriteSegments, WritePebble), a dry run (Each) and the replay proof all consume it.
//
// # Decisions (per batch below the last stable offset)
//
//   - A data batch of an aborted transaction loses all its records (Aborted).
//   - A control batch (COMMIT/ABORT) of a transaction with no data batch, or one already
//     emptied, loses its record once its delete horizon has passed (EmptyMarker); before that it
//     is kept and, without a horizon, gets one.
//   - A data record is kept when it is the latest of its key; a kept tombstone goes once its
//     batch's horizon has passed (ExpiredTombstone). A record without a key goes (NoKey), as in
//     Kafka. Legacy (magic 0/1) batches have no horizon; their tombstones are kept and the batch
//     is rewritten as v2 with a horizon, as Kafka converts retained legacy records.
//   - A batch keeping every record and needing no new horizon is passed through unchanged.
//     Otherwise it is rebuilt (same base and last offset, producer fields, leader epoch, codec,
//     flags; base timestamp = horizon when it has one, else the first kept record's timestamp;
//     max timestamp recomputed for CreateTime); a batch that keeps tombstones or a discardable
//     marker and has no horizon yet is stamped with Now + DeleteRetention (attribute bit 6).
//   - An emptied batch is kept as a header-only batch (no codec, base timestamp -1) when it is
//     its active producer's last data batch (or, with no data in the current epoch, a marker of
//     that epoch) or when it ends at the log end offset; otherwise it is dropped.
//
// A tombstone is only ever dropped when no older record of its key remains: every older record
// of the key is superseded in the same pass, and a tombstone without a horizon is always kept
// (and stamped) by the pass that sees it first. So one run stamps and a later run (after the
// retention) removes, as with Kafka.
//
// "Now" is Options.Now, explicit and required: an offline job must decide the same way for the
// same input, and the horizon it stamps must be reproducible. The command line defaults it to
// the wall clock.
//
// # Differences from a broker's cleaner
//
//   - The whole log up to the last stable offset is cleaned (there is no active segment, and
//     min.compaction.lag.ms is 0 for __consumer_offsets), and cleaning stops at the last stable
//     offset itself, not at the base of the segment holding it.
//   - Producer expiry is judged from the log alone (the producer's last batch timestamp against
//     Now and ProducerExpiration), not from a broker's producer-state snapshots.
//   - Keys are compared exactly; Kafka compares 16-byte digests.
//
// # Memory
//
// The key index is a map from key to offset, accounted at len(key)+64 bytes per entry. At
// Options.IndexMemory it spills a run sorted by key ([uvarint len][key][u64 offset]) to a
// private temporary directory and starts over. At the end the runs are merged (heap, largest
// offset per key) into the survivor list: the sorted offsets of the latest records, 8 bytes
// per key, kept in memory below the budget or spilled as offset-sorted runs merged while
// reading. Transactions held back until their marker, aborted spans and markers of empty
// transactions stay in memory; they are small next to the data. Reading holds one batch at a
// time.
//
// # Publishing (Job, Replace, Recover)
//
// A Job writes the compacted log in the input's format (Kafka segments, or a Pebble log) into
// a staging directory of its own beside the destination, <destination>.compact-new-<pid>-<random>,
// syncs it, has it proven by a VerifyFunc (replay/audit's CompactionProof replays the original
// and the compacted log and compares the states), writes a manifest (coordlog-compact.json:
// input fingerprint, options, statistics) and only then publishes it: one rename to the new
// output path (RENAME_NOREPLACE: never over a directory that appeared meanwhile), or, in
// place, Replace: a marker file (<target>.compact-swap, naming the target, the staged
// directory and the backup by absolute paths, and the staged directory's inode) made durable
// first, then an atomic RENAME_EXCHANGE of the staged and target directories (two renames
// where the filesystem lacks it), then the old directory moved to <target>.compact-old and
// removed. Recover (run by every in-place job first) completes a swap from any point: the
// marker is only written after the proof, so rolling forward is always safe, and without a
// marker the target was never touched. Once the marker is written the staged directory
// belongs to the swap: an error after it leaves both for the next run to complete. A marker of
// an older coordlog, whose paths were relative to the directory it ran in, is placed from its
// own location (the target is the marker's path less .compact-swap); one that climbs (..) is
// refused with what to do. A directory made at the target while the fallback had the original
// aside is removed by recovery when it is empty (a writer about to create a database there),
// and stops it with what to do otherwise. A re-run with --out finds the manifest and does
// nothing. Staged and target must be on one file system (checked before the marker).
//
// # Writers never race (eventlog/lock)
//
// A job (not a dry run) first takes the lock of everything it writes or reads to write: the
// input (a database's <db>/coordlog.lock; a segment directory's lock beside it), each
// __consumer_offsets-N directory of a log directory, and the destination (beside the output,
// or beside the input in place). A second writer is refused with the holder's command, pid,
// host and start time. The destination's lock guards its staging names: the run that holds it
// knows that every <destination>.compact-new* (and the shared <destination>.compact-new of an
// older coordlog) was left by a dead run, and removes it after finishing any interrupted swap.
// So two runs never stage into one directory, and no run publishes what it did not prove. A
// database compacted in place stays locked across its swap: its staged replacement gets a
// hard link to the held lock file before the exchange (lock.LinkInto), and during the
// fallback's window, in which the database is missing, the destination's lock keeps a writer
// from creating it afresh (lock.Database). A --out job refuses an input whose in-place
// compaction was interrupted; other writers (replay import, snapshot create, simulate) call
// Pending before and after taking their lock, which names a compaction still running and
// says to finish one that was interrupted. A log directory's job also locks a partition
// directory that an interrupted swap left missing (only its marker remains).
//
// Links are followed: a partition directory or database reached through a symbolic link is
// compacted where it really is (staged beside it, on its file system), and the link stays.
//
// # A database's snapshots
//
// A snapshot of the original at offset N plus the compacted log after N is not in general the
// compacted log's state: a tombstone after N that the cleaner removed (its horizon passed)
// leaves the key it deleted alive in the snapshot; a marker removed as empty leaves pending
// offsets pending. So a compacted database never inherits the original's snapshots. The
// command's SnapshotFunc (replay/recovery's CompactedSnapshots) replays the compacted log once
// more and writes a snapshot of its end into the staged database, before it is published, for
// each partition that had snapshots; Result.Snapshots (printed on stderr and in the summary)
// says how many of the original's were left and where they are: with the original (--out), in
// the backup (--in-place --keep-backup), or gone with the original log (--in-place).
//
// Segment output keeps partition.metadata and leader-epoch-checkpoint; offset, time and
// transaction indexes and producer snapshots are left for Kafka to rebuild, since they
// describe the old segments. The first output file is named after the input's first segment,
// so the log start offset does not move.
package compact
