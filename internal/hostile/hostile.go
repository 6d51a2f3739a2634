// Package hostile builds crafted inputs for tests of coordlog's defences: Kafka segment bytes
// that are valid on the wire but built to exhaust a reader (record-count bombs). Tests
// generate them at run time; none is committed.
package hostile

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
)

// RecordBomb returns one gzip-compressed v2 batch (log entry framing included) at offset 0
// whose payload is n copies of the same tiny record (offset delta 0, no timestamp delta, the
// given key, a null value, no headers): a few KB on disk that declare and really hold n
// records. It is built without materialising the records, so n can be tens of millions.
func RecordBomb(n int, key []byte) ([]byte, error) {
	var rec []byte
	body := []byte{0, 0, 0} // attributes, timestamp delta 0, offset delta 0
	body = appendNullableBytes(body, key)
	body = binary.AppendVarint(body, -1) // null value
	body = binary.AppendVarint(body, 0)  // no headers
	rec = binary.AppendVarint(rec, int64(len(body)))
	rec = append(rec, body...)
	var z bytes.Buffer
	gz, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	chunk := bytes.Repeat(rec, 4096)
	for left := n; left > 0; {
		k := min(left, 4096)
		if _, err := gz.Write(chunk[:k*len(rec)]); err != nil {
			return nil, err
		}
		left -= k
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	h := make([]byte, 0, 61+z.Len())
	h = binary.BigEndian.AppendUint64(h, 0) // base offset
	h = binary.BigEndian.AppendUint32(h, 0) // length, patched below
	h = binary.BigEndian.AppendUint32(h, 0) // partition leader epoch
	h = append(h, 2)                        // magic
	h = binary.BigEndian.AppendUint32(h, 0) // CRC, patched below
	h = binary.BigEndian.AppendUint16(h, 1 /* gzip */)
	h = binary.BigEndian.AppendUint32(h, uint32(n-1))       // last offset delta
	h = binary.BigEndian.AppendUint64(h, 1_700_000_000_000) // base timestamp
	h = binary.BigEndian.AppendUint64(h, 1_700_000_000_000) // max timestamp
	h = binary.BigEndian.AppendUint64(h, ^uint64(0))        // producer id -1
	h = binary.BigEndian.AppendUint16(h, ^uint16(0))        // producer epoch -1
	h = binary.BigEndian.AppendUint32(h, ^uint32(0))        // base sequence -1
	h = binary.BigEndian.AppendUint32(h, uint32(n))         // record count
	h = append(h, z.Bytes()...)
	binary.BigEndian.PutUint32(h[8:], uint32(len(h)-12))
	binary.BigEndian.PutUint32(h[17:], crc32.Checksum(h[21:], crc32.MakeTable(crc32.Castagnoli)))
	return h, nil
}

func appendNullableBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	return append(binary.AppendVarint(dst, int64(len(b))), b...)
}
