//go:build linux && (amd64 || arm64)

package compact

import (
	"syscall"
	"unsafe"
)

// renameExchange is RENAME_EXCHANGE of renameat2(2): both names must exist and swap atomically.
const renameExchange = 2

// exchange swaps the directories a and b in one atomic step. The syscall package has no
// renameat2 wrapper, and eventlog's import rules keep golang.org/x/sys out, hence the raw call.
func exchange(a, b string) error {
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
	_, _, errno := syscall.Syscall6(sysRenameat2, uintptr(fd), uintptr(unsafe.Pointer(pa)), uintptr(fd), uintptr(unsafe.Pointer(pb)), renameExchange, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
