// Package consumer is the decision layer of a KIP-848 consumer group coordinator, next to
// coordinator/streams and sharing package coordinator's batches, error codes, epochs,
// metadata hash, timers and Java iteration orders. Given the replayed state of a
// __consumer_offsets partition (read only), a request, the cluster's topic metadata, the
// group's configuration and an explicit clock, it returns the response and the ordered
// records Kafka 4.4 would append. It never mutates the state: the caller appends the records
// as one atomic batch (coordinator.NewBatch) and applies it through replay.Engine.Apply.
//
// # Model
//
//   - Coordinator.Heartbeat(state, soft, metadata, request, now) -> Result{Response, Records,
//     RegexResolution}: ConsumerGroupHeartbeat v0-v1 (GroupMetadataManager.
//     consumerGroupHeartbeat step by step). An error response carries no records.
//   - Coordinator.ResolveRegexes runs a resolution a heartbeat scheduled (Kafka: the
//     background executor) and returns its records, a batch of its own: record 16 per regex
//     in use, record 3 when topics or the hash changed.
//   - Coordinator.Tick fires the earliest due timer (session timeout, rebalance timeout);
//     each timer is its own batch.
//   - OffsetCommit, OffsetFetch, OffsetDelete, DeleteGroups and Describe
//     (ConsumerGroupDescribe) decide for consumer groups and missing groups.
//   - Soft is what Kafka keeps in memory only (timers as deadlines, the metadata refresh
//     deadline, the regex resolution in flight, the first metadata version seen, a cached
//     group model per state offset). Soft.Restore arms the timers of a loaded state, as
//     Kafka's onLoaded does.
//   - consumertest.Runner executes scenario scripts through the coordinator; the tests and
//     `replay simulate --protocol consumer` use it.
//
// Records, in Kafka's order: [classic GroupMetadata tombstone] [static replacement: 8, 7, 5
// tombstones of the old id; 5, 7, 8 of the new] 5, [16 tombstone of a regex given up], 3,
// [4 tombstone], 7..., 6, 8. A leave or fence writes 8, 7, 5 tombstones, 16 tombstones, 3
// (always bumped), and for the last member 6 with timestamp 0. A static temporary leave
// writes only 8 (epoch -2, assignment epochs 0).
//
// # Assignors
//
// Assign runs the server-side assignors of Kafka 4.4, ported from its source: uniform (the
// default; UniformHomogeneousAssignmentBuilder when every member has the same subscription,
// UniformHeterogeneousAssignmentBuilder otherwise; sticky, from each member's previous
// target) and range (RangeAssignor: deterministic, not sticky).
//
// Kafka's uniform assignor keeps partitions, and hands out free ones, in the iteration order
// of Java HashMaps and HashSets, so identical results need identical orders. KafkaSpec
// (order.go) builds an AssignmentSpec from the replayed state in the orders Kafka's
// coordinator gives those collections (coordinator/javahash.go models HashMap's bucket
// order); the order of Kafka's records 7 within a batch is that member order too. The one
// thing not modelled is the order of keys that share a bucket, which in Kafka is the
// insertion order of its own timeline maps: coordlog inserts in sorted order.
//
// # Invariants (checked by the property tests after every step)
//
//   - A partition has at most one owner (assigned or pending revocation) and is in at most
//     one member's target.
//   - Group epoch and assignment epoch never go down, and the assignment epoch never passes
//     the group epoch; a member's epoch never goes down while it stays a member.
//   - Members that keep heartbeating converge: every member STABLE at the assignment epoch,
//     owning exactly its target with nothing pending.
//   - Replaying the produced log through a fresh engine gives the coordinator's state;
//     restarting from a snapshot mid-scenario gives the same decisions.
//   - Deterministic: no wall clock, no map-order leaks (version-0 member ids are derived
//     from the group, the clock and the group's size unless Coordinator.NewMemberID is set).
//
// # Against Kafka
//
//   - TestAssignorsEqualKafka (fixtures/kafka/assignor-diff.sh, in CI) calls Kafka's own
//     UniformAssignor and RangeAssignor from the kafka-group-coordinator jar on 1000 random
//     inputs built as Kafka builds them and requires every assignment to be identical.
//   - TestDecisionsMatchRealBroker reproduces 29 heartbeat decisions of a real Kafka 4.4
//     broker (fixtures/real/consumer) record for record, from requests inferred from the log
//     (joins, heartbeats, a leave, a session fence, a static temporary leave and restart).
//   - fixtures' TestConformanceConsumerRequests replays every ConsumerGroupHeartbeat of real
//     brokers' request logs (fixtures/real/requests-*, and fresh recordings in CI) at the
//     broker's time with the metadata images its coordinator applied, and requires Kafka's
//     response and records for each, and for each session timeout and regex resolution
//     (fixtures/CONFORMANCE.md). It meets the member order below where ids share a bucket.
//
// # Differences from Kafka 4.4 (deliberate, each tested or documented here)
//
//   - Records 7 and 8 list topics and partitions sorted; Kafka lists them in the iteration
//     order of the HashMap it built them in (for example [0,4,1]).
//   - Ties Kafka breaks by the insertion order of its timeline maps (members sharing a hash
//     bucket, server assignors with equal counts sharing a bucket) are broken by name.
//   - The metadata refresh trigger is Metadata.Version (Kafka: a metadata image touching the
//     group's topics); a refresh that changes no hash writes nothing, as in Kafka.
//   - Regex subscriptions compile with Go's regexp/syntax in Perl mode, the syntax RE2/J
//     ports, anchored for a whole-name match; resolution sees every topic (no authorizer).
//   - Not modelled: classic-protocol members inside consumer groups (JoinGroup, SyncGroup,
//     Heartbeat and LeaveGroup translation) and online upgrade and downgrade between the
//     classic and the consumer protocol (a consumer-protocol join to a non-empty classic group
//     is GROUP_ID_NOT_FOUND with a message saying so); authorization; custom assignors;
//     TxnOffsetCommit and offset expiration; UNSUPPORTED_VERSION for a disabled protocol.
package consumer
