// Package compacttest generates __consumer_offsets partitions for compaction tests and
// benchmarks: real, decodable coordinator records (offset commits as OffsetCommitValue v3,
// empty classic groups as GroupMetadataValue v3, control records as Kafka writes them), heavy
// overwrites, tombstones, batches that already carry a delete horizon (as an earlier cleaner
// pass leaves them, half of them past Config.Now), and transactions that commit, abort, carry
// no data or stay open at the end, followed by plain commits past the last stable offset.
//
// Invariants: everything is seeded and deterministic (open transactions are kept in a slice,
// never iterated from a map); offsets increase with small gaps; transactional batches carry
// values only (Kafka's TxnOffsetCommit never writes tombstones); group tombstones never sit in
// a batch with a preset horizon, so that the generated logs compact to exactly the same state.
package compacttest
