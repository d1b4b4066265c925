package pace

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// timerfd is a fineTimer: a Linux timerfd read through the runtime's
// poller (os.File on a non-blocking descriptor).
type timerfd struct {
	fd     int
	f      *os.File
	buf    [8]byte
	mu     sync.Mutex // orders fire with close: a closed descriptor's number may be reused
	closed bool
}

func newFineTimer() fineTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	return &timerfd{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}
}

func (t *timerfd) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if unix.TimerfdSettime(t.fd, 0, &its, nil) != nil {
		time.Sleep(d)
		return
	}
	t.f.Read(t.buf[:]) // the expiration count; an error (closed) just ends the wait
}

// fire expires the timer now (1 ns from now: a zero value would disarm it).
func (t *timerfd) fire() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		its := unix.ItimerSpec{Value: unix.Timespec{Nsec: 1}}
		unix.TimerfdSettime(t.fd, 0, &its, nil)
	}
}

func (t *timerfd) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		t.f.Close()
	}
}

func yield() {} // not reached: Linux has the fine timer
