//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package pebblelog

import (
	"io"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// takeLock is Pebble's own lock on this platform.
func takeLock(path string) (io.Closer, error) { return vfs.Default.Lock(path) }

// lockHolder cannot tell on this platform.
func lockHolder(string) (int, bool) { return 0, false }
