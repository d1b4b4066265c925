package pace

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// LockThread wires the calling goroutine to its OS thread and sets that
// thread's timer slack to 1 ns (the default, 50 µs, lets the kernel defer a
// nanosleep wake-up by that much). Call UnlockThread when done.
func LockThread() {
	runtime.LockOSThread()
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
}

// UnlockThread undoes LockThread.
func UnlockThread() { runtime.UnlockOSThread() }

// nap sleeps in nanosleep(2): a system call, so the runtime hands the
// goroutine's processor to others while it sleeps.
func nap(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	unix.Nanosleep(&ts, nil)
}
