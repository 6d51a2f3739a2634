// Package consumer is the decision layer of a KIP-848 consumer group coordinator, next to
// coordinator/streams and sharing package coordinator's batches, error codes, epochs,
// metadata hash, timers and Java iteration orders.
//
// # Assignors
//
// Assign runs the server-side assignors of Kafka 4.4, ported from its source:
//
//   - uniform (the default): UniformHomogeneousAssignmentBuilder when every member has the
//     same subscription, UniformHeterogeneousAssignmentBuilder otherwise (assignor.go,
//     assignor_hetero.go). Sticky: the input is each member's previous target.
//   - range: RangeAssignor, deterministic and not sticky.
//
// Kafka's uniform assignor keeps partitions, and hands out free ones, in the iteration order
// of Java HashMaps and HashSets, so identical results need identical orders. KafkaSpec
// (order.go) builds an AssignmentSpec from the replayed state in the orders Kafka's
// coordinator gives those collections (coordinator/javahash.go models HashMap's bucket
// order). The one thing not modelled is the order of keys that share a bucket, which in
// Kafka is the insertion order of its own timeline maps: coordlog inserts in sorted order.
//
// TestAssignorsEqualKafka (run by fixtures/kafka/assignor-diff.sh in CI) calls Kafka's own
// UniformAssignor and RangeAssignor from the kafka-group-coordinator jar on 1000 random
// inputs built as Kafka builds them (members up to 60, topics up to 8 of up to 48
// partitions, static members, racks, partial and stale previous targets) and requires every
// assignment to be identical. TestAssignorInvariants checks, on 2000 random inputs, that
// every subscribed partition has exactly one subscriber as owner, that uniform is balanced and
// sticky and that range gives contiguous ranges.
package consumer
