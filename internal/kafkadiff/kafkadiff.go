package kafkadiff

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/coordlog/coordlog/internal/testcorpus"
)

// Lib returns the directory of Kafka's jars, or skips the test (which compares with what) when
// COORDLOG_KAFKA_LIB is not set.
func Lib(t testing.TB, what string) string {
	t.Helper()
	lib := os.Getenv("COORDLOG_KAFKA_LIB")
	if lib == "" {
		t.Skip("COORDLOG_KAFKA_LIB is not set: run fixtures/kafka/assignor-diff.sh to compare with " + what)
	}
	return lib
}

// Cases is the number of random cases: COORDLOG_ASSIGNOR_CASES, or def when it is not set.
func Cases(t testing.TB, def int) int {
	t.Helper()
	s := os.Getenv("COORDLOG_ASSIGNOR_CASES")
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("COORDLOG_ASSIGNOR_CASES=%q: want a count of cases", s)
	}
	return n
}

// Run compiles fixtures/kafka/diff/NAME.java against the jars in lib, runs class diff.NAME
// with stdin as its standard input, and returns the lines it printed.
func Run(t testing.TB, lib, name string, stdin []byte) []string {
	t.Helper()
	dir := filepath.Join(testcorpus.Root(), "fixtures", "kafka", "diff")
	classes := t.TempDir()
	cp := filepath.Join(lib, "*")
	if out, err := exec.Command("javac", "-d", classes, "-cp", cp, filepath.Join(dir, name+".java")).CombinedOutput(); err != nil {
		t.Fatalf("javac %s.java: %v\n%s", name, err, out)
	}
	cmd := exec.Command("java", "-cp", cp+string(os.PathListSeparator)+classes,
		"-Dlog4j2.configurationFile="+filepath.Join(dir, "..", "log4j2-tools.properties"), "diff."+name)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("java diff.%s: %v\n%s", name, err, stderr.String())
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("java diff.%s: reading its output: %v", name, err)
	}
	return lines
}
