package coordinator

import (
	"fmt"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/recordcodec"
)

// MaxBatchBytes is the default max.message.bytes of __consumer_offsets (1 MiB): one heartbeat's
// records must fit one batch, as Kafka appends them atomically.
const MaxBatchBytes = 1 << 20

// ErrBatchTooLarge is returned by NewBatch when the records do not fit one batch; Kafka fails
// such a write with UNKNOWN_SERVER_ERROR and rolls it back.
var ErrBatchTooLarge = fmt.Errorf("coordinator: records exceed %d bytes", MaxBatchBytes)

// NewBatch encodes records as one uncompressed, non-transactional v2 batch at baseOffset
// with timestamp ts, ready for pebblelog.Log.Append and replay.Engine.Apply. Every decision of a coordinator
// is one such batch: Kafka appends a write operation's records atomically.
func NewBatch(partition int32, baseOffset, ts int64, records []recordcodec.Record) (*eventlog.Batch, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("coordinator: empty batch")
	}
	b := &eventlog.Batch{
		Partition: partition, BaseOffset: baseOffset, LastOffset: baseOffset + int64(len(records)) - 1,
		Magic: 2, BaseTimestamp: ts, MaxTimestamp: ts, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		NumRecords: int32(len(records)), PartitionLeaderEpoch: -1,
	}
	size := 61
	for i, r := range records {
		k, v, err := recordcodec.Encode(r)
		if err != nil {
			return nil, fmt.Errorf("coordinator: encode record %d (%v): %w", i, r.Key.Type, err)
		}
		size += len(k) + len(v) + 16
		b.Records = append(b.Records, eventlog.Record{Offset: baseOffset + int64(i), Timestamp: ts, Key: k, Value: v})
	}
	if size > MaxBatchBytes {
		return nil, ErrBatchTooLarge
	}
	return b, nil
}
