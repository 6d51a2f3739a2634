package query_test

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/query"
)

// commitLog is an offset-commit log in memory: 200 groups committing 16 partitions of 4 topics,
// 8 records per batch, one millisecond per batch (replay's benchmarks use the same shape).
func commitLog(b *testing.B, records int) *eventlog.Memory {
	b.Helper()
	var batches []*eventlog.Batch
	ts := int64(1_760_000_000_000)
	for n := 0; n < records; n += 8 {
		bt := &eventlog.Batch{BaseOffset: int64(n), Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: ts, MaxTimestamp: ts}
		for i := n; i < n+8 && i < records; i++ {
			v := recordcodec.NewOffsetCommitValue()
			v.Offset, v.CommitTimestamp = int64(i), ts
			k, val, err := recordcodec.Encode(recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit,
				Group: "consumer-group-" + strconv.Itoa(i/8%200), Topic: "orders.events." + strconv.Itoa(i/1600%4), Partition: int32(i % 16)}, Value: v})
			if err != nil {
				b.Fatal(err)
			}
			bt.Records = append(bt.Records, eventlog.Record{Offset: int64(i), Timestamp: ts, Key: k, Value: val})
		}
		bt.LastOffset, bt.NumRecords = int64(n+len(bt.Records)-1), int32(len(bt.Records))
		batches = append(batches, bt)
		ts++
	}
	m, err := eventlog.NewMemory(batches...)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

const benchRecords = 1_000_000

// BenchmarkResolveTime is the scan --at-time adds before the replay: a time in the middle of a
// log of 1 M records (the scan stops at the cut).
func BenchmarkResolveTime(b *testing.B) {
	src := commitLog(b, benchRecords)
	at := query.AtTimeMillis(1_760_000_000_000 + benchRecords/8/2)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := query.Resolve(context.Background(), src, []int32{0}, at); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRecords/2)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkReplayWithActivity and BenchmarkReplayWithoutActivity compare a full replay of 1 M
// records with and without the observer `replay groups` runs (last record per group,
// deletions).
func BenchmarkReplayWithActivity(b *testing.B)    { benchActivity(b, true) }
func BenchmarkReplayWithoutActivity(b *testing.B) { benchActivity(b, false) }

func benchActivity(b *testing.B, observe bool) {
	src := commitLog(b, benchRecords)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := replay.Cut{Partition: 0, Until: math.MaxInt64}
		if observe {
			c.Observer = query.NewActivity()
		}
		if _, err := replay.ReplayCuts(context.Background(), src, []replay.Cut{c}, replay.Options{}, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRecords)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
