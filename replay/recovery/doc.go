// Package recovery restarts a replay engine the way a coordinator restarts: from the newest
// usable snapshot of its partition plus the log after it (Recover, RecoverTo), and writes
// those snapshots (TakeSnapshot, RunWithSnapshots). It sits on package replay (the engine) and
// package snapshot (the files), which know nothing of each other.
//
// # Format
//
// A snapshot is a snapshot.Store file. Its meta carries the partition, the next offset, the
// Kafka version and record layout of the replay rules, the payload kind (SnapshotKind,
// "replay/v2"), display counters and the identity of the log it was taken from (identity.go:
// the log's first batch and the batch holding the last offset replayed, by offsets and CRC). Its payload is an array [Stats, state image]: the
// engine's counters (replay.Stats, msgpack) and the state as a groupstate image, framed as
// [layout (1), head, [part...]] with every part a msgpack byte string (image.go). The image is
// written straight from the state's maps and read straight back into them, part by part on
// every core; the committed-offset blocks stay packed in the restored state until a mutation
// needs them, and are checked on the cores the tail replay leaves idle (RecoverTo).
//
// A snapshot is a cache of the log: only the current payload kind is read. A snapshot of
// another kind (such as "replay/v1", the first, never released) is refused with a message,
// left where it is, and recovery falls back to an older snapshot or to a full replay, as it
// does for a corrupt file (which the store moves aside as *.broken).
//
// A database keeps its snapshots in StoreDir(db). A database compacted by eventlog/compact
// gets fresh snapshots of its end (CompactedSnapshots) instead of its original's, which
// describe another log.
//
// # Invariants
//
//   - Restoring a snapshot taken at offset k and replaying the log from k gives exactly the
//     state, next offset and counters of a full replay (tests: every cut point of generated
//     logs, the public dumps, the Kafka 4.4 recordings). The one exception: a snapshot taken
//     inside a batch (Run with an until inside it) counts that batch once on each side.
//   - A snapshot is used only on the log it was taken from (CheckLog: the batches its identity
//     names have the same offsets and CRCs in the log; a snapshot copied from another database,
//     or from before a compaction rewrote those batches, is skipped with a message naming the
//     batch and both CRCs), under the rules it was built with (same Kafka version and record
//     layout), never ahead of the log, and in strict mode never after violations.
//   - A snapshot without an identity (snapshot format 1, written before coordlog recorded it)
//     is used after the one check that remains (the log holds the last offset it replayed),
//     with a note that says so; Options.RequireLogIdentity refuses it instead, so that
//     snapshot create never builds a new snapshot, with this log's identity, on a state whose
//     log cannot be told.
//   - Restoring writes nothing unless the store is writable: with a read-only store (every
//     command that only reads) a corrupt snapshot is skipped and left in place; a store that
//     cannot be read is a warning and a full replay.
//   - The committed testdata/replay-v2.snap keeps restoring to a full replay's state
//     (TestSnapshotFormatCompatibility); a field added to groupstate's internal structs fails
//     groupstate's image tests until the image carries it.
//   - A write that fails (disk full, a closed file) leaves no encoder goroutine running: the
//     caller may change the state as soon as TakeSnapshot returns.
package recovery
