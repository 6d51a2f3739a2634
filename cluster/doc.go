// Package cluster is how coordlog connects to a live Kafka cluster, and what it asks of and
// does to it beyond reading __consumer_offsets (eventlog/live reads that): a group's live
// state and members, its committed offsets, the log start and end offsets of its topics (lag),
// and restoring a group's committed offsets to those of a point in the log's history. It
// speaks through franz-go's admin client (kadm); StreamsGroupDescribe, which franz-go does not
// route, is sent to the group's coordinator.
//
// # Connecting
//
// Config holds the bootstrap brokers, TLS (CA file, client certificate and key, or skipping
// verification) and SASL (plain, scram-sha-256, scram-sha-512). ClientOptions checks it and
// reads the TLS files before anything connects; what is wrong is a *ConfigError naming the
// settings at fault, which a caller renders with its own names for them (Render: replay's
// flags). Every reader of a cluster connects with the same options: eventlog/live's source
// and the Client (Connect).
//
// # Restore
//
// A restore is planned, then applied. NewPlan is pure: it compares the offsets to restore (one
// group's committed offsets at a point of a replayed log) with Live, what Inspect read from the
// cluster, and gives one RestoreRow per partition: live offset, restored offset, delta, the
// partition's log bounds and the action (commit, unchanged, missing-topic, out-of-range,
// live-only). A plan is refused (Refusals) when Kafka would refuse it or it could do harm:
//
//   - the group has members: Kafka accepts offset commits from outside a group only while it
//     is empty (as its reset tool requires an Empty or Dead group); WaitForEmpty waits;
//   - it is a share group: share groups' positions live in __share_group_state;
//   - a restored offset lies outside its partition's log (retention, a recreated topic),
//     unless PlanOptions.AllowOutOfRange;
//   - there is nothing to restore.
//
// A partition the live group has but the restore point does not is left as is (live-only):
// a restore never deletes offsets. Apply commits the rows to commit with OffsetCommit from
// outside the group (what Admin.alterConsumerGroupOffsets and alterStreamsGroupOffsets send;
// streams groups are described with their own StreamsGroupDescribe), metadata restored and no
// leader epoch, as Kafka's reset tool commits, then reads every committed partition back and
// checks it against the restored offset and metadata.
//
// # Invariants
//
//   - Nothing is written without Apply, and Apply writes nothing for a refused plan.
//   - Rows sort by topic and partition; the plan of the same inputs is the same.
package cluster
