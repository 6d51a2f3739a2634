package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/compact"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay"
)

// verifier is the proof: each partition of the original and of the compacted log is replayed
// to its end (the two concurrently) and the states must be equal as dumps and as JSON bytes,
// with the same next offset.
func verifier(opts replay.Options) compact.VerifyFunc {
	return func(ctx context.Context, original, compacted eventlog.Source, parts []int32) error {
		for _, p := range parts {
			if err := verifyPartition(ctx, original, compacted, p, opts); err != nil {
				return err
			}
		}
		return nil
	}
}

func verifyPartition(ctx context.Context, original, compacted eventlog.Source, p int32, opts replay.Options) error {
	a, b := replay.New(p, opts), replay.New(p, opts)
	errc := make(chan error, 1)
	go func() { errc <- a.Run(ctx, original, math.MaxInt64) }()
	errB := b.Run(ctx, compacted, math.MaxInt64)
	if err := <-errc; err != nil {
		return fmt.Errorf("partition %d: replay of the original: %w", p, err)
	}
	if errB != nil {
		return fmt.Errorf("partition %d: replay of the compacted log: %w", p, errB)
	}
	if a.NextOffset() != b.NextOffset() {
		return fmt.Errorf("partition %d: next offset %d after the original, %d after the compacted log", p, a.NextOffset(), b.NextOffset())
	}
	if !groupstate.Equal(a.State(), b.State()) {
		return fmt.Errorf("partition %d: states differ (original -> compacted):\n  %s", p, strings.Join(groupstate.Diff(a.State(), b.State(), 20), "\n  "))
	}
	ja, err := json.Marshal(a.State())
	if err != nil {
		return err
	}
	jb, err := json.Marshal(b.State())
	if err != nil {
		return err
	}
	if !bytes.Equal(ja, jb) {
		return fmt.Errorf("partition %d: state JSON differs (%d vs %d bytes)", p, len(ja), len(jb))
	}
	return nil
}
