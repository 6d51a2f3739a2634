package report

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/internal/testcorpus"
	"github.com/coordlog/coordlog/replay"
)

// TestPictures prints what the report draws of a group of a recording, as text: the epoch
// steps, the rebalances, each lane's states and marks, each partition's owners, the committed
// offsets and the transactions, with times in seconds from the group's first drawn event.
// These are the stories of issue 16 as a picture must show them: a static member's restart
// continuing its lane, reconciliation (waiting, revoking), partitions changing owners, a
// conversion between the protocols, rewinds, aborted and open transactions.
//
//	picture RECORDING GROUP [since=OFFSET] [topic-partition=TOPIC:P]
func TestPictures(t *testing.T) {
	datadriven.RunTest(t, "testdata/pictures.txt", func(t *testing.T, td *datadriven.TestData) string {
		if td.Cmd != "picture" || len(td.CmdArgs) < 2 {
			td.Fatalf(t, "want: picture RECORDING GROUP [since=OFFSET] [topic-partition=TOPIC:P]")
		}
		dir := filepath.Join(testcorpus.Recordings(), td.CmdArgs[0].Key, "__consumer_offsets-0")
		opts := Options{Group: td.CmdArgs[1].Key}
		if td.HasArg("since") {
			var from int64
			td.ScanArgs(t, "since", &from)
			opts.From = map[int32]int64{0: from}
		}
		if td.HasArg("topic-partition") {
			var tp string
			td.ScanArgs(t, "topic-partition", &tp)
			topic, p, _ := strings.Cut(tp, ":")
			var n int32
			fmt.Sscan(p, &n)
			opts.TopicPartitions = map[string]map[int32]bool{topic: {n: true}}
		}
		in, err := input.Open(dir, eventlog.Strict)
		if err != nil {
			td.Fatalf(t, "%v", err)
		}
		defer in.Close()
		page, err := Build(context.Background(), in, replay.Options{}, opts)
		if err != nil {
			td.Fatalf(t, "%v", err)
		}
		if len(page.Groups) != 1 {
			td.Fatalf(t, "%d groups drawn", len(page.Groups))
		}
		return pictureText(page.Groups[0])
	})
}

// pictureText renders a group's picture model as text.
func pictureText(g *Group) string {
	var b strings.Builder
	at := func(x int64) string {
		if g.Axis.Unit == UnitOffset {
			return fmt.Sprintf("@%d", x)
		}
		return fmt.Sprintf("+%.3f", float64(x-g.Axis.Start)/1000)
	}
	span := func(sp Span) string {
		end := at(sp.End)
		if sp.Open {
			end = "end"
		}
		return fmt.Sprintf("%s %s..%s", sp.Class, at(sp.Start), end)
	}
	c := g.Counts
	fmt.Fprintf(&b, "group %s (%s) %s, %d members at the end; %d events, %d rebalances, %d rewinds, %d fenced, %d stuck, %d open txns, %d aborted, %d while empty, %d deleted\n",
		g.ID, g.Type, g.State, g.Members, c.Events, c.Rebalances, c.Rewinds, c.Fenced, c.Stuck, c.OpenTxns, c.Aborted, c.WhileEmpty, c.Deletions)
	fmt.Fprintf(&b, "axis %s, %s long\n", formatTime(g.Axis.Start), formatDuration(g.Axis.End-g.Axis.Start))
	var steps []string
	for _, s := range g.Epochs {
		steps = append(steps, fmt.Sprintf("%d%s", s.Epoch, at(s.X)))
	}
	fmt.Fprintf(&b, "epochs: %s\n", strings.Join(steps, " "))
	for _, m := range g.Marks {
		fmt.Fprintf(&b, "mark %s%s (%s)\n", m.Class, at(m.X), m.Src.Records)
	}
	for _, r := range g.Rebalances {
		fmt.Fprintf(&b, "rebalance %s: %s\n", r.Label, span(r))
	}
	for _, l := range g.Lanes {
		var parts []string
		for _, s := range l.Segments {
			parts = append(parts, span(s))
		}
		for _, m := range l.Marks {
			parts = append(parts, m.Class+at(m.X))
		}
		fmt.Fprintf(&b, "lane %s: %s\n", l.Name, strings.Join(parts, ", "))
	}
	owners := func(os []Owner) string {
		var parts []string
		for _, o := range os {
			end := at(o.End)
			if o.Open {
				end = "end"
			}
			parts = append(parts, fmt.Sprintf("%s %s..%s", g.Lanes[o.Lane].Name, at(o.Start), end))
		}
		return strings.Join(parts, ", ")
	}
	for _, r := range g.Assignment {
		fmt.Fprintf(&b, "owner %s: target %s; current %s\n", r.Label, owners(r.Target), owners(r.Current))
	}
	for _, s := range g.Offsets {
		var parts []string
		for _, p := range s.Points {
			flag := ""
			if p.Flags&PointRewind != 0 {
				flag += "!rewind"
			}
			if p.Flags&PointWhileEmpty != 0 {
				flag += "!empty"
			}
			if p.Flags&PointTransactional != 0 {
				flag += "!txn"
			}
			if p.Flags&PointDeleted != 0 {
				flag += "!deleted"
			}
			parts = append(parts, fmt.Sprintf("%d%s%s", p.Value, at(p.X), flag))
		}
		fmt.Fprintf(&b, "offsets %s-%d: %s\n", s.Topic, s.Partition, strings.Join(parts, " "))
	}
	for _, r := range g.Transactions {
		var parts []string
		for _, s := range r.Spans {
			parts = append(parts, span(s))
		}
		fmt.Fprintf(&b, "producer %d: %s\n", r.ProducerID, strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, "listed %d, unlisted %d\n", len(g.Records), g.Unlisted)
	return b.String()
}
