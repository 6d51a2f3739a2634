package audit

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
)

// memSource serves batches from memory, so that a benchmark measures replay and audit alone.
type memSource struct{ batches []*eventlog.Batch }

func (m *memSource) Partitions() ([]int32, error) { return []int32{0}, nil }
func (m *memSource) Offsets(int32) (int64, int64, error) {
	return m.batches[0].BaseOffset, m.batches[len(m.batches)-1].NextOffset(), nil
}
func (m *memSource) Batches(int32, int64) (eventlog.Iterator, error) {
	return &memIter{b: m.batches, i: -1}, nil
}

type memIter struct {
	b []*eventlog.Batch
	i int
}

func (it *memIter) Next() bool             { it.i++; return it.i < len(it.b) }
func (it *memIter) Batch() *eventlog.Batch { return it.b[it.i] }
func (it *memIter) Err() error             { return nil }
func (it *memIter) Close() error           { return nil }

// auditLog is a partition as busy consumer groups write it: 200 KIP-848 groups of 4 members,
// each member owning 16 partitions of one topic and committing them 8 per batch, over and
// over (one in a thousand commits moves back), with a member leaving and rejoining every 100
// batches of a group.
func auditLog(b *testing.B, records int) (*memSource, int) {
	lb := &logBuilder{p: 0, ts: 1_760_000_000_000}
	lb.t = &testing.T{}
	const groups, members, perMember = 200, 4, 16
	n, round := 0, 0
	for g := range groups {
		for m := range members {
			parts := make([]int32, perMember)
			for i := range parts {
				parts[i] = int32(m*perMember + i)
			}
			lb.batch(-1, join("g"+strconv.Itoa(g), fmt.Sprintf("m%d", m), fmt.Sprintf("c%d", m), int32(m+2), parts...)...)
		}
	}
	for n < records {
		round++
		for g := range groups {
			gid := "g" + strconv.Itoa(g)
			m := round % members
			var recs []recordcodec.Record
			for i := range 8 {
				off := int64(round * 10)
				if (n+i)%1000 == 999 {
					off -= 5
				}
				recs = append(recs, commitID(gid, int32(m*perMember+(round*8+i)%perMember), off))
			}
			lb.ts++
			lb.batch(-1, recs...)
			n += len(recs)
			if round%100 == 0 && g%10 == 0 {
				lb.batch(-1, leave(gid, "m0", int32(round))...)
				lb.batch(-1, join(gid, "m0", "c0", int32(round+1), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)...)
			}
		}
	}
	return &memSource{batches: lb.log}, int(lb.next)
}

// BenchmarkAudit compares a replay of 1 M records alone, with the batch audit check had before
// the explanation, and with the whole audit (batch audit and explanation): the explanation's
// cost is the difference of the last two.
func BenchmarkAudit(b *testing.B) {
	src, n := auditLog(b, 1_000_000)
	for _, mode := range []string{"replay", "batch-audit", "audit"} {
		b.Run(mode, func(b *testing.B) {
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				var obs replay.Observer
				var a *Audit
				switch mode {
				case "batch-audit":
					obs = &batchAudit{base: -1, members: map[string]int{}, meta: map[string]bool{}, groups: map[string]string{}}
				case "audit":
					a = New()
					obs = a.Observer(0)
				}
				e := replay.New(0, replay.Options{Mode: eventlog.Forensic, Observer: obs})
				if err := e.Run(context.Background(), src, math.MaxInt64); err != nil {
					b.Fatal(err)
				}
				if a != nil {
					a.Finish([]*replay.Engine{e}, nil, 0)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
