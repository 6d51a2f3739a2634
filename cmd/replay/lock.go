package main

import (
	"github.com/coordlog/coordlog/eventlog/compact"
	"github.com/coordlog/coordlog/eventlog/lock"
)

// lockDatabase takes the writer's lock of the coordlog database db for command (creating db
// when missing) before Pebble opens it, so that a second writer is told who holds it, and
// refuses a database whose in-place compaction was interrupted (compact --in-place
// finishes it): before the lock, which would create a database moved aside by the
// interrupted swap, and after it, in case the compaction that held it was just interrupted.
// Release the lock after closing the database.
func lockDatabase(db, command string) (*lock.Lock, error) {
	if err := compact.Pending(db); err != nil {
		return nil, err
	}
	l, err := lock.Database(db, command)
	if err != nil {
		return nil, err
	}
	if err := compact.Pending(db); err != nil { // a compaction holding the lock beside db died
		l.Release()
		return nil, err
	}
	return l, nil
}
