package base

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe raises the capacity of f to 1 MiB when it is a pipe. The default
// 64 KiB makes two stages of a pipeline take turns in lockstep; a larger pipe
// lets them overlap on two cores. Failures are ignored (the pipe just stays small).
func growPipe(f *os.File) {
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, 1<<20)
}

// readerGone reports whether f is a pipe or socket whose reading end is
// closed: poll(2) flags such a write end with POLLERR (a pipe) or POLLHUP
// (a socket).
func readerGone(f *os.File) bool {
	fds := []unix.PollFd{{Fd: int32(f.Fd())}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}
