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

// takeLock takes an fcntl write lock on path, as Pebble's own Lock does, but opens the file
// without truncating it: taking the lock of an existing database changes nothing in its
// directory (Pebble's os.Create updates LOCK's modification time).
func takeLock(path string) (io.Closer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
