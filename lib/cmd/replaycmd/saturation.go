package replaycmd

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/sweep"
	"github.com/urfave/cli/v2"
)

// saturationTick is how often --stop-on-saturation samples the run;
// earlyLatencyN completions make the early latency it waits two of before
// judging (sweep.Saturation).
const (
	saturationTick = 250 * time.Millisecond
	earlyLatencyN  = 20
)

// saturationWatch ends a replay when the server is saturated
// (sweep.Saturation's rule).
type saturationWatch struct {
	stop    chan struct{}
	done    chan struct{}
	latSum  atomic.Int64 // ns, over the first earlyLatencyN completed requests
	latN    atomic.Int64
	mu      sync.Mutex
	why     string
	endOnce sync.Once
}

// watchSaturation samples plan's counters until end is called, and closes
// plan.Options.Stop when the server is saturated, saying so on w. It must
// be called after plan.Options.Counters and Observe are set.
func watchSaturation(ctx context.Context, w io.Writer, plan *replay.Plan, window time.Duration) *saturationWatch {
	s := &saturationWatch{stop: make(chan struct{}), done: make(chan struct{})}
	plan.Options.Stop = s.stop
	if plan.Options.Counters == nil {
		plan.Options.Counters = new(replay.Counters)
	}
	counters := plan.Options.Counters
	observe := plan.Options.Observe
	plan.Options.Observe = func(r *result.Record) {
		if observe != nil {
			observe(r)
		}
		if r.EndNS > r.SentNS && r.SentNS > 0 && s.latN.Load() < earlyLatencyN {
			s.latSum.Add(r.EndNS - r.SentNS)
			s.latN.Add(1)
		}
	}
	det := &sweep.Saturation{Window: window}
	go func() {
		defer close(s.done)
		t := time.NewTicker(saturationTick)
		defer t.Stop()
		began := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.stop:
				return
			case now := <-t.C:
				x := sweep.Sample{At: now.Sub(began), Sent: counters.Sent.Load(), Done: counters.Done.Load(), Errors: counters.Errors.Load()}
				if n := s.latN.Load(); n > 0 {
					x.MeanLatency = time.Duration(s.latSum.Load() / n)
				}
				if ok, why := det.Add(x); ok {
					s.mu.Lock()
					s.why = why
					s.mu.Unlock()
					fmt.Fprintf(w, "aiperf-replay: stopping: the server is saturated: %s\n", why)
					close(s.stop)
					return
				}
			}
		}
	}()
	return s
}

// end stops the watch and returns why it stopped the run ("" when it did
// not).
func (s *saturationWatch) end() string {
	if s == nil { // no watch
		return ""
	}
	s.endOnce.Do(func() {
		select {
		case <-s.stop:
		default:
			close(s.stop)
		}
	})
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why
}

// saturationOptions reads --stop-on-saturation's window.
func (o *options) saturationOptions(c *cli.Context) (time.Duration, error) {
	if c.IsSet("saturation-window") && !o.stopOnSaturation {
		return 0, base.UsageError("--saturation-window: needs --stop-on-saturation")
	}
	win, err := duration("--saturation-window", o.saturationWindow)
	if err != nil {
		return 0, err
	}
	if o.stopOnSaturation && win == 0 {
		return 0, base.UsageError("--saturation-window %s: want a duration above 0", o.saturationWindow)
	}
	return win, nil
}
