package recovery

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coordlog/coordlog/internal/leakcheck"
	"github.com/coordlog/coordlog/snapshot"
)

// FuzzSnapshotPayload decodes arbitrary payload bytes (the CRC skipped) into the replay
// payload and restores what decodes: errors, never a panic or an unbounded allocation.
func FuzzSnapshotPayload(f *testing.F) {
	files, _ := filepath.Glob("testdata/replay-v*.snap")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		h, err := snapshot.ReadHeader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[h.MetaEnd : h.MetaEnd+h.PayloadLen])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeEveryKind(b)
	})
}

// decodeEveryKind decodes payload bytes as the payload kind this build reads; what decodes
// must be a usable state.
func decodeEveryKind(b []byte) {
	h := snapshot.Header{PayloadLen: int64(len(b)), Size: int64(len(b))}
	d, err := decodeState(SnapshotKind, func(into any) error { return snapshot.DecodePayload(bytes.NewReader(b), h, into) }, false)
	if err == nil {
		_ = d.st.View().Dump()
	}
}

// TestSnapshotPayloadMutations is a deterministic slice of FuzzSnapshotPayload: random byte
// changes to every committed payload decode to an error or to something Restore handles,
// never a panic.
func TestSnapshotPayloadMutations(t *testing.T) {
	files, err := filepath.Glob("testdata/replay-v*.snap")
	if err != nil || len(files) == 0 {
		t.Fatalf("no committed snapshots: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, file := range files {
		b0, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		h0, err := snapshot.ReadHeader(bytes.NewReader(b0), int64(len(b0)))
		if err != nil {
			t.Fatal(err)
		}
		seed := b0[h0.MetaEnd : h0.MetaEnd+h0.PayloadLen]
		for i := 0; i < 400; i++ {
			b := append([]byte(nil), seed...)
			for k := 1 + rng.IntN(4); k > 0; k-- {
				b[rng.IntN(len(b))] = byte(rng.IntN(256))
			}
			if i%5 == 0 {
				b = b[:rng.IntN(len(b))]
			}
			decodeEveryKind(b)
		}
	}
	leakcheck.None(t, time.Second, decoderCode) // a failed decode waits for its part decoders too
}
