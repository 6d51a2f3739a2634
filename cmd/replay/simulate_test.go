package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// simScenario is one of the coordinator's scenario tests, a datadriven file.
const simScenario = "../../coordinator/streams/testdata/static"

func TestSimulateIntoPebbleThenDescribe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"simulate", "--scenario", simScenario, "--db", db, "--quiet"}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	require.Contains(t, out.String(), "simulated")
	// A second run appends after the replayed partition.
	out.Reset()
	code = run(context.Background(), []string{"simulate", "--scenario", simScenario, "--db", db, "--quiet"}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	out.Reset()
	code = run(context.Background(), []string{"describe", db}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	require.Contains(t, out.String(), "GROUP app  TYPE streams")
}

func TestSimulateIntoSegmentsThenCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"simulate", "--scenario", simScenario, "--segments", dir}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	require.True(t, strings.Contains(out.String(), "> join a instance=i1"), "transcript printed")
	out.Reset()
	code = run(context.Background(), []string{"check", dir}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String()+out.String())
	// Refuses to overwrite.
	code = run(context.Background(), []string{"simulate", "--scenario", simScenario, "--segments", dir}, &out, &errb)
	require.Equal(t, exitUsage, code)
}

func TestSimulateUsage(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitUsage, run(context.Background(), []string{"simulate", "--scenario", simScenario}, &out, &errb))
}
