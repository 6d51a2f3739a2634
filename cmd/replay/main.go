// Command replay reads __consumer_offsets logs (Kafka segment directories or coordlog's Pebble
// log), prints and imports them, and rebuilds group coordinator state by replay.
//
// main only sets up the process (interrupts, the wall clock, a CPU profile) and exits with
// the code of run, which the tests drive; the commands are package commands', over the libraries.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"

	"github.com/coordlog/coordlog/cmd/replay/internal/commands"
	"github.com/coordlog/coordlog/internal/wallclock"
)

// The exit codes (package commands').
const (
	exitOK       = commands.ExitOK
	exitFailure  = commands.ExitFailure
	exitUsage    = commands.ExitUsage
	exitFindings = commands.ExitFindings
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

// run executes the replay CLI with args and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return commands.Execute(ctx, args, stdout, stderr)
}

// configureClock sets the commands' wall clock from COORDLOG_NOW (internal/wallclock): snapshot
// creation times and the instant relative times count back from. A value that does not parse
// is a usage error.
func configureClock() error {
	clock, err := wallclock.Clock()
	if err != nil {
		return err
	}
	commands.Now = clock
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
