package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
