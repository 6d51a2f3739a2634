//go:build linux && (amd64 || arm64)

package compact

import (
	"errors"
	"os"
	"syscall"
	"unsafe"
)

// Flags of renameat2(2): RENAME_NOREPLACE fails when the new name exists; with
// RENAME_EXCHANGE both names must exist and swap atomically.
const (
	renameNoReplaceFlag = 1
	renameExchange      = 2
)

// exchange swaps the directories a and b in one atomic step. The syscall package has no
// renameat2 wrapper, and eventlog's import rules keep golang.org/x/sys out, hence the raw call.
func exchange(a, b string) error { return renameat2(a, b, renameExchange) }

// renameNoReplace renames a to b unless b exists (fs.ErrExist), in one step: a plain rename
// would replace an empty directory at b.
func renameNoReplace(a, b string) error {
	err := renameat2(a, b, renameNoReplaceFlag)
	if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) {
		return renameChecked(a, b) // a file system without the flag
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: a, New: b, Err: err}
	}
	return nil
}

func renameat2(a, b string, flags uintptr) error {
	pa, err := syscall.BytePtrFromString(a)
	if err != nil {
		return err
	}
	pb, err := syscall.BytePtrFromString(b)
	if err != nil {
		return err
	}
	const atFDCWD = -100
	fd := atFDCWD
	_, _, errno := syscall.Syscall6(sysRenameat2, uintptr(fd), uintptr(unsafe.Pointer(pa)), uintptr(fd), uintptr(unsafe.Pointer(pb)), flags, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
