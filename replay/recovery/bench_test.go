package recovery

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/snapshot"
)

// The restart benchmarks run on a generated Pebble log whose final state has
// COORDLOG_BENCH_GROUPS groups (default 100,000) with COORDLOG_BENCH_MEMBERS members
// (default 10) and COORDLOG_BENCH_OFFSETS committed offsets (default 50) each: 100,000 groups,
// 1,000,000 members and 5,000,000 offsets. COORDLOG_BENCH_CHURN (default 20 per group) adds
// history: offset overwrites, member churn, transactions, at most COORDLOG_BENCH_OPEN_TXNS
// (default 16) open at once (0: unbounded, the shape of the first measurements, which left
// thousands of transactions open for the whole log and committed them all at its end). COORDLOG_BENCH_DIR keeps the
// generated database between runs (it is rebuilt when the sizes change). For a quick run:
//
//	COORDLOG_BENCH_GROUPS=2000 go test ./replay/recovery -run '^$' -bench 'Restart|SnapshotCreate' -benchtime 1x

func benchEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

type benchLog struct {
	dir     string
	log     *pebblelog.Log
	logSize int64 // bytes of the Pebble database on disk
	records int64
	spec    genSpec
}

var (
	benchOnce sync.Once
	benchData *benchLog
	benchErr  error
)

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// openBenchLog generates (or reuses) the benchmark log. It is shared by every benchmark of
// the process and never closed: the process ends with the benchmarks.
func openBenchLog(b *testing.B) *benchLog {
	b.Helper()
	benchOnce.Do(func() {
		groups := benchEnv("COORDLOG_BENCH_GROUPS", 100_000)
		spec := genSpec{
			Seed: 42, Groups: groups,
			Members:     benchEnv("COORDLOG_BENCH_MEMBERS", 10),
			Offsets:     benchEnv("COORDLOG_BENCH_OFFSETS", 50),
			Churn:       groups * benchEnv("COORDLOG_BENCH_CHURN", 20),
			MaxOpenTxns: benchEnv("COORDLOG_BENCH_OPEN_TXNS", 16),
		}
		root := os.Getenv("COORDLOG_BENCH_DIR")
		if root == "" {
			root, benchErr = os.MkdirTemp("", "coordlog-restart-bench-")
			if benchErr != nil {
				return
			}
		}
		dir := filepath.Join(root, "g"+strconv.Itoa(spec.Groups)+"-m"+strconv.Itoa(spec.Members)+"-o"+strconv.Itoa(spec.Offsets)+"-c"+strconv.Itoa(spec.Churn)+"-t"+strconv.Itoa(spec.MaxOpenTxns))
		done := filepath.Join(dir, "COMPLETE")
		_, statErr := os.Stat(done)
		if statErr != nil {
			_ = os.RemoveAll(dir)
		}
		l, err := pebblelog.Open(filepath.Join(dir, "db"), nil)
		if err != nil {
			benchErr = err
			return
		}
		if statErr != nil {
			b.Logf("generating %+v into %s", spec, dir)
			app := l.NewAppender()
			n := 0
			err = generate(spec, func(bt *eventlog.Batch) error {
				if err := app.Add(bt); err != nil {
					return err
				}
				if n++; n%4096 == 0 {
					if err := app.Commit(); err != nil {
						return err
					}
					app.Close()
					app = l.NewAppender()
				}
				return nil
			})
			if err == nil {
				err = app.Commit()
			}
			app.Close()
			if err == nil {
				err = os.WriteFile(done, nil, 0o644)
			}
			if err != nil {
				benchErr = err
				return
			}
		}
		bl := &benchLog{dir: dir, log: l, logSize: dirSize(filepath.Join(dir, "db")), spec: spec}
		e := replay.New(0, replay.Options{})
		if benchErr = e.Run(context.Background(), l, math.MaxInt64); benchErr != nil {
			return
		}
		st := e.Stats()
		bl.records = st.Records + st.Markers
		b.Logf("log: %d records, %.1f MB in Pebble; state: %d groups, %d offsets", bl.records, float64(bl.logSize)/1e6, e.State().NumGroups(), e.State().NumOffsets())
		benchData = bl
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchData
}

// freshHeap collects the previous iteration's engine outside the timer, so that every
// restart starts, as in a new process, without another state's garbage to collect.
func freshHeap(b *testing.B) {
	b.StopTimer()
	runtime.GC()
	b.StartTimer()
}

// BenchmarkRestartFullReplay is a restart without snapshots: replay the whole log.
func BenchmarkRestartFullReplay(b *testing.B) {
	bl := openBenchLog(b)
	for i := 0; i < b.N; i++ {
		freshHeap(b)
		e := replay.New(0, replay.Options{})
		if err := e.Run(context.Background(), bl.log, math.MaxInt64); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(bl.records)/b.Elapsed().Seconds()*float64(b.N), "records/s")
}

// BenchmarkRestartFromSnapshot is Recover from a snapshot taken 1% of the records before the
// end of the log, so the restart restores the snapshot and replays a 1% tail: with the
// default options (gc=on) and with Options.PauseGC, which the CLI sets.
func BenchmarkRestartFromSnapshot(b *testing.B) {
	bl := openBenchLog(b)
	ctx := context.Background()
	store, err := snapshot.OpenStore(filepath.Join(bl.dir, "snapshots"), snapshot.Options{Retain: 1})
	if err != nil {
		b.Fatal(err)
	}
	_, end, err := bl.log.Offsets(0)
	if err != nil {
		b.Fatal(err)
	}
	cut := end - end/100
	if infos, _ := store.List(0); len(infos) == 0 || infos[0].NextOffset != cut {
		e := replay.New(0, replay.Options{})
		if err := e.Run(ctx, bl.log, cut); err != nil {
			b.Fatal(err)
		}
		if _, err := TakeSnapshot(store, bl.log, e, 0); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		opts Options
	}{{"gc=on", Options{}}, {"gc=paused", Options{PauseGC: true}}} {
		b.Run(c.name, func(b *testing.B) { benchRecover(b, bl, store, c.opts) })
	}
}

func benchRecover(b *testing.B, bl *benchLog, store *snapshot.Store, opts Options) {
	ctx := context.Background()
	var last *Recovery
	var verify, decode, restore, tail, check float64
	for i := 0; i < b.N; i++ {
		freshHeap(b)
		rec, err := Recover(ctx, bl.log, store, 0, opts)
		if err != nil {
			b.Fatal(err)
		}
		if rec.Snapshot == nil {
			b.Fatalf("snapshot not used: %v", rec.Messages())
		}
		verify += rec.Verify.Seconds()
		decode += rec.Decode.Seconds()
		restore += rec.Restore.Seconds()
		tail += rec.Tail.Seconds()
		check += rec.Check.Seconds()
		last = rec
	}
	n := float64(b.N)
	b.ReportMetric(verify/n*1e3, "verify-ms")
	b.ReportMetric(decode/n*1e3, "decode-ms")
	b.ReportMetric(restore/n*1e3, "restore-ms")
	b.ReportMetric(tail/n*1e3, "tail-ms")
	b.ReportMetric(check/n*1e3, "check-ms")
	b.ReportMetric(float64(last.TailRecords), "tail-records")
	b.ReportMetric(float64(last.Snapshot.Size)/1e6, "snapshot-MB")
	b.ReportMetric(float64(last.Snapshot.Size)/float64(bl.logSize), "snapshot/log")
}

// BenchmarkSnapshotCreate measures TakeSnapshot of the full state: dump, encode, checksum,
// write, fsync, rename. MB/s is of the snapshot file.
func BenchmarkSnapshotCreate(b *testing.B) {
	bl := openBenchLog(b)
	e := replay.New(0, replay.Options{})
	if err := e.Run(context.Background(), bl.log, math.MaxInt64); err != nil {
		b.Fatal(err)
	}
	store, err := snapshot.OpenStore(filepath.Join(b.TempDir(), "snapshots"), snapshot.Options{Retain: 1})
	if err != nil {
		b.Fatal(err)
	}
	// The replay above leaves a garbage collection of its whole heap under way; a running
	// coordinator that takes a snapshot is not in the middle of one.
	runtime.GC()
	var size int64
	var rates snapshotRates
	for b.Loop() {
		start := time.Now()
		in, err := TakeSnapshot(store, bl.log, e, 0)
		if err != nil {
			b.Fatal(err)
		}
		size = in.Size
		rates.add(size, time.Since(start))
	}
	b.SetBytes(size)
	b.ReportMetric(float64(size)/1e6, "snapshot-MB")
	b.ReportMetric(float64(size)/float64(bl.logSize), "snapshot/log")
	rates.report(b)
}

// snapshotRates are the MB/s of each snapshot a benchmark took, for the slowest and the
// fastest of them: a target that every snapshot must meet is read on the slowest (MB/s, the
// mean, hides it). -benchtime 8x: eight consecutive snapshots.
type snapshotRates []float64

func (r *snapshotRates) add(size int64, d time.Duration) {
	*r = append(*r, float64(size)/d.Seconds()/1e6)
}

func (r snapshotRates) report(b *testing.B) {
	if len(r) == 0 {
		return
	}
	b.ReportMetric(slices.Min(r), "slowest-MB/s")
	b.ReportMetric(slices.Max(r), "fastest-MB/s")
}

// BenchmarkSnapshotEncode isolates the encoder: the dump is taken once, encoded to io.Discard.
func BenchmarkSnapshotEncode(b *testing.B) {
	bl := openBenchLog(b)
	e := replay.New(0, replay.Options{})
	if err := e.Run(context.Background(), bl.log, math.MaxInt64); err != nil {
		b.Fatal(err)
	}
	pl := newSnapshotPayload(e)
	m := mustMeta(b, bl.log, e)
	var size int64
	for b.Loop() {
		n, err := snapshot.Encode(io.Discard, m, pl)
		if err != nil {
			b.Fatal(err)
		}
		size = n
	}
	b.SetBytes(size)
}

// BenchmarkSnapshotDecode isolates the decoder: the encoded snapshot is in memory.
func BenchmarkSnapshotDecode(b *testing.B) {
	bl := openBenchLog(b)
	e := replay.New(0, replay.Options{})
	if err := e.Run(context.Background(), bl.log, math.MaxInt64); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := snapshot.Encode(&buf, mustMeta(b, bl.log, e), newSnapshotPayload(e)); err != nil {
		b.Fatal(err)
	}
	r := bytes.NewReader(buf.Bytes())
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		var pl imagePayload
		if _, err := snapshot.Decode(r, int64(buf.Len()), &pl); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotWrite is Store.Write of a ready payload: encode, checksum, write, fsync,
// rename, i.e. TakeSnapshot without the state's Dump. MB/s is of the snapshot file.
func BenchmarkSnapshotWrite(b *testing.B) {
	bl := openBenchLog(b)
	e := replay.New(0, replay.Options{})
	if err := e.Run(context.Background(), bl.log, math.MaxInt64); err != nil {
		b.Fatal(err)
	}
	store, err := snapshot.OpenStore(filepath.Join(b.TempDir(), "snapshots"), snapshot.Options{Retain: 1})
	if err != nil {
		b.Fatal(err)
	}
	pl, m := newSnapshotPayload(e), mustMeta(b, bl.log, e)
	var size int64
	for b.Loop() {
		in, err := store.Write(m, pl)
		if err != nil {
			b.Fatal(err)
		}
		size = in.Size
	}
	b.SetBytes(size)
}

// BenchmarkStateDump is the state's Dump, the part of TakeSnapshot that groupstate does.
func BenchmarkStateDump(b *testing.B) {
	bl := openBenchLog(b)
	e := replay.New(0, replay.Options{})
	if err := e.Run(context.Background(), bl.log, math.MaxInt64); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = e.State().Dump()
	}
}

// BenchmarkSnapshotCreatePeriodic is the snapshots of a running coordinator: the engine
// replays to 1% before the end of the log and takes a first snapshot with its image cache
// (TakeSnapshotCached, reported as first-MB/s: every entry encoded and kept), then each
// iteration replays the next 0.1% of the log's offsets (not timed) and takes the next
// snapshot (timed): the entries of the groups those records did not touch are copied from
// the cache. MB/s is of the snapshot file. At most 10 iterations (-benchtime 8x: 8 snapshots).
func BenchmarkSnapshotCreatePeriodic(b *testing.B) {
	bl := openBenchLog(b)
	ctx := context.Background()
	_, end, err := bl.log.Offsets(0)
	if err != nil {
		b.Fatal(err)
	}
	at, step := end-end/100, end/1000
	e := replay.New(0, replay.Options{})
	if err := e.Run(ctx, bl.log, at); err != nil {
		b.Fatal(err)
	}
	store, err := snapshot.OpenStore(filepath.Join(b.TempDir(), "snapshots"), snapshot.Options{Retain: 1})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	start := time.Now()
	first, err := TakeSnapshotCached(store, bl.log, e, 0)
	if err != nil {
		b.Fatal(err)
	}
	firstRate := float64(first.Size) / time.Since(start).Seconds() / 1e6
	var size int64
	var rates snapshotRates
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		at += step
		if i >= 10 || at > end {
			b.Fatalf("-benchtime: at most 10 iterations")
		}
		if err := e.Run(ctx, bl.log, at); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		b.StartTimer()
		start := time.Now()
		in, err := TakeSnapshotCached(store, bl.log, e, 0)
		if err != nil {
			b.Fatal(err)
		}
		size = in.Size
		rates.add(size, time.Since(start))
	}
	b.SetBytes(size)
	b.ReportMetric(firstRate, "first-MB/s")
	b.ReportMetric(float64(step), "records-between")
	rates.report(b)
}
