// Package coordinator holds what coordlog's group coordinators share. A coordinator is a
// pure decision layer over a replayed partition: it reads the state through a read-only
// groupstate.View, decides one request (or one fired timer) at a time, and returns the
// response and the records Kafka would append. The caller appends the records as one batch
// (NewBatch) and applies it through replay.Engine.Apply, the same path as a dump, so the
// state is always exactly what the log replays to. The coordinators live below this package,
// one per protocol: streams (KIP-1071) and consumer (KIP-848); a classic coordinator (JoinGroup,
// SyncGroup, Heartbeat, LeaveGroup) joins them on the same skeleton.
//
// What is shared:
//
//   - Batches (batch.go): a decision's records as one uncompressed, non-transactional v2
//     batch of at most MaxBatchBytes (1 MiB, the default max.message.bytes of
//     __consumer_offsets); Kafka appends a write operation atomically, so a decision that
//     does not fit fails as a whole (ErrBatchTooLarge).
//   - Errors (errors.go): the Kafka error codes the coordinators answer with and Error, an
//     answer that discards every record the decision prepared.
//   - Member epochs (epoch.go): the join, leave and static-leave epochs, Kafka's epoch check
//     with its lost-response exception, and the assignment interval.
//   - Cluster metadata and its hash (metadata.go): Metadata is the topics a coordinator sees;
//     GroupHash is Kafka's Utils.computeGroupHash (XXH3-64 over hash4j's byte stream), the
//     metadataHash of records 3, 11 and 17, equal to what a Kafka 4.4 broker writes.
//   - Iteration orders (javahash.go): Java's HashMap and HashSet, and Kafka's TimelineHashMap
//     (the maps of a group's members and regexes), whose orders decide assignments and the
//     order of records Kafka writes, modelled from their hash functions and table growth; a
//     TimelineHashMap's order from the insertion order and table size replay keeps
//     (groupstate's MemberTable), checked against Kafka's own classes on random histories
//     (TestTimelineOrderEqualsKafka, fixtures/kafka/assignor-diff.sh).
//   - Time and timers (timers.go): no decision reads the wall clock. The caller passes now
//     (ms) to every call, and the timers Kafka keeps in memory (session, rebalance, initial
//     rebalance delay, a classic member's join and sync) are deadlines in the coordinator's soft state that the caller fires
//     (EarliestDue orders them deterministically), so that a run, a simulation or a test is
//     reproducible.
//
// # The modern-group skeleton
//
// What Kafka's group-coordinator shares in modern/ and in the common steps of
// GroupMetadataManager, shared here by the consumer and streams coordinators:
//
//   - Soft state (soft.go): what Kafka keeps in memory only. A coordinator's soft state of a
//     group embeds GroupSoft (its members' soft state, each embedding MemberTimers: session,
//     rebalance, join and sync deadlines; the group's initial-rebalance deadline; the group
//     model cached by state offset) and adds its protocol's fields. ArmedTimers lists the
//     armed timers in firing order for a coordinator's Tick, FireMemberTimer applies the rules
//     every member timer shares (disarm; a member gone loses its soft state; a rebalance
//     timer fires only at the epoch it was armed with), RestoreMember arms a loaded member's
//     timers (onLoaded). A timer whose write fails returns its error in TimerResult.Err and
//     writes nothing. A classic coordinator's members' heartbeat timers are MemberTimers, its
//     group's join and sync timers group deadlines beside the initial delay.
//   - Loading and members (modern.go): LoadGroup is getOrMaybeCreate{Consumer,Streams}Group
//     (a join creates a group or replaces an empty classic one; a classic group with members
//     is converted only by a coordinator that converts), the member lookups of a heartbeat
//     (KnownMember, KnownStaticMember, StaticOwner, LookupMember: UNKNOWN_MEMBER_ID,
//     FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID with Kafka's messages), the id checks every
//     heartbeat validates, and GroupState, the state a group derives from its members and
//     epochs.
//   - Scenarios (script.go, scenario.go): the script reader (RunScript, ScriptArgs), the Log
//     a runner appends to, and ScenarioRunner, the core every runner embeds: clock, topics,
//     transcript, appending decisions, firing timers, rounds of polls until nothing changes.
//
// # Invariants
//
//   - Coordinators never import package replay and never mutate a state: a decision is
//     records, applied by the caller (the import-rule test in internal/archtest enforces the
//     first; groupstate.View the second).
//   - Deterministic: the same state, soft state, request and now give the same response and
//     the same records, byte for byte.
package coordinator
