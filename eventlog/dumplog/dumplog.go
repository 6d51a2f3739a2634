// Package dumplog renders batches of a __consumer_offsets log the way Kafka's
// `kafka-dump-log --deep-iteration --offsets-decoder` prints them, and as JSON lines.
//
// # Text format
//
// Per segment file (an empty one too, when the printer knows the files), "Dumping <file>" and
// "Log starting offset: <base>"; per batch one header
// line (magic 2: "baseOffset: ... deleteHorizonMs: ..."; legacy: "offset: <last>") ending in
// "position: ... size: ... magic: ... compresscodec: ... crc: ... isvalid: true"; per record
// one "| offset: ..." line with the key and payload as recordcodec's dump-log JSON, or
// "endTxnMarker: COMMIT|ABORT coordinatorEpoch: N" for a control record.
//
// Where the output cannot match Kafka's byte for byte it says so: an undecodable record prints
// "Error at offset O, skipping. <coordlog's message>" (Kafka prints Java's exception text), and
// records inside a compressed legacy (magic 0/1) wrapper show the wrapper's CRC, which is all
// eventlog keeps of them.
//
// # Selecting records
//
// Dump prints one partition through a Printer, a chunk of records at a time, as a Filter
// selects them: an offset range, and within it the records of one group (with the
// transaction markers of the producers that wrote them) or of some record types (control for
// the markers), each under its batch's header. GroupsSeen collects the groups the records
// name, for the close matches of a group that matched nothing (replay decode --group).
package dumplog

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/recordcodec"
)

// Entry is one record of a batch with its decoding.
type Entry struct {
	Record *eventlog.Record
	// Decoded is the coordinator record (non-control batches); Err its decoding error, if any.
	Decoded recordcodec.Record
	Err     error
	// Control and Marker are set for control batches; ControlErr when they do not parse.
	Control    recordcodec.ControlKey
	Marker     recordcodec.EndTxnMarker
	ControlErr error
}

// Printer prints batches: a batch's header (nothing in JSON lines), then its records in as
// many calls as the caller likes, so that a batch of millions of records is printed a chunk
// at a time (ChunkRecords) in bounded memory.
type Printer interface {
	BatchHeader(b *eventlog.Batch) error
	Records(b *eventlog.Batch, entries []Entry) error
}

// ChunkRecords is how many records a caller decodes and prints at a time.
const ChunkRecords = 4096

// DecodeBatch decodes every record of b into dst (reused) and returns it. Decoded values alias
// b's buffers when d.NoCopy is set.
func DecodeBatch(d recordcodec.Decoder, b *eventlog.Batch, dst []Entry) []Entry {
	return DecodeRecords(d, b, b.Records, dst)
}

// DecodeRecords decodes recs, records of b (a chunk of b.Records), into dst (reused).
func DecodeRecords(d recordcodec.Decoder, b *eventlog.Batch, recs []eventlog.Record, dst []Entry) []Entry {
	dst = dst[:0]
	for i := range recs {
		r := &recs[i]
		e := Entry{Record: r}
		if b.Attributes.Control() {
			e.Control, e.ControlErr = recordcodec.DecodeControlKey(r.Key)
			if e.ControlErr == nil && (e.Control.Type == recordcodec.ControlCommit || e.Control.Type == recordcodec.ControlAbort) {
				e.Marker, e.ControlErr = recordcodec.DecodeEndTxnMarker(r.Value)
			}
		} else if r.Key == nil {
			e.Err = fmt.Errorf("record at offset %d has no key", r.Offset)
		} else {
			e.Decoded, e.Err = d.Record(r.Key, r.Value)
		}
		dst = append(dst, e)
	}
	return dst
}

// TextPrinter writes kafka-dump-log text. It remembers the current segment file so that each
// file gets its "Dumping" lines once.
type TextPrinter struct {
	W io.Writer
	// Files, when set, are the segment files being printed, in order: a file without a batch
	// (an empty segment) still gets its "Dumping" and "Log starting offset" lines, as
	// DumpLogSegments prints them, when the next file's first batch or Finish comes.
	Files []string
	next  int // Files[next:] have not been announced
	file  string
	line  []byte
}

// SetFiles starts a new list of files (the next partition's).
func (p *TextPrinter) SetFiles(files []string) { p.Files, p.next = files, 0 }

// Finish announces the files of Files no batch came from after the last one printed.
func (p *TextPrinter) Finish() error {
	p.line = p.line[:0]
	for ; p.next < len(p.Files); p.next++ {
		p.announce(p.Files[p.next])
	}
	_, err := p.W.Write(p.line)
	return err
}

func timestampLabel(b *eventlog.Batch) string {
	if b.Magic == 0 {
		return "NoTimestampType"
	}
	if b.Attributes.TimestampType() == eventlog.LogAppendTime {
		return "LogAppendTime"
	}
	return "CreateTime"
}

// incrementSequence is Kafka's DefaultRecordBatch.incrementSequence: sequences wrap to 0 after
// Integer.MAX_VALUE.
func incrementSequence(seq int32, inc int32) int32 {
	if seq > (1<<31-1)-inc {
		return inc - ((1<<31 - 1) - seq) - 1
	}
	return seq + inc
}

// Header prints the "Dumping" lines when b comes from a file other than the previous batch's.
func (p *TextPrinter) header(b *eventlog.Batch) {
	if b.Origin.File == p.file {
		return
	}
	if i := indexOf(p.Files[p.next:], b.Origin.File); i >= 0 {
		for _, f := range p.Files[p.next : p.next+i] {
			p.announce(f) // empty segments before this one
		}
		p.next += i + 1
	}
	p.announce(b.Origin.File)
}

