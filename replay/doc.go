// Package replay is the only place that maps a __consumer_offsets record type to a state
// change. Its Engine reads any eventlog.Source (Kafka segments or the Pebble log), decodes each
// record with recordcodec, applies it to a groupstate.State by the rules of Kafka's
// GroupCoordinatorShard.replay, and tracks the next offset.
//
// Every state change goes through dispatch (dispatch.go and zz_dispatch.go, which the
// generator writes from recordcodec's schema: the switches from a record type to its mutator
// and the conversion of each value into the mutator's input). Every record the observer sees
// is handed to it by one function (observe).
//
// # Rules it follows
//
//   - Batches are read from the log start (or a restored snapshot's next offset) in offset
//     order; after a batch the next offset is batch.NextOffset(), so compaction gaps and
//     header-only batches are expected.
//   - A control batch's COMMIT or ABORT record ends the transaction of the batch's producer id;
//     other control records are counted and ignored. A data batch's records are replayed with
//     the batch's producer id: -1 commits offsets at once, anything else makes them pending.
//   - Unknown record types are skipped and counted in every mode, as Kafka's loader does.
//     Which ids are known follows the Kafka version (4.0 knows 0-16; 4.1+ knows 0-8, 10-17,
//     19-23), and so does the layout of ids 9, 11 and 15 (Options.Layout overrides it).
//   - Bytes after a complete key or value are ignored (and counted), as Kafka's readers do.
//   - Anything else Kafka's loader would fail on is a Violation: a record that does not decode,
//     an unsupported value version, an id the version's shard has no case for, or a replay
//     invariant (groupstate's ReplayError). Strict mode stops at the first, naming partition,
//     offset, record type, segment file and byte position; forensic mode records it, leaves
//     the state as it was before that record, and continues.
//
// # Invariants
//
//   - Deterministic: the same log and options give the same state, byte for byte in every
//     rendering. An engine is single-threaded; ReplaySource runs one engine per partition.
//   - Run(src, until) applies exactly the records with offsets below until; NextOffset then
//     says where a later Run (or a snapshot restore) continues.
//
// # Fast paths
//
// Two kinds of records have a path of their own, and each gives the state, the counters, the
// violations and the observer's events of the general path (decode, convert, dispatch). Each
// fills what dispatch applies and calls dispatch's case for its record type directly, without
// the switches:
//
//   - Offset commits (most of any real log) decode without the general reader and without
//     allocating (applyOffsetCommit, dispatchOffsetCommit).
//   - Streams assignment records (21, 22; most of a streams log) whose encoded task lists were
//     all met before are applied from the lists the state stored for them (tasklists.go: the
//     cache, its one entry point applyStreamsLists, and why a hit is right; dispatchStored). TestTaskListCacheEqualsGeneralPath compares the two
//     paths record by record on random histories under every Kafka version. An observer gets
//     the decoded record there too, unless it is a KeysObserver (it reads keys only, as the
//     group list's does): then the value is left undecoded, as a recordcodec.RawValue.
package replay
