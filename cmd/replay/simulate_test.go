package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
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

// simulateSegments runs simulate on script into a new segment directory and returns stdout
// and the directory.
func simulateSegments(t *testing.T, script string) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"simulate", "--scenario", script, "--segments", dir}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	return out.String(), dir
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = string(b)
	}
	return files
}

// TestSimulateReadsPlainScriptsAndDatadrivenFiles runs one scenario in both forms: the
// coordinator's datadriven test file, and the plain script of its directives (with comments).
// Both print the same transcript, each directive as a "> " line followed by the output the
// test file expects of it, and write the same segments. (The file uses only datadriven's
// single-separator form without input lines: a directive is the line before a "----" line,
// its expected output the lines after it up to a blank line. This package cannot import
// datadriven, whose -rewrite flag would clash with replay_test.go's; the coordinator's
// TestRunnerReadsScenarioFiles checks every test file against datadriven's own reader.)
func TestSimulateReadsPlainScriptsAndDatadrivenFiles(t *testing.T) {
	file, err := os.ReadFile(simScenario)
	require.NoError(t, err)
	require.NotContains(t, string(file), "----\n----\n")
	var want, plain strings.Builder
	plain.WriteString("# the scenario of " + simScenario + " as a plain script\n")
	lines := strings.Split(string(file), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if lines[i+1] != "----" {
			continue
		}
		fmt.Fprintf(&want, "> %s\n", lines[i])
		fmt.Fprintf(&plain, "%s   # a comment\n\n", lines[i])
		for i += 2; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			fmt.Fprintf(&want, "%s\n", lines[i])
		}
	}
	require.Contains(t, want.String(), "> join a2 instance=i1\n  < member=a2 epoch=4")
	plainPath := filepath.Join(t.TempDir(), "static.scenario")
	require.NoError(t, os.WriteFile(plainPath, []byte(plain.String()), 0o644))

	ddOut, ddDir := simulateSegments(t, simScenario)
	plainOut, plainDir := simulateSegments(t, plainPath)
	summary := func(path string) string {
		return fmt.Sprintf("simulated %s: 11 batches, 35 records, next offset 35\n", path)
	}
	require.Equal(t, want.String()+summary(simScenario), ddOut)
	require.Equal(t, want.String()+summary(plainPath), plainOut)
	require.Equal(t, readDir(t, ddDir), readDir(t, plainDir))
}

// TestSimulateSkipsDoubleSeparatorBlocks: an expected-output block opened by "----" "----" may
// hold blank lines and "----" lines; it ends at the next "----" "----" pair.
func TestSimulateSkipsDoubleSeparatorBlocks(t *testing.T) {
	script := `# datadriven's double-separator form
config delay=0 interval=0
----
----
join nobody

----
hb nobody
----
----

topic in 2
----

sub 0 source=in
----
----
----
----

join a
----
----
  < an expected output

  < that simulate does not check
----
----
`
	path := filepath.Join(t.TempDir(), "double")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	out, _ := simulateSegments(t, path)
	var cmds []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "> ") {
			cmds = append(cmds, l)
		}
	}
	require.Equal(t, []string{"> config delay=0 interval=0", "> topic in 2", "> sub 0 source=in", "> join a"}, cmds)
	require.Contains(t, out, "  < member=a epoch=")
	require.Contains(t, out, "simulated "+path+": 1 batches")
}

// TestSimulateConsumerScenario runs a consumer coordinator scenario (a datadriven file) into
// segments; the transcript is the directives with what the test file expects, and the
// segments pass check.
func TestSimulateConsumerScenario(t *testing.T) {
	const scenario = "../../coordinator/consumer/testdata/static"
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"simulate", "--protocol", "consumer", "--scenario", scenario, "--segments", dir}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	require.Contains(t, out.String(), "> join c instance=ia\n  < member=c epoch=3 assignment=[in:0,1]")
	out.Reset()
	require.Equal(t, exitOK, run(context.Background(), []string{"check", dir}, &out, &errb), errb.String()+out.String())
	require.Equal(t, exitUsage, run(context.Background(), []string{"simulate", "--protocol", "share", "--scenario", scenario, "--segments", t.TempDir()}, &out, &errb))
}

// TestSimulateFromDump: "what if the static member left for good now" on the real broker's
// recording: the dump is replayed, the member leaves, the remaining member gets every
// partition; the simulated batches follow the dump's offsets, reuse the dump's topic id (the
// metadata hash equals the one Kafka wrote) and the adopted client's id, and describe of the
// new log shows the outcome.
func TestSimulateFromDump(t *testing.T) {
	script := filepath.Join(t.TempDir(), "whatif")
	require.NoError(t, os.WriteFile(script, []byte(`group consumer-848
topic s2-in 6
leave s7g17GuwThqk2ywlEyPtLA
hb HmGHS5ApQtOwaCD8tSReMg
`), 0o644))
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"simulate", "--protocol", "consumer", "--from", "../../fixtures/real/consumer/__consumer_offsets-0", "--scenario", script, "--segments", dir}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	s := out.String()
	require.Contains(t, s, "replayed ../../fixtures/real/consumer/__consumer_offsets-0 partition 0 up to offset 126: 2 groups")
	require.Contains(t, s, `{"epoch":8,"metadataHash":4388309904112012656}`)
	require.Contains(t, s, "< member=HmGHS5ApQtOwaCD8tSReMg epoch=8 assignment=[s2-in:0,1,2,3,4,5]")
	require.NotContains(t, s, `"type":"5","data":{"groupId":"consumer-848","memberId":"HmGHS5ApQtOwaCD8tSReMg"}`, "the adopted client keeps its client id: no metadata record")
	require.Contains(t, s, "next offset 133")
	files, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "00000000000000000126.log")}, files)

	// --to-offset: the state as it was before the static member joined (offset 21).
	out.Reset()
	code = run(context.Background(), []string{"simulate", "--protocol", "consumer", "--from", "../../fixtures/real/consumer/__consumer_offsets-0", "--to-offset", "21", "--scenario", script, "--segments", filepath.Join(t.TempDir(), "p")}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	require.Contains(t, out.String(), "up to offset 21: 1 groups")
	require.Contains(t, out.String(), `error=25 "Member s7g17GuwThqk2ywlEyPtLA is not a member of group consumer-848."`)
	require.Equal(t, exitUsage, run(context.Background(), []string{"simulate", "--to-offset", "5", "--scenario", script, "--segments", t.TempDir()}, &out, &errb))
}
