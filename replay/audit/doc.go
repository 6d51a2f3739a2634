// Package audit checks a replayed log for what an operator should look at, and proves that a
// compacted log replays to the state of its original. It is the library under `replay check`
// and under `compact`'s proof; the commands only render what it finds.
//
// # Findings
//
// An Audit watches the replay of each partition (Observer) and inspects the state at its end
// (Finish). Each finding names its partition, offset (-1 for the state at the end of the log),
// time, group and what to look at next (Next). It reports, from the explanation of the log
// (replay/explain's marked events, one source for check and timeline; explained.go):
//
//   - offset-rewind: a batch's commits moved a committed offset back (how far, how many of the
//     partitions it committed, which member owned them), or a transaction's commit did;
//   - offsets-written-while-empty: one finding per run of writes to a group with a protocol
//     while it had no members (an admin tool such as kafka-consumer-groups --reset-offsets, or
//     a standalone consumer), with the values each partition took and its moves back;
//   - commit-without-owner: offsets committed while the group had members, none owning them;
//   - offsets-deleted: committed offsets deleted, with the group or not, and by what as far as
//     the log tells (DeleteGroups, OffsetDelete, expiry, a topic's deletion);
//   - member-fenced: a member removed by its session or rebalance timeout, not by a leave;
//   - members-fenced: three or more members of one client id and host fenced in one group
//     (console consumers, kcat, test clients started and killed again and again), one finding
//     with the count and the span instead of one each;
//   - slow-rebalance: a rebalance longer than the threshold to converge (or still open);
//   - long-transaction: a transaction open longer than the threshold;
//   - more-findings: past 20 findings of one kind in one group, the rest counted in one.
//
// and, from its own observer and the state at the end:
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
// Every finding has a Severity (high: offsets consumers feel, or a wrong log; medium: fenced
// members, slow rebalances, long or open transactions, broken invariants; low: members-fenced)
// and says how sure its cause is (Certainty, Evidence, Alternatives: replay/explain's rule
// table; a finding that states no cause is proved by the records or the state it names).
// Findings are sorted by severity, then partition and offset (end-of-log findings last), in a
// stable order; FilterSeverity keeps those at a severity or above (`check --min-severity`).
// Options.Explain sets the explanation's thresholds (slow rebalance, long transaction,
// offsets retention, session timeout).
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
