// Package pace waits for moments with sub-millisecond precision: the
// replay schedule's sends and the mock server's token clock.
//
// Go's timers cannot do it on Linux: they wake through epoll_pwait, whose
// timeout is in whole milliseconds, so a 50 µs sleep takes about 1.06 ms
// and a 20 ms one about 21.1 ms (measured here). Spinning on
// runtime.Gosched for the last stretch is no cure: a goroutine that always
// finds itself runnable keeps its processor from polling the network or
// running timers, and other goroutines' reads and deadlines wait (they
// fired 20–100 ms late in tests). Sleeping in nanosleep(2) is precise but
// blocks the processor in a system call, stranding the goroutines queued
// on it until the runtime's monitor takes it back (up to 10 ms).
//
// On Linux a Waiter arms a timerfd (CLOCK_MONOTONIC, absolute time, ns
// resolution) and reads it through the runtime's network poller: the
// goroutine parks like any reader, the processor runs others, and epoll
// wakes at the timer's expiry rather than at a millisecond boundary. The
// Waiter aims a little before the moment, by a running estimate of the
// wake-up latency (about 40–60 µs here, the kernel's default timer slack
// included), and busy-waits only the last few microseconds. Long waits
// first sleep on an ordinary Go timer. Elsewhere a Waiter sleeps on a Go
// timer and yields for the last stretch.
package pace

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"
)

const (
	coarse   = 2 * time.Millisecond  // Go timer sleeps end this long before the moment
	spinMax  = 20 * time.Microsecond // busy-wait at most this much
	estMax   = 150e3                 // cap of the wake-up latency estimate, ns
	estStart = 50e3
)

// Waiter waits for moments on a monotonic clock. Until is used by one
// goroutine at a time; Interrupt may be called from any goroutine.
type Waiter struct {
	now   func() int64
	timer *time.Timer
	fine  fineTimer // nil when the platform has none
	est   float64   // wake-up latency of fine, ns
}

// NewWaiter returns a Waiter on the clock now, which must be
// time.Since-based (the runtime's monotonic clock, CLOCK_MONOTONIC on
// Linux) up to a constant.
func NewWaiter(now func() int64) *Waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &Waiter{now: now, timer: t, fine: newFineTimer(), est: estStart}
}

// Close releases the Waiter's timer.
func (w *Waiter) Close() {
	if w.fine != nil {
		w.fine.close()
	}
}

// Interrupt makes a wait in progress (or the next one) re-check wake and
// stop now.
func (w *Waiter) Interrupt() {
	if w.fine != nil {
		w.fine.fire()
	}
}

// Until waits until now() reaches t. It returns early, with false, when
// wake or stop delivers (either may be nil; a wait on the fine timer sees
// them when Interrupt is called or the moment comes).
func (w *Waiter) Until(t int64, wake, stop <-chan struct{}) bool {
	for {
		select {
		case <-wake:
			return false
		case <-stop:
			return false
		default:
		}
		rem := time.Duration(t - w.now())
		switch {
		case rem <= 0:
			return true
		case rem > coarse+2*time.Millisecond || w.fine == nil && rem > coarse:
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
		case rem <= spinMax:
			for w.now() < t {
			}
			return true
		case w.fine == nil:
			yield()
		default:
			// now() and the timerfd's clock differ by a constant: aim
			// by the remaining time.
			aim := rem - time.Duration(w.est)
			start := w.now()
			w.fine.sleep(aim)
			late := float64(w.now()-start) - float64(aim)
			if late >= 0 && late < 10*estMax { // an interrupt wakes early; a preemption is no estimate
				w.est = min(max(0.9*w.est+0.1*late, 0), estMax)
			}
		}
	}
}

// fineTimer is a precise one-shot timer.
type fineTimer interface {
	sleep(d time.Duration) // returns when d has passed or fire is called
	fire()
	close()
}

// Sleeper wakes many goroutines at their moments with the precision of one
// Waiter: one goroutine waits for the earliest moment and wakes whoever is
// due. The mock server's streams use it for their
// token clocks.
type Sleeper struct {
	now  func() int64
	once sync.Once
	mu   sync.Mutex
	h    sleepHeap
	kick chan struct{}
	w    atomic.Pointer[Waiter]
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
		if w := s.w.Load(); w != nil {
			w.Interrupt()
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
	w := NewWaiter(s.now)
	s.w.Store(w)
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
