package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/internal/wallclock"
)

// TestSnapshotCommands drives snapshot create, list and verify and restart over a recorded
// scenario imported into a database, then corrupts the newest snapshot.
func TestSnapshotCommands(t *testing.T) {
	input := filepath.Join("..", "..", "fixtures", "real", "consumer", "__consumer_offsets-0")
	if _, err := os.Stat(input); err != nil {
		t.Skipf("recording not present: %v", err)
	}
	db := filepath.Join(t.TempDir(), "db")
	_, errOut, code := snapCLI(t, "import", input, "--db", db, "--progress", "none")
	require.Zero(t, code, errOut)

	out, errOut, code := snapCLI(t, "restart", "--db", db)
	require.Zero(t, code, errOut)
	require.Contains(t, out, "no usable snapshot: full replay")

	out, errOut, code = snapCLI(t, "snapshot", "create", "--db", db, "--every-records", "10", "--retain", "3", "--no-timestamp")
	require.Zero(t, code, errOut)
	require.Contains(t, out, "periodic snapshot")
	names, err := filepath.Glob(filepath.Join(db, "snapshots", "snap-*.snap"))
	require.NoError(t, err)
	require.Len(t, names, 3, "retention")

	out, errOut, code = snapCLI(t, "snapshot", "list", "--db", db, "--wide")
	require.Zero(t, code, errOut)
	require.Equal(t, 4, strings.Count(out, "\n"), out)
	require.Contains(t, out, "header ok")

	out, errOut, code = snapCLI(t, "snapshot", "verify", "--db", db)
	require.Zero(t, code, errOut)
	require.Equal(t, 3, strings.Count(out, "ok   snap-"), out)

	out, errOut, code = snapCLI(t, "restart", "--db", db, "--compare-full")
	require.Zero(t, code, errOut)
	require.Contains(t, out, "restored snapshot "+filepath.Base(names[2]))
	require.Contains(t, out, "replayed 0 records")
	require.Contains(t, out, "same state")

	// Restart at an earlier offset skips the newer snapshots.
	out, errOut, code = snapCLI(t, "restart", "--db", db, "--at-offset", "5", "--compare-full")
	require.Zero(t, code, errOut)
	require.Contains(t, out, "after the requested offset 5")
	require.Contains(t, out, "same state")

	// describe and offsets from a snapshot print exactly what a full replay prints, but for
	// where the state came from: the snapshot at the end, and no record replayed after it.
	for _, args := range [][]string{
		{"describe", db, "--format", "json"},
		{"describe", db, "--wide"},
		{"offsets", db, "--format", "json"},
		{"describe", db, "--format", "json", "--at-offset", "60"},
	} {
		full, errOut, code := snapCLI(t, args...)
		require.Zero(t, code, errOut)
		fromSnap, errOut, code := snapCLI(t, append(args, "--from-snapshot")...)
		require.Zero(t, code, errOut)
		restored := len(args) < 5 // --at-offset 60 is before every retained snapshot: full replay
		if restored {
			require.Contains(t, errOut, "from snapshot snap-")
		}
		if args[0] == "describe" && args[2] == "--wide" {
			require.Contains(t, fromSnap, "(next offset 126, snapshot at offset 126 and 0 records replayed after it, ")
			full = strings.Replace(full, "126 records replayed", "snapshot at offset 126 and 0 records replayed after it", 1)
		}
		if args[0] == "describe" && args[2] == "--format" {
			var a, b map[string]any
			require.NoError(t, json.Unmarshal([]byte(full), &a))
			require.NoError(t, json.Unmarshal([]byte(fromSnap), &b))
			pa, pb := a["partitions"].([]any)[0].(map[string]any), b["partitions"].([]any)[0].(map[string]any)
			if restored {
				require.Equal(t, float64(0), pb["recordsReplayed"], "records replayed after the snapshot")
				require.Equal(t, map[string]any{"name": filepath.Base(names[2]), "nextOffset": float64(126)}, pb["snapshot"])
				delete(pa, "recordsReplayed")
				delete(pb, "recordsReplayed")
				delete(pb, "snapshot")
			}
			require.Equal(t, a, b, "%v", args)
			continue
		}
		require.Equal(t, full, fromSnap, "%v", args)
	}

	// Corrupt the newest: verify reports it, restart (which only reads) skips it and uses the
	// next one, snapshot create moves it aside.
	b, err := os.ReadFile(names[2])
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	require.NoError(t, os.WriteFile(names[2], b, 0o644))
	out, _, code = snapCLI(t, "snapshot", "verify", "--db", db)
	require.Equal(t, exitFindings, code)
	require.Contains(t, out, "BAD  "+filepath.Base(names[2])+": snapshot: corrupt: checksum")

	out, errOut, code = snapCLI(t, "restart", "--db", db, "--compare-full", "--format", "json")
	require.Zero(t, code, errOut)
	require.Contains(t, out, filepath.Base(names[2])+" is unusable")
	require.Contains(t, out, "left in place (snapshot create moves it aside)")
	require.Contains(t, out, `"snapshot": "`+filepath.Base(names[1])+`"`)
	require.Contains(t, out, `"sameState": true`)
	require.FileExists(t, names[2])

	_, errOut, code = snapCLI(t, "snapshot", "create", "--db", db, "--no-timestamp")
	require.Zero(t, code, errOut)
	require.Contains(t, errOut, "moved aside to "+filepath.Base(names[2])+".broken")

	out, errOut, code = snapCLI(t, "snapshot", "list", "--db", db)
	require.Zero(t, code, errOut)
	require.Contains(t, out, "quarantined: "+filepath.Base(names[2])+".broken")

	// Snapshots built with other rules are skipped, not used.
	out, errOut, code = snapCLI(t, "restart", "--db", db, "--kafka-version", "4.3", "--wide")
	require.Zero(t, code, errOut)
	require.Contains(t, out, "built with Kafka 4.4 replay rules, recovering with 4.3")
	require.Contains(t, out, "full replay")

	_, errOut, code = snapCLI(t, "restart", "--db", filepath.Join(t.TempDir(), "nothing"))
	require.Equal(t, exitFailure, code)
	require.Contains(t, errOut, "not a coordlog database")
}

