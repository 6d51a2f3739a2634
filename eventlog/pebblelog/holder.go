package pebblelog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Holder is a process that has a database open for writing.
type Holder struct {
	PID int
	// Command, Host and Since come from <db>/coordlog.lock, the writer lock coordlog's writing
	// commands hold, when it names the same process; Command is empty otherwise (a writer
	// that did not say what it is).
	Command string
	Host    string
	Since   time.Time
}

// Name is the command when known, else "another process".
func (h Holder) Name() string {
	if h.Command != "" {
		return h.Command
	}
	return "another process"
}

// String is "import (pid 123, since 2025-01-02T03:04:05Z)".
func (h Holder) String() string {
	s := fmt.Sprintf("%s (pid %d", h.Name(), h.PID)
	if h.Host != "" {
		if name, _ := os.Hostname(); name != h.Host {
			s += " on " + h.Host
		}
	}
	if !h.Since.IsZero() {
		s += ", since " + h.Since.UTC().Format(time.RFC3339)
	}
	return s + ")"
}

// Writer returns the process that holds the database in dir open for writing, if any. Pebble
// holds an fcntl write lock on <dir>/LOCK while a database is open for writing; Writer asks the
// kernel who holds it (without taking it), and reads coordlog.lock for what that process is.
// It returns false when no process holds the lock or when that cannot be told (no LOCK file,
// one that cannot be read, a platform without fcntl locks).
func Writer(dir string) (Holder, bool) {
	if openForWriting(dir) {
		// Asking would open and close LOCK in this very process, and closing any descriptor of
		// a file drops the process's fcntl locks on it: the writer's lock would be gone.
		return Holder{PID: os.Getpid(), Command: "this process"}, true
	}
	pid, ok := lockHolder(filepath.Join(dir, "LOCK"))
	if !ok {
		return Holder{}, false
	}
	h := Holder{PID: pid}
	if l, ok := readLockFile(dir); ok && l.PID == pid {
		h.Command, h.Host = l.Command, l.Host
		h.Since, _ = time.Parse(time.RFC3339, l.Since)
	}
	return h, true
}

// lockFile is the one JSON line of <db>/coordlog.lock, written by the command that holds the
// database's writer lock.
type lockFile struct {
	Command string `json:"command"`
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	Since   string `json:"since"`
}

func readLockFile(dir string) (lockFile, bool) {
	var l lockFile
	b, err := os.ReadFile(filepath.Join(dir, "coordlog.lock"))
	if err != nil || json.Unmarshal(b, &l) != nil {
		return l, false
	}
	return l, true
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
