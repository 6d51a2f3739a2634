package pebblelog

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/coordlog/coordlog/eventlog/lock"
)

// Holder is a process that has a database open for writing.
type Holder struct {
	PID int
	// Command, Host and Since come from the database's writer lock (package lock,
	// <db>/coordlog.lock) when the process holds it; Command is empty for a writer that took
	// only Pebble's own lock (an older coordlog, a Go program using this package).
	Command string
	Host    string
	Since   time.Time
}

// Name is the command when known, else "this process" or "another process".
func (h Holder) Name() string {
	switch {
	case h.PID == os.Getpid():
		return "this process"
	case h.Command != "":
		return h.Command
	}
	return "another process"
}

// String is `"replay import" (pid 123 on host h, since 03:04:05Z)`, the lock package's
// rendering, or "another process (pid 123)".
func (h Holder) String() string {
	if h.Command == "" || h.PID == os.Getpid() {
		return fmt.Sprintf("%s (pid %d)", h.Name(), h.PID)
	}
	return (&lock.Holder{Command: h.Command, PID: h.PID, Host: h.Host, Since: h.Since}).String()
}

// Writer returns the process that holds the database in dir open for writing, if any: the
// holder of its writer lock (lock.HolderOf), else the process holding Pebble's fcntl lock
// on <dir>/LOCK, which the kernel names (F_GETLK, which takes no lock). It returns false
// when no process holds either or when that cannot be told (no LOCK file, one that cannot be
// read, a platform without fcntl locks).
func Writer(dir string) (Holder, bool) {
	if openForWriting(dir) {
		// Asking the kernel would open and close LOCK in this very process, and closing any
		// descriptor of a file drops the process's fcntl locks on it: the writer's lock would
		// be gone.
		return Holder{PID: os.Getpid()}, true
	}
	if h, err := lock.HolderOf(dir); err == nil && h != nil && h.PID != 0 {
		return Holder{PID: h.PID, Command: h.Command, Host: h.Host, Since: h.Since}, true
	}
	pid, ok := lockHolder(filepath.Join(dir, "LOCK"))
	if !ok {
		return Holder{}, false
	}
	return Holder{PID: pid}, true
}

// writers are the directories this process has open for writing (absolute, cleaned), with
// how many times.
var writers struct {
	sync.Mutex
	dirs map[string]int
}

func absDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return filepath.Clean(dir)
}

// registerWriter records dir as open for writing in this process until the returned
// function is called; ok is false (and nothing recorded) when it is already. fcntl locks do
// not exclude each other within a process, so this is what keeps two writers of one process
// apart.
func registerWriter(dir string) (unregister func(), ok bool) {
	d := absDir(dir)
	writers.Lock()
	defer writers.Unlock()
	if writers.dirs == nil {
		writers.dirs = map[string]int{}
	}
	if writers.dirs[d] > 0 {
		return nil, false
	}
	writers.dirs[d]++
	return func() {
		writers.Lock()
		if writers.dirs[d]--; writers.dirs[d] <= 0 {
			delete(writers.dirs, d)
		}
		writers.Unlock()
	}, true
}

func openForWriting(dir string) bool {
	writers.Lock()
	defer writers.Unlock()
	return writers.dirs[absDir(dir)] > 0
}
