package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"unsafe"

	"github.com/coordlog/coordlog/eventlog"
)

// Legacy message sets (magic 0 and 1). A log entry is [int64 offset][int32 size][message]; a
// message is [uint32 CRC-32 IEEE over the rest][int8 magic][int8 attributes][int64 timestamp,
// v1 only][int32 key length][key][int32 value length][value], lengths -1 meaning null. A
// compressed message (a wrapper) holds a whole inner message set in its value; on v1 inner
// offsets are relative (absolute = wrapper offset - last inner offset + inner offset), on v0
// they are absolute. The wrapper's offset is the last inner offset.

type legacyMsg struct {
	offset int64
	crc    uint32
	magic  int8
	attrs  eventlog.Attributes
	ts     int64
	key    []byte
	value  []byte
}

func legacyMinSize(magic int8) int64 {
	if magic == 0 {
		return 14
	}
	return 22
}

// parseLegacyMessage parses msg = [crc][magic][attrs]... (the bytes after offset and size)
// without checking the CRC.
func parseLegacyMessage(msg []byte, offset int64) (legacyMsg, error) {
	m := legacyMsg{offset: offset, ts: -1}
	if len(msg) < 14 {
		return m, fmt.Errorf("message of %d bytes is shorter than a header", len(msg))
	}
	m.crc = binary.BigEndian.Uint32(msg)
	m.magic = int8(msg[4])
	m.attrs = eventlog.Attributes(msg[5])
	p := 6
	switch m.magic {
	case 0:
	case 1:
		if len(msg) < 22 {
			return m, fmt.Errorf("v1 message of %d bytes is shorter than a header", len(msg))
		}
		m.ts = int64(binary.BigEndian.Uint64(msg[p:]))
		p += 8
	default:
		return m, fmt.Errorf("inner message magic %d", m.magic)
	}
	var ok bool
	if m.key, p, ok = int32Bytes(msg, p); !ok {
		return m, fmt.Errorf("key length runs past the message")
	}
	if m.value, p, ok = int32Bytes(msg, p); !ok {
		return m, fmt.Errorf("value length runs past the message")
	}
	if p != len(msg) {
		return m, fmt.Errorf("%d bytes after the value", len(msg)-p)
	}
	return m, nil
}

// int32Bytes reads an int32 length (-1 = null) and that many bytes. A zero length gives a
// non-nil empty slice, keeping empty distinct from null.
func int32Bytes(b []byte, p int) ([]byte, int, bool) {
	if len(b)-p < 4 {
		return nil, p, false
	}
	n := int64(int32(binary.BigEndian.Uint32(b[p:])))
	p += 4
	if n == -1 {
		return nil, p, true
	}
	if n < 0 || n > int64(len(b)-p) {
		return nil, p, false
	}
	end := p + int(n)
	return b[p:end:end], end, true
}

