//go:build linux && (race || msan || asan)

package replay

import "syscall"

// sysRead is syscall.Read under the race detector and the sanitizers: it
// tells them what the read wrote, and the race detector that a read of
// bytes orders after their write (as net.Conn's Read does), which tests
// with a server in the same process rely on.
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	if err != nil {
		return 0, err.(syscall.Errno)
	}
	return n, 0
}
