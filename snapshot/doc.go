// Package snapshot frames and stores snapshots of replayed state: msgpack-encoded,
// checksummed, written atomically, restored newest-valid-first.
//
// A snapshot is the complete state of one __consumer_offsets partition at a log offset (the
// payload: any value, in practice replay's groupstate.Dump plus its counters) together with a
// Meta: the partition, the next offset replay continues from, the Kafka-version rules and
// record layout the state was built with, the payload kind, an optional caller-supplied
// creation time, display counters, and the identity of the log it was taken from (Log: a few
// of its batches by offset and CRC, which the caller checks against the log it continues). The package knows nothing of groupstate: it encodes
// whatever it is given, as long as the value's type encodes deterministically.
//
// # File format (version 2)
//
// All integers are big-endian. CRC is CRC-32C (Castagnoli).
//
//	offset      size  field
//	0           8     magic "CLOGSNAP"
//	8           4     format version (2)
//	12          4     flags (0; any other value is rejected)
//	16          4     meta length M (at most 1 MiB)
//	20          4     CRC of the meta bytes
//	24          M     meta: msgpack of Meta
//	24+M        P     payload: msgpack of the caller's value
//	24+M+P      8     payload length P
//	32+M+P      4     CRC of every byte before the trailer (offsets 0 .. 24+M+P)
//	36+M+P      4     trailer magic "SNPE"
//
// The meta has its own CRC so that List can show a snapshot from its first few hundred bytes;
// the trailer CRC covers everything, so a snapshot is only ever used after one sequential
// read of the whole file has matched it (Verify). The payload length is implied by the file
// size and repeated in the trailer: a truncated or extended file is caught even before the
// CRC, and the trailer magic at the very end tells a partly written file at a glance.
//
// msgpack options are part of the format: structs are encoded as maps keyed by Go field name
// (so a field added to the payload type later decodes as its zero value from older snapshots
// instead of making them unreadable), integers at their Go width. Decoding ignores fields
// the type no longer has. Two refinements: a byte array with a MarshalText (a UUID) is
// written as raw msgpack bin rather than its text form (the text form still decodes), and a
// type implementing Marshaler/Unmarshaler writes itself through Encoder and Decoder: replay
// uses that for the whole state, written as a groupstate image in byte-string parts that it
// encodes and decodes on every core (its older payload used it for positional tables of
// committed offsets, consumer members and pending transactional offsets), where reflective
// coding of millions of small structs costs most of the time and the bytes.
//
// File names are snap-<partition, 10 digits>-<next offset, 20 digits>.snap, so that names
// sort by partition and then by offset; the name must agree with the meta.
//
// Format history: 1 is the first version. 2 has the same framing and adds Meta.Log, the log's
// identity: a field a reader must understand (a version-1 reader would ignore it and restore
// the snapshot on any log), so the version says so and older readers refuse these files,
// leaving them in place. A version-1 file reads with an empty Log. A reader accepts versions 1
// to FormatVersion; testdata/ keeps a file of each version and a test loads them all.
//
// # Invariants
//
//   - Deterministic: Encode is a pure function of (Meta, payload). Payload types may not
//     contain maps, interfaces, channels or functions (ErrPayloadType): msgpack sorts only a
//     few map types, so any map would leak Go's random iteration order into the bytes. The
//     same state snapshots to the same bytes, every time, on every machine.
//   - Atomic: Write encodes to <name>.tmp, fsyncs it, renames it to <name> and fsyncs the
//     directory. A crash at any instant leaves every earlier snapshot untouched and the new
//     one either whole or absent (a leftover *.tmp is removed by OpenStore). Retention
//     (Options.Retain) deletes older snapshots only after the new one is durable.
//   - Verified before use: a payload is returned only from a file whose checksum matched.
//     Open, Read and Verify read the whole file and match the CRC before decoding a byte;
//     Load's snapshots match it in the one sequential pass that decodes the payload (every
//     byte checksummed as the decoder reads it; the result is discarded and the file
//     treated as corrupt on a mismatch), which reads a large snapshot once instead of
//     twice. Decoding does not trust lengths either: preallocations are bounded by the
//     payload bytes left (Decoder.Prealloc, BytesBuf), so even damaged bytes fail cleanly
//     (fuzz targets in snapshot and replay).
//   - Newest valid first: Load tries a partition's snapshots from the highest offset down. A
//     corrupt or truncated file is renamed to <name>.broken (never deleted; *.broken.N when
//     that exists) and the next older one is tried; a file of a newer format version, or one
//     the caller refuses (say, other Kafka-version rules), is skipped and left in place.
//     Every skip is reported (Loaded.Messages). Nothing usable is ErrNoSnapshot: replay the
//     whole log.
//   - Readers change nothing: a store opened with Options.ReadOnly (every command that only
//     reads) does not create or clean its directory, leaves corrupt files in place (reported,
//     not quarantined) and refuses writes; a missing directory is an empty store.
//   - A directory that cannot be listed (permissions, a file in its place) does not stop a
//     restore: Load reports it (Loaded.Unreadable) and returns ErrNoSnapshot, and the caller
//     replays the whole log.
//   - One writer process per store; within a process a Store is safe for concurrent use.
package snapshot
