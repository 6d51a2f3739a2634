package lock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// FileName is the lock file inside a coordlog database.
const FileName = "coordlog.lock"

// Suffix makes the name of the lock file beside a directory: <name>.coordlog.lock.
const Suffix = ".coordlog.lock"

// Holder is who holds a lock: the line in the lock file.
type Holder struct {
	Command string    `json:"command"`
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
}

// String renders the holder for messages: "compact --in-place" (pid 4711 on host h, since
// 03:04:05Z). The date is left out when the lock was taken today (UTC).
func (h *Holder) String() string {
	if h == nil || h.PID == 0 {
		return "another process (it has not said which yet)"
	}
	since := h.Since.UTC()
	layout := "2006-01-02 15:04:05Z"
	if since.Format(time.DateOnly) == time.Now().UTC().Format(time.DateOnly) {
		layout = "15:04:05Z"
	}
	return fmt.Sprintf("%q (pid %d on host %s, since %s)", h.Command, h.PID, h.Host, since.Format(layout))
}

// BusyError is returned when another process (or another Lock of this one) holds the lock.
type BusyError struct {
	Name   string  // what is locked, as the caller named it
	File   string  // the lock file
	Holder *Holder // nil when the holder has not written its line yet
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s is in use by %s: wait for it to finish or stop it", e.Name, e.Holder)
}

// Lock is a held lock. Release it when the writing is over.
type Lock struct {
	name string
	path string   // the lock file
	f    *os.File // nil on a file system mounted read-only: nobody can write there
}

// Path returns the lock file.
func (l *Lock) Path() string { return l.path }

// busyTries and busyPause: how long a busy lock is retried before it is reported (HolderOf
// holds a shared flock for an instant to test a file).
const (
	busyTries = 10
	busyPause = 20 * time.Millisecond
)

// onBusy is called each time the lock is found busy (tests end a probe there).
var onBusy func()

// Database locks the coordlog database at db for command (e.g. "replay import"): the lock
// file is <db>/coordlog.lock. A missing db is created (a writer is about to create the
// database) under the lock beside it, which an in-place compaction of db also holds: so a
// database briefly missing during a compaction's swap is never created afresh. db is also
// how messages name it (the path as the user gave it).
func Database(db, command string) (*Lock, error) {
	real, err := Resolve(db)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", db, err)
	}
	file := filepath.Join(real, FileName)
	for range 100 {
		if _, err := os.Stat(real); err == nil {
			l, err := acquire(db, file, command)
			if errors.Is(err, fs.ErrNotExist) {
				continue // moved away meanwhile
			}
			return l, err
		}
		creating, err := Beside(db, command)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(real, 0o755); err != nil && !errors.Is(err, syscall.EROFS) {
			creating.Release()
			return nil, fmt.Errorf("lock %s: %w", db, err)
		}
		l, err := acquire(db, file, command)
		creating.Release()
		return l, err
	}
	return nil, fmt.Errorf("lock %s: it keeps appearing and vanishing", db)
}

// Beside locks path (a directory or file, existing or not) for command with the lock file
// <parent>/<name>.coordlog.lock (the parent is created when missing).
func Beside(path, command string) (*Lock, error) {
	file, err := besideFile(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil && !errors.Is(err, syscall.EROFS) {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return acquire(path, file, command)
}

func besideFile(path string) (string, error) {
	real, err := Resolve(path)
	if err != nil {
		return "", fmt.Errorf("lock %s: %w", path, err)
	}
	if filepath.Dir(real) == real {
		return "", fmt.Errorf("lock %s: a file system root has no place beside it for a lock file", path)
	}
	return real + Suffix, nil
}

// Resolve makes path absolute and follows its symbolic links, so that every name of one
// directory gives one lock file. A path that does not exist (yet) resolves through its
// parent; a dangling link, through the path it names.
func Resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return resolve(abs, 0)
}

func resolve(abs string, depth int) (string, error) {
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) || depth > 40 {
		return "", fmt.Errorf("resolve %s: %w", abs, err)
	}
	if dest, err := os.Readlink(abs); err == nil {
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(abs), dest)
		}
		return resolve(dest, depth+1)
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return abs, nil
	}
	rp, err := resolve(parent, depth+1)
	if err != nil {
		return "", err
	}
	return filepath.Join(rp, filepath.Base(abs)), nil
}

