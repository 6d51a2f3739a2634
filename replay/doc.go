// Package replay is the only place that maps a __consumer_offsets record type to a state
// change. Its engine reads any eventlog.Source, decodes each record with recordcodec, applies
// it to groupstate by Kafka's GroupCoordinatorShard.replay rules, tracks the next offset, and
// runs in strict or forensic mode.
package replay
