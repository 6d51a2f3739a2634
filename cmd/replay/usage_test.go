package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// usageCases are command lines a user gets wrong (and a few right), with the exit code and
// what the message says: 0 ok, 1 findings or failure, 2 a bad command line. {dir} is a
// recording's partition directory, {db} a database imported from it. Every flag the commands
// validate has a row; RELIABILITY.md's "Command line" section points here.
var usageCases = []struct {
	args string
	code int
	msg  string // a substring of stderr (stdout for code 0)
}{
	// Commands and flags that do not exist get the close names.
	{"", exitUsage, "replay needs a command: check, completion, decode, describe"},
	{"nosuchcmd", exitUsage, `unknown command "nosuchcmd" for "replay"; the commands are check,`},
	{"descibe {dir}", exitUsage, `unknown command "descibe" for "replay"; did you mean describe?`},
	{"snapshot", exitUsage, "replay snapshot needs a command: create, list, verify"},
	{"snapshot creat --db {db}", exitUsage, `unknown command "creat" for "replay snapshot"; did you mean create?`},
	{"describe {dir} --grup g", exitUsage, "unknown flag --grup; did you mean --group?"},
	{"describe {dir} --wdie", exitUsage, "unknown flag --wdie; did you mean --wide?"},
	{"describe {dir} --zzzzzz", exitUsage, "unknown flag --zzzzzz (replay describe --help lists the flags)"},
	{"describe {dir} --group consumr-848", exitFailure, `no group "consumr-848" in the input at the end of the log; did you mean "consumer-848"?`},
	{"describe", exitUsage, "describe needs one input"},
	{"diff", exitUsage, "diff needs one input (two points of it) or two inputs (got 0 arguments)"},
	{"import {dir}", exitUsage, `replay import: required flag(s) "db" not set`},
	{"simulate --segments x", exitUsage, `replay simulate: required flag(s) "scenario" not set`},
	{"simulate --scenario x --segments y --partition -1", exitUsage, "--partition and --to-offset are 0 or more"},
	{"snapshot list", exitUsage, "--db is required"},
	{"--version", exitOK, "replay "},
	// Global flags.
	{"describe {dir} --quiet --verbose", exitUsage, "--quiet and --verbose exclude each other"},
	// Points in history.
	{"describe {dir} --at-offset -5", exitUsage, `--at-offset "-5": offsets are 0 or more`},
	{"describe {dir} --at-offset 999999", exitUsage, "--at-offset 999999 is past the end of partition 0 (offsets 0..125, next offset 126)"},
	{"describe {dir} --at-offset abc", exitUsage, `"abc" is not an offset`},
	{"describe {dir} --at-offset 0:5,0:7", exitUsage, "--at-offset names partition 0 twice"},
	{"describe {dir} --at-offset 5 --at-time -1h", exitUsage, "give --at-offset or --at-time, not both"},
	{"describe {dir} --at-time yesterday", exitUsage, `--at-time: "yesterday" is not a time`},
	{"snapshot create --db {db} --at-offset 99999", exitUsage, "--at-offset 99999 is past the end of partition 0"},
	{"diff {dir} --from-offset 70 --to-offset 10", exitUsage, "the first point (offset 70) is after the second (offset 10): swap them"},
	{"diff {dir} --from-offset -1", exitUsage, `--from-offset "-1": offsets are 0 or more`},
	{"timeline {dir} --group consumer-848 --since yesterday", exitUsage, `--since: "yesterday" is not a time`},
	// decode's offset and time bounds.
	{"decode {dir} --from-offset 50 --to-offset 10", exitUsage, "--from-offset 50 is after --to-offset 10"},
	{"decode {dir} --from-offset -7", exitUsage, "--from-offset and --to-offset are offsets, 0 or more (got -7"},
	{"decode {dir} --until -1h --at-time -1h", exitUsage, "--at-time is --until: give one of them"},
	{"decode {dir} --type Bogus", exitUsage, `--type "Bogus" is not a record type id, name or 'control'`},
	// Values from a fixed set.
	{"describe {dir} --format xml", exitUsage, `--format must be table or json, not "xml"`},
	{"decode {dir} --format json", exitUsage, `--format must be text or jsonl, not "json"`},
	{"offsets {dir} --format yaml", exitUsage, `--format must be table, json or csv, not "yaml"`},
	{"offsets {dir} --output x.csv", exitUsage, "--output goes with --format csv"},
	{"describe {dir} --type bogus", exitUsage, `--type "bogus": want classic, consumer, share or streams`},
	{"groups {dir} --state Bogus", exitUsage, "Bogus"},
	{"groups {dir} --pattern [", exitUsage, `--pattern "[": syntax error in pattern`},
	{"describe {dir} --kafka-version 3.9", exitUsage, `unsupported Kafka version "3.9"`},
	{"describe {dir} --layout 5.0", exitUsage, `unknown layout "5.0"`},
	{"describe {dir} --partition 3", exitUsage, "partition 3 is not in the input (it has [0])"},
	{"offsets {dir} --topic-partition bad", exitUsage, `--topic-partition "bad": want TOPIC:PARTITION`},
	{"import {dir} --db x --progress fast", exitUsage, `--progress must be auto, bar, lines or none, not "fast"`},
	// Counts and sizes.
	{"check {dir} --num-partitions -3", exitUsage, "--num-partitions -3: the topic's partition count is 1 or more"},
	{"snapshot create --db {db} --retain -1", exitUsage, "--retain, --every-records and --every-bytes must not be negative"},
	// Live clusters (refused before any connection).
	{"describe {dir} --follow", exitUsage, "--follow needs --bootstrap-server"},
	{"describe --bootstrap-server 127.0.0.1:1 --follow --follow-interval 0s", exitUsage, "--follow-interval 0s: give a positive duration"},
	{"describe --bootstrap-server 127.0.0.1:1 {dir}", exitUsage, "--bootstrap-server reads the cluster; it takes no input directory"},
	{"groups --bootstrap-server 127.0.0.1:1 --follow", exitUsage, "does not follow the log"},
	{"offsets restore --group g --bootstrap-server 127.0.0.1:1 --wait-for-empty -1s", exitUsage, "--wait-for-empty must not be negative"},
	{"offsets restore --group g", exitUsage, "restore needs --bootstrap-server"},
	{"describe --bootstrap-server 127.0.0.1:1 --tls-cert c.pem", exitUsage, "--tls-cert and --tls-key go together"},
	{"describe --bootstrap-server 127.0.0.1:1 --sasl-mechanism md5 --sasl-user u", exitUsage, `--sasl-mechanism "md5": want plain, scram-sha-256 or scram-sha-512`},
	// Findings and failures are 1.
	{"check ../../fixtures/real/transactions/__consumer_offsets-0", exitFindings, "check found 2 findings"},
	{"describe ../../fixtures/real", exitFailure, "no .log files and no __consumer_offsets-N directories"},
}

// TestUsageExitCodes runs every row of usageCases.
func TestUsageExitCodes(t *testing.T) {
	dir := filepath.Join(committedRecordings, "consumer", "__consumer_offsets-0")
	db := filepath.Join(t.TempDir(), "db")
	_, stderr, code := runCLI(t, "import", dir, "--db", db, "--progress", "none")
	require.Equal(t, 0, code, stderr)
	for _, c := range usageCases {
		t.Run(c.args, func(t *testing.T) {
			var args []string
			for _, a := range strings.Fields(c.args) {
				args = append(args, strings.NewReplacer("{dir}", dir, "{db}", db).Replace(a))
			}
			stdout, stderr, code := runCLI(t, args...)
			require.Equal(t, c.code, code, "stdout: %s\nstderr: %s", stdout, stderr)
			got := stderr
			if c.code == exitOK {
				got = stdout
			}
			require.Contains(t, strings.Join(strings.Fields(got), " "), c.msg)
		})
	}
}
