package pebblelog

import (
	"os"
	"syscall"
)

// allocate gives f size bytes of disk space with fallocate, without writing them, or by
// writing zeros where the filesystem cannot.
func allocate(f *os.File, size int64) error {
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err == nil || err == syscall.ENOSPC {
		return err
	}
	return writeZeros(f, size)
}
