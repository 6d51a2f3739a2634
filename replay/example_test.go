package replay_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/replay"
)

// Open a dump copied off a broker, replay it up to an offset and list its groups: the state
// of the coordinator as it was after the record at offset 19, while a second consumer waited
// for the first to release its partitions.
func Example() {
	in, err := input.Open("../fixtures/real/consumer/__consumer_offsets-0", eventlog.Strict)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()

	e := replay.New(0, replay.Options{}) // Kafka 4.4's rules, strict
	if err := e.Run(context.Background(), in, 20); err != nil {
		log.Fatal(err) // a record Kafka's loader would fail on, with file and position
	}
	st := e.State()
	fmt.Printf("next offset %d, %d records replayed\n", e.NextOffset(), e.Stats().Records)
	for _, g := range st.Groups() {
		fmt.Printf("%s: %s group, %s\n", g.GroupID, g.Type, g.State)
		if c := g.Consumer; c != nil {
			for _, m := range c.Members {
				fmt.Printf("  member %s (client %s) at epoch %d, %s\n", m.MemberID, m.ClientID, m.MemberEpoch, m.StateName)
			}
		}
	}
	// Output:
	// next offset 20, 20 records replayed
	// consumer-848: consumer group, Reconciling
	//   member HmGHS5ApQtOwaCD8tSReMg (client c1) at epoch 3, STABLE
	//   member t6x8kk4pR8G1DJvvv_q4Iw (client c2) at epoch 3, UNRELEASED_PARTITIONS
}

// Replay a whole log directory, one engine per partition on every core, and read each
// partition's committed offsets. Group txn-simple committed offset 6 in a transaction, then
// wrote 8 in one that aborted and 14 in one still open at the end: 6 is what it resumes from.
func ExampleReplaySource() {
	in, err := input.Open("../fixtures/real/transactions", eventlog.Strict)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	results, err := replay.ReplaySource(context.Background(), in, nil, math.MaxInt64, replay.Options{}, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		st := r.Engine.State()
		fmt.Printf("partition %d: %d groups, %d committed offsets, %d open transactions\n",
			r.Engine.Partition(), st.NumGroups(), st.NumOffsets(), len(st.PendingTransactions()))
		for _, o := range st.Offsets("txn-simple") {
			fmt.Printf("  %s %s-%d at %d (record %d)\n", o.GroupID, o.Topic, o.Partition, o.CommittedOffset, o.RecordOffset)
		}
	}
	// Output:
	// partition 0: 4 groups, 6 committed offsets, 1 open transactions
	//   txn-simple s6-in-0 at 6 (record 20)
	//   txn-simple s6-in-1 at 6 (record 19)
}