// acquire locks file (whose directory must exist: fs.ErrNotExist otherwise).
func acquire(name, file, command string) (*Lock, error) {
	for busy, replaced := 0, 0; replaced < 100; {
		f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o644)
		if errors.Is(err, syscall.EROFS) {
			return &Lock{name: name, path: file}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", name, err) // fs.ErrNotExist: no directory
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			if onBusy != nil {
				onBusy()
			}
			if busy++; busy < busyTries {
				time.Sleep(busyPause)
				continue
			}
			h, _ := readHolder(file)
			return nil, &BusyError{Name: name, File: file, Holder: h}
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: flock %s: %w", name, file, err)
		}
		if !sameFile(f, file) {
			// Its holder removed it on release, or a swap replaced it: take the new one.
			f.Close()
			replaced++
			continue
		}
		l := &Lock{name: name, path: file, f: f}
		// On a full disk the lock is held without its line (the flock decides; the line only
		// names the holder), so that the command goes on to say what it cannot write itself.
		if err := l.writeHolder(command); err != nil && !errors.Is(err, syscall.ENOSPC) {
			l.Release()
			return nil, fmt.Errorf("lock %s: write %s: %w", name, file, err)
		}
		return l, nil
	}
	return nil, fmt.Errorf("lock %s: %s keeps being replaced", name, file)
}

func (l *Lock) writeHolder(command string) error {
	host, _ := os.Hostname()
	b, err := json.Marshal(Holder{Command: command, PID: os.Getpid(), Host: host, Since: time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err = l.f.WriteAt(append(b, '\n'), 0)
	return err
}

// sameFile reports whether path names the open file f.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// Release removes the lock file (when the path still names it) and drops the lock. A second
// call does nothing.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	if sameFile(l.f, l.path) {
		os.Remove(l.path) // before the flock goes, so that nobody locks a file about to vanish
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// LinkInto makes dir/coordlog.lock a hard link to this lock's file (replacing what is
// there), so that the lock still holds when the directory dir takes the locked database's
// place (an in-place compaction's swap). dir must be on the lock file's file system.
func (l *Lock) LinkInto(dir string) error {
	if l.f == nil {
		return nil
	}
	dst := filepath.Join(dir, FileName)
	tmp := dst + ".tmp"
	os.Remove(tmp)
	if err := os.Link(l.path, tmp); err != nil {
		return fmt.Errorf("link the lock %s into %s (the compacted database must keep it when it takes the place of %s): %w", l.path, dir, l.name, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// HolderOf returns the holder of path's lock, <path>/coordlog.lock or the lock file beside
// path, or nil when no process holds either. It writes nothing and takes no lock beyond a
// shared flock for an instant, so that readers may call it on any media.
func HolderOf(path string) (*Holder, error) {
	real, err := Resolve(path)
	if err != nil {
		return nil, err
	}
	for _, file := range []string{filepath.Join(real, FileName), real + Suffix} {
		h, held, err := probe(file)
		if err != nil || held {
			return h, err
		}
	}
	return nil, nil
}

// HolderBeside is HolderOf for the lock file beside path only (the one an in-place
// compaction holds while it runs, whatever path is).
func HolderBeside(path string) (*Holder, error) {
	file, err := besideFile(path)
	if err != nil {
		return nil, err
	}
	h, _, err := probe(file)
	return h, err
}

// probe reports whether a process holds file's flock, and its holder line.
func probe(file string) (*Holder, bool, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		return nil, false, nil // free: a lock file left by a process that is gone
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, false, fmt.Errorf("flock %s: %w", file, err)
	}
	h, err := readHolder(file)
	return h, true, err
}

// readHolder reads the holder line of a lock file (nil when it is empty: a holder that has
// not written it yet).
func readHolder(file string) (*Holder, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, nil
	}
	var h Holder
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &h, nil
}
