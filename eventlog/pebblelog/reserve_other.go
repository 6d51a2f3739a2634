//go:build !linux

package pebblelog

import "os"

// allocate gives f size bytes of disk space by writing zeros.
func allocate(f *os.File, size int64) error { return writeZeros(f, size) }
