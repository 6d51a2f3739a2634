// Package explain tells what happened to a group, not which records were written: members
// joining, leaving, fenced or replaced; rebalances with their causes, what they moved and how
// long the group took to converge; who waits for whom to revoke what; conversions between the
// classic and the consumer protocol; offsets committed, moved back, deleted; transactions. It
// is the library under `replay timeline` (every event of one group) and `replay check` (the
// marked events of every group, through replay/audit), and the events are what a picture of a
// group's history (an HTML report: lanes, rebalance marks, offsets over time) is drawn from.
//
// An Analyzer is a replay.Observer for one __consumer_offsets partition: give it to the
// engine (replay.Options.Observer), let it see every record in order, and call Close when the
// replay ends (what is still open, a rebalance or a transaction, is an event too). It explains
// one group (Options.Group) or all of them; Options.MarkedOnly keeps a whole-log analysis
// cheap by building only the marked events.
//
// # How a batch is read
//
// Kafka writes each coordinator decision as one batch (or, since KAFKA-16770, several
// decisions coalesced into one), and many stories are several records of one batch: an
// upgrade is the classic group's tombstone followed by consumer-group records for the same
// members; a downgrade the consumer group's tombstones followed by a classic group; a static
// member's restart the old member id's tombstones followed by a new member id of the same
// instance; a deletion the offsets' tombstones followed by the group's. So the analyzer
// collects a group's records of a batch (its steps) and explains them when the batch ends, on
// a model of the group it keeps from the records (members with client id, host, instance id,
// process id, subscription, timeouts, epochs, states, assigned, pending and target
// assignments; the group's epochs, topology, regexes; committed offsets and the transactions'
// pending ones). Offset commits are explained as they come (by batch, one event per group).
// Topic ids get their names from the records that carry both (offset commits of Kafka 4.1+,
// 4.0 partition metadata, share state metadata) anywhere in the partition; an event naming an
// id whose name is not known yet waits (up to 512 events) for it.
//
// # Events
//
// Every Event has a Kind, the group and its type, the Position of the record that shows it
// (partition, offset, last offset when it spans several records, batch, producer, timestamp),
// a one-sentence Text (rendered from the event alone), Marks, and the payload of its kind:
//
//   - group-created (Rebalance: the generation or epoch): a classic group's empty first
//     record, or a group first seen in the middle of its history (compacted log);
//   - group-converted (Conversion): from, to, the epoch carried over, the members carried
//     over, the member whose join (upgrade) or departure (downgrade) caused it;
//   - group-deleted, offsets-deleted (Deletion): the offsets deleted with their values, the
//     cause with the others the log does not rule out (the rule table below): group-deletion
//     (DeleteGroups), offset-delete (OffsetDelete), topic-deletion, expiry (with the bounds the
//     batch puts on offsets.retention.minutes), cleanup (an empty group without offsets);
//   - member-joined, member-updated (Member; Rebalance.Causes[0] says what changed),
//     member-replaced (Replacement: a static member's new member id, continuing its lane),
//     member-temporary-leave (a static member at epoch -2), member-left and member-fenced
//     (Removal, below);
//   - rebalance (Rebalance: epoch, previous epoch, causes, the target assignment's moves when
//     the batch wrote it), target-assignment (the moves, when the target comes in a later
//     batch), reconcile (Reconcile: a member waiting for partitions or tasks others still own,
//     asked to revoke some, having revoked them, stable at the group's epoch), rebalance-end
//     (Rebalance with End, DurationMs and Outcome: converged, superseded by a newer epoch,
//     open at the end of the log with who waits for whom since when, ended by the group's
//     deletion or conversion; a classic group's rebalance is one rebalance-end, completed, as
//     the log records it only when it completes);
//   - offsets-committed (Offsets: the changes with the previous value and the delta, and the
//     writer as far as the log tells: the member that owned the partitions, no member owning
//     them, an admin tool or a standalone consumer when the group had no members);
//   - transaction-offsets (a producer's pending writes for the group), transaction-end and
//     transaction-open (Transaction: start, result, duration and offsets, a span);
//   - violation: a record the replay refused.
//
// Causes of a rebalance: members joined, left, fenced or replaced, a subscription changed, a
// topology changed or was validated, a regex resolved to other topics, the topics' metadata
// changed (partitions added), assignment configs changed, share partitions initialized, the
// second round of a cooperative rebalance, the rebalance after a downgrade, a rejoin without
// a member change; "unknown" when the log does not say.
//
// # How sure: the rule table
//
// Every event that states a cause (a member's removal or replacement, a deletion, offsets
// written while the group was empty or by no owner) says how sure it is (Event.Certainty):
// proved (the log rules out every other cause; Evidence says by which records and rule),
// likely (Evidence says why; the others are Alternatives), or one of several (Alternatives,
// each with what would settle it: a broker config, the client's log, the broker's request
// log). The rules are what Kafka 4.4's group coordinator writes for each cause
// (GroupMetadataManager, OffsetMetadataManager, GroupCoordinatorShard):
//
//	cause                    what Kafka writes                          what proves it, or rules it out
//	left (LeaveGroup;        the member's tombstones at once (a         removed sooner than its session timeout
//	  heartbeat epoch -1;    classic group: the generation without it,  after its own last record: proved (a
//	  an admin's             when the rebalance it starts completes)    consumer-protocol member's timeout is not
//	  removeMembers...)                                                 in the log: likely under the assumed 45 s
//	                                                                    unless --session-timeout gives it)
//	session timeout          the same records, no sooner than the       about the timeout (up to a third of it,
//	  (fenced)               timeout after its last heartbeat, which    at most 5 s, more) after its own last
//	                         is no earlier than its own last record     record: likely; a commit of its partitions
//	                         (a coordinator reload restarts timers)     shortly before: a leave, likely
//	rebalance timeout        consumer protocol: tombstones exactly the  still revoking, removed that long (+slack)
//	  (fenced)               timeout after the record that put it in    after: likely; classic: no sooner than
//	                         UNREVOKED_PARTITIONS (each restarts it)    the timeout after its generation
//	static leave (epoch -2)  its current assignment at epoch -2, the    a new member id of the same instance in
//	  and replacement        member kept; a rejoin of the instance:     one batch: replaced, proved; tombstones
//	                         the old id's tombstones and the new id's   between its own record before the leave
//	                         records in one batch                       and the leave, plus the session timeout
//	                                                                    (the leave does not restart the timer):
//	                                                                    expired, likely
//	DeleteGroups             every offset of the group, then its        no group tombstone, or offsets kept:
//	                         tombstone (an empty group only)            ruled out
//	OffsetDelete             some offsets of one group, no group        a group tombstone, or a topic its members
//	                         tombstone                                  subscribe to: ruled out; several groups
//	                                                                    at once: unlikely (coalesced requests)
//	topic deletion           the deleted partitions' offsets of every   a group tombstone, or a group keeping a
//	  (onPartitionsDeleted)  group of the partition, no group tombstone partition of the topic: ruled out;
//	                                                                    several groups, none keeping one: likely
//	expiry (cleanupGroup-    every offset old enough (since its commit; youngest removed under 1 min (the least
//	  Metadata, every        a classic group's since it became empty)   offsets.retention.minutes), under a given
//	  offsets.retention.     of groups that may lose it (empty, or a    --offsets-retention, an offset that could
//	  check.interval.ms)     topic no member subscribes to), in one     have expired kept at least as old, or an
//	                         batch, then each empty group left without  empty group left without offsets and not
//	                         offsets is deleted                         deleted: ruled out; else the ages bound
//	                                                                    the retention (at most the youngest
//	                                                                    removed, more than the oldest kept) and
//	                                                                    expiry is likely when several groups or
//	                                                                    the group's tombstone go
//	empty-group cleanup      the same task's tombstone of an empty      DeleteGroups writes the same for such a
//	                         group without offsets                      group: one of several
//	offsets written while    an OffsetCommit record, which names no     one of several: an admin tool or a
//	  empty / by no owner    writer                                     standalone consumer (a stale member)
//
// A deletion's diagnosis reads the other groups of the partition (who kept what): the analysis
// of one group (Options.Group) sees no other group, so it may be less sure than the analysis of
// all groups (check's).

