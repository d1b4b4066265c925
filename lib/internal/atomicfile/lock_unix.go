//go:build unix

package atomicfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lock takes an exclusive flock on f, held until f is closed (also when the
// process dies, whatever kills it).
func lock(f *os.File) {
	unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}

// alive reports whether pid is a running process (or one we may not signal,
// which is running too).
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// removeIfUnlocked removes the regular file at name when nobody holds a lock
// on it. It removes it while holding the lock itself, so two sweepers cannot
// race a writer that is just starting.
func removeIfUnlocked(name string) {
	f, err := os.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return
	}
	os.Remove(name)
}
