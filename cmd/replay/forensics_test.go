package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/replay/jsondoc"
	"github.com/coordlog/coordlog/replay/query"
)

// stateOf is what describe --format json says of the state, without where it was asked.
type stateOf struct {
	Partitions []struct {
		NextOffset          int64           `json:"nextOffset"`
		Position            *query.Position `json:"position"`
		Groups              json.RawMessage `json:"groups"`
		OrphanOffsets       json.RawMessage `json:"orphanOffsets"`
		PendingTransactions json.RawMessage `json:"pendingTransactions"`
	} `json:"partitions"`
}

func describeAt(t *testing.T, dir string, args ...string) stateOf {
	t.Helper()
	out, stderr, code := runCLI(t, append([]string{"describe", dir, "--format", "json"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var s stateOf
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	require.Len(t, s.Partitions, 1)
	return s
}

// On every recording, `describe --at-time T` prints the state `describe --at-offset R` prints,
// where R is the record T resolves to (the last one stamped at or before T), at every record's
// timestamp and a millisecond before it; the JSON names that record.
func TestAtTimeCLIAgreesWithAtOffset(t *testing.T) {
	for _, sc := range scenarios(t, recordings) {
		t.Run(sc, func(t *testing.T) {
			dir := filepath.Join(recordings, sc, "__consumer_offsets-0")
			out, _, code := runCLI(t, "decode", dir, "--format", "jsonl")
			require.Equal(t, 0, code)
			seen := map[int64]bool{}
			n := 0
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var r struct {
					Timestamp int64 `json:"timestamp"`
				}
				require.NoError(t, json.Unmarshal([]byte(line), &r))
				for _, ts := range []int64{r.Timestamp - 1, r.Timestamp} {
					if seen[ts] {
						continue
					}
					seen[ts] = true
					at := describeAt(t, dir, "--at-time", fmt.Sprint(ts))
					pos := at.Partitions[0].Position
					require.NotNil(t, pos)
					if pos.Last == nil {
						require.JSONEq(t, "[]", string(at.Partitions[0].Groups), "a time before the first record: no group")
						continue
					}
					require.LessOrEqual(t, pos.Last.Timestamp, ts)
					if pos.Next != nil {
						require.Greater(t, pos.Next.Timestamp, ts)
					}
					off := describeAt(t, dir, "--at-offset", fmt.Sprint(pos.Last.Offset))
					a, b := at.Partitions[0], off.Partitions[0]
					// (The engines' next offsets may differ across a compaction gap after the
					// record: the state may not.)
					require.JSONEq(t, string(b.Groups), string(a.Groups), "at %d (record %d)", ts, pos.Last.Offset)
					require.Equal(t, string(b.OrphanOffsets), string(a.OrphanOffsets))
					require.Equal(t, string(b.PendingTransactions), string(a.PendingTransactions))
					n++
				}
			}
			t.Logf("%d instants agree with the offsets they resolve to", n)
		})
	}
}

// On every recording, `replay groups --format json` lists exactly the groups of Kafka's own
// listGroups in admin.json, with their type, protocol type, state and simple flag.
func TestGroupsCLIAgreesWithKafkaListGroups(t *testing.T) {
	for _, sc := range scenarios(t, recordings) {
		t.Run(sc, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(recordings, sc, "admin.json"))
			require.NoError(t, err)
			var admin struct {
				ListGroups []struct {
					GroupID string `json:"groupId"`
					Type    string `json:"type"`
					Proto   string `json:"protocol"`
					State   string `json:"state"`
					Simple  bool   `json:"isSimpleConsumerGroup"`
				} `json:"listGroups"`
			}
			require.NoError(t, json.Unmarshal(raw, &admin))
			out, stderr, code := runCLI(t, "groups", filepath.Join(recordings, sc, "__consumer_offsets-0"), "--format", "json")
			require.Equal(t, 0, code, stderr)
			var doc jsondoc.Groups
			require.NoError(t, json.Unmarshal([]byte(out), &doc))
			require.Equal(t, 1, doc.SchemaVersion)
			var kafka, ours []string
			for _, l := range admin.ListGroups {
				kafka = append(kafka, fmt.Sprintf("%s %s %q %s %v", l.GroupID, strings.ToLower(l.Type), l.Proto, l.State, l.Simple))
			}
			for _, g := range doc.Groups {
				ours = append(ours, fmt.Sprintf("%s %s %q %s %v", g.GroupID, g.Type, g.ProtocolType, g.State, g.Simple))
			}
			slices.Sort(kafka)
			require.Equal(t, kafka, ours)
		})
	}
}

// A log directory whose partition has no record (an empty segment, as retention leaves it):
// import keeps the partition, decode prints DumpLogSegments' header lines for the empty file,
// and check of the database sees as many partitions as check of the directory.
func TestEmptyPartitionsAndSegments(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(committedRecordings, "classic", "__consumer_offsets-0")
	p0, p1 := filepath.Join(root, "__consumer_offsets-0"), filepath.Join(root, "__consumer_offsets-1")
	require.NoError(t, os.MkdirAll(p0, 0o755))
	require.NoError(t, os.MkdirAll(p1, 0o755))
	logs, _ := filepath.Glob(filepath.Join(src, "*.log"))
	for _, f := range logs {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(p0, filepath.Base(f)), b, 0o644))
	}
	empty := filepath.Join(p1, "00000000000000000050.log")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))

	out, _, code := runCLI(t, "decode", p1)
	require.Equal(t, 0, code)
	require.Equal(t, "Dumping "+empty+"\nLog starting offset: 50\n", out)

	db := filepath.Join(t.TempDir(), "db")
	out, stderr, code := runCLI(t, "import", root, "--db", db, "--progress", "none", "--wide")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "partition 1: no record in the log (empty; next offset 50, was 0 before this import)")
	fromDir, _, _ := runCLI(t, "check", root)
	fromDB, _, _ := runCLI(t, "check", db)
	require.Contains(t, fromDir, "checked 2 partitions")
	require.Equal(t, strings.SplitN(fromDir, "\n", 2)[0], strings.SplitN(fromDB, "\n", 2)[0])
	_, stderr, code = runCLI(t, "describe", db, "--at-offset", "1:5")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "partition 1 holds no record (its next offset is 50)")

	// snapshot create at an offset the database does not have is refused, not clamped.
	_, stderr, code = runCLI(t, "snapshot", "create", "--db", db, "--at-offset", "0:99999")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--at-offset 99999 is past the end of partition 0 (offsets 0..36, next offset 37)")
	_, stderr, code = runCLI(t, "snapshot", "create", "--db", db, "--at-offset", "99999")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "give partition:offset pairs")
	out, stderr, code = runCLI(t, "snapshot", "create", "--db", db, "--at-offset", "0:20", "--no-timestamp", "--wide")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, ".snap at offset 21: 2 groups, 4 offsets")
}
