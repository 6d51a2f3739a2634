// Command replay reads __consumer_offsets logs (Kafka segment directories or coordlog's Pebble
// log), prints and imports them, and rebuilds group coordinator state by replay.
//
// main only parses the process arguments; run holds the behaviour so that tests drive it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"

	"github.com/coordlog/coordlog/internal/wallclock"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	// COORDLOG_CPUPROFILE=FILE writes a CPU profile of the whole command (go tool pprof FILE):
	// how BENCHMARKS.md's profiles of cold CLI runs are taken.
	stopProfile := startCPUProfile(os.Getenv("COORDLOG_CPUPROFILE"))
	if err := configureClock(); err != nil {
		fmt.Fprintf(os.Stderr, "replay: %v\n", err)
		os.Exit(exitUsage)
	}
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

// configureClock sets the commands' wall clock from COORDLOG_NOW (internal/wallclock): snapshot
// creation times and the instant relative times count back from. A value that does not parse
// is a usage error.
func configureClock() error {
	clock, err := wallclock.Clock()
	if err != nil {
		return err
	}
	now = clock
	return nil
}

func startCPUProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "replay: COORDLOG_CPUPROFILE: %v\n", err)
		os.Exit(2)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
