// Command compact compacts __consumer_offsets logs offline with the semantics of one pass of
// Kafka's log cleaner (package eventlog/compact), proves the result by replaying the original
// and the compacted log, and only then publishes it atomically.
//
//	compact <segments-dir|db> --out DIR      [--now RFC3339] [--delete-retention 24h] ...
//	compact <segments-dir|db> --in-place     [--keep-backup] ...
//	compact <segments-dir|db> --dry-run
//
// The input is a __consumer_offsets-N directory, a log directory holding several, or a
// coordlog Pebble log; the output has the same format. --now is the cleaning time (default:
// the wall clock, the only place the wall clock is read); one run stamps delete horizons
// (now + --delete-retention) on batches that keep tombstones or discardable markers, a later
// run past the horizon removes them, as Kafka's cleaner does over two passes.
//
// # The proof
//
// The proof is replay/audit's CompactionProof: each partition of the original and of the
// compacted log is replayed to its end, one after the other; the next offsets must match, the
// SHA-256 of the groups' JSON dumps must match, and so must the offsets (committed and
// pending, per key the record that holds it). When they differ both are replayed again and
// groupstate.Diff shows how. One difference is tolerated unless --exact: an implicit group (a classic group with no
// protocol type, members, generation, protocol, leader or timestamp: what replaying an offset
// commit creates for an unknown group) present on one side only. Kafka's own cleaner creates
// exactly this difference (offset commits superseded by their tombstones no longer create the
// group on load; an offset commit that outlives an expired group tombstone creates it again)
// and the group holds no data; offsets and everything else are compared exactly.
//
// The proof runs in bounded memory: it holds one log's groups at a time and, per offset key,
// a 48-byte entry instead of the state's few hundred bytes; when a partition's offsets exceed
// --index-memory (192 MiB by default: about 4 million keys), they are compared in parts by
// key hash, each part replayed from both logs (said on stderr, part by part), so that a
// 10 GB log proves under the job's 448 MiB memory limit, at the price of more replays.
//
// # Locks and snapshots
//
// A run locks its input and its destination (package eventlog/lock); while another writer
// holds one it exits 1 with one line naming that writer (command, pid, host, since when). A
// database's snapshots are not carried over to the compacted log; each partition that had
// any gets a snapshot of the compacted log's end (replay/recovery.CompactedSnapshots), and
// the summary says so.
//
// # Exit codes
//
// 0 done (or the output already holds this compaction); 1 damaged input in strict mode (the
// message names the file and byte position; nothing is written), a failed proof (nothing is
// replaced), a lock held by another writer, or an I/O error; 2 a bad command line.
//
// main only parses the process arguments; run holds the behaviour so that tests drive it.
package main
