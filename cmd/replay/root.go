package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailure  = 1 // the input is bad (strict mode) or the job failed
	exitUsage    = 2
	exitFindings = 1 // check found problems
)

// usageError marks errors in the command line.
type usageError struct{ error }

// run executes the replay CLI with args and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "replay:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	var ec exitCodeError
	if errors.As(err, &ec) {
		return ec.code
	}
	return exitFailure
}

// exitCodeError carries a specific exit code (e.g. check's "found something").
type exitCodeError struct {
	code int
	msg  string
}

func (e exitCodeError) Error() string { return e.msg }

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "replay",
		Short: "Read, import and replay Kafka __consumer_offsets logs",
		Long: `replay reads __consumer_offsets logs: a broker's segment directories (one
__consumer_offsets-N directory, or a log directory holding many) or a coordlog Pebble log
created by "replay import". It prints records as kafka-dump-log --offsets-decoder does,
imports segments into the Pebble log, and rebuilds group coordinator state by replay.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.Bool("verbose", false, "list every damaged batch and every violation (by default one line per file and kind)")
	pf.String("max-batch-memory", "256MiB", "refuse a batch whose records would take more memory than this, decoded (bytes, or KiB/MiB/GiB)")
	root.AddCommand(newDecodeCmd(stdout, stderr), newImportCmd(stdout, stderr), newDescribeCmd(stdout, stderr), newOffsetsCmd(stdout, stderr), newTimelineCmd(stdout, stderr), newCheckCmd(stdout, stderr))
	root.AddCommand(newGroupsCmd(stdout, stderr), newDiffCmd(stdout, stderr))
	root.AddCommand(newSimulateCmd(stdout, stderr))
	root.AddCommand(newSnapshotCmd(stdout, stderr), newRestartCmd(stdout, stderr))
	return root
}

// readFlags are the root's flags on how inputs are read.
type readFlags struct {
	verbose        bool
	maxBatchMemory int
}

// readingFlags returns the root's reading flags as cmd parsed them (the defaults for a nil cmd).
func readingFlags(cmd *cobra.Command) (readFlags, error) {
	var rf readFlags
	if cmd == nil || cmd.Flags().Lookup("verbose") == nil { // the defaults, where no command line applies
		return rf, nil
	}
	fl := cmd.Flags()
	rf.verbose, _ = fl.GetBool("verbose")
	size, _ := fl.GetString("max-batch-memory")
	n, err := parseSize(size)
	if err != nil || n < 1<<20 || n > math.MaxInt32*8 {
		return rf, usageError{fmt.Errorf("--max-batch-memory %q: give a size from 1MiB to 16GiB (bytes, or with KiB, MiB or GiB)", size)}
	}
	rf.maxBatchMemory = int(n)
	return rf, nil
}

// parseSize reads a byte count: digits, optionally followed by KiB, MiB or GiB.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = rest, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("not a size: %q", s)
	}
	return n * mult, nil
}

func argsError(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s needs %s (got %d arguments)", cmd.Name(), what, len(args))}
		}
		return nil
	}
}
