package replay

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/recordcodec"
)

// benchSource serves batches from memory, so that a benchmark measures replay alone.
type benchSource struct{ batches []*eventlog.Batch }

func (m *benchSource) Partitions() ([]int32, error) { return []int32{0}, nil }
func (m *benchSource) Offsets(int32) (int64, int64, error) {
	if len(m.batches) == 0 {
		return 0, 0, nil
	}
	return m.batches[0].BaseOffset, m.batches[len(m.batches)-1].NextOffset(), nil
}
func (m *benchSource) Batches(_ int32, from int64) (eventlog.Iterator, error) {
	i := 0
	for i < len(m.batches) && m.batches[i].LastOffset < from {
		i++
	}
	return &benchIter{b: m.batches[i:], i: -1}, nil
}

type benchIter struct {
	b []*eventlog.Batch
	i int
}

func (it *benchIter) Next() bool             { it.i++; return it.i < len(it.b) }
func (it *benchIter) Batch() *eventlog.Batch { return it.b[it.i] }
func (it *benchIter) Err() error             { return nil }
func (it *benchIter) Close() error           { return nil }

// logBuilder appends coordinator records as Kafka batches. The records' bytes lie one after
// the other in large buffers, as a segment reader's batch buffer holds them: a test or
// benchmark measures replay, not the cache misses of bytes scattered over the heap
// (benchmarks hold the log packed, benchReplay).
type logBuilder struct {
	batches []*eventlog.Batch
	next    int64
	ts      int64
	bytes   int64
	arena   []byte
}

// keep copies b into the arena; nil stays nil.
func (lb *logBuilder) keep(b []byte) []byte {
	if b == nil {
		return nil
	}
	if cap(lb.arena)-len(lb.arena) < len(b) {
		lb.arena = make([]byte, 0, max(1<<20, len(b)))
	}
	start := len(lb.arena)
	lb.arena = append(lb.arena, b...)
	return lb.arena[start:len(lb.arena):len(lb.arena)]
}

func (lb *logBuilder) batch(recs ...recordcodec.Record) {
	b := &eventlog.Batch{BaseOffset: lb.next, Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: lb.ts, MaxTimestamp: lb.ts}
	b.Records = make([]eventlog.Record, 0, len(recs))
	for _, r := range recs {
		k, v, err := recordcodec.Encode(r)
		if err != nil {
			panic(err)
		}
		k, v = lb.keep(k), lb.keep(v)
		b.Records = append(b.Records, eventlog.Record{Offset: lb.next, Timestamp: lb.ts, Key: k, Value: v})
		lb.bytes += int64(len(k) + len(v))
		lb.next++
	}
	b.LastOffset, b.NumRecords = lb.next-1, int32(len(recs))
	lb.ts++
	lb.batches = append(lb.batches, b)
}

// offsetCommitLog is what most real partitions look like: groups committing offsets for their
// partitions, 8 per batch, over and over.
func offsetCommitLog(records int) *logBuilder {
	lb := &logBuilder{ts: 1_760_000_000_000}
	const groups, topics, partitions = 200, 4, 16
	var recs []recordcodec.Record
	for n := 0; n < records; n++ {
		g := n / 8 % groups
		t, p := n/8/groups%topics, n%partitions
		v := recordcodec.NewOffsetCommitValue()
		v.Offset, v.LeaderEpoch, v.CommitTimestamp = int64(n), 3, lb.ts
		recs = append(recs, recordcodec.Record{
			Key:   recordcodec.Key{Type: recordcodec.OffsetCommit, Group: "consumer-group-" + strconv.Itoa(g), Topic: "orders.events." + strconv.Itoa(t), Partition: int32(p)},
			Value: v,
		})
		if len(recs) == 8 {
			lb.batch(recs...)
			recs = recs[:0]
		}
	}
	if len(recs) > 0 {
		lb.batch(recs...)
	}
	return lb
}

