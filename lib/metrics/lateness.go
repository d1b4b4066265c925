package metrics

import (
	"fmt"
	"time"
)

// Defaults of the rule that says the client fell behind its schedule.
const (
	DefaultLateThreshold = 10 * time.Millisecond
	DefaultLateSlope     = 0.01
	lateTrendMinCount    = 100
	lateTrendMinSpan     = int64(time.Second)
)

// Lateness is how well the client kept to its schedule: the client's own
// send lateness, sent - intended less any wait for a --concurrency slot
// (result.Record.CeilingWaitNS), for every profiling request that has both
// times. A ceiling the user set delays sends on purpose; that is not the
// client falling behind, and the send_lateness metric still shows it.
//
// The client fell behind (Behind) when either
//
//   - the p99 send lateness exceeds the threshold (Options.LateThreshold,
//     10 ms by default): a tail of requests left late enough to distort the
//     offered load, as at a rate the client cannot sustain; or
//   - lateness grows along the schedule: the least-squares slope of lateness
//     against intended send time exceeds Options.LateSlope (0.01 by default,
//     i.e. 10 ms of extra lateness per second of schedule), over at least
//     100 requests spanning at least one second of schedule (there the
//     slope's noise from ms-scale jitter is a few 1e-4). A growing backlog is
//     the signature of a client slower than the schedule, visible before the
//     p99 reaches the threshold.
type Lateness struct {
	Count int64   // requests with both times
	P50NS float64 // send lateness percentiles (exact in a Summary, within the stated bound in a Live snapshot)
	P99NS float64
	MaxNS float64
	// SendP99NS is the p99 of send_lateness, ceiling waits included.
	SendP99NS float64
	Slope     float64 // seconds of lateness gained per second of schedule
	SpanNS    int64   // schedule time between the first and last intended send
	Behind    bool
	Reason    string // why Behind, in words; "" when not behind
}

// trend fits lateness against intended send time by least squares, in
// constant memory.
type trend struct {
	n                int64
	x0, xmin, xmax   int64
	sx, sy, sxx, sxy float64
}

func (t *trend) add(intendedNS int64, lateNS float64) {
	if t.n == 0 {
		t.x0, t.xmin, t.xmax = intendedNS, intendedNS, intendedNS
	}
	t.xmin, t.xmax = min(t.xmin, intendedNS), max(t.xmax, intendedNS)
	x := float64(intendedNS-t.x0) / 1e9
	y := lateNS / 1e9
	t.n++
	t.sx += x
	t.sy += y
	t.sxx += x * x
	t.sxy += x * y
}

func (t *trend) slope() float64 {
	n := float64(t.n)
	den := n*t.sxx - t.sx*t.sx
	if t.n < 2 || den <= 0 {
		return 0
	}
	return (n*t.sxy - t.sx*t.sy) / den
}

func (o *Options) lateThreshold() time.Duration {
	if o.LateThreshold > 0 {
		return o.LateThreshold
	}
	return DefaultLateThreshold
}

func (o *Options) lateSlope() float64 {
	if o.LateSlope > 0 {
		return o.LateSlope
	}
	return DefaultLateSlope
}

// judge fills l.Slope, l.SpanNS, l.Behind and l.Reason.
func (l *Lateness) judge(t *trend, o *Options) {
	l.Slope, l.SpanNS = t.slope(), t.xmax-t.xmin
	thr := float64(o.lateThreshold())
	switch {
	case l.Count > 0 && l.P99NS > thr:
		l.Behind = true
		l.Reason = fmt.Sprintf("p99 send lateness %.2f ms exceeds %.2f ms", l.P99NS/1e6, thr/1e6)
		if l.SendP99NS > l.P99NS {
			l.Reason += " (waits for a --concurrency slot left out)"
		}
	case l.Count >= lateTrendMinCount && l.SpanNS >= lateTrendMinSpan && l.Slope > o.lateSlope():
		l.Behind = true
		l.Reason = fmt.Sprintf("send lateness grew %.2f ms per second of schedule over %.2f s", l.Slope*1e3, float64(l.SpanNS)/1e9)
	}
}
