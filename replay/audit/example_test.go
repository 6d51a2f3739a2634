package audit_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/audit"
)

// Audit a recording: watch its replay in forensic mode (every problem recorded, nothing
// stopping it) and inspect the state at the end.
func ExampleAudit() {
	in, err := input.Open("../../fixtures/real/transactions/__consumer_offsets-0", eventlog.Forensic)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	a := audit.New()
	e := replay.New(0, replay.Options{Mode: eventlog.Forensic, Observer: a.Observer(0)})
	if err := e.Run(context.Background(), in, math.MaxInt64); err != nil {
		log.Fatal(err)
	}
	for _, f := range a.Finish([]*replay.Engine{e}, in.Report(), 1) {
		fmt.Printf("p%d %s: %s\n", f.Partition, f.Kind, f.Detail)
	}
	// Output:
	// p0 offset-rewind: transaction of producer 1 committed after 11 ms: s6-in-1 14 -> 11 (-3, moved back), s6-in-0 6 -> 11
	// p0 open-transaction: producer 5 has a transaction open at the end of the log with 2 pending offsets: txn-open/s6-in-0, txn-simple/s6-in-1
}
