package replay

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/testcorpus"
)

func replayDir(t testing.TB, dir string, opts Options) []Result {
	t.Helper()
	src, err := segment.Open(dir, segment.Options{Mode: opts.Mode})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ReplaySource(context.Background(), src, nil, math.MaxInt64, opts, 0)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return res
}

// TestFoundCorpusStrict replays every real dump in strict mode under Kafka 4.4's rules: no
// violation. It prints group and offset counts per dump.
func TestFoundCorpusStrict(t *testing.T) {
	found := testcorpus.Found(t)
	dirs := testcorpus.PartitionDirs(t, found)
	perRepo := map[string][3]int{}
	for _, dir := range dirs {
		for _, r := range replayDir(t, dir, Options{Mode: eventlog.Strict}) {
			st := r.Engine.State()
			rel, _ := filepath.Rel(found, dir)
			repo := strings.SplitN(rel, string(filepath.Separator), 2)[0]
			c := perRepo[repo]
			c[0] += st.NumGroups()
			c[1] += st.NumOffsets()
			c[2] += int(r.Engine.Stats().Records)
			perRepo[repo] = c
			if v := r.Engine.Stats().Violations; v != 0 {
				t.Errorf("%s: %d violations", dir, v)
			}
		}
	}
	var repos []string
	for r := range perRepo {
		repos = append(repos, r)
	}
	sort.Strings(repos)
	for _, r := range repos {
		c := perRepo[r]
		t.Logf("%-80s groups %4d offsets %5d records %6d", r, c[0], c[1], c[2])
	}
}

// TestRecordingsStrict replays the recordings of a real Kafka 4.4 broker in strict mode.
func TestRecordingsStrict(t *testing.T) {
	dirs := testcorpus.PartitionDirs(t, testcorpus.Recordings())
	for _, dir := range dirs {
		for _, r := range replayDir(t, dir, Options{Mode: eventlog.Strict, Version: groupstate.Kafka44}) {
			st := r.Engine.Stats()
			t.Logf("%s: %d records, %d groups, %d offsets, %d pending transactions, unknown %d", dir, st.Records,
				r.Engine.State().NumGroups(), r.Engine.State().NumOffsets(), len(r.Engine.State().PendingProducerIDs()), st.UnknownTypes)
			var applied []string
			for typ, n := range st.Applied {
				if n+st.Tombstones[typ] > 0 {
					applied = append(applied, fmt.Sprintf("%d:%d/%d", typ, n, st.Tombstones[typ]))
				}
			}
			t.Logf("  applied type:values/tombstones %s; markers %d", strings.Join(applied, " "), st.Markers)
		}
	}
}
