package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog/compact"
	"github.com/coordlog/coordlog/eventlog/lock"
)

// TestWritersRefuseAHeldDatabase: every command that writes a database (import, snapshot
// create, simulate --db) or segments (simulate --segments) is refused, exit 1, with one
// line naming the writer that holds it, and does not open it. After the holder is gone, they
// run; a database whose in-place compaction was interrupted is refused until it is finished.
func TestWritersRefuseAHeldDatabase(t *testing.T) {
	in := filepath.Join(committedRecordings, "consumer", "__consumer_offsets-0")
	if _, err := os.Stat(in); err != nil {
		t.Skip("no fixtures/real/consumer")
	}
	scenario := filepath.Join(t.TempDir(), "s.txt")
	require.NoError(t, os.WriteFile(scenario, []byte("topic t 1\n"), 0o644))
	db := filepath.Join(t.TempDir(), "db")
	_, stderr, code := runCLI(t, "import", in, "--db", db, "--progress", "none")
	require.Equal(t, 0, code, stderr)
	segs := filepath.Join(t.TempDir(), "__consumer_offsets-0")

	held, err := lock.Database(db, "compact --in-place")
	require.NoError(t, err)
	busy := `^replay: ` + regexp.QuoteMeta(db) + ` is in use by "compact --in-place" \(pid \d+ on host [^,]+, since \d\d:\d\d:\d\dZ\): wait for it to finish or stop it\n$`
	for _, args := range [][]string{
		{"import", in, "--db", db, "--progress", "none"},
		{"snapshot", "create", "--db", db},
		{"simulate", "--scenario", scenario, "--protocol", "consumer", "--db", db},
	} {
		stdout, stderr, code := runCLI(t, args...)
		assert.Equal(t, exitFailure, code, "%v", args)
		assert.Empty(t, stdout, "%v", args)
		assert.Regexp(t, busy, stderr, "%v", args)
	}
	require.NoError(t, held.Release())

	held, err = lock.Beside(segs, "replay simulate --segments")
	require.NoError(t, err)
	_, stderr, code = runCLI(t, "simulate", "--scenario", scenario, "--protocol", "consumer", "--segments", segs)
	assert.Equal(t, exitFailure, code)
	assert.Regexp(t, `^replay: `+regexp.QuoteMeta(segs)+` is in use by "replay simulate --segments" \(pid \d+`, stderr)
	require.NoError(t, held.Release())

	_, stderr, code = runCLI(t, "snapshot", "create", "--db", db)
	assert.Equal(t, 0, code, stderr)
	assert.NoFileExists(t, filepath.Join(db, lock.FileName), "the lock file goes with the lock")

	require.NoError(t, os.WriteFile(compact.MarkerPath(db), []byte("{}"), 0o644))
	_, stderr, code = runCLI(t, "import", in, "--db", db, "--progress", "none")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "an in-place compaction was interrupted")
}
