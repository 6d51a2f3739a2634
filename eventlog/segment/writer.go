package segment

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/coordlog/coordlog/eventlog"
)

// EncodeOptions tune how batches are encoded.
type EncodeOptions struct {
	// RawSnappy writes snappy payloads as one raw snappy block instead of snappy-java's xerial
	// framing (what Kafka's Java producers write).
	RawSnappy bool
}

// Encoder encodes v2 record batches; it keeps compressor state between calls. Not safe for
// concurrent use.
type Encoder struct {
	comp    compressor
	records []byte
}

// NewEncoder returns an Encoder.
func NewEncoder(opts EncodeOptions) *Encoder {
	return &Encoder{comp: compressor{rawSnappy: opts.RawSnappy}}
}

// Close releases compressor state.
func (e *Encoder) Close() { e.comp.close() }

// AppendBatch appends b as a magic-2 record batch (log entry framing included) and returns the
// result. It writes b's header fields as they are (attributes verbatim, so b.Attributes decides
// codec, transactional, control and delete-horizon bits; BaseTimestamp is the horizon when bit 6
// is set), lastOffsetDelta = LastOffset-BaseOffset, the record count = len(b.Records), and
// computes the CRC-32C. b.Magic is ignored.
func (e *Encoder) AppendBatch(dst []byte, b *eventlog.Batch) ([]byte, error) {
	e.records = eventlog.AppendRecordsV2(e.records[:0], b)
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.BaseOffset))
	dst = binary.BigEndian.AppendUint32(dst, 0) // length, patched below
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.PartitionLeaderEpoch))
	dst = append(dst, 2)
	dst = binary.BigEndian.AppendUint32(dst, 0) // CRC, patched below
	dst = binary.BigEndian.AppendUint16(dst, uint16(b.Attributes))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.LastOffset-b.BaseOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.BaseTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.MaxTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.ProducerID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(b.ProducerEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.BaseSequence))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b.Records)))
	var err error
	if b.Attributes.Codec() == eventlog.CodecNone || len(b.Records) == 0 {
		dst = append(dst, e.records...)
	} else if dst, err = e.comp.compress(dst, b.Attributes.Codec(), e.records); err != nil {
		return nil, err
	}
	batch := dst[start:]
	binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-logOverhead))
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], castagnoli))
	return dst, nil
}

// WriterOptions configure a Writer.
type WriterOptions struct {
	EncodeOptions
	// SegmentBytes rolls to a new file once the current one reaches this size. Default 100 MiB
	// (Kafka's offsets.topic.segment.bytes).
	SegmentBytes int64
}

// Writer writes v2 batches into `<20-digit base offset>.log` files in one partition directory,
// rolling files like Kafka does: a new file is named after the base offset of its first batch.
type Writer struct {
	dir  string
	opts WriterOptions
	enc  *Encoder
	f    *os.File
	bw   *bufio.Writer
	path string
	size int64
	buf  []byte
}

// NewWriter creates dir if needed and returns a Writer appending to new files in it.
func NewWriter(dir string, opts WriterOptions) (*Writer, error) {
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = 100 << 20
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Writer{dir: dir, opts: opts, enc: NewEncoder(opts.EncodeOptions)}, nil
}

// FileName is the segment file name for a base offset.
func FileName(base int64) string { return fmt.Sprintf("%020d.log", base) }

// Write appends b as a v2 batch and returns where it was written.
func (w *Writer) Write(b *eventlog.Batch) (eventlog.Origin, error) {
	var err error
	if w.buf, err = w.enc.AppendBatch(w.buf[:0], b); err != nil {
		return eventlog.Origin{}, err
	}
	return w.WriteRaw(b.BaseOffset, w.buf)
}

// WriteRaw appends already-encoded bytes (a batch, a legacy message set, or deliberately damaged
// bytes in tests); base names the file if this write opens a new one.
func (w *Writer) WriteRaw(base int64, raw []byte) (eventlog.Origin, error) {
	if w.f != nil && w.size >= w.opts.SegmentBytes {
		if err := w.Roll(); err != nil {
			return eventlog.Origin{}, err
		}
	}
	if w.f == nil {
		w.path = filepath.Join(w.dir, FileName(base))
		f, err := os.OpenFile(w.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return eventlog.Origin{}, err
		}
		w.f, w.size = f, 0
		w.bw = bufio.NewWriterSize(f, 1<<20)
	}
	o := eventlog.Origin{File: w.path, Pos: w.size, Size: int64(len(raw))}
	if _, err := w.bw.Write(raw); err != nil {
		return eventlog.Origin{}, err
	}
	w.size += int64(len(raw))
	return o, nil
}

// Roll closes the current file (flushed and synced); the next write starts a new one.
func (w *Writer) Roll() error {
	if w.f == nil {
		return nil
	}
	err := w.bw.Flush()
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f, w.bw = nil, nil
	return err
}

// Close rolls the current file and releases the encoder.
func (w *Writer) Close() error {
	err := w.Roll()
	w.enc.Close()
	return err
}

// AppendLegacy appends a legacy (magic 0 or 1) message set holding records: one message per
// record when codec is none, otherwise one wrapper whose value is the compressed inner set
// (relative inner offsets on v1, absolute on v0; wrapper offset = last record's offset,
// wrapper timestamp = the largest record timestamp). Timestamps are dropped on v0. It exists for
// tests and fixtures: Kafka stopped writing these formats in 0.11.
func AppendLegacy(dst []byte, magic int8, codec eventlog.Codec, tsType eventlog.TimestampType, records []eventlog.Record) ([]byte, error) {
	if magic != 0 && magic != 1 {
		return nil, fmt.Errorf("legacy magic %d", magic)
	}
	if codec == eventlog.CodecNone {
		for _, r := range records {
			dst = appendLegacyMessage(dst, magic, r.Offset, 0, r.Timestamp, r.Key, r.Value)
		}
		return dst, nil
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("a compressed wrapper needs at least one record")
	}
	var inner []byte
	first := records[0].Offset
	maxTs := int64(-1)
	for _, r := range records {
		off := r.Offset
		if magic == 1 {
			off -= first
		}
		inner = appendLegacyMessage(inner, magic, off, 0, r.Timestamp, r.Key, r.Value)
		maxTs = max(maxTs, r.Timestamp)
	}
	var c compressor
	defer c.close()
	value, err := c.compress(nil, codec, inner)
	if err != nil {
		return nil, err
	}
	attrs := int8(codec)
	if magic == 1 && tsType == eventlog.LogAppendTime {
		attrs |= 0x08
	}
	return appendLegacyMessage(dst, magic, records[len(records)-1].Offset, attrs, maxTs, []byte(nil), value), nil
}

func appendLegacyMessage(dst []byte, magic int8, offset int64, attrs int8, ts int64, key, value []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(offset))
	sizeAt := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	crcAt := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	dst = append(dst, byte(magic), byte(attrs))
	if magic == 1 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(ts))
	}
	for _, b := range [][]byte{key, value} {
		if b == nil {
			dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)
		} else {
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
			dst = append(dst, b...)
		}
	}
	binary.BigEndian.PutUint32(dst[sizeAt:], uint32(len(dst)-crcAt))
	binary.BigEndian.PutUint32(dst[crcAt:], crc32.ChecksumIEEE(dst[crcAt+4:]))
	return dst
}
