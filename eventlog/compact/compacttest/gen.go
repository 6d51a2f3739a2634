package compacttest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/recordcodec"
)

// Config shapes a generated partition.
type Config struct {
	Seed      uint64
	Partition int32
	// Keys is the number of distinct offset-commit keys (group, topic, partition); records pick
	// them at random, so Records/Keys is about the number of writes per key.
	Keys int
	// Groups is the number of groups the keys spread over (also the classic group ids).
	Groups int
	// Records (or TargetBytes, when set) is the size of the log.
	Records     int
	TargetBytes int64
	// BatchRecords is the maximum number of records of a data batch.
	BatchRecords int
	// Tombstones is the probability of an offset tombstone; GroupRecords of a group metadata
	// record (value, or a tombstone with probability Tombstones).
	Tombstones   float64
	GroupRecords float64
	// Txn is the probability that a batch belongs to a transaction; Abort the probability that
	// a transaction aborts; EmptyTxn the probability of a marker without data; OpenAtEnd the
	// number of transactions still open at the end.
	Txn, Abort, EmptyTxn float64
	OpenAtEnd            int
	// Horizons is the probability that a batch without group tombstones already carries a
	// delete horizon; half of them have passed at Now, half not.
	Horizons float64
	// Now (ms) is the cleaning time the test will use: horizons are placed around it.
	Now   int64
	Codec eventlog.Codec
	// Metadata is the length of the commit metadata string (record size knob).
	Metadata int
}

// Heavy is a small, dense mix of everything.
func Heavy(seed uint64, now int64) Config {
	return Config{Seed: seed, Keys: 300, Groups: 12, Records: 20000, BatchRecords: 8, Tombstones: 0.08,
		GroupRecords: 0.03, Txn: 0.15, Abort: 0.35, EmptyTxn: 0.05, OpenAtEnd: 2, Horizons: 0.1, Now: now}
}

// Bench is the benchmark shape: offset commits only, 10 writes per key (90% superseded).
func Bench(targetBytes int64) Config {
	c := Config{Seed: 7, Groups: 1000, TargetBytes: targetBytes, BatchRecords: 16, Tombstones: 0.01,
		Txn: 0.02, Abort: 0.2, Now: 1_800_000_000_000, Metadata: 8}
	c.Records = int(targetBytes / 72)
	c.Keys = max(c.Records/10, 1)
	return c
}

type txn struct {
	pid      int64
	epoch    int16
	hasData  bool
	abort    bool
	seqStart int
}

