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
