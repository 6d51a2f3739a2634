//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package pebblelog

// lockHolder cannot tell on this platform.
func lockHolder(string) (int, bool) { return 0, false }
