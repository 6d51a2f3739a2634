package report

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/eventlogtest"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/internal/testcorpus"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
)

// expected is what the timeline's events of one group say the picture must show.
type expected struct {
	rebalances, fenced, rewinds, transactions int
	lanes                                     map[string]bool
}

// timelineEvents runs the timeline's analyzer alone over every partition of dir and sums up
// its events per group.
func timelineEvents(t *testing.T, dir string) map[string]*expected {
	in, err := input.Open(dir, eventlog.Strict)
	require.NoError(t, err)
	defer in.Close()
	parts, err := in.Partitions()
	require.NoError(t, err)
	out := map[string]*expected{}
	for _, p := range parts {
		a := explain.NewAnalyzer(p, explain.Options{Emit: func(e *explain.Event) {
			x := out[e.Group]
			if x == nil {
				x = &expected{lanes: map[string]bool{}}
				out[e.Group] = x
			}
			lane := func(m *explain.Member) { x.lanes[m.Lane] = true }
			switch e.Kind {
			case explain.KindRebalanceEnd:
				x.rebalances++
			case explain.KindMemberFenced:
				x.fenced++
			case explain.KindTransactionEnd, explain.KindTransactionOpen:
				x.transactions++
			}
			if e.Member != nil {
				lane(e.Member)
			}
			if r := e.Removal; r != nil {
				lane(&r.Member)
			}
			if r := e.Reconcile; r != nil {
				lane(&r.Member)
			}
			if r := e.Replacement; r != nil {
				lane(&r.Member)
				lane(&r.Previous)
			}
			if c := e.Conversion; c != nil {
				for i := range c.Members {
					lane(&c.Members[i])
				}
			}
			var changes []explain.OffsetChange
			if e.Offsets != nil {
				changes = e.Offsets.Changes
			}
			if tx := e.Transaction; tx != nil && e.Kind == explain.KindTransactionEnd && tx.Result == "committed" {
				changes = tx.Offsets
			}
			for _, c := range changes {
				if c.Rewind {
					x.rewinds++
				}
			}
		}})
		e := replay.New(p, replay.Options{Observer: a})
		require.NoError(t, e.Run(context.Background(), in, math.MaxInt64))
		a.Close()
	}
	return out
}

// TestReportOfEveryRecording builds the report of every recording of a real Kafka 4.4 broker,
// checks that the page is well-formed and self-contained, and that what it draws agrees with
// the timeline's events (counted by an analyzer of its own), group by group: as many
// rebalances, lanes, fenced members, rewinds and transactions.
func TestReportOfEveryRecording(t *testing.T) {
	for _, dir := range testcorpus.PartitionDirs(t, testcorpus.Recordings()) {
		name := filepath.Base(filepath.Dir(dir))
		t.Run(name, func(t *testing.T) {
			in, err := input.Open(dir, eventlog.Strict)
			require.NoError(t, err)
			defer in.Close()
			// Batches are overwritten once the replay moves past them: nothing the page keeps
			// may alias a source's read buffer.
			page, err := Build(context.Background(), eventlogtest.Scribbling(in), replay.Options{}, Options{})
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, page))
			st := readPage(t, buf.Bytes())
			if out := os.Getenv("REPORT_OUT"); out != "" {
				require.NoError(t, os.WriteFile(filepath.Join(out, name+".html"), buf.Bytes(), 0o644))
			}

			want := timelineEvents(t, dir)
			require.NotEmpty(t, want, "the recording has events")
			require.Len(t, page.Groups, len(want), "every group with events is drawn")
			require.Equal(t, len(page.Groups), st.sections)
			for _, g := range page.Groups {
				w := want[g.ID]
				require.NotNil(t, w, "group %q is drawn but has no event", g.ID)
				got := st.groups[g.Anchor]
				require.Equal(t, w.rebalances, got["rebalance"], "%s: rebalances", g.ID)
				require.Equal(t, w.rebalances, g.Counts.Rebalances, "%s: rebalances counted", g.ID)
				require.Equal(t, len(w.lanes), got["lane"], "%s: member lanes", g.ID)
				require.Equal(t, w.fenced, got["member-fenced"], "%s: fenced members", g.ID)
				require.Equal(t, w.rewinds, got["rewind"], "%s: rewinds", g.ID)
				require.Equal(t, w.transactions, got["transaction"], "%s: transactions", g.ID)
			}
		})
	}
}
