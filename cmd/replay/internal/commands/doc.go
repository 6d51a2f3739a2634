// Package commands is the replay command line: cobra commands that parse flags, ask the
// libraries (replay/session to open and replay inputs, replay/query for the questions,
// replay/jsondoc for the JSON documents, cluster for live clusters) and render what they
// answer as tables, prose or documents. Execute runs it; cmd/replay's main calls it.
//
// # Files
//
// Each file stands on the ones before it in this list and never on one after it, so that a
// file can be read, and changed, knowing only what it uses:
//
//   - exit.go: the exit codes (0 ok, 1 findings or failure, 2 a bad command line), usage
//     errors, and commandLine, which says a library's error as the command line caused it.
//   - output.go: the terminal's width, stdout and stderr as the commands write them (--wide,
//     --quiet, --verbose, notes and what --quiet does not silence).
//   - render.go: the cells and values the commands' tables and prose share.
//   - flags.go: the flags several commands take (reading, points in history, live clusters,
//     thresholds, offset selections) and how they become library options.
//   - input.go: how a command opens and replays its input (a session.Request from the flags),
//     printing on stderr what the request's Trace tells.
//   - one file per command (check, completion, decode, describe, diff, groups, import,
//     offsets, report, restart, restore, simulate, snapshot, timeline): its flags, its help,
//     its run function and its rendering.
//   - root.go: Execute, the root command and the flags every command takes.
//
// # Invariants
//
//   - Outputs are the same as those of the commands before this package existed, byte for
//     byte (fixtures/transcripts-check.sh).
//   - Nothing a Go user would want is computed here: what a command computes lives in a
//     library.
//   - One wall clock (Now, set by main from internal/wallclock).
package commands
