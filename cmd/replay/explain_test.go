package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/internal/testcorpus"
	"github.com/coordlog/coordlog/replay/jsondoc"
)

// TestTimelineStories: the timeline tells, in words an operator reads, the stories of the
// recordings that issue 16 found told wrongly or not at all: the classic <-> consumer
// conversion, the static member's temporary leave and replacement, the reconciliation of a
// KIP-848 and of a streams group. Each wanted line is a line of the output; the unwanted are
// today's wrong sentences, which must not come back.
func TestTimelineStories(t *testing.T) {
	cases := []struct {
		scenario, group string
		args            []string
		want, unwanted  []string
	}{{
		scenario: "conversion", group: "convert",
		want: []string{
			"19:06:31.283 p0:8    converted from a classic group to a consumer group at epoch 3 (online upgrade, " +
				"KIP-848): n1 joined with the consumer protocol; k2, k1 carry on as classic-protocol members",
			"19:06:31.283 p0:18   rebalance to epoch 4: n1 joined; target: s3-in:1 k2 -> n1",
			"19:06:37.784 p0:86   n3 left (likely: removed 1.018 s after its own last record (offset 79), sooner " +
				"than the default 45 s session timeout (the group's own is not in the log); else a session timeout)",
			"19:06:32.189 p0:31   k1 left (proved: removed 765 ms after its own last record (offset 24), sooner than " +
				"its 10 s session timeout could fire: no timeout removes a member before that long after its last request)",
			"19:06:37.784 p0:86   epoch 11 ended by the group's conversion",
			"19:06:37.784 p0:86   converted back from a consumer group to a classic group at generation 11 (online " +
				"downgrade): n3 left and only classic-protocol members remain (k3)",
			"19:06:38.200 p0:96   generation 12 (was 11): the rebalance that follows the conversion back to a " +
				"classic group; k3 gets s3-in:0-2",
		},
		unwanted: []string{"classic group deleted", "group deleted", "generation 3 -> 11", "tombstone"},
	}, {
		scenario: "consumer", group: "consumer-848", args: []string{"--session-timeout", "3s"},
		want: []string{
			"19:05:53.848 p0:16   c2 waits for s2-in:3-5, still owned by c1 (epoch 3)",
			"19:05:54.192 p0:18   c1 must revoke s2-in:3-5, which c2 waits for",
			"19:05:54.347 p0:19   c1 revoked s2-in:3-5 after 155 ms; owns s2-in:0-2 at epoch 3",
			"19:05:54.433 p0:20   epoch 3 converged in 585 ms",
			"19:05:54.660 p0:21   c3 joined (member ECDg_i2EQ46K8Hjii1dsRQ, host 127.0.0.1, static, instance " +
				"static-848), subscribed to s2-in",
			"19:06:01.395 p0:65   [fenced] c4-fenced was fenced by its 3 s session timeout (likely: nothing from it " +
				"for 3.124 s after its own last record (offset 62), about its 3 s session timeout: what a member that " +
				"stopped right after that record looks like; else it left)",
			"19:06:01.733 p0:74   c3 (static member static-848) left temporarily (epoch -2): s2-in:2-4 stay " +
				"assigned to it until it rejoins with the same instance id or its session times out",
			"19:06:02.476 p0:78   static member static-848 restarted: c3-restarted (member s7g17GuwThqk2ywlEyPtLA) " +
				"replaces c3 (member ECDg_i2EQ46K8Hjii1dsRQ) and keeps s2-in:2-4, without a rebalance",
		},
		unwanted: []string{"at epoch -2 (previous 6), state STABLE", "left or fenced", "UNREVOKED_PARTITIONS"},
	}, {
		scenario: "consumer", group: "consumer-848", args: []string{"--at-offset", "18", "--summary"},
		want: []string{
			"19:05:53.848 p0:12   epoch 3: c2 joined; s2-in:3-5 c1 -> c2; not converged at the end of the log, " +
				"344 ms after it started; c1 has not revoked s2-in:3-5, since 2026-11-29T19:05:54.192Z; c2 waits " +
				"for c1 to revoke s2-in:3-5, since 2026-11-29T19:05:53.848Z",
		},
	}, {
		scenario: "streams", group: "streams-app", args: []string{"--summary"},
		want: []string{
			"19:06:49.777 p0:6    epoch 3: topology epoch 0 validated (its internal topics exist); " +
				"streams-app-A-StreamThread-1 gets active 0_0,0_1,1_0,1_1; converged at once",
			"19:06:51.263 p0:16   epoch 4: streams-app-B-StreamThread-1 joined; streams-app-A-StreamThread-1 " +
				"gets standby 1_1, streams-app-B-StreamThread-1 gets standby 1_0, active 0_1,1_1 " +
				"streams-app-A-StreamThread-1 -> streams-app-B-StreamThread-1; converged in 1.076 s",
			"4 rebalances: 2 joins, 1 topology validated, 1 leave; the longest took 1.076 s (epoch 4)",
		},
		unwanted: []string{"validated topology epoch 0", "group epoch 2 -> 3"},
	}}
	for _, c := range cases {
		t.Run(c.scenario+" "+strings.Join(c.args, " "), func(t *testing.T) {
			args := append([]string{"timeline", filepath.Join(recordings, c.scenario, "__consumer_offsets-0"), "--group", c.group}, c.args...)
			out, stderr, code := runCLI(t, args...)
			require.Equal(t, 0, code, stderr)
			// The lines as said: a line with its continuation lines (indented) joined.
			var said []string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "    ") && len(said) > 0 {
					said[len(said)-1] += " " + strings.TrimSpace(l)
					continue
				}
				said = append(said, l)
			}
			for _, w := range c.want {
				require.Contains(t, said, w, "wanted line missing; the output:\n%s", out)
			}
			for _, u := range c.unwanted {
				require.NotContains(t, out, u)
			}
			for _, l := range strings.Split(out, "\n") {
				require.LessOrEqual(t, len(l), 80, "line longer than 80 columns: %q", l)
			}
		})
	}
}

