package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/lock"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// LogWriter appends batches to a log, a coordlog database or a new segment directory, holding
// its writer's lock: where a coordinator's decisions go (replay simulate).
type LogWriter struct {
	// DB is the database appended to (nil for segments): its existing records can be replayed.
	DB *pebblelog.Log

	write func(*eventlog.Batch) error
	close func() error
	lock  *lock.Lock
}

// Append writes one batch at the log's end.
func (w *LogWriter) Append(b *eventlog.Batch) error { return w.write(b) }

// Close finishes the log (the last segment's index) and releases the lock.
func (w *LogWriter) Close() error {
	err := w.close()
	w.lock.Release()
	return err
}

// AppendToDatabase opens the coordlog database db for appending (created when missing),
// locked for holder.
func AppendToDatabase(db, holder string) (*LogWriter, error) {
	if err := input.CheckDBPath(db); err != nil {
		return nil, &RequestError{err}
	}
	held, err := LockDatabase(db, holder)
	if err != nil {
		return nil, err
	}
	l, err := pebblelog.Open(db, nil)
	if err != nil {
		held.Release()
		return nil, err
	}
	return &LogWriter{DB: l, write: l.Append, close: l.Close, lock: held}, nil
}

// CreateSegments writes segment files into dir, a new or empty partition directory, locked
// for holder.
func CreateSegments(dir, holder string) (*LogWriter, error) {
	held, err := lock.Beside(dir, holder)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		held.Release()
		return nil, err
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") {
			held.Release()
			return nil, &RequestError{fmt.Errorf("%s already holds segment files", dir)}
		}
	}
	w, err := segment.NewWriter(dir, segment.WriterOptions{})
	if err != nil {
		held.Release()
		return nil, err
	}
	write := func(b *eventlog.Batch) error { _, err := w.Write(b); return err }
	return &LogWriter{write: write, close: w.Close, lock: held}, nil
}
