package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/lock"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
)

// ImportRequest is how OpenImport copies a source into a database.
type ImportRequest struct {
	// Partitions to import; none: every partition of the source.
	Partitions []int32
	// Holder names the writer to a second one (the lock's holder: a command line).
	Holder string
	// Inputs are the paths the source reads, which the database must not be inside of.
	Inputs []string
	// Progress is told how far the check against the database and then the import have come.
	Progress func(pebblelog.ImportProgress)
}

// Importer copies the batches of a source into a coordlog database, keeping offsets, batch
// boundaries, producer ids and epochs, transactional and control flags, timestamps and raw
// key and value bytes. Importing is idempotent (what the database holds already is checked
// to be the same log, not written again) and resumable (each round starts where the
// database ends).
type Importer struct {
	Log        *pebblelog.Log
	Source     eventlog.Source
	Partitions []int32

	req     ImportRequest
	lock    *lock.Lock
	checked pebblelog.ImportProgress
	before  map[int32]int64
}

// OpenImport selects the partitions of src, checks db's path, takes db's writer's lock
// (LockDatabase; db is created when missing) and opens it for writing, having checked first
// that what db holds already is the log src reads: a database of another log is refused and
// left as it was. Close the importer when done.
func OpenImport(ctx context.Context, src eventlog.Source, db string, req ImportRequest) (*Importer, error) {
	parts, err := input.SelectPartitions(src, req.Partitions)
	if err != nil {
		return nil, &RequestError{err}
	}
	if err := input.CheckDBPath(db, req.Inputs...); err != nil {
		return nil, &RequestError{err}
	}
	held, err := LockDatabase(db, req.Holder)
	if err != nil {
		return nil, err
	}
	im := &Importer{Source: src, Partitions: parts, req: req, lock: held, before: map[int32]int64{}}
	l, err := pebblelog.Open(db, &pebblelog.Options{BeforeWrite: func(ro *pebblelog.Log) (err error) {
		im.checked, err = pebblelog.CheckOverlap(ctx, src, ro, parts, req.Progress)
		return err
	}})
	if err != nil {
		held.Release()
		if errors.Is(err, pebblelog.ErrOtherLog) {
			return nil, fmt.Errorf("import refused: %w", err)
		}
		return nil, err
	}
	im.Log = l
	for _, p := range parts {
		im.before[p], _ = l.NextOffset(p)
	}
	return im, nil
}

// Before is partition p's next offset in the database when it was opened: where a resumed
// import started.
func (im *Importer) Before(p int32) int64 { return im.before[p] }

// Round imports what the source holds past the database's end, and returns what it imported
// with what the opening check found the database to hold already (Checked, Rewritten,
// BeforeStart). Everything before an error is imported.
func (im *Importer) Round(ctx context.Context) (pebblelog.ImportProgress, error) {
	merge := func(ip *pebblelog.ImportProgress) {
		ip.Checked, ip.CheckedBytes, ip.Rewritten, ip.BeforeStart = im.checked.Checked, im.checked.CheckedBytes, im.checked.Rewritten, im.checked.BeforeStart
	}
	opts := pebblelog.ImportOptions{Partitions: im.Partitions, OverlapChecked: true}
	if im.req.Progress != nil {
		opts.Progress = func(ip pebblelog.ImportProgress) {
			merge(&ip)
			im.req.Progress(ip)
		}
	}
	res, err := pebblelog.Import(ctx, im.Source, im.Log, opts)
	merge(&res)
	return res, err
}

// Follow imports what the source appends (a cluster topic), a round every interval, and
// tells imported of each round that imported something. It returns nil when ctx ends, the
// way to stop it, and a round's error otherwise.
func (im *Importer) Follow(ctx context.Context, interval time.Duration, imported func(res pebblelog.ImportProgress, took time.Duration)) error {
	return every(ctx, interval, func() (error, error) {
		start := time.Now()
		res, err := im.Round(ctx)
		if err == nil && res.Batches > 0 {
			imported(res, time.Since(start))
		}
		return err, nil
	})
}

// Close closes the database and releases its lock.
func (im *Importer) Close() error {
	err := im.Log.Close()
	im.lock.Release()
	return err
}
