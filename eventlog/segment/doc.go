// Package segment reads and writes Kafka's on-disk log segment format, as found in a broker's
// `__consumer_offsets-N/` directories.
//
// # Files
//
// A partition directory holds `<20-digit base offset>.log` files, read in base-offset order. A log
// directory holds many `__consumer_offsets-N` partition directories (symbolic links to them are
// followed and reported), each read independently. Index, snapshot and checkpoint files are
// ignored silently since they carry nothing a replay needs; anything named like a segment that
// is not a regular file (a named pipe would block the reader) is reported and never opened.
//
// # Leftovers: Kafka's log recovery, in memory
//
// A broker stopped in the middle of a log-cleaner swap, a segment split or a deletion leaves
// `.swap`, `.cleaned` and `.deleted` files. The reader takes them as Kafka 4.4's LogLoader.load
// does at startup, without changing any file, and says each decision in
// Reader.Report().Warnings(): `.deleted` and `.cleaned` files are ignored (Kafka deletes them);
// a `.swap` at or above the lowest `.cleaned` offset belongs to an unfinished split and is
// ignored too; every other `NNN.log.swap` is read as `NNN.log`, replacing the segments whose
// base offsets lie in [lowest swap base, highest swap next offset), which Kafka deletes.
//
// Batches at the start of a later file that lie wholly below the end of the earlier files
// (a copy taken between a swap and the deletion of what it replaced) are KindSuperseded: not
// read, as Kafka's offset-driven reads never reach them, and reported. A batch below its own
// file's base offset (the file's name) is damage, KindBelowBase: the files were renamed or
// mixed up, and Kafka's recovery rejects such a segment.
//
// A tail of zero bytes after the last batch, to the end of the file, is the unwritten part of
// a preallocated segment (log.preallocate): Kafka's reader meets it as a record of size 0 and
// its recovery truncates it. The reader ends the file there with a warning; zero bytes
// followed by anything else are damage (KindBadLength).
//
// # Format
//
// Every entry starts with [int64 offset][int32 length]; the magic byte is at byte 16 in both
// formats. Magic 2 is a RecordBatch (61-byte header, CRC-32C over attributes..end, records
// possibly compressed as one stream). Magic 0 and 1 are legacy messages (CRC-32 IEEE over
// magic..end); a compressed one is a wrapper whose value holds an inner message set, with
// relative inner offsets on v1 and absolute ones on v0. Codecs: none, gzip, snappy (xerial
// framing as written by Kafka's Java clients, or a raw snappy block), lz4 (frame format; the
// header checksum is not verified because Kafka's magic-0 writer got it wrong, and the batch CRC
// covers those bytes anyway) and zstd (v2 only).
//
// # Memory
//
// An iterator reads through a window of max(1 MiB, largest batch) bytes with positional reads,
// plus one reusable decompression buffer; no file is ever read whole. Options.MaxBatchBytes
// (64 MiB by default) bounds the window: a longer declared length is damage (KindBadLength).
// Options.MaxBatchMemory (256 MiB by default) bounds what one decoded batch takes, whatever it
// declares or holds: its decompressed payload plus eventlog.RecordMemory (88 bytes) per record
// and eventlog.HeaderMemory (48) per header. The declared record count is charged before the
// payload is decompressed, the payload may take the rest, the count must fit the record bytes
// (eventlog.MinRecordSizeV2 each at least) before the records are allocated, and headers are
// charged as they are decoded; a batch past the limit is KindTooLarge, skipped whole in forensic
// mode. So a gzip batch of a few KB declaring millions of 7-byte records is refused before it
// costs anything, and memory is bounded by the limit, not by record counts.
//
// # Bad input
//
// Damage is classified by eventlog.Kind. In eventlog.Strict mode the iterator stops with an
// *eventlog.Problem naming file, byte position, partition and base offset; every batch before it
// has been returned. In eventlog.Forensic mode the problem, with what was skipped (bytes,
// batches, declared records), goes to the Reader's Report and reading resumes by this rule:
//
//   - If the damaged batch's CRC matched (unknown codec, undecompressable payload, a record
//     whose varints run past the batch, a record-count mismatch, an impossible header, a batch
//     starting below the previous one's end or below its file's base offset), its length is
//     trusted: exactly that batch is skipped.
//   - Otherwise (bad CRC, length out of range, unknown magic, the file ending inside a batch) the
//     framing is not trusted: the reader scans forward byte by byte from the next byte for the
//     first position holding a plausible header (magic 0-2, non-negative offset, length within
//     limits and within the file) whose CRC matches, and resumes there. If there is none the
//     rest of the file is skipped and reading continues with the next file.
//
// A truncated tail batch is damage like any other (KindTruncated): strict mode fails on it,
// forensic mode reports the bytes it skipped. A batch whose base offset is below the previous
// batch's next offset is KindOffsetOrder. The Report's Summary counts every skipped thing by
// kind; nothing is skipped silently.
//
// # Writing
//
// Encoder.AppendBatch and Writer write v2 batches (correct framing, CRC-32C, attributes
// verbatim, delete horizon in the base timestamp) with any codec into `<base>.log` files that
// roll at WriterOptions.SegmentBytes. AppendLegacy writes v0/v1 message sets for tests.
package segment
