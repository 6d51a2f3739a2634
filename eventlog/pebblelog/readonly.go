package pebblelog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrReadOnly is wrapped by the error of any write to a log opened with Options.ReadOnly.
var ErrReadOnly = errors.New("database opened read-only")

// openReadOnly opens an existing database for reading.
//
// Pebble's own ReadOnly mode writes nothing (no flush, no compaction, no new MANIFEST, OPTIONS
// or WAL: the WALs are replayed into memory), but it still takes the directory's LOCK, which
// creates the file and holds an exclusive fcntl lock on it: two readers exclude each other, a
// reader cannot run beside a writer, and a user who cannot write the directory (or read-only
// media) cannot read at all. readOnlyFS turns that lock into a no-op and refuses every write,
// so a reader writes nothing even if Pebble tried.
//
// A reader beside a writer sees the database as it was when it opened (the MANIFEST and WALs
// it read then). The writer goes on compacting and deletes the tables it compacted away, which
// the reader may still need: so the reader opens every table and blob file in the directory
// before Pebble reads the MANIFEST, and serves Pebble from those descriptors (readOnlyFS), which
// keep a deleted file readable until the reader closes. Only opening itself can still race with
// the writer (a MANIFEST or WAL replaced while it is read): it is retried a few times while a
// writer holds the database, and an error that remains names the writer (Holder) and says
// what to do.
func openReadOnly(dir string, opts *Options) (*Log, error) {
	base := opts.FS
	if base == nil {
		base = vfs.Default
	}
	h := newHealth(dir)
	l := &Log{dir: dir, readOnly: true, underOwnLock: opts.underOwnLock, fs: base, health: h, next: map[int32]int64{}}
	const attempts = 5
	var err error
	for i := range attempts {
		var fs *readOnlyFS
		if fs, err = pinTables(base, dir); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s holds no coordlog database: %w", dir, err)
		} else if err != nil {
			return nil, fmt.Errorf("open coordlog database %s: %w", dir, err)
		}
		var db *pebble.DB
		if db, err = openPebble(dir, opts, pebbleOptions(opts, fs, h)); err == nil {
			l.db, l.release = db, fs.unpin
			return l, nil
		}
		fs.unpin()
		_, busy := l.writer()
		if errors.Is(err, pebble.ErrDBDoesNotExist) && !busy {
			return nil, fmt.Errorf("%s holds no coordlog database (no MANIFEST): %w", dir, err)
		}
		if !busy || i == attempts-1 {
			break
		}
		time.Sleep(time.Duration(10<<i) * time.Millisecond) // the writer's change is a few renames
	}
	return nil, l.readError(err)
}

// readError explains an error met while reading the database: when a writer holds it, the
// error may come from the writer changing files under this reader (Pebble does not support
// readers in other processes), so it names the writer and says to run again.
func (l *Log) readError(err error) error {
	if err == nil {
		return nil
	}
	if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
		// A missing or damaged file: say which, without Pebble's detail carrier.
		err = fmt.Errorf("%s: %w", info.Path, info.Details)
	}
	if w, busy := l.writer(); busy {
		return fmt.Errorf("read coordlog database %s: %w: it is in use by %s, which changed it while it was read: run the command again, or once %s has finished", l.dir, err, w, w.Name())
	}
	return fmt.Errorf("read coordlog database %s: %w", l.dir, err)
}

// writer returns the process writing the database, if any and if it can be told (only on the
// real filesystem).
func (l *Log) writer() (Holder, bool) {
	if l.fs != vfs.Default || l.underOwnLock {
		return Holder{}, false
	}
	return Writer(l.dir)
}

// readOnlyFS is the filesystem of a read-only Log: locking is a no-op, every call that would
// create, change or remove a file fails with ErrReadOnly, and the tables and blob files that
// were in the directory when it was made are served from descriptors opened then (pinned), so
// that a writer deleting them does not fail this reader.
type readOnlyFS struct {
	vfs.FS
	pinned map[string]vfs.File // by path as Pebble names it (PathJoin(dir, name))
	dir    string
}

// pinTables opens every table and blob file of the database in dir.
func pinTables(base vfs.FS, dir string) (*readOnlyFS, error) {
	fs := &readOnlyFS{FS: base, pinned: map[string]vfs.File{}, dir: dir}
	names, err := base.List(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".sst") && !strings.HasSuffix(name, ".blob") {
			continue
		}
		path := base.PathJoin(dir, name)
		f, err := base.Open(path, vfs.RandomReadsOption)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted since the listing: not in any version still to be read
		}
		if err != nil {
			fs.unpin()
			return nil, err
		}
		fs.pinned[path] = f
	}
	return fs, nil
}

func (f *readOnlyFS) unpin() {
	for _, p := range f.pinned {
		_ = p.Close()
	}
	f.pinned = nil
}

func (f *readOnlyFS) Open(name string, o ...vfs.OpenOption) (vfs.File, error) {
	if p, ok := f.pinned[name]; ok {
		return pinnedFile{p}, nil
	}
	return f.FS.Open(name, o...)
}

func (f *readOnlyFS) Stat(name string) (vfs.FileInfo, error) {
	if p, ok := f.pinned[name]; ok {
		return p.Stat()
	}
	return f.FS.Stat(name)
}

// List adds the pinned files that were deleted since they were pinned.
func (f *readOnlyFS) List(dir string) ([]string, error) {
	names, err := f.FS.List(dir)
	if err != nil || dir != f.dir {
		return names, err
	}
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
	}
	for path := range f.pinned {
		if n := f.FS.PathBase(path); !have[n] {
			names = append(names, n)
		}
	}
	return names, nil
}

// pinnedFile is a pinned descriptor handed to Pebble: Pebble's Close leaves it open (the Log's
// Close closes it). Pebble reads tables with ReadAt only, which shares a descriptor safely.
type pinnedFile struct{ vfs.File }

func (pinnedFile) Close() error { return nil }

type noLock struct{}

func (noLock) Close() error { return nil }

func refuse(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: ErrReadOnly}
}

func (*readOnlyFS) Lock(string) (io.Closer, error) { return noLock{}, nil }
func (*readOnlyFS) Create(name string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	return nil, refuse("create", name)
}
func (*readOnlyFS) Link(_, newname string) error { return refuse("link", newname) }
func (*readOnlyFS) OpenReadWrite(name string, _ vfs.DiskWriteCategory, _ ...vfs.OpenOption) (vfs.File, error) {
	return nil, refuse("open for writing", name)
}
func (*readOnlyFS) Remove(name string) error    { return refuse("remove", name) }
func (*readOnlyFS) RemoveAll(name string) error { return refuse("remove", name) }
func (*readOnlyFS) Rename(old, _ string) error  { return refuse("rename", old) }
func (*readOnlyFS) MkdirAll(dir string, _ os.FileMode) error {
	return refuse("mkdir", dir)
}
func (*readOnlyFS) ReuseForWrite(old, _ string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	return nil, refuse("reuse", old)
}
func (f *readOnlyFS) Unwrap() vfs.FS { return f.FS }

// OpenDir opens a directory; a read-only Log never syncs one, but refuses to if asked.
func (f *readOnlyFS) OpenDir(name string) (vfs.File, error) {
	d, err := f.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return readOnlyDir{d}, nil
}

type readOnlyDir struct{ vfs.File }

func (d readOnlyDir) Sync() error { return refuse("sync", "directory") }
