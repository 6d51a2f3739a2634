package recovery_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/recovery"
	"github.com/coordlog/coordlog/snapshot"
)

// Restart a coordinator from a snapshot: import a dump into a coordlog database, snapshot the
// state part way, then recover the partition as a restarting coordinator would, from the
// newest snapshot plus the log after it, and get the state a full replay gives.
func ExampleRecover() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "coordlog-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// A database holding the recording of a real broker.
	in, err := input.Open("../../fixtures/real/streams/__consumer_offsets-0", eventlog.Strict)
	if err != nil {
		log.Fatal(err)
	}
	db, err := pebblelog.Open(filepath.Join(dir, "db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := pebblelog.Import(ctx, in, db, pebblelog.ImportOptions{}); err != nil {
		log.Fatal(err)
	}

	// A snapshot of the state after offset 39.
	store, err := snapshot.OpenStore(filepath.Join(dir, "snapshots"), snapshot.Options{Retain: 2})
	if err != nil {
		log.Fatal(err)
	}
	e := replay.New(0, replay.Options{})
	if err := e.Run(ctx, db, 40); err != nil {
		log.Fatal(err)
	}
	if _, err := recovery.TakeSnapshot(store, db, e, 0); err != nil {
		log.Fatal(err)
	}

	// The restart.
	rec, err := recovery.Recover(ctx, db, store, 0, recovery.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("restored %s, replayed %d records of the tail, next offset %d\n", rec.Snapshot.Name, rec.TailRecords, rec.Engine.NextOffset())
	for _, g := range rec.Engine.State().Groups() {
		fmt.Printf("%s: %s group, %s, %d committed offsets\n", g.GroupID, g.Type, g.State, len(rec.Engine.State().Offsets(g.GroupID)))
	}
	// Output:
	// restored snap-0000000000-00000000000000000040.snap, replayed 17 records of the tail, next offset 57
	// streams-app: streams group, Stable, 4 committed offsets
}
