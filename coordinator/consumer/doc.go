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
//   - Coordinator.Tick fires the earliest due timer (session timeout, rebalance timeout, a
//     classic member's join and sync timeouts); each timer is its own batch.
//   - Classic-protocol members inside a consumer group (classic.go): JoinGroup(state, soft,
//     metadata, JoinGroupRequest{kmsg JoinGroup, client id, host}, now), SyncGroup,
//     ClassicHeartbeat and LeaveGroup (state, soft, metadata, the kmsg request, now) return
//     the response, the records (always none for SyncGroup and Heartbeat) and the error
//     answered with Kafka's message (these responses carry only a code). A classic group,
//     and for JoinGroup a missing or empty group, is the classic coordinator's:
//     ErrNotConsumerGroup.
//   - Online migration (migration.go, group.consumer.migration.policy): the first
//     consumer-protocol join to a classic group with members converts it (upgrade); the leave,
//     fence or classic static replacement of the last consumer-protocol member converts it
//     back when only classic members remain (downgrade).
//   - OffsetCommit, OffsetFetch, OffsetDelete, DeleteGroups and Describe
//     (ConsumerGroupDescribe) decide for consumer groups and missing groups.
//   - Request.Into lets a caller reuse one response (a server, once it is written): a
//     heartbeat that changes nothing, on a cached group model, then allocates nothing.
//   - Soft is what Kafka keeps in memory only (timers as deadlines, the metadata refresh
//     deadline, the regex resolution in flight, the first metadata version seen, a cached
//     group model per state offset). Soft.Restore arms the timers of a loaded state, as
//     Kafka's onLoaded does.
//   - consumertest.Runner executes scenario scripts through the coordinator; the tests and
//     `replay simulate --protocol consumer` use it.
//
// Records, in Kafka's order: [classic GroupMetadata tombstone: an empty classic group
// replaced, or an upgrade, followed by the converted group: 5 per member, 3 (epoch = the
// generation, hash), 7 per member, 6 (the generation, timestamp 0), 8 per member (STABLE at
// the generation)] [static replacement: 8, 7, 5 tombstones of the old id; 5, 7, 8 of the new]
// 5, [16 tombstone of a regex given up], 3, [4 tombstone], 7..., 6, 8. A classic JoinGroup
// writes the same as a heartbeat (its record 5 carries the classic metadata). A leave or fence
// writes 8, 7, 5 tombstones, 16 tombstones, 3 (always bumped), and for the last member 6 with
// timestamp 0. A static temporary leave writes only 8 (epoch -2, assignment epochs 0). A
// downgrade writes the group's tombstones (8 per member, 7 per member, 6, 5 per member, 16
// per regex, 4, 3; the leaving members included) and then GroupMetadata (value version 3:
// generation = the group epoch, protocol voted by the remaining members, leader = the first,
// currentStateTimestamp = now, per member its subscription and its target as a
// ConsumerProtocolAssignment). Members are listed in the iteration order of Kafka's
// TimelineHashMap (coordinator.KafkaTimelineOrder), the classic group's members in that of
// a HashMap.
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
//     the group epoch; a member's epoch never goes down while it stays a member. Conversions
//     keep them: a downgraded group's generation is its epoch, and an upgrade starts the
//     group and its members at the generation.
//   - Members that keep heartbeating converge: every member STABLE at the assignment epoch,
//     owning exactly its target with nothing pending.
//   - Replaying the produced log through a fresh engine gives the coordinator's state;
//     restarting from a snapshot mid-scenario gives the same decisions.
//   - Deterministic: no wall clock, no map-order leaks (the member ids of version-0
//     heartbeats and of JoinGroups without one are derived from the group, the clock, the
//     group's size and the JoinGroup's client id unless Coordinator.NewMemberID is set).
//
// # Against Kafka
//
//   - TestAssignorsEqualKafka (fixtures/kafka/assignor-diff.sh, in CI) calls Kafka's own
//     UniformAssignor and RangeAssignor from the kafka-group-coordinator jar on 1000 random
//     inputs built as Kafka builds them and requires every assignment to be identical.
//   - TestDecisionsMatchRealBroker reproduces 40 decisions of a real Kafka 4.4 broker
//     (fixtures/real/consumer) record for record, from requests inferred from the log
//     (joins, heartbeats, a leave, a session fence, a static temporary leave and restart,
//     regex resolutions).
//   - TestConversionMatchesRealBroker does the same for fixtures/real/conversion: the upgrade
//     of a classic group by a consumer-protocol join, 7 JoinGroups and 2 LeaveGroups of
//     classic members inside the consumer group, consumer joins, heartbeats and leaves, and
//     the downgrade when the last consumer-protocol member leaves; and, where the log implies
//     them, MEMBER_ID_REQUIRED, Heartbeats answering REBALANCE_IN_PROGRESS and SyncGroups
//     answering what the members then report owning.
//   - fixtures' TestConformanceConsumerRequests replays every ConsumerGroupHeartbeat of real
//     brokers' request logs (fixtures/real/requests-*, and fresh recordings in CI) at the
//     broker's time with the metadata images its coordinator applied, and requires Kafka's
//     response and records for each, and for each session timeout and regex resolution
//     (fixtures/CONFORMANCE.md). It meets the member order below where ids share a bucket;
//     TestConformanceClassicRequests does the same for the classic requests inside consumer
//     groups and the conversions of fixtures/real/requests-migration.
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
//   - Member order in group-wide records (conversions, deletions): Kafka iterates its
//     TimelineHashMap of members, whose layout depends on the order members were put and on
//     the most members the group ever held; the state keeps neither, so coordlog takes the
//     members as put in id order into a map that never held more. That is exact for the
//     group an upgrade builds. For a downgrade, Fibonacci hashing keeps keys of different
//     slots in order when the table grows, so the orders can differ only among members that
//     share a slot of coordlog's table (fixtures/real/conversion's downgrade matches).
//   - An upgraded member's supported protocols are those the log keeps: the classic group's
//     protocol with its subscription. A broker that saw the members join (not loaded them)
//     keeps every protocol they offered and writes them all in record 5.
//   - A LeaveGroup of several members fences them in the request's order; Kafka uses a
//     HashSet of members whose order depends on identity hash codes (it varies between runs).
//   - The classic side of a conversion is not modelled: coordlog has no classic group
//     coordinator. Pending classic JoinGroup/SyncGroup requests that an upgrade completes with
//     REBALANCE_IN_PROGRESS, and the classic rebalance a downgrade starts, are that
//     coordinator's; a JoinGroup to a classic, missing or empty group returns
//     ErrNotConsumerGroup.
//   - Not modelled: authorization; custom assignors; TxnOffsetCommit and offset expiration;
//     UNSUPPORTED_VERSION for a disabled protocol.
package consumer
