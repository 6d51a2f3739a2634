package eventlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// This file is the Kafka v2 record codec (DefaultRecord). Both backends use it: segments hold
// these records (possibly compressed) after a 61-byte batch header, and the Pebble log stores
// them uncompressed after its own batch header, so one decoder serves both.

// ErrRecordOverrun means a record's length or one of its varints runs past the end of the
// records section of its batch.
var ErrRecordOverrun = errors.New("record runs past the end of the batch")

// varint decodes a zigzag varint (Kafka's varint and varlong are both zigzag LEB128, which is
// exactly encoding/binary's Varint). The one-byte case is inlined because it is by far the most
// common one in record framing.
func varint(b []byte, pos int) (int64, int, bool) {
	if pos < len(b) && b[pos] < 0x80 {
		u := uint64(b[pos])
		return int64(u>>1) ^ -int64(u&1), pos + 1, true
	}
	if pos >= len(b) {
		return 0, pos, false
	}
	v, n := binary.Varint(b[pos:])
	if n <= 0 {
		return 0, pos, false
	}
	return v, pos + n, true
}

// nullableBytes reads a varint length (-1 = null) and that many bytes, aliasing b. A zero length
// yields a non-nil empty slice so that empty stays distinct from null.
func nullableBytes(b []byte, pos int) ([]byte, int, bool) {
	n, pos, ok := varint(b, pos)
	if !ok || n < -1 {
		return nil, pos, false
	}
	if n == -1 {
		return nil, pos, true
	}
	if n > int64(len(b)-pos) {
		return nil, pos, false
	}
	end := pos + int(n)
	return b[pos:end:end], end, true
}

// MinRecordSizeV2 is the size of the smallest v2 record on the wire: a one-byte varint each
// for the length, timestamp delta, offset delta, key length, value length and header count,
// plus the attributes byte. A batch cannot hold more records than its record bytes / 7.
const MinRecordSizeV2 = 7

// RecordMemory and HeaderMemory are the in-memory sizes of a decoded Record and Header: what
// a decoded batch costs besides the payload its slices alias (88 and 48 bytes on 64-bit
// platforms, against 7 and 2 bytes on the wire at the least).
const (
	RecordMemory = int64(unsafe.Sizeof(Record{}))
	HeaderMemory = int64(unsafe.Sizeof(Header{}))
)

// ErrTooManyHeaders means the records of a batch carry more headers than the caller's bound.
var ErrTooManyHeaders = errors.New("too many record headers")

// DecodeRecordsV2 decodes count records from data (uncompressed v2 record bytes), appending them
// to dst[:0] and returning it. Keys, values and headers alias data. It fails if a record runs
// past data, if data holds bytes after the last record, or if fewer than count records fit.
func DecodeRecordsV2(dst []Record, data []byte, count int, baseOffset, baseTimestamp int64) ([]Record, error) {
	return DecodeRecordsV2Bounded(dst, data, count, baseOffset, baseTimestamp, math.MaxInt)
}

