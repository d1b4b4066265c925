package mock

import (
	"context"
	"sync"
	"time"
)

// The capacity model (Config.Slots, Config.TokenRate).
//
// The server decodes at most Slots requests at once; a request that finds
// every slot taken waits in a FIFO queue, and the wait is part of its time
// to first token, as on an engine whose batch is full. A request holds its
// slot from admission until its last token is due. With TokenRate R every
// token takes 1/R to decode, the first one included: token i (from 0) is
// due at admitted + TTFT + (i+1)/R, so a reply of n tokens holds its slot
//
//	S(n) = TTFT + n/R
//
// and, with every slot busy, the server completes
//
//	X = Slots / S(n) requests per second = Slots·n / S(n) tokens per second
//
// (Slots·R/n requests per second when TTFT is 0). That is its capacity: an
// offered load below X is served with a TTFT of TTFT + 1/R (plus whatever
// queueing the arrival process's bursts cause); above X the queue, and the
// TTFT with it, grows without bound. For a concurrency of C sessions (one
// request each at a time) the queue holds C - Slots requests once C >
// Slots, so each waits about (C/Slots - 1)·S(n) before its slot.
//
// The scheduler works on intended times, as the token clock does: a
// request's admission is the later of its arrival and the intended end of
// the request whose slot it takes (the due time of that one's last token),
// not the moment the goroutine that held the slot got round to releasing
// it. Late wake-ups therefore never add up to a lower capacity than the
// formula's. A request whose client leaves frees its slot when it notices
// (at the next token due), its end being then the moment it left.

// slots is a FIFO admission gate for at most n requests at once. It never
// reads the clock: arrivals and ends are given, which lets a test drive it
// on a virtual clock.
type slots struct {
	mu      sync.Mutex
	free    []time.Time       // intended end of the last holder of each free slot
	queue   []*slotWait       // waiting requests, oldest first
	running int               // slots held
	max     int               // slots in all
	served  int64             // admissions so far
	onGrant func(w *slotWait) // test hook: called (under mu) when a queued request gets its slot
}

// slotWait is one request in (or through) the queue.
type slotWait struct {
	arrived time.Time
	start   time.Time     // admission (valid once granted)
	granted chan struct{} // closed on admission
	seq     int64         // order of admission
}

func newSlots(n int) *slots {
	s := &slots{max: n, free: make([]time.Time, n)}
	return s
}

// enter queues a request that arrived at t; it is admitted at once when a
// slot is free.
func (s *slots) enter(t time.Time) *slotWait {
	w := &slotWait{arrived: t, granted: make(chan struct{})}
	s.add(w)
	return w
}

// add admits or queues w.
func (s *slots) add(w *slotWait) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.free) > 0 && len(s.queue) == 0 {
		end := s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
		s.grant(w, end)
		return
	}
	s.queue = append(s.queue, w)
}

// grant admits w into a slot whose last holder ended at end. s.mu is held.
func (s *slots) grant(w *slotWait, end time.Time) {
	w.start = w.arrived
	if end.After(w.start) {
		w.start = end
	}
	s.running++
	w.seq = s.served
	s.served++
	close(w.granted)
	if s.onGrant != nil {
		s.onGrant(w)
	}
}

// release frees a slot whose holder's work ended at end (intended): the
// oldest waiting request takes it.
func (s *slots) release(end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if len(s.queue) > 0 {
		w := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.grant(w, end)
		return
	}
	s.free = append(s.free, end)
}

// wait blocks until w is admitted and returns its admission time, or
// returns false when ctx ends first (w then leaves the queue, or, admitted
// meanwhile, hands its slot on at once).
func (s *slots) wait(ctx context.Context, w *slotWait) (time.Time, bool) {
	select {
	case <-w.granted:
		return w.start, true
	case <-ctx.Done():
	}
	s.mu.Lock()
	for i, q := range s.queue {
		if q == w {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			s.mu.Unlock()
			return time.Time{}, false
		}
	}
	s.mu.Unlock()
	// Admitted while ctx ended: give the slot back, unused.
	s.release(w.start)
	return time.Time{}, false
}

// load returns the requests holding a slot and those waiting for one (the
// numbers an engine reports as running and waiting).
func (s *slots) load() (running, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, len(s.queue)
}

// admit is the completion handler's hook: without slots it returns arrived
// and a no-op release; with slots it waits for one (false: the client left
// first) and returns the admission time and the release to call with the
// reply's intended end once it is written (or abandoned).
func (s *Server) admit(ctx context.Context, arrived time.Time) (time.Time, func(end time.Time), bool) {
	if s.slots == nil {
		return arrived, func(time.Time) {}, true
	}
	w := s.slots.enter(arrived)
	start, ok := s.slots.wait(ctx, w)
	if !ok {
		return start, nil, false
	}
	return start, func(end time.Time) {
		if now := time.Now(); now.Before(end) {
			end = now // the client left before the reply was due to end
		}
		s.slots.release(end)
	}, true
}

// SlotLoad returns the requests decoding (holding a slot) and those queued
// for one; both are 0 without Config.Slots.
func (s *Server) SlotLoad() (running, waiting int) {
	if s.slots == nil {
		return 0, 0
	}
	return s.slots.load()
}

// decodeStep is the time one token takes with Config.TokenRate (0 without).
func (c *Config) decodeStep() time.Duration {
	if c.TokenRate <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / c.TokenRate)
}

// end is the due time of the last of n tokens: when the reply's slot frees.
func (c *tokenClock) end(n int) time.Time {
	if c.fast || n <= 0 {
		return c.first
	}
	return c.due(n - 1)
}