// streamsLog churns streams groups: each heartbeat round writes member metadata, the group
// epoch, a target assignment for every member and the heartbeating member's current assignment,
// as Kafka's streams heartbeat does.
func streamsLog(records int) *logBuilder {
	lb := &logBuilder{ts: 1_760_000_000_000}
	const groups, members = 20, 6
	epoch := map[int]int32{}
	for n := 0; lb.next < int64(records); n++ {
		g := n % groups
		gid := "streams-app-" + strconv.Itoa(g)
		epoch[g]++
		e := epoch[g]
		m := fmt.Sprintf("member-%d", n%members)
		var recs []recordcodec.Record
		mm := recordcodec.NewStreamsGroupMemberMetadataValue()
		mm.ClientId, mm.ClientHost, mm.ProcessId, mm.TopologyEpoch, mm.RebalanceTimeoutMs = "app-"+m, "/10.0.0.1", "process-"+m, 1, 300000
		recs = append(recs, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupMemberMetadata, Group: gid, Member: m}, Value: mm})
		if e == 1 {
			topo := recordcodec.NewStreamsGroupTopologyValue()
			topo.Epoch = 1
			topo.Subtopologies = []recordcodec.Subtopology{{SubtopologyId: "0", SourceTopics: []string{"input"}}, {SubtopologyId: "1", SourceTopics: []string{"app-repartition"}}}
			recs = append(recs, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupTopology, Group: gid}, Value: topo})
		}
		gm := recordcodec.NewStreamsGroupMetadataValue()
		gm.Epoch, gm.MetadataHash, gm.ValidatedTopologyEpoch = e, 42, 1
		recs = append(recs, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupMetadata, Group: gid}, Value: gm})
		for i := 0; i < members; i++ {
			tm := recordcodec.NewStreamsGroupTargetAssignmentMemberValue()
			tm.ActiveTasks = []recordcodec.TaskIds{{SubtopologyId: "0", Partitions: []int32{int32(i), int32(i + members)}}, {SubtopologyId: "1", Partitions: []int32{int32(i)}}}
			tm.StandbyTasks = []recordcodec.TaskIds{{SubtopologyId: "1", Partitions: []int32{int32((i + 1) % members)}}}
			recs = append(recs, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupTargetAssignmentMember, Group: gid, Member: fmt.Sprintf("member-%d", i)}, Value: tm})
		}
		ta := recordcodec.NewStreamsGroupTargetAssignmentMetadataValue()
		ta.AssignmentEpoch = e
		recs = append(recs, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupTargetAssignmentMetadata, Group: gid}, Value: ta})
		cm := recordcodec.NewStreamsGroupCurrentMemberAssignmentValue()
		cm.MemberEpoch, cm.PreviousMemberEpoch, cm.State = e, e-1, 1
		cm.ActiveTasks = []recordcodec.TaskIdsWithEpochs{{SubtopologyId: "0", Partitions: []int32{0, 6}, AssignmentEpochs: []int32{e, e}}}
		recs = append(recs, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.StreamsGroupCurrentMemberAssignment, Group: gid, Member: m}, Value: cm})
		lb.batch(recs...)
	}
	return lb
}

// benchReplay replays lb from memory into a new engine per iteration, on one goroutine. The
// log is held packed (eventlog.Packed: batch headers and record bytes in one buffer, framed
// again per read as a segment reader does), so that the collector has no retained batches of
// the benchmark's to mark.
func benchReplay(b *testing.B, lb *logBuilder) {
	src := eventlog.NewPacked(0)
	for _, bt := range lb.batches {
		if err := src.Append(bt); err != nil {
			b.Fatal(err)
		}
	}
	lb.batches, lb.arena = nil, nil
	b.SetBytes(lb.bytes)
	b.ReportAllocs()
	runtime.GC() // the log's construction leaves garbage: collect it outside the timed loop
	cpu := startCPUClock()
	b.ResetTimer()
	for b.Loop() {
		e := New(0, Options{})
		if err := e.Run(context.Background(), src, math.MaxInt64); err != nil {
			b.Fatal(err)
		}
	}
	reportRecordRates(b, src.Records(), cpu)
}

// cpuClock is the CPU time the process used (user and system, every thread), from
// getrusage(2).
type cpuClock time.Duration

func startCPUClock() cpuClock {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return cpuClock(time.Duration(ru.Utime.Nano() + ru.Stime.Nano()))
}

// reportRecordRates reports records/s of wall time and records/cpu-s: records per second of
// CPU time the process used meanwhile (every thread: the collector's included). On a machine
// shared with other work the second is the steadier one: a benchmark that waits for a core
// loses wall time but no CPU time. With -cpu 1 both count one core.
func reportRecordRates(b *testing.B, records int64, start cpuClock) {
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if end := startCPUClock(); start >= 0 && end > start {
		b.ReportMetric(float64(records)*float64(b.N)/time.Duration(end-start).Seconds(), "records/cpu-s")
	}
}

// BenchmarkReplayOffsetCommits replays 1M offset commits from memory on one core.
func BenchmarkReplayOffsetCommits(b *testing.B) { benchReplay(b, offsetCommitLog(1_000_000)) }

// BenchmarkReplayStreams replays a streams-heavy log of 500k records from memory: 20 groups of
// 6 members with small task lists (streamsLog). The shape of fixtures/kafka/loadtime.sh
// --shape streams (2,500 groups, 12 members, two subtopologies over 32 partitions, one
// standby) is fixtures' BenchmarkReplayStreamsLoadtime, which runs the coordinator to write it.
func BenchmarkReplayStreams(b *testing.B) { benchReplay(b, streamsLog(500_000)) }