// snapCLI runs the CLI in-process and returns stdout, stderr and the exit code.
func snapCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// TestClockFromEnv: COORDLOG_NOW is the clock snapshots are stamped with and relative times
// count back from, in the process the user runs; a value that does not parse is a usage error
// that names the variable.
func TestClockFromEnv(t *testing.T) {
	input := recording(t, "consumer")
	db := filepath.Join(t.TempDir(), "db")
	r := cli(t, "import", input, "--db", db, "--progress", "none")
	require.Zero(t, r.code, r.String())

	t.Setenv(wallclock.Env, "2026-11-29T19:05:54.192Z") // a record's own time in this recording
	r = cli(t, "snapshot", "create", "--db", db)
	require.Zero(t, r.code, r.String())
	r = cli(t, "snapshot", "list", "--db", db, "--wide")
	require.Zero(t, r.code, r.String())
	require.Contains(t, r.out, " 2026-11-29T19:05:54Z ", r.String()) // listed to the second

	// -1ms from that instant: the state before the recording's record at 19:05:54.192.
	r = cli(t, "describe", input, "--at-time", "-1ms")
	require.Zero(t, r.code, r.String())
	require.Contains(t, r.err, "2026-11-29T19:05:54.191Z", r.String())

	t.Setenv(wallclock.Env, "yesterday")
	r = cli(t, "groups", input)
	require.Equal(t, exitUsage, r.code, r.String())
	require.Contains(t, r.err, `replay: COORDLOG_NOW="yesterday": not an RFC 3339 time`, r.String())
}
