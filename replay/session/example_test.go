package session_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
	"github.com/coordlog/coordlog/snapshot"
)

// What `replay describe --at-time` does, as a program: open a __consumer_offsets partition
// copied off a broker, bring its state to an instant of its history, and read the groups.
func Example() {
	ctx := context.Background()
	src, err := session.Open(ctx, session.Input{Path: "../../fixtures/real/consumer/__consumer_offsets-0"})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()

	at := query.AtTime(time.Date(2026, 11, 29, 19, 5, 54, 433e6, time.UTC)) // --at-time 2026-11-29T19:05:54.433Z
	r, err := session.Replay(ctx, src, session.Request{At: at})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range r.Partitions {
		fmt.Println(p.Position.Describe())
		st := p.Engine.State()
		for _, id := range st.GroupIDs() {
			g, _ := st.GroupSummary(id)
			fmt.Printf("%s: %s group, %s, %d members, %d committed offsets\n", id, g.Type, g.State, g.Members, len(st.Offsets(id)))
		}
	}
	// Output:
	// partition 0: 2026-11-29T19:05:54.433Z resolves to the record at offset 20, stamped 2026-11-29T19:05:54.433Z; the next record is at offset 21, stamped 2026-11-29T19:05:54.660Z; record times: the records' own timestamps (CreateTime)
	// consumer-848: consumer group, Stable, 2 members, 6 committed offsets
}

// What `replay groups` lists, on a broker's whole log directory: every partition replays in
// parallel, each watched by its own observer (here the activity that finds each group's last
// record and its deletion).
func ExampleObservers() {
	ctx := context.Background()
	src, err := session.Open(ctx, session.Input{Path: "../../fixtures/real/deletions"})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	activity := &session.Observers[*query.Activity]{New: func(int32) *query.Activity { return query.NewActivity() }}
	r, err := session.Replay(ctx, src, session.Request{Observer: activity.Observer})
	if err != nil {
		log.Fatal(err)
	}
	rows := query.ListGroups(r.States(func(p int32) *query.Activity { a, _ := activity.Of(p); return a }), query.GroupFilter{IncludeDeleted: true})
	for _, g := range rows {
		fmt.Printf("%s %s %s, last record at offset %d\n", g.GroupID, g.Type, g.State, g.LastRecord.Offset)
	}
	// Output:
	// del-classic classic Dead, last record at offset 77
	// del-consumer consumer Dead, last record at offset 84
	// del-offsets consumer Empty, last record at offset 74
	// del-share share Dead, last record at offset 96
	// del-simple classic Dead, last record at offset 87
	// del-streams streams Dead, last record at offset 92
	// keep-classic classic Empty, last record at offset 9
}

// Import a dump into a coordlog database, snapshot it, and bring the state back as a
// restarting coordinator would: the newest snapshot and only the log after it.
func ExampleOpenImport() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "coordlog-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "db")

	dump, err := session.Open(ctx, session.Input{Path: "../../fixtures/real/streams/__consumer_offsets-0"})
	if err != nil {
		log.Fatal(err)
	}
	defer dump.Close()
	im, err := session.OpenImport(ctx, dump, db, session.ImportRequest{Holder: "example"})
	if err != nil {
		log.Fatal(err)
	}
	res, err := im.Round(ctx)
	if err != nil {
		log.Fatal(err)
	}
	im.Close()
	fmt.Printf("imported %d records\n", res.Records)

	// Snapshot the state after offset 39.
	held, err := session.LockDatabase(db, "example")
	if err != nil {
		log.Fatal(err)
	}
	d, err := session.OpenDatabase(db, &snapshot.Options{})
	if err != nil {
		log.Fatal(err)
	}
	pos, err := session.Resolve(ctx, d.Log, []int32{0}, query.AtOffset(39), nil)
	if err != nil {
		log.Fatal(err)
	}
	err = d.TakeSnapshots(ctx, pos, session.SnapshotRequest{}, func(t session.SnapshotTaken) error {
		fmt.Printf("snapshot %s\n", t.Info.Name)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	d.Close()
	held.Release()

	// Describe from the snapshot: only the tail is replayed.
	src, err := session.Open(ctx, session.Input{Path: db})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	r, err := session.Replay(ctx, src, session.Request{FromSnapshot: true})
	if err != nil {
		log.Fatal(err)
	}
	p := r.Partitions[0]
	fmt.Printf("from %s at offset %d, %d records replayed after it, next offset %d\n", p.Snapshot().Snapshot, p.Snapshot().NextOffset, p.RecordsReplayed(), p.Engine.NextOffset())
	// Output:
	// imported 57 records
	// snapshot snap-0000000000-00000000000000000040.snap
	// from snap-0000000000-00000000000000000040.snap at offset 40, 12 records replayed after it, next offset 57
}
