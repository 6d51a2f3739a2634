//go:build !(linux && (amd64 || arm64))

package compact

import "syscall"

// exchange is unavailable here: Replace falls back to two renames (and Recover closes the
// window in which the target is missing).
func exchange(a, b string) error { return syscall.ENOSYS }
