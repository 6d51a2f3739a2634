package report_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/report"
)

// Draw the history of a dump's groups: Build replays it with the timeline's analyzer and
// returns the picture; Write renders it as one self-contained HTML page.
func ExampleBuild() {
	in, err := input.Open("../../fixtures/real/consumer/__consumer_offsets-0", eventlog.Strict)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	page, err := report.Build(context.Background(), in, replay.Options{}, report.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, g := range page.Groups {
		fmt.Printf("%s (%s): %d rebalances, %d lanes:", g.ID, g.Type, len(g.Rebalances), len(g.Lanes))
		for _, l := range g.Lanes {
			fmt.Printf(" %q", l.Name)
		}
		fmt.Println()
	}
	f, err := os.CreateTemp("", "report-*.html")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(f.Name())
	if err := report.Write(f, page); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// consumer-848 (consumer): 6 rebalances, 4 lanes: "c1" "c2" "c3, c3-restarted [static-848]" "c4-fenced"
	// consumer-regex (consumer): 4 rebalances, 2 lanes: "r1" "r2"
}