// Generate calls fn with each batch of the partition in offset order. The batch is reused.
func Generate(c Config, fn func(*eventlog.Batch) error) error {
	rng := rand.New(rand.NewPCG(c.Seed, c.Seed^0x5eed))
	if c.BatchRecords <= 0 {
		c.BatchRecords = 8
	}
	ts := c.Now - 10*24*3600*1000 // the log was written over the days before Now
	off := int64(0)
	var written int64
	var records int
	var pids []*txn // open transactions, in opening order (deterministic, unlike a map)
	nextPid := int64(1000)
	var b eventlog.Batch
	var keyBuf, valBuf []byte
	enc := segment.NewEncoder(segment.EncodeOptions{})
	defer enc.Close()
	var raw []byte
	done := func() bool {
		if c.TargetBytes > 0 {
			return written >= c.TargetBytes
		}
		return records >= c.Records
	}
	emit := func() error {
		b.NumRecords = int32(len(b.Records))
		if c.TargetBytes > 0 {
			var err error
			if raw, err = enc.AppendBatch(raw[:0], &b); err != nil {
				return err
			}
			written += int64(len(raw))
		}
		records += len(b.Records)
		off = b.LastOffset + 1 + int64(rng.IntN(2)) // gaps, as earlier compactions leave
		ts += int64(rng.IntN(50))
		return fn(&b)
	}
	start := func(attrs eventlog.Attributes, pid int64, epoch int16) {
		b = eventlog.Batch{Partition: c.Partition, BaseOffset: off, PartitionLeaderEpoch: 3, Magic: 2,
			Attributes: attrs | eventlog.Attributes(c.Codec), BaseTimestamp: ts, MaxTimestamp: ts,
			ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, Records: b.Records[:0]}
		if pid >= 0 {
			b.BaseSequence = 0
		}
	}
	marker := func(t *txn) error {
		start(eventlog.AttrTransactional|eventlog.AttrControl, t.pid, t.epoch)
		b.Attributes = b.Attributes.WithCodec(eventlog.CodecNone)
		typ := recordcodec.ControlCommit
		if t.abort {
			typ = recordcodec.ControlAbort
		}
		key := recordcodec.ControlKey{Type: typ}.AppendTo(nil)
		val := recordcodec.EndTxnMarker{CoordinatorEpoch: 5}.AppendTo(nil)
		b.Records = append(b.Records, eventlog.Record{Offset: off, Timestamp: ts, Key: key, Value: val})
		b.LastOffset = off
		if !t.hasData && rng.Float64() < 0.5 {
			h := c.Now - 3600*1000 // an earlier pass stamped it; now past
			if rng.IntN(2) == 0 {
				h = c.Now + 3600*1000
			}
			b.Attributes |= eventlog.AttrDeleteHorizon
			b.BaseTimestamp = h
		}
		for i, x := range pids {
			if x == t {
				pids = append(pids[:i], pids[i+1:]...)
				break
			}
		}
		return emit()
	}
	for !done() {
		// End a transaction now and then.
		if len(pids) > 0 && rng.Float64() < 0.3 {
			if err := marker(pids[rng.IntN(len(pids))]); err != nil {
				return err
			}
		}
		if rng.Float64() < c.EmptyTxn {
			nextPid++
			if err := marker(&txn{pid: nextPid, epoch: 1, abort: rng.Float64() < c.Abort}); err != nil {
				return err
			}
			continue
		}
		var t *txn
		if rng.Float64() < c.Txn {
			if len(pids) > 0 && rng.IntN(2) == 0 {
				t = pids[rng.IntN(len(pids))]
			} else {
				nextPid++
				t = &txn{pid: nextPid, epoch: int16(1 + rng.IntN(3)), abort: rng.Float64() < c.Abort}
				pids = append(pids, t)
			}
			t.hasData = true
			start(eventlog.AttrTransactional, t.pid, t.epoch)
			b.BaseSequence = int32(t.seqStart)
		} else {
			start(0, -1, -1)
		}
		n := 1 + rng.IntN(c.BatchRecords)
		groupTombstone := false
		for i := 0; i < n; i++ {
			o := off + int64(i)
			rts := ts + int64(i)
			k := rng.IntN(max(c.Keys, 1))
			group := fmt.Sprintf("group-%d", k%max(c.Groups, 1))
			var r eventlog.Record
			if t == nil && rng.Float64() < c.GroupRecords {
				keyBuf = groupKey(keyBuf[:0], group)
				r = eventlog.Record{Offset: o, Timestamp: rts, Key: append([]byte(nil), keyBuf...)}
				if rng.Float64() < c.Tombstones*3 {
					groupTombstone = true
				} else {
					r.Value = groupValue(int32(o), rts)
				}
			} else {
				keyBuf = offsetKey(keyBuf[:0], group, fmt.Sprintf("topic-%d", (k/max(c.Groups, 1))%7), int32(k/max(c.Groups, 1)/7))
				r = eventlog.Record{Offset: o, Timestamp: rts, Key: append([]byte(nil), keyBuf...)}
				// Kafka's TxnOffsetCommit never writes tombstones (a tombstone applies at once,
				// outside the transaction), so transactional batches carry values only.
				if t != nil || rng.Float64() >= c.Tombstones {
					valBuf = offsetValue(valBuf[:0], o*3, rts, c.Metadata)
					r.Value = append([]byte(nil), valBuf...)
				}
			}
			b.Records = append(b.Records, r)
			b.MaxTimestamp = rts
		}
		b.LastOffset = off + int64(n) - 1
		if t != nil {
			t.seqStart += n
		}
		if !groupTombstone && t == nil && rng.Float64() < c.Horizons {
			h := c.Now - 3600*1000
			if rng.IntN(2) == 0 {
				h = c.Now + 3600*1000
			}
			b.Attributes |= eventlog.AttrDeleteHorizon
			b.BaseTimestamp = h
		}
		if err := emit(); err != nil {
			return err
		}
	}
	// Close all but OpenAtEnd transactions (and open new ones to reach it).
	open := 0
	for len(pids) > c.OpenAtEnd {
		if err := marker(pids[len(pids)-1]); err != nil {
			return err
		}
	}
	open = len(pids)
	for open < c.OpenAtEnd {
		nextPid++
		start(eventlog.AttrTransactional, nextPid, 1)
		keyBuf = offsetKey(keyBuf[:0], "group-0", "topic-0", int32(open))
		b.Records = append(b.Records, eventlog.Record{Offset: off, Timestamp: ts, Key: append([]byte(nil), keyBuf...),
			Value: offsetValue(nil, 42, ts, c.Metadata)})
		b.LastOffset = off
		if err := emit(); err != nil {
			return err
		}
		open++
	}
	// A few plain commits after the open transactions: they must not supersede anything
	// below the last stable offset.
	if c.OpenAtEnd > 0 {
		start(0, -1, -1)
		for i := 0; i < 3; i++ {
			keyBuf = offsetKey(keyBuf[:0], "group-0", "topic-0", int32(i))
			b.Records = append(b.Records, eventlog.Record{Offset: off + int64(i), Timestamp: ts,
				Key: append([]byte(nil), keyBuf...), Value: offsetValue(nil, int64(i), ts, c.Metadata)})
		}
		b.LastOffset = off + 2
		if err := emit(); err != nil {
			return err
		}
	}
	return nil
}

