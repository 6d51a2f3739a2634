// Package explain turns the records of a replay into events a person reads: one Event per
// record or transaction marker that touched a group, in log order, saying what changed
// ("member m-1 joined", "group epoch 7 -> 8", "transaction of producer 4001 committed ...").
// It is the library under `replay timeline`, which only renders the events.
//
// A Timeline is a replay.Observer for one partition and one group. It remembers what it has
// seen (epochs, members, the partitions a transaction wrote for the group, the target
// assignment records of the current batch) to say what changed, so it must see every record
// of its partition in order: give it to the engine through replay.Options.Observer.
//
// # Invariants
//
//   - Events come in log order and carry the record's position (partition, offset, batch,
//     producer id, timestamp) so that every explanation leads back to the log.
//   - A marker is an event of the group only when the group had offsets pending in that
//     transaction.
//   - Deterministic: the same log gives the same events.
package explain