func (it *iter) decodeLegacy(pos, remaining, offset, length int64, magic int8) (int64, *bad, error) {
	if length < legacyMinSize(magic) || length > int64(it.opts.MaxBatchBytes) {
		return 0, &bad{kind: eventlog.KindBadLength, offset: offset, declared: -1,
			detail: fmt.Sprintf("v%d message size %d outside [%d, %d]", magic, length, legacyMinSize(magic), it.opts.MaxBatchBytes)}, nil
	}
	size := logOverhead + length
	if size > remaining {
		return 0, &bad{kind: eventlog.KindTruncated, offset: offset, declared: -1,
			detail: fmt.Sprintf("v%d message of %d bytes but only %d left in the file", magic, size, remaining)}, nil
	}
	full, err := it.w.at(pos, int(size))
	if err != nil {
		return 0, nil, err
	}
	stored := binary.BigEndian.Uint32(full[12:])
	if got := crc32.ChecksumIEEE(full[16:]); got != stored {
		return 0, &bad{kind: eventlog.KindBadCRC, offset: offset, declared: -1,
			detail: fmt.Sprintf("v%d CRC-32 stored %08x, computed %08x", magic, stored, got)}, nil
	}
	trusted := func(kind eventlog.Kind, format string, args ...any) (int64, *bad, error) {
		return 0, &bad{kind: kind, offset: offset, declared: -1, trusted: true, size: size, detail: fmt.Sprintf(format, args...)}, nil
	}
	w, err := parseLegacyMessage(full[12:], offset)
	if err != nil {
		return trusted(eventlog.KindBadRecord, "v%d message: %v", magic, err)
	}
	if offset < 0 {
		return trusted(eventlog.KindBadHeader, "negative offset %d", offset)
	}
	b := &it.batch
	*b = eventlog.Batch{
		Partition:            it.part,
		BaseOffset:           offset,
		LastOffset:           offset,
		PartitionLeaderEpoch: -1,
		Magic:                magic,
		CRC:                  stored,
		Attributes:           w.attrs,
		BaseTimestamp:        w.ts,
		MaxTimestamp:         w.ts,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		BaseSequence:         -1,
		Records:              b.Records[:0],
		Origin:               eventlog.Origin{File: it.files[it.fi].path, Pos: pos, Size: size},
	}
	codec := w.attrs.Codec()
	if codec == eventlog.CodecNone {
		b.NumRecords = 1
		b.Records = append(b.Records, eventlog.Record{Offset: offset, Timestamp: w.ts, Key: w.key, Value: w.value})
		return size, nil, nil
	}
	if codec > eventlog.CodecLZ4 {
		return trusted(eventlog.KindUnknownCodec, "v%d wrapper codec %d (legacy sets allow none, gzip, snappy, lz4)", magic, int(codec))
	}
	if offset < it.from {
		return size, nil, nil // wholly before the start: skip without decompressing
	}
	it.dec.limit = it.opts.MaxBatchMemory
	inner, err := it.dec.decompress(codec, w.value)
	if errors.Is(err, errTooLarge) {
		return trusted(eventlog.KindTooLarge, "%s", it.tooLarge(fmt.Sprintf("its v%d wrapper's %s payload decompresses past it", magic, codec)))
	} else if err != nil {
		return trusted(eventlog.KindDecompress, "v%d wrapper: %v", magic, err)
	}
	msgs := it.legacy[:0]
	// Each inner message costs its parsed form and its Record besides the payload.
	const perMessage = int64(unsafe.Sizeof(legacyMsg{})) + eventlog.RecordMemory
	for p := 0; p < len(inner); {
		if int64(len(inner))+int64(len(msgs)+1)*perMessage > int64(it.opts.MaxBatchMemory) {
			return trusted(eventlog.KindTooLarge, "%s", it.tooLarge(fmt.Sprintf("its v%d wrapper holds more than %d messages", magic, len(msgs))))
		}
		if len(inner)-p < logOverhead {
			return trusted(eventlog.KindBadRecord, "inner message %d: entry header truncated", len(msgs))
		}
		off := int64(binary.BigEndian.Uint64(inner[p:]))
		n := int(int32(binary.BigEndian.Uint32(inner[p+8:])))
		p += logOverhead
		if n < 0 || n > len(inner)-p {
			return trusted(eventlog.KindBadRecord, "inner message %d: size %d runs past the wrapper", len(msgs), n)
		}
		m, err := parseLegacyMessage(inner[p:p+n], off)
		if err != nil {
			return trusted(eventlog.KindBadRecord, "inner message %d: %v", len(msgs), err)
		}
		if got := crc32.ChecksumIEEE(inner[p+4 : p+n]); got != m.crc {
			return trusted(eventlog.KindBadCRC, "inner message %d: CRC-32 stored %08x, computed %08x", len(msgs), m.crc, got)
		}
		if m.attrs.Codec() != eventlog.CodecNone {
			return trusted(eventlog.KindBadRecord, "inner message %d: nested compression", len(msgs))
		}
		msgs = append(msgs, m)
		p += n
	}
	it.legacy = msgs
	if len(msgs) == 0 {
		return size, nil, nil
	}
	shift := int64(0)
	if magic == 1 {
		shift = offset - msgs[len(msgs)-1].offset
	}
	logAppend := magic == 1 && w.attrs.TimestampType() == eventlog.LogAppendTime
	for _, m := range msgs {
		ts := m.ts
		if logAppend {
			ts = w.ts
		}
		b.Records = append(b.Records, eventlog.Record{Offset: m.offset + shift, Timestamp: ts, Key: m.key, Value: m.value})
	}
	b.NumRecords = int32(len(b.Records))
	b.BaseOffset = b.Records[0].Offset
	b.BaseTimestamp = b.Records[0].Timestamp
	return size, nil, nil
}
