// Command replay reads __consumer_offsets logs (Kafka segment directories or coordlog's Pebble
// log), prints and imports them, and rebuilds group coordinator state by replay.
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
