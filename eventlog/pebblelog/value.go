package pebblelog

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/coordlog/coordlog/eventlog"
)

// fixedHeaderLen is the fixed part of an encoded batch value (see doc.go).
const fixedHeaderLen = 1 + 8 + 4 + 1 + 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4

func encodeBatch(dst []byte, b *eventlog.Batch) []byte {
	dst = append(dst, valueFormat)
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.BaseOffset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.PartitionLeaderEpoch))
	dst = append(dst, byte(b.Magic))
	dst = binary.BigEndian.AppendUint16(dst, uint16(b.Attributes))
	dst = binary.BigEndian.AppendUint32(dst, b.CRC)
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.BaseTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.MaxTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.ProducerID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(b.ProducerEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.BaseSequence))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b.Records)))
	dst = binary.AppendUvarint(dst, uint64(len(b.Origin.File)))
	dst = append(dst, b.Origin.File...)
	dst = binary.AppendVarint(dst, b.Origin.Pos)
	dst = binary.AppendVarint(dst, b.Origin.Size)
	return eventlog.AppendRecordsV2(dst, b)
}

// decodeBatch fills b from key and value; records alias value. headerOnly skips the records.
func decodeBatch(b *eventlog.Batch, key, v []byte, headerOnly bool) error {
	if len(key) != 13 || len(v) < fixedHeaderLen || v[0] != valueFormat {
		return fmt.Errorf("corrupt batch entry %x (value %d bytes)", key, len(v))
	}
	recs := b.Records[:0]
	*b = eventlog.Batch{
		Partition:            int32(binary.BigEndian.Uint32(key[1:])),
		LastOffset:           int64(binary.BigEndian.Uint64(key[5:])),
		BaseOffset:           int64(binary.BigEndian.Uint64(v[1:])),
		PartitionLeaderEpoch: int32(binary.BigEndian.Uint32(v[9:])),
		Magic:                int8(v[13]),
		Attributes:           eventlog.Attributes(binary.BigEndian.Uint16(v[14:])),
		CRC:                  binary.BigEndian.Uint32(v[16:]),
		BaseTimestamp:        int64(binary.BigEndian.Uint64(v[20:])),
		MaxTimestamp:         int64(binary.BigEndian.Uint64(v[28:])),
		ProducerID:           int64(binary.BigEndian.Uint64(v[36:])),
		ProducerEpoch:        int16(binary.BigEndian.Uint16(v[44:])),
		BaseSequence:         int32(binary.BigEndian.Uint32(v[46:])),
		NumRecords:           int32(binary.BigEndian.Uint32(v[50:])),
		Records:              recs,
	}
	p := fixedHeaderLen
	n, k := binary.Uvarint(v[p:])
	if k <= 0 || n > uint64(len(v)-p-k) {
		return fmt.Errorf("corrupt batch entry %x: origin", key)
	}
	p += k
	b.Origin.File = string(v[p : p+int(n)])
	p += int(n)
	var ok bool
	if b.Origin.Pos, p, ok = readVarint(v, p); !ok {
		return fmt.Errorf("corrupt batch entry %x: origin position", key)
	}
	if b.Origin.Size, p, ok = readVarint(v, p); !ok {
		return fmt.Errorf("corrupt batch entry %x: origin size", key)
	}
	if headerOnly {
		return nil
	}
	var err error
	if b.Records, err = eventlog.DecodeRecordsV2(recs, v[p:], int(b.NumRecords), b.BaseOffset, b.BaseTimestamp); err != nil {
		return fmt.Errorf("corrupt batch entry %x: %w", key, err)
	}
	return nil
}

func readVarint(v []byte, p int) (int64, int, bool) {
	x, k := binary.Varint(v[p:])
	if k <= 0 {
		return 0, p, false
	}
	return x, p + k, true
}

// Batches implements eventlog.Source: one seek to the first key of p whose last offset is >= from,
// which is exactly the batch containing from (or the first one after a gap).
func (l *Log) Batches(p int32, from int64) (eventlog.Iterator, error) {
	lo, hi := partitionBounds(p)
	pi, err := l.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	return &iter{l: l, it: pi, seek: batchKey(nil, p, max(from, 0))}, nil
}

type iter struct {
	l       *Log
	it      *pebble.Iterator
	seek    []byte
	started bool
	batch   eventlog.Batch
	err     error
	closed  bool
}

func (i *iter) advance() bool {
	if i.err != nil || i.closed {
		return false
	}
	var ok bool
	if !i.started {
		i.started = true
		ok = i.it.SeekGE(i.seek)
	} else {
		ok = i.it.Next()
	}
	if !ok {
		i.err = i.l.readError(i.it.Error())
	}
	return ok
}

func (i *iter) Next() bool { return i.next(false) }

func (i *iter) nextHeader() bool { return i.next(true) }

func (i *iter) next(headerOnly bool) bool {
	if !i.advance() {
		return false
	}
	v, err := i.it.ValueAndErr()
	if err == nil {
		err = decodeBatch(&i.batch, i.it.Key(), v, headerOnly)
	}
	if err != nil {
		i.err = i.l.readError(err)
		return false
	}
	return true
}

// withRecords decodes the records of the current batch after nextHeader.
func (i *iter) withRecords() error {
	v, err := i.it.ValueAndErr()
	if err == nil {
		err = decodeBatch(&i.batch, i.it.Key(), v, false)
	}
	return i.l.readError(err)
}

func (i *iter) Batch() *eventlog.Batch { return &i.batch }
func (i *iter) Err() error             { return i.err }

func (i *iter) Close() error {
	if i.closed {
		return nil
	}
	i.closed = true
	return i.it.Close()
}
