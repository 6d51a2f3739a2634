package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// committedRecordings are the recordings in the repository (the transcripts in
// testdata/transcripts read them too). recordings is where the Kafka comparisons read: a fresh
// recording directory when COORDLOG_RECORDINGS names one (.ci/run records one from a live
// broker), else the committed ones.
const committedRecordings = "../../fixtures/real"

var recordings = func() string {
	if d := os.Getenv("COORDLOG_RECORDINGS"); d != "" {
		return d
	}
	return committedRecordings
}()

// runCLI runs the replay CLI in-process and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// scenarios lists the recorded scenario directories.
func scenarios(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Skipf("no recordings in %s: %v", root, err)
	}
	var out []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "__consumer_offsets-0")); err == nil {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Skip("no recorded scenarios")
	}
	return out
}

// TestDecodeEqualsKafkaDumpLog: on every recording, `replay decode` prints exactly what Kafka
// 4.4's own DumpLogSegments --offsets-decoder printed into dump.txt when it was recorded.
func TestDecodeEqualsKafkaDumpLog(t *testing.T) {
	for _, s := range scenarios(t, recordings) {
		t.Run(s, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(recordings, s, "dump.txt"))
			if err != nil {
				t.Skipf("no dump.txt: %v", err)
			}
			dir := filepath.Join(recordings, s, "__consumer_offsets-0")
			out, stderr, code := runCLI(t, "decode", dir)
			require.Equal(t, 0, code, stderr)
			// dump.txt names the files relative to the scenario directory.
			got := strings.ReplaceAll(out, dir+string(filepath.Separator), "__consumer_offsets-0/")
			require.Equal(t, string(want), got)
		})
	}
}

// TestDeterministic: two replays give byte-identical JSON.
func TestDeterministic(t *testing.T) {
	for _, s := range scenarios(t, recordings) {
		dir := filepath.Join(recordings, s, "__consumer_offsets-0")
		a, _, _ := runCLI(t, "describe", dir, "--format", "json")
		b, _, _ := runCLI(t, "describe", dir, "--format", "json")
		require.Equal(t, a, b, s)
	}
}

// TestAtOffsetRewinds: the transactions recording changes its answer along history: an offset
// is pending before its COMMIT marker and committed after it.
func TestAtOffsetRewinds(t *testing.T) {
	dir := filepath.Join(committedRecordings, "transactions", "__consumer_offsets-0")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no transactions recording")
	}
	end, _, code := runCLI(t, "offsets", dir, "--format", "json")
	require.Equal(t, 0, code)
	early, _, code := runCLI(t, "offsets", dir, "--format", "json", "--at-offset", "3")
	require.Equal(t, 0, code)
	require.NotEqual(t, end, early)
	require.Contains(t, early, `"atOffset": 3`)
	// At offset 3 nothing is committed yet in that recording.
	require.Contains(t, early, `"offsets": []`)
}

// TestImportThenReadFromDB imports each recording into a Pebble log; every command then gives
// the same answer from the database as from the segments, and a second import adds nothing.
func TestImportThenReadFromDB(t *testing.T) {
	for _, s := range scenarios(t, recordings) {
		dir := filepath.Join(recordings, s, "__consumer_offsets-0")
		db := filepath.Join(t.TempDir(), "db")
		out, stderr, code := runCLI(t, "import", dir, "--db", db, "--progress", "none")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, "imported ")
		out2, stderr, code := runCLI(t, "import", dir, "--db", db, "--progress", "none")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out2, "imported 0 batches, 0 records", "re-import must add nothing")

		for _, args := range [][]string{{"decode"}, {"describe", "--format", "json"}, {"offsets"}} {
			fromSeg, _, c1 := runCLI(t, append([]string{args[0], dir}, args[1:]...)...)
			fromDB, _, c2 := runCLI(t, append([]string{args[0], db}, args[1:]...)...)
			require.Equal(t, c1, c2)
			require.Equal(t, fromSeg, fromDB, "%s %v", s, args)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	_, stderr, code := runCLI(t, "describe")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "needs one input")
	_, stderr, code = runCLI(t, "decode", "--format", "xml", ".")
	require.Equal(t, exitUsage, code, stderr)
	_, stderr, code = runCLI(t, "describe", "--kafka-version", "3.9", ".")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "3.9")
	_, stderr, code = runCLI(t, "timeline", ".")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "--group")
	_, stderr, code = runCLI(t, "describe", t.TempDir())
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, "no .log files and no __consumer_offsets-N directories")
}

// TestDamagedInput: strict mode stops at a corrupted batch naming the file and byte position;
// forensic mode reports it and goes on with the next batches.
func TestDamagedInput(t *testing.T) {
	src := filepath.Join(committedRecordings, "consumer", "__consumer_offsets-0", "00000000000000000000.log")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Skip("no consumer recording")
	}
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	// Flip a byte inside the second batch's records: its CRC no longer matches.
	size1 := 12 + int(uint32(data[8])<<24|uint32(data[9])<<16|uint32(data[10])<<8|uint32(data[11]))
	bad := bytes.Clone(data)
	bad[size1+70] ^= 0xff
	require.NoError(t, os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), bad, 0o644))

	_, stderr, code := runCLI(t, "describe", dir)
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, "00000000000000000000.log")
	require.Contains(t, stderr, "bad-crc")
	require.Contains(t, stderr, "--forensic")

	out, stderr, code := runCLI(t, "describe", dir, "--forensic")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "bad-crc")
	require.Contains(t, out, "GROUP ")

	out, _, code = runCLI(t, "check", dir)
	require.Equal(t, exitFindings, code)
	require.Contains(t, out, "damaged-input")
}

