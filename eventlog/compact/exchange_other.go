//go:build !(linux && (amd64 || arm64))

package compact

import "syscall"

// exchange is unavailable here: Replace falls back to two renames (and Recover closes the
// window in which the target is missing).
func exchange(a, b string) error { return syscall.ENOSYS }

// renameNoReplace renames a to b unless b exists (fs.ErrExist). Without renameat2 the check
// and the rename are two steps; the destination's lock keeps other compactions out between
// them.
func renameNoReplace(a, b string) error { return renameChecked(a, b) }
