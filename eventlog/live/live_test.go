package live

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// A fetch response carries the log's bytes as they are on disk, so decoding a segment file's
// bytes as one response must give the segment reader's batches (apart from Origin).
func TestDecodeMatchesSegmentReader(t *testing.T) {
	dirs, _ := filepath.Glob("../../fixtures/real/*/__consumer_offsets-0")
	if len(dirs) == 0 {
		t.Skip("no recordings")
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			r, err := segment.Open(dir, segment.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var want []*eventlog.Batch
			it, err := r.Batches(0, 0)
			if err != nil {
				t.Fatal(err)
			}
			for it.Next() {
				want = append(want, it.Batch().Clone())
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			var buf []byte
			for _, f := range r.Files(0) {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				buf = append(buf, b...)
			}
			// Cut the last batch short: a fetch response may end with a partial batch.
			li := &iter{s: &Source{opts: Options{MaxBatchBytes: 64 << 20}}, p: 0, buf: buf[:len(buf)-3], end: 1 << 62}
			var got []*eventlog.Batch
			for {
				ok, err := li.decode()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				got = append(got, li.Batch().Clone())
			}
			if len(got) != len(want)-1 {
				t.Fatalf("decoded %d batches before the partial one, want %d", len(got), len(want)-1)
			}
			if li.next != want[len(want)-2].NextOffset() {
				t.Fatalf("next offset %d after the complete batches, want %d", li.next, want[len(want)-2].NextOffset())
			}
			for i := range got {
				g, w := *got[i], *want[i]
				g.Origin, w.Origin = eventlog.Origin{}, eventlog.Origin{}
				if !reflect.DeepEqual(g, w) {
					t.Fatalf("batch %d (offset %d):\n live    %+v\n segment %+v", i, w.BaseOffset, g, w)
				}
			}
		})
	}
}
