//go:build linux && !race && !msan && !asan

package replay

import (
	"syscall"
	"unsafe"
)

// sysRead is read(2) outside the scheduler's system-call state (see
// rawSock).
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return int(n), e
}
