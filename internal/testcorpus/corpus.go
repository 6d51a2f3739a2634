// Package testcorpus finds the real __consumer_offsets dumps that tests read: the public dumps
// of ../shared/fixtures-found (beside the repository, never copied into it) and the recordings
// of a real Kafka 4.4 broker in fixtures/real. Tests that need the public dumps skip with a
// message when the folder is absent, so that a clone without ../shared still passes.
package testcorpus

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// Root is the repository's root folder (where go.mod is), found from this file's path.
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("testcorpus: no caller information")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Found returns the folder of the public dumps, or skips t with a message when it is absent.
func Found(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(Root(), "..", "shared", "fixtures-found")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the public dumps are not here (%v): the tests on real-world dumps are skipped", err)
	}
	return dir
}

// Recordings returns fixtures/real, the recordings of a real Kafka 4.4 broker.
func Recordings() string { return filepath.Join(Root(), "fixtures", "real") }

// PartitionDirs returns every __consumer_offsets-N folder below root, sorted; it skips t when
// root is absent.
func PartitionDirs(t testing.TB, root string) []string {
	t.Helper()
	if _, err := os.Stat(root); err != nil {
		t.Skipf("%s is not here: %v", root, err)
	}
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), "__consumer_offsets-") {
			dirs = append(dirs, p)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dirs)
	return dirs
}