// TestDecodeEqualsKafkaOnFoundCorpus runs Kafka 4.4's own DumpLogSegments over the public dumps
// in ../shared/fixtures-found and compares its output with `replay decode`, file by file. It
// needs the Kafka jars that fixtures/kafka/record.sh downloads (skipped otherwise).
//
// It takes minutes (one JVM dumping 11 MB as JSON), so it runs only when COORDLOG_KAFKA_CHECKS=1,
// as .ci/run sets it.
func TestDecodeEqualsKafkaOnFoundCorpus(t *testing.T) {
	if os.Getenv("COORDLOG_KAFKA_CHECKS") != "1" {
		t.Skip("set COORDLOG_KAFKA_CHECKS=1 to compare with Kafka's DumpLogSegments (takes minutes)")
	}
	lib, _ := filepath.Abs("../../fixtures/kafka/target/lib")
	if m, _ := filepath.Glob(filepath.Join(lib, "kafka-tools-*.jar")); len(m) == 0 {
		t.Skipf("Kafka jars not in %s (run fixtures/kafka/record.sh or mvn -f fixtures/kafka/pom.xml package)", lib)
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	corpus, _ := filepath.Abs("../../../shared/fixtures-found")
	var dirs []string
	_ = filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), "__consumer_offsets-") {
			dirs = append(dirs, p)
			return filepath.SkipDir
		}
		return nil
	})
	if len(dirs) == 0 {
		t.Skipf("corpus %s not present", corpus)
	}
	sort.Strings(dirs)
	// One JVM for every file: Kafka prints each in --files order.
	var files []string
	for _, d := range dirs {
		m, _ := filepath.Glob(filepath.Join(d, "*.log"))
		sort.Strings(m)
		files = append(files, m...)
	}
	cmd := exec.Command("java", "-cp", lib+"/*", "-Dlog4j2.configurationFile="+filepath.Join(lib, "..", "..", "log4j2-tools.properties"),
		"org.apache.kafka.tools.DumpLogSegments", "--deep-iteration", "--offsets-decoder", "--files", strings.Join(files, ","))
	kafkaOut, err := cmd.Output()
	require.NoError(t, err)
	kafka := splitDumps(string(kafkaOut))

	var ours strings.Builder
	var superseded string
	for _, d := range dirs {
		out, stderr, code := runCLI(t, "decode", d)
		require.Equal(t, 0, code, stderr)
		ours.WriteString(out)
		superseded += stderr
	}
	mine := splitDumps(ours.String())
	matched := 0
	for _, f := range files {
		if mine[f] == kafka[f] {
			matched++
			continue
		}
		// A stale pre-cleaning segment left beside its replacement: Kafka's dump prints it,
		// coordlog reads the partition by offset (as the broker does), reports it superseded and
		// prints only its "Dumping" lines.
		if strings.Count(mine[f], "\n") <= 2 && strings.Contains(superseded, "superseded") {
			t.Logf("%s: superseded by an earlier file's batches; reported, not printed", f)
			continue
		}
		t.Errorf("%s: decode differs from Kafka's DumpLogSegments", f)
	}
	t.Logf("%d of %d files print exactly as Kafka's DumpLogSegments", matched, len(files))
}

// splitDumps splits dump output into one text per "Dumping <file>" section.
func splitDumps(s string) map[string]string {
	out := map[string]string{}
	var cur string
	for _, line := range strings.SplitAfter(s, "\n") {
		if f, ok := strings.CutPrefix(line, "Dumping "); ok {
			cur = strings.TrimSpace(f)
		}
		if cur != "" {
			out[cur] += line
		}
	}
	return out
}

// TestImportFoundCorpus imports every public dump of ../shared/fixtures-found into a Pebble log
// with zero errors; per partition, the batches and records in the log agree with the segment
// reader, and the state replayed from the log equals the one replayed from the segments.
func TestImportFoundCorpus(t *testing.T) {
	corpus := "../../../shared/fixtures-found"
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("corpus %s not present: %v", corpus, err)
	}
	var dirs []string
	_ = filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), "__consumer_offsets-") {
			dirs = append(dirs, p)
			return filepath.SkipDir
		}
		return nil
	})
	sort.Strings(dirs)
	if len(dirs) == 0 {
		t.Skip("no partitions in the corpus")
	}
	var batches, records int
	for i, d := range dirs {
		db := filepath.Join(t.TempDir(), fmt.Sprintf("db%d", i))
		out, stderr, code := runCLI(t, "import", d, "--db", db, "--progress", "none", "--wide")
		require.Equal(t, 0, code, "%s: %s", d, stderr)
		m := regexp.MustCompile(`imported (\d+) batch(?:es)?, (\d+) records?`).FindStringSubmatch(out)
		require.NotNil(t, m, out)
		b, _ := strconv.Atoi(m[1])
		r, _ := strconv.Atoi(m[2])
		batches, records = batches+b, records+r
		// What the log holds decodes and replays exactly like the segments.
		for _, args := range [][]string{{"decode", "--format", "jsonl"}, {"describe", "--format", "json"}} {
			fromSeg, _, c1 := runCLI(t, append([]string{args[0], d}, args[1:]...)...)
			fromDB, _, c2 := runCLI(t, append([]string{args[0], db}, args[1:]...)...)
			require.Equal(t, 0, c1)
			require.Equal(t, 0, c2)
			require.Equal(t, fromSeg, fromDB, "%s %v", d, args)
		}
	}
	t.Logf("%d partitions imported: %d batches, %d records", len(dirs), batches, records)
	// The segment reader's count of the corpus (eventlog/segment's corpus test checks it against
	// the raw batch headers): superseded stale segments are not imported.
	require.Equal(t, 81568, records)
}
