// Package groupstate is the pure in-memory model of a Kafka group coordinator partition:
// classic, consumer (KIP-848), share (KIP-932) and streams (KIP-1071) groups, their members,
// target and current assignments, topologies, committed offsets and pending transactional
// offsets, and the group states derived from them.
//
// Invariants:
//   - the package imports only the standard library (and its own sub-packages);
//   - no wall clock, no goroutines, no map-order leaks: every listing is sorted;
//   - state changes only through the mutators called by package replay (and this package's
//     own tests); views handed out are read-only.
package groupstate
