// Package consumer is the decision layer of a KIP-848 consumer group coordinator, next to
// coordinator/streams and sharing package coordinator's batches, error codes, epochs,
// metadata hash, timers, Java iteration orders and modern-group skeleton (soft state, the
// Tick loop's rules, group loading, member lookups, derived state, the scenario runner's
// core). Given the replayed state of a
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
//     classic member's join and sync timeouts); each timer is its own batch. A fence that
//     fails (a downgrade that cannot encode an assignment) writes nothing, as in Kafka, and
//     returns its error in TimerResult.Err.
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
//   - Soft is what Kafka keeps in memory only: per group the skeleton's coordinator.GroupSoft
//     (the members' timers as deadlines, a cached group model per state offset) and the
//     metadata refresh deadline and regex resolution in flight; the first metadata version
//     seen. Soft.Restore arms the timers of a loaded state, as Kafka's onLoaded does.
//   - consumertest.Runner (on coordinator.ScenarioRunner) executes scenario scripts through
//     the coordinator; the tests and `replay simulate --protocol consumer` use it.
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
// ConsumerProtocolAssignment). Members and regexes are listed in the iteration order of
// Kafka's TimelineHashMaps (coordinator.KafkaTimelineOrder over the order in which replay
// inserted them and the size of their tables, groupstate's MemberTable and RegexTable), the
// classic group's members in that of a HashMap filled in that order.
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
// order); the order of Kafka's records 7 within a batch is that member order too. Members
// that share a bucket of the HashMap Kafka's TargetAssignmentBuilder fills come in the order
// it put them: the iteration order of the group's TimelineHashMap of members (from the
// replayed MemberTable), the heartbeating member in its place, or last when it is new
// (computeTarget).
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
//     (fixtures/CONFORMANCE.md), member order included (no known gap is left);
//     TestConformanceClassicRequests does the same for the classic requests inside consumer
//     groups and the conversions of fixtures/real/requests-migration.
//   - coordinator's TestTimelineOrderEqualsKafka (in fixtures/kafka/assignor-diff.sh) checks
//     the member, regex and server assignor orders this package follows against Kafka's own
//     ConsumerGroup after 1000 random histories replayed through groupstate. The server
//     assignor order decides the preferred assignor when two are named by as many members
//     ("uniform" and "range" share a bucket of Kafka's HashMap copy of the counts, so the tie
//     goes to the one its map yields first; testdata/assignors has a case).
//
// # Differences from Kafka 4.4 (deliberate, each tested or documented here)
//
//   - Records 7 and 8 list topics and partitions sorted; Kafka lists them in the iteration
//     order of the HashMap it built them in (for example [0,4,1]).
//   - The metadata refresh trigger is Metadata.Version (Kafka: a metadata image touching the
//     group's topics); a refresh that changes no hash writes nothing, as in Kafka.
//   - Regex subscriptions compile with Go's regexp/syntax in Perl mode, the syntax RE2/J
//     ports, anchored for a whole-name match; resolution sees every topic (no authorizer).
//   - Member order where the state does not keep it: a state restored from a Dump, or from a
//     snapshot written before coordlog kept the order (image format 1), assumes the members
//     inserted in id order (groupstate's MemberTable says Assumed), and so does coordlog's
//     member order for that group from then on. Otherwise the order is the one a broker
//     that loaded the log has, and one that never restarted too (it replayed its own
//     decisions' records in the same order), unless the log was compacted since (the cleaner
//     keeps each key's last record only: a broker that loads the compacted log inserts the
//     members in the order of those, as coordlog does) or an append failed and Kafka
//     reverted its maps (the reverted entries move to the end of their slots).
//   - The classic group an upgrade converts: Kafka iterates its HashMap of members, whose
//     ties (ids in one bucket) follow the order the members joined, or the order of its
//     GroupMetadata record after a load; groupstate keeps the classic members sorted by id,
//     and coordlog takes ties in that order.
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
