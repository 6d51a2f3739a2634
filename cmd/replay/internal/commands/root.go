package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coordlog/coordlog/internal/buildinfo"
	"github.com/coordlog/coordlog/internal/termtext"
	"github.com/coordlog/coordlog/replay/query"
)

// Execute executes the replay CLI with args and returns the process exit code.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g := &globals{}
	// stderr wraps from the start (a flag error comes before the flags are applied), on a
	// terminal; stdout once the command is known not to print JSON, CSV or another tool's
	// format.
	out, errOut := &termtext.FitWriter{W: stdout}, &termtext.FitWriter{W: stderr, Width: notesWidth(stderr)}
	root := newRootCmd(out, &stderrWriter{fit: errOut, g: g})
	registerGlobals(root, g, out, errOut)
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		registerCompletions(root)
	}
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		errOut.Flush()
		return ExitOK
	}
	fmt.Fprintln(errOut, "replay:", err)
	errOut.Flush()
	return exitCode(err)
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "replay",
		Short: "Read, import and replay Kafka __consumer_offsets logs",
		Long: `replay reads __consumer_offsets logs: a broker's segment directories (one
__consumer_offsets-N directory, or a log directory holding many) or a coordlog Pebble log
created by "replay import". It prints records as kafka-dump-log --offsets-decoder does,
imports segments into the Pebble log, and rebuilds group coordinator state by replay.

Tables fit the terminal's width (80 columns when stdout is not a terminal, or $COLUMNS);
--wide prints every row on one line. JSON documents are described by the JSON Schemas in
docs/json. Exit codes: 0 ok, 1 findings or failure, 2 a bad command line.`,
		Version:       buildinfo.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("replay {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.PersistentFlags().String("max-batch-memory", "256MiB", "refuse a batch whose records would take more memory than this, decoded (bytes, or KiB/MiB/GiB)")
	offsets := newOffsetsCmd(stdout, stderr)
	offsets.AddCommand(newRestoreCmd(stdout, stderr))
	root.AddCommand(newDecodeCmd(stdout, stderr), newImportCmd(stdout, stderr), newDescribeCmd(stdout, stderr), offsets, newTimelineCmd(stdout, stderr), newCheckCmd(stdout, stderr))
	root.AddCommand(newGroupsCmd(stdout, stderr), newDiffCmd(stdout, stderr), newReportCmd(stdout, stderr))
	root.AddCommand(newSimulateCmd(stdout, stderr))
	root.AddCommand(newSnapshotCmd(stdout, stderr), newRestartCmd(stdout, stderr))
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
			commandGroup(c)
		}
	}
	return root
}

// registerGlobals adds the flags every command takes and, before any command runs, applies
// them: the width text output and notes fit (none for raw output on stdout: JSON, CSV,
// decode's text, scripts), cobra's own usage errors turned into exit code 2.
func registerGlobals(root *cobra.Command, g *globals, out, errOut *termtext.FitWriter) {
	pf := root.PersistentFlags()
	pf.BoolVar(&g.wide, "wide", false, "no width limit: every table row on one line (default: tables fit the terminal, or 80 columns, or $COLUMNS)")
	pf.BoolVarP(&g.quiet, "quiet", "q", false, "no notes, progress or warnings on stderr (errors, damaged input and violations still)")
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "every skipped or damaged batch and every violation on its own line, instead of counts per file and kind")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if g.quiet && g.verbose {
			return usageError{errors.New("--quiet and --verbose exclude each other")}
		}
		// Cobra checks required flags after this hook, with an error of its own: check them
		// here, so that a missing one is a usage error like every other.
		if err := cmd.ValidateRequiredFlags(); err != nil {
			return usageError{fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
		}
		if g.wide {
			errOut.Width = 0
		} else if !rawOutput(cmd) {
			out.Width = outputWidth(out.W)
		}
		return nil
	}
}

// rawOutput reports whether cmd's standard output is for programs or another tool's format and
// must not be wrapped: JSON, JSON lines and CSV, decode (kafka-dump-log's text), simulate (a
// transcript of the scenario's format), report (an HTML page, with --html -), shell completion
// scripts.
func rawOutput(cmd *cobra.Command) bool {
	switch cmd.Name() {
	case "decode", "simulate", "report", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return true
	}
	if cmd.HasParent() && cmd.Parent().Name() == "completion" {
		return true
	}
	if f := cmd.Flags().Lookup("format"); f != nil {
		return f.Value.String() != "table" && f.Value.String() != "text"
	}
	return false
}

// commandGroup makes a command that only holds subcommands (replay, replay snapshot) refuse a
// missing or unknown subcommand with exit code 2 and the close names, instead of printing its
// help and exiting 0.
func commandGroup(c *cobra.Command) {
	names := func() []string {
		var out []string
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				out = append(out, s.Name())
			}
		}
		return out
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := query.Suggest(args[0], names(), 3); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		} else {
			msg += "; the commands are " + strings.Join(names(), ", ")
		}
		return usageError{errors.New(msg)}
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		return usageError{fmt.Errorf("%s needs a command: %s (%s --help says what each does)", cmd.CommandPath(), strings.Join(names(), ", "), cmd.CommandPath())}
	}
}

// flagError turns pflag's parse errors into usage errors; an unknown flag gets the command's
// flags closest to it.
func flagError(c *cobra.Command, err error) error {
	if c.HasSubCommands() && c.Args != nil {
		// "replay snapshot creat --db x": the mistake is the command, not the flag its
		// subcommand would have taken.
		if args := c.Flags().Args(); len(args) > 0 {
			if aerr := c.Args(c, args); aerr != nil {
				return aerr
			}
		}
	}
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedName() != "" {
		name := ne.GetSpecifiedName()
		var flags []string
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				flags = append(flags, f.Name)
			}
		})
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) { flags = append(flags, f.Name) })
		slices.Sort(flags)
		msg := fmt.Sprintf("unknown flag --%s", name)
		if s := query.Suggest(name, slices.Compact(flags), 3); len(s) > 0 {
			msg += "; did you mean --" + strings.Join(s, " or --") + "?"
		} else {
			msg += fmt.Sprintf(" (%s --help lists the flags)", c.CommandPath())
		}
		return usageError{errors.New(msg)}
	}
	return usageError{err}
}
