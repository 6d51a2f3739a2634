// Command compact compacts __consumer_offsets logs offline with the semantics of Kafka's log
// cleaner, proves the result by replaying the original and the compacted log to the same
// group coordinator state, and only then publishes it atomically.
//
// main only parses the process arguments; run holds the behaviour so that tests drive it.
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
