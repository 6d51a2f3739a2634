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

// Explain what happened to one group: the timeline watches the replay and hands out one event
// per record (or transaction marker) of the group, with its position in the log.
func ExampleTimeline() {
	in, err := input.Open("../../fixtures/real/transactions/__consumer_offsets-0", eventlog.Strict)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	tl := explain.NewTimeline("txn-simple", 0, func(ev *explain.Event) {
		fmt.Printf("offset %d: %s\n", ev.Offset, ev.Text())
	})
	e := replay.New(0, replay.Options{Observer: tl})
	if err := e.Run(context.Background(), in, 25); err != nil {
		log.Fatal(err)
	}
	// Output:
	// offset 19: [1 OffsetCommit] offset for s6-in-1 written by the transaction of producer 4: 6 (pending until its COMMIT or ABORT marker)
	// offset 20: [1 OffsetCommit] offset for s6-in-0 written by the transaction of producer 4: 6 (pending until its COMMIT or ABORT marker)
	// offset 21: transaction of producer 4 committed: its offsets for s6-in-1, s6-in-0 are now committed (unless a newer record already set them)
	// offset 22: [1 OffsetCommit] offset for s6-in-1 written by the transaction of producer 4: 8 (pending until its COMMIT or ABORT marker)
	// offset 23: [1 OffsetCommit] offset for s6-in-0 written by the transaction of producer 4: 8 (pending until its COMMIT or ABORT marker)
	// offset 24: transaction of producer 4 aborted: its pending offsets for s6-in-1, s6-in-0 are dropped
}
