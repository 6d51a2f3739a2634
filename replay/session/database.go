package session

import (
	"errors"
	"fmt"

	"github.com/coordlog/coordlog/eventlog/compact"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/lock"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/replay/recovery"
	"github.com/coordlog/coordlog/snapshot"
)

// LockDatabase takes the writer's lock of the coordlog database db for holder (a command
// line, named to a second writer; db is created when missing) before Pebble opens it, and
// refuses a database whose in-place compaction was interrupted (compact --in-place finishes
// it): before the lock, which would create a database moved aside by the interrupted swap,
// and after it, in case the compaction that held it was just interrupted. Release the lock
// after closing the database.
func LockDatabase(db, holder string) (*lock.Lock, error) {
	if err := compact.Pending(db); err != nil {
		return nil, err
	}
	l, err := lock.Database(db, holder)
	if err != nil {
		return nil, err
	}
	if err := compact.Pending(db); err != nil { // a compaction holding the lock beside db died
		l.Release()
		return nil, err
	}
	return l, nil
}

// Database is a coordlog database opened for reading, with its snapshot store.
type Database struct {
	Log       *pebblelog.Log
	Snapshots *snapshot.Store
}

// OpenDatabase opens the coordlog database at db (which must exist) read-only, and its
// snapshot store (<db>/snapshots): for writing snapshots (with retention) when store is set,
// else read-only. Writers take LockDatabase first.
func OpenDatabase(db string, store *snapshot.Options) (*Database, error) {
	if db == "" {
		return nil, &RequestError{errors.New("no database given")}
	}
	if !input.IsDatabase(db) {
		return nil, fmt.Errorf("%s is not a coordlog database (create one with replay import)", db)
	}
	l, err := pebblelog.Open(db, &pebblelog.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	if store == nil {
		store = &snapshot.Options{ReadOnly: true}
	}
	st, err := snapshot.OpenStore(recovery.StoreDir(db), *store)
	if err != nil {
		l.Close()
		return nil, err
	}
	return &Database{Log: l, Snapshots: st}, nil
}

// Close closes the log.
func (d *Database) Close() error { return d.Log.Close() }
