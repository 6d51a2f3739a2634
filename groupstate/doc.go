// Package groupstate is the pure in-memory model of one Kafka group coordinator partition
// (__consumer_offsets-N): classic, consumer (KIP-848), share (KIP-932) and streams (KIP-1071)
// groups, their members, target and current assignments, topologies, committed offsets and
// pending transactional offsets, and the group states derived from them.
//
// # Mutation
//
// A State is created with New(version) and changed only by its Replay* methods, one per
// record type and one per tombstone, mirroring GroupMetadataManager.replay and
// OffsetMetadataManager.replay / replayEndTransactionMarker of the selected Kafka version
// (see fact sheet section 4.2 and KafkaVersion). It is read through its View (State.View):
// every accessor and no mutator, and all that package replay hands out. Mutators take
// groupstate's own plain value types: the inputs of zz_values.go, which recordcodec's
// generator writes from its schema (groupstate never imports recordcodec), and the model's
// own types that views show too (ClassicMember, StreamsMemberMetadata, StreamsTopology,
// TopicPartitions, ...), which the schema names. Package replay decodes records with
// recordcodec and converts them (zz_dispatch.go, generated from the same schema), into memory
// it reuses from record to record, with strings that alias the batch being read. So a mutator never keeps its inputs: it copies what it keeps, and a
// record that repeats what the state holds (a member's unchanged metadata or tasks, an
// unchanged target assignment or group) changes nothing and allocates nothing
// (scratch.go: canonical forms are built in reused scratch memory and compared first).
// Records 21 and 22 have a second pair of mutators, Replay*Stored, that take lists the state
// stored before (StoredTasks, made only by a View) in place of decoded ones: streams
// coordinators repeat their task lists, and replay caches the stored list of each encoded
// list it met (storedtasks.go).
// The rules:
//
//   - A value creates its group (and member) on demand, whatever the record order; a
//     tombstone for a missing group or member is ignored.
//   - GroupMetadata (id 2) replaces a group of any type; its tombstone removes any type.
//   - Consumer records (ids 3-8, 16), and streams records (17, 19-23) on 4.2+, replace a
//     *simple* classic group (no protocol type, no members), even when the record is a
//     tombstone; any other existing group of another type is an error. Share records never
//     replace.
//   - Offsets (ids 0, 1) create a simple classic group when no group exists. Offsets of a
//     non-transactional batch (producer id -1) are committed at once; others wait in the
//     pending map of their producer until ReplayEndTransactionMarker. COMMIT materializes a
//     pending offset only when none exists or the existing one has a smaller record offset.
//     An offset tombstone removes the committed offset and cancels the pending ones of that
//     partition. Deleting a group never deletes offsets.
//   - Tombstone invariants (ids 3, 5, 6, 10, 11, 12, 17, 19, 20) and the other
//     IllegalStateException / IllegalArgumentException cases of Kafka's replay are returned
//     as *ReplayError (match with errors.Is against ErrTombstoneOrder, ErrWrongGroupType,
//     ErrClassicGroupAdd, ErrInvalidAssignmentMetadata, ErrDuplicateKey, ...). A mutator that
//     returns an error leaves the state unchanged (Kafka would abort the load there; where
//     Kafka had already replaced a simple classic group before throwing, the model keeps the
//     simple group).
//
// # Consumer, share and streams groups
//
// The three modern group types share a core, as Kafka's ConsumerGroup, ShareGroup and
// StreamsGroup share ModernGroup<T> (modern.go): modernGroup[M, T] holds the group epoch,
// metadata hash, assignment epoch and timestamp, members and target assignment, and is
// embedded in consumerGroup, shareGroup and streamsGroup, which keep only their own fields.
// The rules the three share are written once: lookupModern finds, creates or replaces the
// group a record is for (install adds a group it created once nothing can fail), and
// modernGroup's methods are the steps of the records the three replay alike (group metadata
// value and tombstone, target assignment metadata value and tombstone, member metadata
// tombstone). What Kafka does differently per type is the type's modernRules: what a simple
// classic group in the way becomes, streams records being unknown to 4.0, the streams group
// tombstone not checking the target assignment, Kafka 4.0's strict share lookup, and the
// wording of each tombstone message. The steps are static calls on the concrete types: no
// interface values or closures per record.
//
// # The orders of Kafka's maps
//
// Kafka iterates a modern group's members, and a consumer group's resolved regexes, in the
// order of its TimelineHashMaps, which depends on the order the keys were inserted and on
// the size of the map's table, not on the keys alone; that order decides the order of the
// records Kafka writes for every member and, through its assignors' input, assignments.
// Replay keeps both (order.go): per map, the table size, grown on every put as Kafka's grows,
// and per member and regex, the sequence number of its insertion. View.MemberTable and
// View.RegexTable give them; coordinator.KafkaTimelineOrder turns them into Kafka's order.
// They are not part of the Dump: Equal ignores them, and a state restored from a Dump or
// from a format-1 image assumes them (keys inserted in sorted order), which MemberTable says.
//
// # Version rules
//
// KafkaVersion (4.0 .. 4.4, default 4.4) selects: the initial group and assignment epochs
// of implicitly created groups (0/0 up to 4.2, 1/1 from 4.3); the initial streams validated
// topology epoch (0 up to 4.3, -1 on 4.4); which value fields a version reads (metadata
// hashes 4.1+, offset topic id 4.1+, streams validated epoch and assignment configs 4.2+,
// assignment timestamps and their validation 4.3+, description topology epochs 4.4); per
// partition assignment epochs (consumer 4.3+, streams active tasks 4.2+); record 4 (4.0
// stores the subscription metadata, 4.1+ only a flag); streams replacing simple groups
// (4.2+); Kafka 4.0's stricter share replay (record 9; missing share group or member is an
// error; record 15 not replayed); which repeated keys fail (Collectors.toMap) per version;
// and the streams NotReady rule (4.2+: topology absent or its epoch differs from the
// validated topology epoch; 4.1: topology absent only, because 4.1 also required the
// configured topology, soft state built from cluster metadata that the log does not hold).
//
// # Derived state
//
// Group states are a pure function of the replayed state, computed when read: consumer
// Empty / Assigning / Reconciling / Stable; share Empty / Stable; streams Empty / NotReady /
// Assigning / Reconciling / Stable (streams member STABLE is 1, consumer and share 0);
// classic Empty / Stable (the only classic states replay produces).
//
// # Invariants
//
//   - The package imports only the standard library (and its own sub-packages).
//   - No wall clock, no goroutines, no map-order leaks: every accessor that lists things
//     returns a sorted slice (MemberTable and RegexTable: in insertion order, which replay
//     determines), empty lists are nil. Kafka's replay-time wall-clock values
//     (the currentStateTimestamp of a simple classic group created by an offset commit,
//     share initialization timestamps) are not modelled: the former is -1 (none).
//   - Views are deep copies (ClassicGroup, ConsumerGroup, Group, Dump, ...); nothing a
//     caller holds aliases the state's mutable parts (strings, which never change, may be
//     shared).
//   - Nothing in the state aliases a mutator's input. Stored lists, strings and string
//     pointees are immutable once stored, so that an unchanged list is kept when its
//     neighbours change and may be shared (a streams member's current standby or warm-up
//     tasks with its target's); members and their task holders are updated in place and are
//     referenced from one place only.
//   - Committed offsets are struct values per group and topic (the topic's name owned once
//     per group), in a slice indexed by partition while it stays at most about twice as long
//     as the offsets it holds, in a map beside it for the partitions past that
//     (offsettable.go): no per-offset pointer; a commit is an index in the common case.
//   - The open-transactions index always equals what the pending map implies: producer p is
//     open on (g, t, n) iff p's pending offsets hold (g, t, n). A producer whose pending
//     offsets were all cancelled by offset tombstones stays pending (empty) until its marker,
//     as in Kafka.
//   - A committed-offsets entry of a group restored from a state image may be packed (the
//     image's checked bytes) until the first mutation of that group's offsets unpacks it;
//     every view reads packed offsets in place and returns exactly what the unpacked tables
//     would, so packing is invisible except in time and memory.
//   - Dump is the canonical form: Equal(a, b) compares dumps with reflect.DeepEqual, Diff
//     names what differs, Restore(Dump) rebuilds an equal State (with assumed orders of
//     Kafka's maps, which a Dump does not hold), and json.Marshal(Dump) is stable (the format
//     describe --format json prints).
//
// # State images
//
// PlanImage, AppendImageHead and AppendImagePart write the whole state as an image:
// varint-packed, every field of every internal struct including nil-ness (the orders of
// Kafka's maps too), maps as sorted lists, split into independent parts by sorted group id,
// so that equal states give equal bytes. The head and every part name the image's format
// (image.go): this build writes format 2 and reads 1, whose states assume the orders. NewFromImageHead, DecodeImagePart, AddImagePart and FinishImage read it back into
// the same State (not just an equal Dump) without going through Dump and Restore; parts
// encode and decode independently, so a caller (replay's snapshots) spreads them over its
// cores. Decoding checks everything (bounded lengths, strict order, canonical varints, the
// totals the head announces) and fails with ErrImageCorrupt, never a panic; the state's
// strings are substrings of the part data. DecodeImagePartUnchecked leaves the committed-
// offset blocks (most of an image) to an OffsetCheck the caller runs when it has cores to
// spare; until it passed, the state is usable but not trusted (reads of a damaged block stop
// where it breaks, a mutation that unpacks one records it in ImageErr), and PlanImage
// refuses to write it. image.go documents the layout.
//
// Both directions of an image are one codec (imagecodec.go): one two-way method per struct,
// which visits every field once, in the image's order, and either writes or reads it, so
// that a field cannot be written without being read, nor in another order. The codec runs
// as two copies that internal/codecgen generates from it, one per direction with the other
// direction's branches removed (imagecodec_gen.go), so that its primitives inline and cost
// what separate hand-written halves did; TestImageCodecGenerated fails when the copies are
// stale, TestImageTwoWayCodec holds them to the source. Only the offset blocks' frame is
// written and read apart (packed.go; their rows are the codec's), and checkOffset, which
// checks rows without building them, is held to the codec by a test.
// TestImageCoversEveryField fills every field reachable from a group, a pending offset and a
// share-group state entry and fails when an image does not bring one back (a struct that
// gains a field the codec does not visit); TestImageGolden pins the bytes of a few states.
package groupstate
