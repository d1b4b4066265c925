package replaycmd

import (
	"fmt"
	"io"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/result"
)

// liveLine shows a replay's progress on a terminal, once a second: sent,
// done, errors, in flight, the completion rate of the last second, and the
// send lateness and TTFT so far (from metrics.Live: constant memory,
// percentiles within its stated relative error).
type liveLine struct {
	counters replay.Counters
	agg      *metrics.Live
	w        io.Writer
	on       bool
	every    time.Duration // how often the line is redrawn
	stopCh   chan struct{}
	finished chan struct{}
}

func newLiveLine(w io.Writer, quiet bool, o metrics.Options) (*liveLine, error) {
	return newLive(w, !quiet && base.IsTerminal(w), o)
}

// newLive is newLiveLine with the terminal test done.
func newLive(w io.Writer, on bool, o metrics.Options) (*liveLine, error) {
	l := &liveLine{w: w, on: on, every: time.Second, stopCh: make(chan struct{}), finished: make(chan struct{})}
	if l.on {
		agg, err := metrics.NewLive(o)
		if err != nil {
			return nil, err
		}
		l.agg = agg
	}
	return l, nil
}

// observe sees every record (called one at a time by the replay).
func (l *liveLine) observe(r *result.Record) {
	if l.agg != nil {
		l.agg.Add(r)
	}
}

func (l *liveLine) start() {
	if !l.on {
		close(l.finished)
		return
	}
	go func() {
		defer close(l.finished)
		t := time.NewTicker(l.every)
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
				s := l.agg.Snapshot()
				fmt.Fprintf(l.w, "\r\033[Ksent %d  done %d  errors %d  in flight %d  %.0f req/s  lateness p99 %.2f ms  TTFT p50 %.1f ms",
					l.counters.Sent.Load(), done, l.counters.Errors.Load(), l.counters.InFlight.Load(), rate,
					s.SendLateness.P99/1e6, s.TTFT.P50/1e6)
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
