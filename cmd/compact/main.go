package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"

	"github.com/coordlog/coordlog/internal/wallclock"
)

// defaultMemoryLimit is the Go runtime's soft memory limit for a compaction job unless
// GOMEMLIMIT says otherwise. The key index and the proof's offsets each stay within
// --index-memory (the proof compares the offsets in parts past it), and one log's groups; the
// limit keeps the garbage collector from letting the heap grow to twice that.
const defaultMemoryLimit = 448 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	// COORDLOG_NOW fixes the wall clock (internal/wallclock): the default of --now.
	c, err := wallclock.Clock()
	if err != nil {
		fmt.Fprintf(os.Stderr, "compact: %v\n", err)
		os.Exit(exitUsage)
	}
	clock = c
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
