package eventlog

import (
	"fmt"
	"sort"
)

// Packed is a Source over one partition held in memory as Kafka holds it on disk: each
// batch's header, and its records in the v2 record format, one after the other in one buffer.
// An iterator frames a batch again on every Next (DecodeRecordsV2) into one reused Batch whose
// keys and values alias the buffer, as a segment reader does with its window. Nothing in a
// Packed holds a pointer per batch or record: a benchmark that replays a large log from memory
// measures the replay, not the collector marking hundreds of thousands of retained batches (a
// replay of files never holds its log). Origins are not kept.
type Packed struct {
	partition int32
	hdrs      []packedHeader
	data      []byte
	records   int64
}

// packedHeader is a Batch without its records, which are data[start:end].
type packedHeader struct {
	baseOffset, lastOffset, baseTimestamp, maxTimestamp, producerID int64
	partitionLeaderEpoch, baseSequence, numRecords                  int32
	crc                                                             uint32
	producerEpoch                                                   int16
	attributes                                                      Attributes
	magic                                                           int8
	start, end                                                      int
}

// NewPacked returns an empty Packed for partition p.
func NewPacked(p int32) *Packed { return &Packed{partition: p} }

// Append copies b (header and records; not its Origin) to the end of the log. Its base
// offset must be after the last batch's offsets, and its partition the log's.
func (m *Packed) Append(b *Batch) error {
	if b.Partition != m.partition {
		return fmt.Errorf("eventlog: batch of partition %d appended to a packed log of partition %d", b.Partition, m.partition)
	}
	if b.LastOffset < b.BaseOffset {
		return fmt.Errorf("eventlog: batch at offset %d of partition %d ends before it starts (last offset %d)", b.BaseOffset, b.Partition, b.LastOffset)
	}
	if n := len(m.hdrs); n > 0 && b.BaseOffset <= m.hdrs[n-1].lastOffset {
		return fmt.Errorf("eventlog: batch at offset %d of partition %d is not after offset %d", b.BaseOffset, b.Partition, m.hdrs[n-1].lastOffset)
	}
	start := len(m.data)
	m.data = AppendRecordsV2(m.data, b)
	m.hdrs = append(m.hdrs, packedHeader{
		baseOffset: b.BaseOffset, lastOffset: b.LastOffset, baseTimestamp: b.BaseTimestamp, maxTimestamp: b.MaxTimestamp,
		producerID: b.ProducerID, partitionLeaderEpoch: b.PartitionLeaderEpoch, baseSequence: b.BaseSequence,
		numRecords: int32(len(b.Records)), crc: b.CRC, producerEpoch: b.ProducerEpoch, attributes: b.Attributes, magic: b.Magic,
		start: start, end: len(m.data),
	})
	m.records += int64(len(b.Records))
	return nil
}

// Records is the number of records appended.
func (m *Packed) Records() int64 { return m.records }

// Bytes is the size of the records in the v2 format: what the log holds besides the headers.
func (m *Packed) Bytes() int { return len(m.data) }

// Partitions implements Source.
func (m *Packed) Partitions() ([]int32, error) { return []int32{m.partition}, nil }

// Offsets implements Source.
func (m *Packed) Offsets(p int32) (first, next int64, err error) {
	if p != m.partition || len(m.hdrs) == 0 {
		return 0, 0, nil
	}
	return m.hdrs[0].baseOffset, m.hdrs[len(m.hdrs)-1].lastOffset + 1, nil
}

// Batches implements Source. The batch an iterator returns is valid until its next Next.
func (m *Packed) Batches(p int32, from int64) (Iterator, error) {
	if p != m.partition {
		return &packedIter{i: -1}, nil
	}
	i := sort.Search(len(m.hdrs), func(i int) bool { return m.hdrs[i].lastOffset >= from })
	return &packedIter{m: m, hdrs: m.hdrs[i:], i: -1}, nil
}

type packedIter struct {
	m     *Packed
	hdrs  []packedHeader
	i     int
	batch Batch
	err   error
}

func (it *packedIter) Next() bool {
	if it.err != nil || it.i+1 >= len(it.hdrs) {
		return false
	}
	it.i++
	h := &it.hdrs[it.i]
	recs := it.batch.Records
	it.batch = Batch{
		Partition: it.m.partition, BaseOffset: h.baseOffset, LastOffset: h.lastOffset, PartitionLeaderEpoch: h.partitionLeaderEpoch,
		Magic: h.magic, Attributes: h.attributes, BaseTimestamp: h.baseTimestamp, MaxTimestamp: h.maxTimestamp,
		ProducerID: h.producerID, ProducerEpoch: h.producerEpoch, BaseSequence: h.baseSequence, NumRecords: h.numRecords, CRC: h.crc,
	}
	it.batch.Records, it.err = DecodeRecordsV2(recs, it.m.data[h.start:h.end], int(h.numRecords), h.baseOffset, h.baseTimestamp)
	if it.err != nil {
		it.err = fmt.Errorf("eventlog: packed batch at offset %d: %w", h.baseOffset, it.err)
		return false
	}
	return true
}

func (it *packedIter) Batch() *Batch { return &it.batch }
func (it *packedIter) Err() error    { return it.err }
func (it *packedIter) Close() error  { return nil }
