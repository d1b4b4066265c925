// Package pace waits for moments with sub-millisecond precision: the
// replay schedule's sends and the mock server's token clock.
//
// Go's timers cannot do it on Linux: they wake through epoll_pwait, whose
// timeout is in whole milliseconds, so a 50 µs sleep takes about 1.06 ms
// and a 20 ms one about 21.1 ms (measured here). Spinning on
// runtime.Gosched for the last stretch is no cure either: a goroutine that
// always finds itself runnable keeps its processor from ever polling the
// network or running its timers, so reads and deadlines of other
// goroutines wait (deadlines fired 20–100 ms late in tests).
//
// A Waiter therefore waits in three steps: on a Go timer until coarse
// before the moment (cheap, interruptible), then in nanosleep(2) slices on
// an OS thread whose timer slack is 1 ns (see LockThread; the processor is
// handed to other goroutines meanwhile, since the goroutine is in a system
// call), then a short busy loop on the clock for the last tens of
// microseconds.
package pace

import (
	"container/heap"
	"sync"
	"time"
)

// Tuning, from measurements on a loaded 2-core machine: nanosleep with a
// 1 ns timer slack overshoots by ~50 µs at the median.
const (
	coarse    = 1500 * time.Microsecond // timer sleeps end this long before the moment
	spinFinal = 60 * time.Microsecond   // the busy loop covers the last stretch
	sliceMax  = 250 * time.Microsecond  // nanosleep slices, so wake and stop are seen
)

// Waiter waits for moments on a monotonic clock. It is used by one
// goroutine at a time.
type Waiter struct {
	now   func() int64
	timer *time.Timer
}

// NewWaiter returns a Waiter on the clock now (nanoseconds, monotonic).
func NewWaiter(now func() int64) *Waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &Waiter{now: now, timer: t}
}

// Until waits until now() reaches t. It returns early, with false, when
// wake or stop delivers (either may be nil). For its precision the calling
// goroutine should hold LockThread.
func (w *Waiter) Until(t int64, wake, stop <-chan struct{}) bool {
	for {
		rem := time.Duration(t - w.now())
		switch {
		case rem <= 0:
			return true
		case rem > coarse+time.Millisecond:
			w.timer.Reset(rem - coarse)
			select {
			case <-w.timer.C:
			case <-wake:
				w.timer.Stop()
				return false
			case <-stop:
				w.timer.Stop()
				return false
			}
			continue
		}
		select {
		case <-wake:
			return false
		case <-stop:
			return false
		default:
		}
		if rem > spinFinal {
			nap(min(rem-spinFinal, sliceMax))
			continue
		}
		for w.now() < t {
		}
		return true
	}
}

// Sleeper wakes many goroutines at their moments with the precision of one
// Waiter: one goroutine on a locked thread waits for the earliest moment
// and wakes whoever is due. The mock server's streams use it for their
// token clocks.
type Sleeper struct {
	now  func() int64
	once sync.Once
	mu   sync.Mutex
	h    sleepHeap
	kick chan struct{}
}

type sleepEntry struct {
	t  int64
	ch chan struct{}
}

type sleepHeap []sleepEntry

func (h sleepHeap) Len() int           { return len(h) }
func (h sleepHeap) Less(i, j int) bool { return h[i].t < h[j].t }
func (h sleepHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sleepHeap) Push(x any)        { *h = append(*h, x.(sleepEntry)) }
func (h *sleepHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = sleepEntry{}
	*h = old[:len(old)-1]
	return x
}

// NewSleeper returns a Sleeper on the clock now; its goroutine starts on
// first use and lives as long as the process.
func NewSleeper(now func() int64) *Sleeper {
	return &Sleeper{now: now, kick: make(chan struct{}, 1)}
}

// Until blocks until now() reaches t, or until stop delivers (then it
// returns false).
func (s *Sleeper) Until(t int64, stop <-chan struct{}) bool {
	if t <= s.now() {
		return true
	}
	s.once.Do(func() { go s.loop() })
	ch := make(chan struct{})
	s.mu.Lock()
	heap.Push(&s.h, sleepEntry{t, ch})
	first := s.h[0].ch == ch
	s.mu.Unlock()
	if first {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	select {
	case <-ch:
		return true
	case <-stop:
		return false
	}
}

func (s *Sleeper) loop() {
	LockThread()
	w := NewWaiter(s.now)
	for {
		s.mu.Lock()
		if len(s.h) == 0 {
			s.mu.Unlock()
			<-s.kick
			continue
		}
		t := s.h[0].t
		s.mu.Unlock()
		if !w.Until(t, s.kick, nil) {
			continue // an earlier moment arrived
		}
		now := s.now()
		s.mu.Lock()
		for len(s.h) > 0 && s.h[0].t <= now {
			close(heap.Pop(&s.h).(sleepEntry).ch)
		}
		s.mu.Unlock()
	}
}
