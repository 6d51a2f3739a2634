package input

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/internal/testcorpus"
)

// TestOpenTellsKindsApart opens each kind a user can point coordlog at, and the things that
// are none of them.
func TestOpenTellsKindsApart(t *testing.T) {
	part := filepath.Join(testcorpus.Recordings(), "streams", "__consumer_offsets-0")
	in, err := Open(part, eventlog.Strict)
	require.NoError(t, err)
	require.Equal(t, PartitionDir, in.Kind)
	require.NotNil(t, in.Report())
	parts, err := in.Select(nil)
	require.NoError(t, err)
	require.Equal(t, []int32{0}, parts)
	_, err = in.Select([]int32{0, 7})
	require.EqualError(t, err, "partition 7 is not in the input (it has [0])")
	require.NoError(t, in.Close())

	logDir := filepath.Join(testcorpus.Recordings(), "streams")
	in, err = Open(logDir, eventlog.Strict)
	require.NoError(t, err)
	require.Equal(t, LogDir, in.Kind)
	require.Equal(t, []string{filepath.Join(logDir, "driver.log") + ": not a segment file (this is a log directory), ignored"}, in.Report().Warnings(),
		"the recording driver's own log beside the partition is not a segment")
	require.NoError(t, in.Close())

	db := filepath.Join(t.TempDir(), "db")
	l, err := pebblelog.Open(db, nil)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.True(t, IsDatabase(db))
	in, err = Open(db, eventlog.Strict)
	require.NoError(t, err)
	require.Equal(t, Database, in.Kind)
	require.Nil(t, in.Report())
	require.NoError(t, in.Close())
	require.NoError(t, in.Close(), "a second Close does nothing")

	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = Open(file, eventlog.Strict)
	require.ErrorContains(t, err, "is not a directory: give a __consumer_offsets-N directory, a log directory or a coordlog database")
	_, err = Open(t.TempDir(), eventlog.Strict)
	require.ErrorContains(t, err, "no .log files and no __consumer_offsets-N directories")
	require.False(t, IsDatabase(t.TempDir()))
}