func indexOf(files []string, f string) int {
	for i, g := range files {
		if g == f {
			return i
		}
	}
	return -1
}

// announce prints a file's "Dumping" and "Log starting offset" lines.
func (p *TextPrinter) announce(file string) {
	p.file = file
	p.line = append(p.line, "Dumping "...)
	p.line = append(p.line, p.file...)
	p.line = append(p.line, '\n')
	base := strings.TrimSuffix(filepath.Base(p.file), ".log")
	if n, err := strconv.ParseInt(base, 10, 64); err == nil {
		p.line = append(p.line, "Log starting offset: "...)
		p.line = strconv.AppendInt(p.line, n, 10)
		p.line = append(p.line, '\n')
	}
}

// Batch prints b's header line and the lines of the given entries (all of b's records, or a
// filtered subset).
func (p *TextPrinter) Batch(b *eventlog.Batch, entries []Entry) error {
	if err := p.BatchHeader(b); err != nil {
		return err
	}
	return p.Records(b, entries)
}

// Records prints the lines of entries, records of b whose header was printed.
func (p *TextPrinter) Records(b *eventlog.Batch, entries []Entry) error {
	l := p.line[:0]
	for i := range entries {
		l = p.appendRecord(l, b, &entries[i])
	}
	p.line = l
	_, err := p.W.Write(l)
	return err
}

// BatchHeader prints b's header line (and the "Dumping" lines of a new file).
func (p *TextPrinter) BatchHeader(b *eventlog.Batch) error {
	p.line = p.line[:0]
	p.header(b)
	l := p.line
	if b.Magic >= 2 {
		l = append(l, "baseOffset: "...)
		l = strconv.AppendInt(l, b.BaseOffset, 10)
		l = append(l, " lastOffset: "...)
		l = strconv.AppendInt(l, b.LastOffset, 10)
		l = append(l, " count: "...)
		l = strconv.AppendInt(l, int64(b.NumRecords), 10)
		lastSeq := int32(-1)
		if b.BaseSequence >= 0 {
			lastSeq = incrementSequence(b.BaseSequence, int32(b.LastOffset-b.BaseOffset))
		}
		l = fmt.Appendf(l, " baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: ",
			b.BaseSequence, lastSeq, b.ProducerID, b.ProducerEpoch, b.PartitionLeaderEpoch, b.Attributes.Transactional(), b.Attributes.Control())
		if h, ok := b.DeleteHorizon(); ok {
			l = fmt.Appendf(l, "OptionalLong[%d]", h)
		} else {
			l = append(l, "OptionalLong.empty"...)
		}
	} else {
		l = append(l, "offset: "...)
		l = strconv.AppendInt(l, b.LastOffset, 10)
	}
	l = fmt.Appendf(l, " position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: true\n",
		b.Origin.Pos, timestampLabel(b), b.MaxTimestamp, b.Origin.Size, b.Magic, b.Attributes.Codec(), b.CRC)
	p.line = l
	_, err := p.W.Write(l)
	return err
}

func (p *TextPrinter) appendRecord(l []byte, b *eventlog.Batch, e *Entry) []byte {
	r := e.Record
	keySize, valueSize := -1, -1
	if r.Key != nil {
		keySize = len(r.Key)
	}
	if r.Value != nil {
		valueSize = len(r.Value)
	}
	l = fmt.Appendf(l, "| offset: %d %s: %d keySize: %d valueSize: %d", r.Offset, timestampLabel(b), b.RecordTimestamp(r), keySize, valueSize)
	if b.Magic >= 2 {
		seq := int32(-1)
		if b.BaseSequence >= 0 {
			seq = incrementSequence(b.BaseSequence, int32(r.Offset-b.BaseOffset))
		}
		l = fmt.Appendf(l, " sequence: %d headerKeys: [", seq)
		for i, h := range r.Headers {
			if i > 0 {
				l = append(l, ',')
			}
			l = append(l, h.Key...)
		}
		l = append(l, ']')
	} else {
		l = fmt.Appendf(l, " isValid: true crc: %d", b.CRC)
	}
	if b.Attributes.Control() {
		switch {
		case e.ControlErr != nil:
			l = fmt.Appendf(l, " controlError: %v", e.ControlErr)
		case e.Control.Type == recordcodec.ControlCommit || e.Control.Type == recordcodec.ControlAbort:
			l = fmt.Appendf(l, " endTxnMarker: %s coordinatorEpoch: %d", e.Control.Type, e.Marker.CoordinatorEpoch)
		default:
			l = fmt.Appendf(l, " controlType: %s(%d)", e.Control.Type, int16(e.Control.Type))
		}
		return append(l, '\n')
	}
	l = append(l, " key: "...)
	switch err := e.Err; {
	case err == nil || isTrailing(err):
		l = recordcodec.AppendDumpLogKey(l, e.Decoded.Key)
		l = append(l, " payload: "...)
		l = recordcodec.AppendDumpLogPayload(l, e.Decoded.Value)
	case isUnknownType(err):
		l = fmt.Appendf(l, "Unknown record type %d at offset %d, skipping.", int16(e.Decoded.Key.Type), r.Offset)
	default:
		l = fmt.Appendf(l, "Error at offset %d, skipping. %v", r.Offset, err)
	}
	return append(l, '\n')
}