// Batches returns the generated batches (small configurations only).
func Batches(c Config) []*eventlog.Batch {
	var out []*eventlog.Batch
	Generate(c, func(b *eventlog.Batch) error {
		out = append(out, b.Clone())
		return nil
	})
	return out
}

// WritePartition writes the partition as Kafka segments into dir/__consumer_offsets-N and
// returns the bytes written.
func WritePartition(dir string, c Config, segmentBytes int64) (int64, error) {
	w, err := segment.NewWriter(filepath.Join(dir, fmt.Sprintf("__consumer_offsets-%d", c.Partition)), segment.WriterOptions{SegmentBytes: segmentBytes})
	if err != nil {
		return 0, err
	}
	var n int64
	err = Generate(c, func(b *eventlog.Batch) error {
		o, err := w.Write(b)
		n += o.Size
		return err
	})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func appendString(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// offsetKey is an OffsetCommitKey (type 1).
func offsetKey(dst []byte, group, topic string, partition int32) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 1)
	dst = appendString(dst, group)
	dst = appendString(dst, topic)
	return binary.BigEndian.AppendUint32(dst, uint32(partition))
}

// offsetValue is an OffsetCommitValue v3: offset, leader epoch, metadata, commit timestamp.
func offsetValue(dst []byte, offset, ts int64, metaLen int) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 3)
	dst = binary.BigEndian.AppendUint64(dst, uint64(offset))
	dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)
	meta := fmt.Sprintf("m%0*d", max(metaLen-1, 0), offset%1000)
	dst = appendString(dst, meta)
	return binary.BigEndian.AppendUint64(dst, uint64(ts))
}

// groupKey is a GroupMetadataKey (type 2).
func groupKey(dst []byte, group string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 2)
	return appendString(dst, group)
}

// groupValue is an empty classic group (GroupMetadataValue v3, protocol type "consumer").
func groupValue(generation int32, ts int64) []byte {
	v, err := recordcodec.EncodeValue(&recordcodec.GroupMetadataValue{Version: 3, ProtocolType: "consumer", Generation: generation, CurrentStateTimestamp: ts})
	if err != nil {
		panic(err)
	}
	return v
}
