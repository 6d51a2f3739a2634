// Package streams is the decision layer of a KIP-1071 streams group coordinator: given
// the replayed state of a __consumer_offsets partition (read only), a StreamsGroupHeartbeat
// request, the cluster's topic metadata, the group's configuration and an explicit clock, it
// returns the response and the ordered records Kafka 4.4 would append. It never mutates the
// state: the caller appends the records as one atomic batch (coordinator.NewBatch, at most
// 1 MiB) and applies that batch through replay.Engine.Apply, the same path as a dump, so the
// state is always exactly what the log replays to.
//
// # Model
//
//   - Coordinator.Heartbeat(state, soft, metadata, request, now) -> Result{Response, Records,
//     InternalTopicsToCreate}. An error response carries no records (Kafka aborts the whole
//     write operation).
//   - Coordinator.Tick(state, soft, metadata, now) fires the earliest due timer (session
//     timeout, rebalance timeout, initial rebalance delay) and returns its records; each timer
//     is its own batch, so the caller applies it and calls Tick again until none is due. A
//     delayed assignment whose assignor fails writes nothing and returns its error
//     (TimerResult.Err).
//   - Coordinator.Describe answers StreamsGroupDescribe from the state.
//   - Soft is the state Kafka keeps only in memory: per group the skeleton's
//     coordinator.GroupSoft (timers as deadlines, last-heartbeat-based session deadlines, the
//     initial rebalance delay, a cached group model) with the shutdown requester, the
//     endpoint-information epoch, reported task offsets and the configured topology. It is
//     owned by the caller and passed in; it is not in groupstate because the log does not hold
//     it. Soft.Restore arms the timers of a state loaded from a log or snapshot, as Kafka's
//     onLoaded does.
//   - Config is the group's effective configuration (broker defaults with group overrides);
//     Metadata the topics with partition counts and ids, and a Version that changes with them.
//   - streamstest.Runner (on coordinator.ScenarioRunner) executes scenario scripts through the
//     coordinator into any log (a
//     streamstest.Log, which *replay.Engine satisfies); the tests and `replay simulate` use
//     it. The scenario tests are datadriven files in testdata, one scenario each: a directive
//     per command, the transcript lines it prints as expected output (rewritten with
//     `go test -rewrite`); `replay simulate --scenario` runs them as scripts. The shared
//     pieces (batches, error codes, epochs, metadata hash, timers, the modern-group skeleton)
//     are in package coordinator.
//
// Records are written in Kafka's order (fact sheet 4.5): [classic tombstone] [static
// replacement: 22, 21, 19 tombstones of the old id; 19, 21, 22 of the new] 19, 23, 17,
// 21..., 20, 22. A leave or fence writes 22, 21, 19 tombstones, 17 and, for the last member,
// 20 with timestamp 0. A static temporary leave writes only 22.
//
// # Invariants (checked by the property tests after every step)
//
//   - An active task has at most one owner (assigned or pending revocation) in the group.
//   - Two members of one process never hold the same task; one member may hold a task in two
//     roles only during Kafka's in-place role change (demoted active pending revocation plus
//     the standby it became).
//   - Members that keep heartbeating converge: every member STABLE at the assignment epoch,
//     with exactly its target and nothing pending.
//   - Replaying the produced log through a fresh engine gives exactly the state the
//     coordinator decided on.
//   - Decisions are deterministic: no wall clock, no map-order leaks.
//
// # Conformance
//
// TestAssignorEqualsKafka (fixtures/kafka/assignor-diff.sh, in CI) runs Kafka 4.4's own
// StickyTaskAssignor (kafka-group-coordinator jar) and coordlog's on 1000 random groups
// (processes of several members, racks, 1-12 subtopologies, standby replicas, previous
// assignments with warm-ups and tasks the topology no longer has, reported task offsets) and
// requires identical assignments. fixtures' TestConformanceStreamsRequests replays every
// StreamsGroupHeartbeat of a real broker's request log (fixtures/real/requests-streams, and a
// fresh recording in CI) and requires Kafka's response and records for each.
//
// TestConformanceRealStreamsRecording drives the coordinator with the heartbeats behind
// fixtures/real/streams (a real Kafka 4.4.0 broker: join while internal topics are missing,
// topics created, a second instance with a standby, in-place active-to-standby change, leave)
// and requires every streams record of all nine batches byte for byte in JSON form (the
// metadata hash included: it is Kafka's XXH3 over hash4j's byte stream, see metadata.go),
// except the assignment timestamp.
// Not determined by the recordings (and covered only by scenarios and property tests):
// static membership, warm-ups, timers, topology errors and statuses other than
// MISSING_INTERNAL_TOPICS, the initial delay and the assignment interval (the recording
// broker sets both to 0), multi-member processes.
//
// # Differences from Kafka 4.4 (all deliberate, each one tested or documented here)
//
//   - Tie breaking outside the assignor: where Kafka iterates a HashMap with equal keys,
//     coordlog uses sorted order (topic name): the list of missing internal topics (sorted
//     by name; Kafka: hash order), the topics of a PartitionsByUserEndpoint entry (by name),
//     the first fixed repartition topic in copartition enforcement. Members are in Kafka's
//     orders: its TimelineHashMap of members (from the order replay inserted them,
//     groupstate's MemberTable) for the PartitionsByUserEndpoint entries (the heartbeating
//     member last) and StreamsGroupDescribe, and the HashMap its TargetAssignmentBuilder fills
//     from it for records 21 and the sticky assignor, which breaks its ties as Kafka's
//     collections do (assignor.go: the HashMap iteration orders of its members, processes
//     and each process's members, and java.util.PriorityQueue's sift rules).
//   - Timers are deadlines in Soft, fired by Tick. If a heartbeat arrives after the initial
//     rebalance delay expired but before the caller ran Tick, the heartbeat computes the
//     target itself (Kafka's timer would have written it in its own batch just before).
//   - The metadata-refresh trigger is Metadata.Version (Kafka: a metadata notification for a
//     topic of the group, and failover). The configured topology is cached in Soft per
//     topology epoch and metadata version.
//   - Duplicate client tag keys: Kafka's Collectors.toMap throws, which surfaces as
//     UNKNOWN_SERVER_ERROR; coordlog answers the same code.
//   - KIP topology updates (Config.TopologyUpdates) do not hold back members still on the
//     old topology epoch; they get the STALE_TOPOLOGY status and are assigned as usual.
//   - Not modelled: authorization (GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED),
//     UNSUPPORTED_VERSION for a disabled protocol, COORDINATOR_NOT_AVAILABLE, the KIP-1331
//     topology-description plugin (TopologyDescriptionRequired stays false; the description
//     epochs of record 17 are copied), pluggable assignors (KIP-1357), internal-topic creation
//     errors appended to the MISSING_INTERNAL_TOPICS detail, offset commit/fetch validation,
//     DeleteGroups and group expiration.
//
// # KIP-1071 behaviour beyond Kafka 4.4 (opt-in)
//
//   - Config.TopologyUpdates: topology epochs as the KIP text describes them. A join whose
//     topology epoch is lower than the group's is STREAMS_TOPOLOGY_FENCED, equal with a
//     different topology or more than one ahead is STREAMS_INVALID_TOPOLOGY_EPOCH, one ahead
//     replaces the topology (record 23) and bumps the group epoch. It also enables the KIP's
//     extra request checks: owned task sets disjoint; a repartition source topic must not be a
//     source or changelog topic and must be written by some subtopology; a changelog topic
//     must not be a source or sink; copartition indices must be in range (Kafka 4.4:
//     UNKNOWN_SERVER_ERROR during configuration).
//   - Config.Assignor = AssignorHighlyAvailable: warm-up tasks (warmup.go). Kafka 4.4 has the
//     reconciler support for warm-ups but its AssignmentRefiner returns the target unchanged,
//     so it never assigns one. coordlog places warm-ups in the target assignment (record 21)
//     rather than in an in-memory intermediate assignment, so they are visible in the log; a
//     caught-up warm-up bumps the group epoch (record 17) and triggers a full recomputation
//     (Kafka's inert REFINE path would write only record 20). LastAssignmentConfigs then also
//     records num.warmup.replicas and acceptable.recovery.lag so that changing them bumps the
//     epoch.
package streams
