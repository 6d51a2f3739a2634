package eventlog

import "fmt"

// Codec is the compression codec of a batch (attribute bits 0-2).
type Codec int8

// The codecs Kafka defines. Values 5-7 are unknown and rejected by readers.
const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("unknown(%d)", int8(c))
}

// Known reports whether c is one of the five codecs Kafka defines.
func (c Codec) Known() bool { return c >= CodecNone && c <= CodecZstd }

// TimestampType is attribute bit 3.
type TimestampType int8

const (
	CreateTime    TimestampType = 0
	LogAppendTime TimestampType = 1
)

func (t TimestampType) String() string {
	if t == LogAppendTime {
		return "LogAppendTime"
	}
	return "CreateTime"
}

// Attribute bits of a v2 batch (and, for bits 0-3, of a legacy wrapper message).
const (
	AttrCodecMask     Attributes = 0x07
	AttrLogAppendTime Attributes = 0x08
	AttrTransactional Attributes = 0x10
	AttrControl       Attributes = 0x20
	AttrDeleteHorizon Attributes = 0x40
)

// Attributes is the int16 attributes field of a batch, kept verbatim (unknown bits included)
// so that a batch re-encoded from a Batch value carries the same bits it was read with.
type Attributes int16

func (a Attributes) Codec() Codec                 { return Codec(a & AttrCodecMask) }
func (a Attributes) TimestampType() TimestampType { return TimestampType((a >> 3) & 1) }
func (a Attributes) Transactional() bool          { return a&AttrTransactional != 0 }
func (a Attributes) Control() bool                { return a&AttrControl != 0 }
func (a Attributes) HasDeleteHorizon() bool       { return a&AttrDeleteHorizon != 0 }

// WithCodec returns a with its codec bits replaced by c.
func (a Attributes) WithCodec(c Codec) Attributes {
	return a&^AttrCodecMask | Attributes(c)&AttrCodecMask
}

// Header is a record header. Key is never null in Kafka; a nil Value is a null header value.
type Header struct {
	Key   []byte
	Value []byte
}

// Record is one Kafka record with its absolute offset and timestamp.
//
// Key and Value keep Kafka's null/empty distinction: nil means null (length -1 on the wire; a
// nil Value is a tombstone), a non-nil empty slice means a present, zero-length value.
type Record struct {
	Offset    int64
	Timestamp int64
	Key       []byte
	Value     []byte
	Headers   []Header
}

// Origin says where a batch came from, for error messages and dump output. For a segment it is
// the .log file, the byte position of the batch in it and its size on disk (log-entry overhead
// included). A batch imported into a Pebble log keeps the origin it was imported from.
type Origin struct {
	File string
	Pos  int64
	Size int64
}

func (o Origin) String() string {
	if o.File == "" {
		return "(no origin)"
	}
	return fmt.Sprintf("%s@%d", o.File, o.Pos)
}

// Batch mirrors one Kafka record batch (magic 2), or one legacy message-set entry (magic 0/1:
// one uncompressed message, or one compressed wrapper with its inner messages).
//
// For legacy batches: BaseOffset is the first inner offset, LastOffset the wrapper's offset,
// Attributes the wrapper's (codec and timestamp type), CRC the wrapper's CRC-32,
// PartitionLeaderEpoch, ProducerID, ProducerEpoch and BaseSequence are -1, BaseTimestamp is
// the first record's timestamp and MaxTimestamp the wrapper's (-1 on magic 0).
type Batch struct {
	Partition            int32
	BaseOffset           int64
	LastOffset           int64 // BaseOffset + lastOffsetDelta
	PartitionLeaderEpoch int32
	Magic                int8
	Attributes           Attributes
	CRC                  uint32
	BaseTimestamp        int64 // the delete horizon when Attributes.HasDeleteHorizon()
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32 // the header's record count; equals len(Records) once decoded
	Records              []Record
	Origin               Origin
}

// NextOffset is the offset after this batch (Kafka's batch.nextOffset()).
func (b *Batch) NextOffset() int64 { return b.LastOffset + 1 }

// RecordTimestamp is the timestamp Kafka gives record r of b (Record.timestamp()): the batch's
// max timestamp when the batch is LogAppendTime (the broker stamps the batch, not each record),
// none (-1) on magic 0, which has no timestamps, and the record's own (CreateTime) otherwise.
func (b *Batch) RecordTimestamp(r *Record) int64 {
	switch {
	case b.Magic == 0:
		return -1
	case b.Attributes.TimestampType() == LogAppendTime:
		return b.MaxTimestamp
	}
	return r.Timestamp
}

// DeleteHorizon returns the batch's delete horizon (ms) and whether it has one.
func (b *Batch) DeleteHorizon() (int64, bool) {
	if b.Attributes.HasDeleteHorizon() {
		return b.BaseTimestamp, true
	}
	return 0, false
}

// Clone returns a deep copy of b that does not alias any reader buffer. Iterators reuse their
// buffers, so a caller that keeps a batch past the next call to Next must clone it.
func (b *Batch) Clone() *Batch {
	c := *b
	c.Records = make([]Record, len(b.Records))
	for i, r := range b.Records {
		c.Records[i] = Record{
			Offset:    r.Offset,
			Timestamp: r.Timestamp,
			Key:       cloneBytes(r.Key),
			Value:     cloneBytes(r.Value),
		}
		if r.Headers != nil {
			hs := make([]Header, len(r.Headers))
			for j, h := range r.Headers {
				hs[j] = Header{Key: cloneBytes(h.Key), Value: cloneBytes(h.Value)}
			}
			c.Records[i].Headers = hs
		}
	}
	return &c
}

// cloneBytes copies b, keeping nil as nil and empty as non-nil empty.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

func (b *Batch) String() string {
	return fmt.Sprintf("batch p%d [%d..%d] magic %d codec %s records %d pid %d epoch %d txn %v ctrl %v at %s",
		b.Partition, b.BaseOffset, b.LastOffset, b.Magic, b.Attributes.Codec(), b.NumRecords,
		b.ProducerID, b.ProducerEpoch, b.Attributes.Transactional(), b.Attributes.Control(), b.Origin)
}
