//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package pebblelog

import (
	"io"
	"os"
	"syscall"
)

// lockHolder returns the pid of the process holding an fcntl write lock on path (Pebble's
// LOCK), asking with F_GETLK, which takes no lock. The file is opened read-only, so a reader
// that cannot write the directory can still ask.
func lockHolder(path string) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil || lk.Type == syscall.F_UNLCK {
		return 0, false
	}
	return int(lk.Pid), true
}
