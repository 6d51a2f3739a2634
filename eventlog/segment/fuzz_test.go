package segment_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/internal/testgen"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// FuzzReader feeds arbitrary bytes to the segment reader in both modes: no panic, no hang, and
// forensic mode always reaches the end of the file without an error.
func FuzzReader(f *testing.F) {
	enc := segment.NewEncoder(segment.EncodeOptions{})
	for c := eventlog.CodecNone; c <= eventlog.CodecZstd; c++ {
		raw, _ := enc.AppendBatch(nil, testgen.Batch(0, 0, 3, eventlog.Attributes(c)))
		f.Add(raw)
	}
	legacy, _ := segment.AppendLegacy(nil, 1, eventlog.CodecGzip, eventlog.CreateTime, testgen.Batch(0, 0, 2, 0).Records[:2])
	f.Add(legacy)
	f.Fuzz(func(t *testing.T, raw []byte) {
		dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, segment.FileName(0)), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []eventlog.Mode{eventlog.Strict, eventlog.Forensic} {
			r, err := segment.Open(dir, segment.Options{Mode: mode, MaxBatchBytes: 1 << 20, MaxBatchMemory: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			it, _ := r.Batches(0, 0)
			for it.Next() {
				b := it.Batch()
				if int(b.NumRecords) != len(b.Records) {
					t.Fatalf("count %d != %d records", b.NumRecords, len(b.Records))
				}
			}
			if mode == eventlog.Forensic && it.Err() != nil {
				t.Fatalf("forensic mode failed: %v", it.Err())
			}
			it.Close()
			r.Offsets(0)
		}
	})
}
