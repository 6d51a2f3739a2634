package explain_test

import (
	"context"
	"fmt"
	"log"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
)

// Explain what happened to one group: the analyzer watches the replay and hands out the
// group's events in log order, each with the position of the record that shows it. Close it
// once the replay ends: a rebalance still converging, a transaction still open, are events
// too.
func ExampleNewTimeline() {
	in, err := input.Open("../../fixtures/real/consumer/__consumer_offsets-0", eventlog.Strict)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	tl := explain.NewTimeline("consumer-848", 0, func(ev *explain.Event) {
		if ev.Kind == explain.KindRebalanceEnd {
			fmt.Printf("offset %d: %s\n", ev.Rebalance.Start.Offset, explain.SummaryText(ev))
		}
	})
	e := replay.New(0, replay.Options{Observer: tl})
	if err := e.Run(context.Background(), in, 35); err != nil {
		log.Fatal(err)
	}
	tl.Close()
	// Output:
	// offset 1: epoch 2: c1 joined; c1 gets s2-in:0-5; converged at once
	// offset 12: epoch 3: c2 joined; s2-in:3-5 c1 -> c2; converged in 585 ms
	// offset 22: epoch 4: c3 joined; s2-in:2 c1 -> c3, s2-in:5 c2 -> c3; converged in 853 ms
}
