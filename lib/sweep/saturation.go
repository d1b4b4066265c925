package sweep

import (
	"fmt"
	"math"
	"time"
)

// Saturation judges, from samples of a replay in progress, whether the
// server is saturated: it no longer completes what the client offers, or it
// fails too many requests. It is the idea of guidellm's over-saturation
// constraint (stop a run that only builds a backlog) with a rule of our own:
//
//   - throughput: over the last Window, and over each of its halves,
//     requests completed fall short of requests sent by more than Lag
//     (10 %), and the number in flight grows
//     steadily: its least-squares slope over the window's samples is
//     positive with a t statistic of at least 3, and the growth it implies
//     over the window is at least 5 requests. A server that keeps up
//     completes what was sent one latency earlier, so a shortfall alone is
//     the ramp-up of a run (or a burst); a shortfall with a steadily growing
//     backlog is a queue without end. (guidellm asks for significant slopes
//     of both the concurrency and the TTFT; the backlog is the cause of the
//     TTFT's growth, and needs no streaming.)
//   - errors: over the last Window, more than ErrorRate of the completed
//     requests failed (at least 5 of them).
//
// Nothing is judged before MinDuration (default: Window), nor before the
// window starts two latencies after the run began (so that the ramp-up,
// which lasts one latency, lies outside it). The latency is the early one
// (Sample.MeanLatency: aiperf-replay gives the mean of the first 20
// completions), since the latency of a saturated server grows with its
// backlog and would hold the judgement back the longer, the worse it is. A closed-loop run (the
// concurrency schedule) sends only when a request completes, so only the
// error rule can fire there.
//
// Add is called by one goroutine at a time.
type Saturation struct {
	Window      time.Duration // default 30 s
	MinDuration time.Duration // default Window
	Lag         float64       // default 0.10
	ErrorRate   float64       // default 0.10; negative: no error rule

	samples []Sample
}

// Sample is the state of a run at one moment.
type Sample struct {
	At          time.Duration // since the run started
	Sent, Done  int64         // requests sent, and completed (records written)
	Errors      int64         // completed with an error
	MeanLatency time.Duration // of the completed requests so far
}

// Add records a sample (At increasing) and reports whether the server is
// saturated, and why.
func (s *Saturation) Add(x Sample) (bool, string) {
	win := s.Window
	if win <= 0 {
		win = 30 * time.Second
	}
	minDur := s.MinDuration
	if minDur <= 0 {
		minDur = win
	}
	lag := s.Lag
	if lag <= 0 {
		lag = 0.10
	}
	errRate := s.ErrorRate
	if errRate == 0 {
		errRate = 0.10
	}
	s.samples = append(s.samples, x)
	// keep one sample at or before the window's start
	i := 0
	for i+1 < len(s.samples) && s.samples[i+1].At <= x.At-win {
		i++
	}
	if i > 0 {
		s.samples = append(s.samples[:0], s.samples[i:]...)
	}
	first := s.samples[0]
	if x.At < minDur || x.At-first.At < win*9/10 || first.At < 2*x.MeanLatency {
		return false, ""
	}
	sent, done, errs := x.Sent-first.Sent, x.Done-first.Done, x.Errors-first.Errors
	span := (x.At - first.At).Seconds()
	if errRate > 0 && errs >= 5 && float64(errs) > errRate*float64(done) {
		return true, fmt.Sprintf("%d of the %d requests completed in the last %v failed (more than %.0f%%)",
			errs, done, roundDur(x.At-first.At), 100*errRate)
	}
	if sent < 20 || float64(done) >= (1-lag)*float64(sent) {
		return false, ""
	}
	// The shortfall holds in both halves of the window: a run ramping up
	// (long requests whose first replies are still to come) completes what
	// it was sent once one latency has passed.
	mid := first
	for _, m := range s.samples {
		if m.At >= first.At+(x.At-first.At)/2 {
			mid = m
			break
		}
	}
	for _, h := range [][2]Sample{{first, mid}, {mid, x}} {
		hs, hd := h[1].Sent-h[0].Sent, h[1].Done-h[0].Done
		if hs <= 0 || float64(hd) >= (1-lag)*float64(hs) {
			return false, ""
		}
	}
	slope, t := inflightTrend(s.samples)
	if slope <= 0 || t < 3 || slope*span < 5 {
		return false, ""
	}
	return true, fmt.Sprintf("in the last %v the server completed %.1f requests/s of the %.1f/s sent, and the requests in flight grew by %.1f/s (t = %.1f) to %d",
		roundDur(x.At-first.At), float64(done)/span, float64(sent)/span, slope, t, x.Sent-x.Done)
}

// inflightTrend fits the requests in flight against time by least squares
// and returns the slope (per second) and its t statistic.
func inflightTrend(xs []Sample) (slope, t float64) {
	n := float64(len(xs))
	if n < 5 {
		return 0, 0
	}
	var sx, sy, sxx, sxy, syy float64
	x0 := xs[0].At
	for _, s := range xs {
		x := (s.At - x0).Seconds()
		y := float64(s.Sent - s.Done)
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
		syy += y * y
	}
	cxx := sxx - sx*sx/n
	cxy := sxy - sx*sy/n
	cyy := syy - sy*sy/n
	if cxx <= 0 {
		return 0, 0
	}
	slope = cxy / cxx
	rss := max(cyy-slope*cxy, 0)
	se := math.Sqrt(rss / (n - 2) / cxx)
	if se == 0 {
		if slope > 0 {
			return slope, math.Inf(1)
		}
		return slope, 0
	}
	return slope, slope / se
}

func roundDur(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