func validateJSON(t *testing.T, sch *jsonschema.Schema, doc string, what string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	require.NoError(t, err, what)
	require.NoError(t, sch.Validate(v), "%s:\n%s", what, doc)
	var head struct {
		SchemaVersion *int `json:"schemaVersion"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &head))
	require.NotNil(t, head.SchemaVersion, what)
	require.Equal(t, 1, *head.SchemaVersion, what)
}

// TestTimelineAndCheckJSONMatchSchemas: every line of `timeline --format jsonl` for every group
// of every recording (and of the public MashaKosher dump), and `check --format json` of every
// recording and public dump, are valid against docs/json's schemas, which allow no field they
// do not describe. The schema validator (santhosh-tekuri/jsonschema) is the one the schema
// test of the other commands uses: draft 2020-12 with $ref between files and formats.
func TestTimelineAndCheckJSONMatchSchemas(t *testing.T) {
	schemas := compileSchemas(t) // schema_test.go
	tlSchema, checkSchema := schemas["timeline"], schemas["check"]
	lines := 0
	timeline := func(dir, group string, args ...string) {
		out, stderr, code := runCLI(t, append([]string{"timeline", dir, "--group", group, "--format", "jsonl"}, args...)...)
		require.Equal(t, 0, code, stderr)
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			validateJSON(t, tlSchema, l, dir+" "+group)
			lines++
		}
	}
	check := func(dir string, args ...string) {
		out, stderr, code := runCLI(t, append([]string{"check", dir, "--format", "json"}, args...)...)
		require.Contains(t, []int{0, 1}, code, stderr)
		validateJSON(t, checkSchema, out, "check "+dir)
	}
	for _, sc := range scenarios(t, recordings) {
		dir := filepath.Join(recordings, sc, "__consumer_offsets-0")
		out, _, code := runCLI(t, "groups", dir, "--format", "json", "--include-deleted")
		require.Equal(t, 0, code)
		var doc jsondoc.Groups
		require.NoError(t, json.Unmarshal([]byte(out), &doc))
		for _, g := range doc.Groups {
			timeline(dir, g.GroupID, "--session-timeout", "3s")
		}
		check(dir, "--session-timeout", "3s")
		// Cut 20 records in, where rebalances are still open and transactions pending.
		recs, _, code := runCLI(t, "decode", dir, "--format", "jsonl")
		require.Equal(t, 0, code)
		var first struct {
			Offset int64 `json:"offset"`
		}
		require.NoError(t, json.Unmarshal([]byte(strings.SplitN(recs, "\n", 2)[0]), &first))
		check(dir, "--at-offset", fmt.Sprint(first.Offset+20))
	}
	require.Greater(t, lines, 300, "events validated")
	found := testcorpus.Found(t)
	for _, dir := range testcorpus.PartitionDirs(t, found) {
		check(dir)
	}
	timeline(filepath.Join(found, "MashaKosher-Internship", "kafka", "data"), "adminService")
	timeline(filepath.Join(found, "MashaKosher-Internship", "kafka", "data"), "authService")
}

// TestFoundTranscripts runs the transcripts of testdata/found on the public dumps beside the
// repository (skipped when they are absent): $FOUND in a command stands for their folder, and
// stands for it again in the output. The folder is given relative to this one (as testcorpus
// finds it), so that the output wraps the same wherever the checkout is.
func TestFoundTranscripts(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	found, err := filepath.Rel(wd, testcorpus.Found(t))
	require.NoError(t, err)
	datadriven.Walk(t, "testdata/found", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			if td.Cmd != "replay" {
				td.Fatalf(t, "unknown command %q: a transcript runs `replay ARGS...`", td.Cmd)
			}
			var args []string
			for _, a := range td.CmdArgs {
				arg := a.Key
				if len(a.Vals) > 0 {
					arg += "=" + strings.Join(a.Vals, ",")
				}
				args = append(args, strings.ReplaceAll(arg, "$FOUND", found))
			}
			stdout, stderr, code := runCLI(t, args...)
			var b strings.Builder
			b.WriteString(stdout)
			for _, line := range strings.SplitAfter(stderr, "\n") {
				if line != "" {
					b.WriteString("stderr: " + line)
				}
			}
			if code != 0 {
				fmt.Fprintf(&b, "exit %d\n", code)
			}
			return strings.ReplaceAll(b.String(), found, "$FOUND")
		})
	})
}