// BenchmarkReplaySegments writes an offset-commit-heavy dump of COORDLOG_BENCH_MB megabytes
// (default 64) to segment files and replays it from disk: reading, CRC, decoding and replay.
func BenchmarkReplaySegments(b *testing.B) {
	mb := 64
	if s := os.Getenv("COORDLOG_BENCH_MB"); s != "" {
		mb, _ = strconv.Atoi(s)
	}
	// About 60 bytes of key and value per commit: size the log in records.
	lb := offsetCommitLog(mb << 20 / 60)
	dir := filepath.Join(b.TempDir(), "__consumer_offsets-0")
	w, err := segment.NewWriter(dir, segment.WriterOptions{SegmentBytes: 100 << 20})
	if err != nil {
		b.Fatal(err)
	}
	for _, bt := range lb.batches {
		if _, err := w.Write(bt); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	var disk int64
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, f := range files {
		st, _ := os.Stat(f)
		disk += st.Size()
	}
	b.SetBytes(disk)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		src, err := segment.Open(dir, segment.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ReplaySource(context.Background(), src, nil, math.MaxInt64, Options{}, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lb.next)*float64(b.N)/time.Since(start).Seconds(), "records/s")
}

// BenchmarkReplayLog replays the segment files of the __consumer_offsets-N directory
// COORDLOG_BENCH_LOG (for example one written by `replay simulate --segments`, or by a real
// broker) from memory on one core: the batches are read once and every iteration replays them
// into a new engine (benchReplay).
func BenchmarkReplayLog(b *testing.B) {
	dir := os.Getenv("COORDLOG_BENCH_LOG")
	if dir == "" {
		b.Skip("COORDLOG_BENCH_LOG names no __consumer_offsets-N directory")
	}
	src, err := segment.Open(dir, segment.Options{})
	if err != nil {
		b.Fatal(err)
	}
	parts, err := src.Partitions()
	if err != nil || len(parts) != 1 {
		b.Fatalf("%s: want one partition, got %v (%v)", dir, parts, err)
	}
	it, err := src.Batches(parts[0], 0)
	if err != nil {
		b.Fatal(err)
	}
	lb := &logBuilder{}
	for it.Next() {
		c := it.Batch().Clone()
		c.Partition = 0
		for i := range c.Records {
			lb.bytes += int64(len(c.Records[i].Key) + len(c.Records[i].Value))
		}
		lb.next += int64(len(c.Records))
		lb.batches = append(lb.batches, c)
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
	it.Close()
	benchReplay(b, lb)
}

// BenchmarkReplayLogDir writes a log directory of COORDLOG_BENCH_PARTITIONS (default 50)
// __consumer_offsets-N partitions, each COORDLOG_BENCH_RECORDS records (default 40,000: two
// thirds offset commits, a third streams group records), as segment files, and replays the
// whole directory with ReplaySource on one core (one worker, GOMAXPROCS 1) and on two (two
// workers): reading, CRC checks, decoding and replay of each partition on its worker. COORDLOG_BENCH_KEEP=DIR writes the directory there
// and keeps it (to time the CLI on it).
func BenchmarkReplayLogDir(b *testing.B) {
	parts, records := 50, 40_000
	if s := os.Getenv("COORDLOG_BENCH_PARTITIONS"); s != "" {
		parts, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("COORDLOG_BENCH_RECORDS"); s != "" {
		records, _ = strconv.Atoi(s)
	}
	dir := os.Getenv("COORDLOG_BENCH_KEEP")
	if dir == "" {
		dir = b.TempDir()
	}
	var total, disk int64
	for p := range parts {
		pdir := filepath.Join(dir, fmt.Sprintf("__consumer_offsets-%d", p))
		if _, err := os.Stat(pdir); err == nil {
			b.Fatalf("%s exists: give COORDLOG_BENCH_KEEP a new directory", pdir)
		}
		w, err := segment.NewWriter(pdir, segment.WriterOptions{SegmentBytes: 100 << 20})
		if err != nil {
			b.Fatal(err)
		}
		var next int64
		for _, lb := range []*logBuilder{offsetCommitLog(records * 2 / 3), streamsLog(records / 3)} {
			for _, bt := range lb.batches {
				c := *bt
				c.Partition, c.BaseOffset, c.LastOffset = int32(p), bt.BaseOffset+next, bt.LastOffset+next
				c.Records = append([]eventlog.Record(nil), bt.Records...)
				for i := range c.Records {
					c.Records[i].Offset += next
				}
				if _, err := w.Write(&c); err != nil {
					b.Fatal(err)
				}
			}
			next += lb.next
		}
		total += next
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(pdir, "*.log"))
		for _, f := range files {
			st, _ := os.Stat(f)
			disk += st.Size()
		}
	}
	for _, workers := range []int{1, 2} {
		// One core is one worker with GOMAXPROCS 1: on more, a lone worker reads ahead on a
		// spare core (Options.ReadAhead) and would not be one core.
		b.Run(fmt.Sprintf("cores=%d", workers), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
			b.SetBytes(disk)
			b.ReportAllocs()
			runtime.GC()
			cpu := startCPUClock()
			b.ResetTimer()
			for b.Loop() {
				src, err := segment.Open(dir, segment.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ReplaySource(context.Background(), src, nil, math.MaxInt64, Options{}, workers); err != nil {
					b.Fatal(err)
				}
			}
			reportRecordRates(b, total, cpu)
		})
	}
}
