package replaycmd

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/result"
)

// liveLine shows a replay's progress on a terminal, once a second: sent,
// done, errors, requests in flight, the completion rate over the last
// second and the worst send lateness over the last second.
type liveLine struct {
	counters replay.Counters
	w        io.Writer
	on       bool

	mu       sync.Mutex
	maxLate  int64 // over the current interval, ns
	stopCh   chan struct{}
	finished chan struct{}
}

func newLiveLine(w io.Writer, quiet bool) *liveLine {
	return &liveLine{w: w, on: !quiet && base.IsTerminal(w), stopCh: make(chan struct{}), finished: make(chan struct{})}
}

// observe sees every record (called one at a time by the replay).
func (l *liveLine) observe(r *result.Record) {
	if !l.on {
		return
	}
	if late := r.LatenessNS(); late > l.maxLate {
		l.mu.Lock()
		l.maxLate = max(l.maxLate, late)
		l.mu.Unlock()
	}
}

func (l *liveLine) start() {
	if !l.on {
		close(l.finished)
		return
	}
	go func() {
		defer close(l.finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var lastDone int64
		last := time.Now()
		for {
			select {
			case <-l.stopCh:
				fmt.Fprint(l.w, "\r\033[K")
				return
			case now := <-t.C:
				done := l.counters.Done.Load()
				rate := float64(done-lastDone) / now.Sub(last).Seconds()
				lastDone, last = done, now
				l.mu.Lock()
				late := l.maxLate
				l.maxLate = 0
				l.mu.Unlock()
				fmt.Fprintf(l.w, "\r\033[Ksent %d  done %d  errors %d  in flight %d  %.0f req/s  lateness max %.2f ms",
					l.counters.Sent.Load(), done, l.counters.Errors.Load(), l.counters.InFlight.Load(), rate, float64(late)/1e6)
			}
		}
	}()
}

func (l *liveLine) stop() {
	select {
	case <-l.stopCh:
	default:
		close(l.stopCh)
	}
	<-l.finished
}
