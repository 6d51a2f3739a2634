// Package audit checks a replayed log for what an operator should look at, and proves that a
// compacted log replays to the state of its original. It is the library under `replay check`
// and under `compact`'s proof; the commands only render what it finds.
//
// # Findings
//
// An Audit watches the replay of each partition (Observer) and inspects the state at its end
// (Finish). It reports:
//
//   - violation: a record Kafka's loader would have failed on (forensic replays continue);
//   - damaged-input: what the segment reader skipped;
//   - target-assignment-split: target-assignment member records written without the
//     target-assignment metadata record in the same batch (Kafka writes them atomically,
//     except when a static member's replacement moves one target to the new member id;
//     compaction can legitimately separate them);
//   - member-epoch-ahead: a member whose epoch is ahead of its group's;
//   - task-twice-on-process: a streams task owned twice on one process (an active and a
//     standby, or two of a kind);
//   - open-transaction: a transaction still open at the end of the log;
//   - offsets-of-deleted-group: committed offsets whose group no longer exists;
//   - wrong-partition: a group with records in a partition other than the one Kafka maps it
//     to (Java's String.hashCode of the group id, modulo the partition count).
//
// Findings are sorted by partition, then offset (end-of-log findings last), in a stable order.
//
// # Compaction proof
//
// CompactionProof replays each partition of the original and of the compacted log to its end,
// one after the other, reducing each replay to digests before the next: the groups into a
// state (whose offsets are filtered out: groupstate's SetOffsetFilter) and a SHA-256 of their
// dump, the committed and pending offsets into an offset book (offsetbook.go: per key a
// 128-bit hash, the log offset of the record that holds it and a hash of its value, following
// groupstate's offset rules; a test holds the two to each other) and an order-independent
// digest of it. Memory is bounded: when the book exceeds MemoryBudget the keys are split by
// hash into parts (4, 16, ...), each compared by replaying both logs with only that part's
// offsets. Next offsets, digests and pending producers must be equal; when they are not, both
// logs are replayed again into states holding the differing part's offsets, and the
// difference is explained with groupstate.Diff.
package audit
