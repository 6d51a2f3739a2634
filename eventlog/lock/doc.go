// Package lock keeps two coordlog processes from writing the same thing at once: a database
// (replay import, snapshot create, simulate --db, compact), a Kafka segment directory
// (compact --in-place, simulate --segments) or a compaction's destination (compact --out).
// Readers never lock: they must not contend with one another, nor fail on media they cannot
// write.
//
// # The lock file
//
// A lock is flock(2) LOCK_EX on a lock file that also says who holds it, in one JSON line:
//
//	{"command":"compact --in-place","pid":4711,"host":"h","since":"2026-12-02T03:04:05Z"}
//
// The kernel releases the flock when its holder exits, however it exits, so a lock file left
// behind by a killed process is simply taken over: the line is only what a second writer
// prints ("__consumer_offsets-0 is in use by "compact --in-place" (pid 4711 on host h, since
// 03:04:05Z): wait for it to finish or stop it"), never what decides. HolderOf reports the
// holder of a path (nil when nobody holds it), for readers that want to say that a writer is
// at work.
//
// Where the file is:
//
//   - A coordlog database: <db>/coordlog.lock (Database). It travels with the database when
//     the directory is copied, and Pebble ignores names it does not know. It is taken before
//     Pebble is opened, so a second writer reads this package's message, not Pebble's
//     "resource temporarily unavailable" on its own LOCK.
//   - Anything else: beside it, <parent>/<name>.coordlog.lock (Beside): a partition directory
//     __consumer_offsets-N, a broker's log directory, an output path that does not exist yet.
//     Never inside a Kafka partition directory: a broker loading the partition (Kafka 4.4
//     LogLoader.removeTempFilesAndCollectSwapFiles) lists every regular file of the directory
//     and fails the whole log directory with "Could not read file" on one it cannot read (a
//     lock file made by root and left behind, say), and deletes names ending in .deleted or
//     .cleaned; and an in-place compaction exchanges the partition directory itself, which
//     would carry a lock file inside it away with the old directory. Beside it, in the log
//     directory, the file is harmless: LogManager.loadLogs loads directories only and skips
//     regular files.
//
// Paths are resolved (absolute, symbolic links followed) before the lock file is chosen, so
// two names of one directory share one lock.
//
// # Invariants
//
//   - A Lock is held from Database or Beside until Release: the lock file at the path is the
//     very file (same device and inode) this process holds the flock on. After taking the
//     flock the path is checked again, and taken afresh when it names another file (its
//     previous holder removed it on release, or a directory swap replaced it).
//   - Database creates a missing database directory only under the lock beside it, which an
//     in-place compaction of that database holds throughout: a database briefly missing
//     during a compaction's two-rename swap is never created afresh by a writer.
//   - A database compacted in place keeps its lock across the swap: LinkInto gives the
//     staged database a hard link to the held lock file, so that once the staged directory
//     takes the database's place, <db>/coordlog.lock is still the locked file.
//   - Release removes the lock file only while the path still names it, then drops the flock.
//   - A file system mounted read-only cannot be written by anyone: there the lock is taken
//     without a file.
//   - A second Database or Beside in the same process conflicts like another process would
//     (flock belongs to the open file, not to the process).
//   - A busy lock is tried again for a moment (10 times 20 ms) before it is reported:
//     HolderOf takes a shared flock for an instant to test a file.
package lock