// DecodeRecordsV2Bounded is DecodeRecordsV2 allocating at most maxHeaders headers in all: past
// that it fails with ErrTooManyHeaders (each header is 48 bytes in memory and 2 on the wire).
func DecodeRecordsV2Bounded(dst []Record, data []byte, count int, baseOffset, baseTimestamp int64, maxHeaders int) ([]Record, error) {
	dst = dst[:0]
	if count < 0 {
		return dst, fmt.Errorf("negative record count %d", count)
	}
	pos := 0
	for i := 0; i < count; i++ {
		start := pos
		length, p, ok := varint(data, pos)
		if !ok || length < 0 || length > int64(len(data)-p) {
			return dst, fmt.Errorf("record %d at byte %d: length %d: %w", i, start, length, ErrRecordOverrun)
		}
		end := p + int(length)
		rec := data[:end]
		p++ // attributes, unused
		if p > end {
			return dst, fmt.Errorf("record %d at byte %d: %w", i, start, ErrRecordOverrun)
		}
		var tsDelta, offDelta, nh int64
		var r Record
		if tsDelta, p, ok = varint(rec, p); !ok {
			return dst, fmt.Errorf("record %d at byte %d: timestamp delta: %w", i, start, ErrRecordOverrun)
		}
		if offDelta, p, ok = varint(rec, p); !ok {
			return dst, fmt.Errorf("record %d at byte %d: offset delta: %w", i, start, ErrRecordOverrun)
		}
		if r.Key, p, ok = nullableBytes(rec, p); !ok {
			return dst, fmt.Errorf("record %d at byte %d: key: %w", i, start, ErrRecordOverrun)
		}
		if r.Value, p, ok = nullableBytes(rec, p); !ok {
			return dst, fmt.Errorf("record %d at byte %d: value: %w", i, start, ErrRecordOverrun)
		}
		if nh, p, ok = varint(rec, p); !ok || nh < 0 || nh > int64(end-p) {
			return dst, fmt.Errorf("record %d at byte %d: header count %d: %w", i, start, nh, ErrRecordOverrun)
		}
		if nh > 0 {
			if nh > int64(maxHeaders) {
				return dst, fmt.Errorf("record %d at byte %d: %d headers, past the %d left: %w", i, start, nh, max(maxHeaders, 0), ErrTooManyHeaders)
			}
			maxHeaders -= int(nh)
			r.Headers = make([]Header, nh)
			for j := range r.Headers {
				var k []byte
				if k, p, ok = nullableBytes(rec, p); !ok || k == nil {
					return dst, fmt.Errorf("record %d at byte %d: header %d key: %w", i, start, j, ErrRecordOverrun)
				}
				r.Headers[j].Key = k
				if r.Headers[j].Value, p, ok = nullableBytes(rec, p); !ok {
					return dst, fmt.Errorf("record %d at byte %d: header %d value: %w", i, start, j, ErrRecordOverrun)
				}
			}
		}
		if p != end {
			return dst, fmt.Errorf("record %d at byte %d: %d bytes left inside the record", i, start, end-p)
		}
		r.Offset = baseOffset + offDelta
		r.Timestamp = baseTimestamp + tsDelta
		dst = append(dst, r)
		pos = end
	}
	if pos != len(data) {
		return dst, fmt.Errorf("%d bytes after the last of %d records", len(data)-pos, count)
	}
	return dst, nil
}

func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	return (bits.Len64(u|1) + 6) / 7
}

func bytesLen(b []byte) int {
	if b == nil {
		return varintLen(-1)
	}
	return varintLen(int64(len(b))) + len(b)
}

func appendNullable(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// AppendRecordV2 appends r in Kafka's v2 record format, with deltas taken against baseOffset
// and baseTimestamp.
func AppendRecordV2(dst []byte, r *Record, baseOffset, baseTimestamp int64) []byte {
	tsDelta := r.Timestamp - baseTimestamp
	offDelta := r.Offset - baseOffset
	body := 1 + varintLen(tsDelta) + varintLen(offDelta) + bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int64(len(r.Headers)))
	for _, h := range r.Headers {
		body += bytesLen(h.Key) + bytesLen(h.Value)
	}
	dst = binary.AppendVarint(dst, int64(body))
	dst = append(dst, 0)
	dst = binary.AppendVarint(dst, tsDelta)
	dst = binary.AppendVarint(dst, offDelta)
	dst = appendNullable(dst, r.Key)
	dst = appendNullable(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for _, h := range r.Headers {
		k := h.Key
		if k == nil {
			k = []byte{} // header keys are never null in Kafka
		}
		dst = appendNullable(dst, k)
		dst = appendNullable(dst, h.Value)
	}
	return dst
}

// AppendRecordsV2 appends every record of b in v2 format, relative to b.BaseOffset and
// b.BaseTimestamp.
func AppendRecordsV2(dst []byte, b *Batch) []byte {
	for i := range b.Records {
		dst = AppendRecordV2(dst, &b.Records[i], b.BaseOffset, b.BaseTimestamp)
	}
	return dst
}
