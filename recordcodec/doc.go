// Package recordcodec decodes and encodes, byte for byte, every record of Kafka's
// __consumer_offsets topic (record types 0-23 at every value version Kafka 4.0 to 4.4 writes or
// reads, and the older classic formats), the control records that end transactions, and the
// ConsumerProtocol bytes inside classic group members. It renders records as JSON exactly as
// `kafka-dump-log --offsets-decoder` prints them, and in the shape of the console formatters.
//
// # Format
//
// A record key is an int16 big-endian record type followed by a non-flexible version-0 message
// (int16-length strings): {group, topic, partition} for ids 0-1, {group} for id 2, {GroupId}
// or {GroupId, MemberId} or {GroupId, RegularExpression} for the others. A value is an int16
// version followed by the value message at that version; flexible versions (OffsetCommitValue
// v4+, GroupMetadataValue v4+ and every KIP-848, share and streams value) use compact strings,
// arrays and bytes and end every struct with a tagged-field section. A null value is a
// tombstone; an empty value is not, and does not decode.
//
// The value schemas live in internal/gen/schema.txt; `go generate` turns them into
// zz_generated.go (typed structs, decoders, encoders, JSON writers) and, from the same table,
// what the model and the engine need of it: groupstate's record ids and version rules
// (zz_recordtypes.go) and mutator inputs (zz_values.go), and replay's switches from a record to
// its mutator with the conversions (zz_dispatch.go). Keys, control records and the wire
// primitives are hand-written.
//
// # Invariants
//
//   - Byte exactness: for every value that decodes without error, encoding it gives back the
//     input. Unknown tagged fields are kept and re-emitted in tag order; a known tagged field
//     written with its default value is remembered and re-emitted. Encodings that Kafka reads
//     but never writes (over-long varints, tags out of order, a nullable-struct marker other
//     than -1/1, a tagged field whose size disagrees with its content) are refused with
//     ErrNonCanonical, ErrTagOrder or ErrTagSize, so the invariant holds for all accepted input.
//   - Trailing bytes after a complete key or value are reported as *TrailingBytesError together
//     with the complete record (Kafka ignores them); re-encoding drops them.
//   - No input makes a decoder panic or allocate more than a small multiple of its length:
//     every count is checked against the bytes left before anything is allocated.
//   - Errors are typed: *UnknownTypeError (the record comes back raw, for a caller to skip and
//     count as Kafka does), *UnsupportedVersionError, *DecodeError (part, type, version, field,
//     byte position and an Err* cause), *TrailingBytesError.
//   - Ids whose layout changed without a version bump (9 and 18, retired; 11 and 15 of Kafka
//     4.0) decode only under an explicit Layout; under the default they are unknown or use the
//     4.1+ layout, as in Kafka 4.1 to 4.4.
//
// # The replay hot path
//
// Decoder.DecodeInto decodes into a caller's reused value without allocating
// (DecodeOffsetCommitInto for an offset commit, without the switch on the value's type). The
// values most of a log holds take a fast path first: offset commits (any version; the decoder
// is generated from the schema's `fast` value, zz_fastpath.go), and the streams target and
// current assignments (records 21 and 22, version 0, fastpath.go) of an aliasing decoder, in
// their usual shapes (one-byte lengths and counts, no tagged fields
// but the known ones). Anything else, malformed input included, is declined and decoded from
// the start by the general reader, which names the problem. Tests and fuzz targets hold each
// fast path to the general reader's result, field for field.
package recordcodec