// # Marks
//
// rewind (a committed offset moved back), while-empty (offsets written while a group with a
// protocol had no members), without-owner (written while no member owned the partition),
// fenced, slow (a rebalance longer than Options.SlowRebalanceMs, a transaction longer than
// Options.LongTransactionMs), deleted (committed offsets deleted). A marked event says what to
// look at next (Event.Next, INPUT standing for the command's input).
//
// # For a picture of a group's history
//
// Member lanes are Member.Lane (a static member's instance id, so its replacements continue
// the lane; the member id otherwise), from member-joined to member-left, member-fenced or a
// replacement, with the reconcile steps (waiting, revoking, revoked, stable, away) between.
// Rebalances are spans from rebalance (Rebalance.Start) to rebalance-end (End) with their
// causes and moves; committed offsets are points per topic-partition (offsets-committed's
// changes, rewinds marked); transactions are spans from Transaction.Start to the
// transaction-end or transaction-open event. Every event's Position leads back to the record.
//
// # Invariants
//
//   - Events come in log order within a group, but for rebalance-end and transaction-open,
//     which come when the rebalance ends or the log does; the events of one batch are sorted
//     by the offset of the record that shows each.
//   - The analysis of one group gives the events the analysis of all groups gives for it, but
//     for a deletion's cause and certainty, which read the other groups.
//   - A marked-only analysis emits the marked events of a full one, at the same positions with
//     the same marks; an offsets-committed event of it keeps only its marked changes, and its
//     rebalances have no moves (it does not compute them).
//   - Deterministic: the same log gives the same events.
//
// JSON: docs/json/timeline.schema.json (`replay timeline --format jsonl` adds
// "schemaVersion": 1 to every event).
package explain
