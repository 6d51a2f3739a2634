// Package testgen builds Kafka-shaped batches and segment directories for eventlog's tests and
// benchmarks. Everything is deterministic (seeded), so failures reproduce.
package testgen

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// Batch returns a v2 batch of n records starting at base, with the given attributes. Records
// look like offset commits (a ~40-byte key, a ~30-byte value); every 7th value is null (a
// tombstone) and every 11th is empty, and the 5th record carries headers, so null-vs-empty and
// headers are exercised everywhere.
func Batch(p int32, base int64, n int, attrs eventlog.Attributes) *eventlog.Batch {
	b := &eventlog.Batch{
		Partition:            p,
		BaseOffset:           base,
		LastOffset:           base + int64(max(n, 1)) - 1,
		PartitionLeaderEpoch: 7,
		Magic:                2,
		Attributes:           attrs,
		BaseTimestamp:        1_700_000_000_000 + base,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		BaseSequence:         -1,
		NumRecords:           int32(n),
	}
	for i := 0; i < n; i++ {
		off := base + int64(i)
		r := eventlog.Record{
			Offset:    off,
			Timestamp: b.BaseTimestamp + int64(i),
			Key:       fmt.Appendf(nil, "\x00\x01\x00\x05group\x00\x05topic-%04d\x00\x00\x00%02d", off%1000, off%50),
			Value:     fmt.Appendf(nil, "\x00\x03%016x\x00\x00\x00\x00meta%d", off*31, off%10),
		}
		switch {
		case off%7 == 3:
			r.Value = nil
		case off%11 == 5:
			r.Value = []byte{}
		}
		if off%13 == 4 {
			r.Key = nil
		}
		if i == 4 {
			r.Headers = []eventlog.Header{{Key: []byte("h1"), Value: []byte("v1")}, {Key: []byte("h2"), Value: nil}, {Key: []byte("h3"), Value: []byte{}}}
		}
		b.Records = append(b.Records, r)
		b.MaxTimestamp = r.Timestamp
	}
	return b
}

// WritePartition writes batches into dir (a `__consumer_offsets-N` directory) with a segment
// size small enough to roll files when roll is set.
func WritePartition(dir string, batches []*eventlog.Batch, opts segment.WriterOptions) error {
	w, err := segment.NewWriter(dir, opts)
	if err != nil {
		return err
	}
	for _, b := range batches {
		if _, err := w.Write(b); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// Dump writes a log directory under root with the given partitions, each holding about
// bytesPerPartition bytes of uncompressed batches of recordsPerBatch records, in 100 MiB
// segment files. It returns the number of records and batches written.
func Dump(root string, partitions int, bytesPerPartition int64, recordsPerBatch int, codec eventlog.Codec) (records, batches int64, err error) {
	rng := rand.New(rand.NewPCG(1, 2))
	for p := 0; p < partitions; p++ {
		w, err := segment.NewWriter(filepath.Join(root, fmt.Sprintf("__consumer_offsets-%d", p)), segment.WriterOptions{})
		if err != nil {
			return 0, 0, err
		}
		var written int64
		off := int64(0)
		for written < bytesPerPartition {
			b := Batch(int32(p), off, recordsPerBatch, eventlog.Attributes(codec))
			if rng.IntN(10) == 0 { // a transactional batch now and then, like real coordinator logs
				b.Attributes |= eventlog.AttrTransactional
				b.ProducerID, b.ProducerEpoch = 1000+int64(p), 3
			}
			o, err := w.Write(b)
			if err != nil {
				w.Close()
				return 0, 0, err
			}
			written += o.Size
			records += int64(len(b.Records))
			batches++
			off = b.LastOffset + 1 + int64(rng.IntN(3)) // offset gaps, as compaction leaves
		}
		if err := w.Close(); err != nil {
			return 0, 0, err
		}
	}
	return records, batches, nil
}
