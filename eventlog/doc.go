// Package eventlog is the log itself: Kafka-shaped batches (offsets, producer id and epoch,
// transactional and control flags, timestamps, leader epoch, raw key and value bytes with null
// distinct from empty), read from Kafka's on-disk segment format or stored in a Pebble-backed
// append-only log. Both satisfy one read interface, Source.
package eventlog
