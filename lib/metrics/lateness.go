package metrics

import (
	"fmt"
	"math"
	"time"
)

// Defaults of the rule that says the client fell behind its schedule (see
// Lateness).
const (
	// DefaultLateFraction: a request is late when its send lateness exceeds
	// this fraction of its own latency ...
	DefaultLateFraction = 0.10
	// DefaultLateFloor: ... and this absolute floor.
	DefaultLateFloor = time.Millisecond

	lateBinNS       = int64(time.Second) // a bin of schedule time, doubled when there are too many
	lateMaxBins     = 4096               // bins kept before they are merged pairwise
	lateWindowFill  = 20                 // a window spans enough bins for this many requests on average
	lateWindowMin   = 10                 // a window with fewer requests is not judged
	lateTrendMinWin = 8                  // the trend needs this many judged windows
	lateTrendMaxWin = 64                 // windows are merged to at most this many for the rank correlation
	lateTrendTau    = 0.6                // Kendall's tau of window lateness against time, at least
	lateTrendShare  = 0.05               // growth over the run, at least this share of the mean latency
)

// Lateness is how well the client kept to its schedule: the client's own
// send lateness L = sent - intended less any wait for a --concurrency slot
// (result.Record.CeilingWaitNS), for every profiling request that has both
// times. A ceiling the user set delays sends on purpose; that is not the
// client falling behind, and the send_lateness metric still shows it.
//
// What matters is what the server could have noticed. A request sent L late
// whose own latency (end - sent) is R spends L/R of its life at another
// moment than the schedule meant, so the load the server saw differs from
// the intended one by about that share; a 10 ms lateness on a 200 ms request
// is a 5 % shift, the same lateness on a 2 ms request puts it in another
// request's place. And a wake-up late now and then on a shared machine (one
// spike) moves a few requests, not the load. So a request is late when
// L > max(LateFraction × R, LateFloor) (10 % and 1 ms by default), and the
// client fell behind (Behind) when either
//
//   - sustained: in some window of the schedule, more than half of the
//     requests were late. Windows are consecutive spans of intended send
//     time, 1 s or longer so that they hold 20 requests on average; a
//     window of fewer than 10 requests is not judged. A stall shorter than
//     half a window leaves most of its window on time; a client that cannot
//     keep up is late in every window from some point on; or
//   - trend: lateness grows along the schedule, the signature of a backlog
//     building before it is large: over at least 8 judged windows (merged to
//     at most 64), the rank correlation (Kendall's tau) of the windows' mean
//     lateness with their order is at least 0.6, and the least-squares
//     growth over the run (Slope × SpanNS) exceeds both the floor and 5 %
//     of the requests' mean latency. A spike raises one window and leaves
//     the order of the others alone; noise without growth has a tau near 0.
//
// The raw percentiles stay in the metrics (send_lateness): a p99 of 10 ms
// against latencies of hundreds of ms, or one stall, is reported, not
// called falling behind.
type Lateness struct {
	Count int64   // requests with both times
	P50NS float64 // client lateness percentiles (exact in a Summary, within the stated bound in a Live snapshot)
	P99NS float64
	MaxNS float64
	// SendP99NS is the p99 of send_lateness, ceiling waits included.
	SendP99NS float64
	Late      int64   // requests late relative to their own latency (see above)
	Fraction  float64 // the share of its latency past which a request is late
	Slope     float64 // seconds of lateness gained per second of schedule (least squares)
	SpanNS    int64   // schedule time between the first and last intended send
	Tau       float64 // Kendall's tau of the windows' mean lateness with their order (0 with too few windows)
	Windows   int     // judged windows (at least 10 requests each)
	WindowNS  int64   // a window's span of schedule time
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

// lateBin accumulates the requests whose intended send falls in one bin of
// schedule time.
type lateBin struct {
	n, late    int64
	sumL, sumR float64 // lateness and own latency, ns
}

func (b *lateBin) merge(o lateBin) {
	b.n += o.n
	b.late += o.late
	b.sumL += o.sumL
	b.sumR += o.sumR
}

// lateness gathers what the fell-behind rule needs, in bounded memory: the
// trend, and bins of intended send time (at most lateMaxBins, merged
// pairwise into bins twice as wide when a run outgrows them). Records may
// come in any order.
type lateness struct {
	frac  float64
	floor float64
	t     trend
	width int64 // ns per bin
	first int64 // bin number (intended / width) of bins[0]
	bins  []lateBin
}

func newLateness(o *Options) lateness {
	l := lateness{frac: o.LateFraction, floor: float64(o.LateFloor), width: lateBinNS}
	if l.frac <= 0 {
		l.frac = DefaultLateFraction
	}
	if l.floor <= 0 {
		l.floor = float64(DefaultLateFloor)
	}
	return l
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// add counts one request: intended send time, its client lateness and its
// own latency (end - sent), ns.
func (l *lateness) add(intendedNS int64, lateNS, ownNS float64) {
	l.t.add(intendedNS, lateNS)
	k := floorDiv(intendedNS, l.width)
	switch {
	case len(l.bins) == 0:
		l.first = k
		l.bins = append(l.bins, lateBin{})
	case k < l.first:
		grow := int(l.first - k)
		l.bins = append(make([]lateBin, grow, grow+len(l.bins)), l.bins...)
		l.first = k
	case k >= l.first+int64(len(l.bins)):
		for k >= l.first+int64(len(l.bins)) {
			l.bins = append(l.bins, lateBin{})
		}
	}
	b := &l.bins[k-l.first]
	b.n++
	b.sumL += lateNS
	b.sumR += max(ownNS, 0)
	if lateNS > max(l.frac*ownNS, l.floor) {
		b.late++
	}
	for len(l.bins) > lateMaxBins {
		l.coarsen()
	}
}

// coarsen merges the bins pairwise into bins twice as wide.
func (l *lateness) coarsen() {
	nf := floorDiv(l.first, 2)
	out := make([]lateBin, 0, len(l.bins)/2+1)
	for i, b := range l.bins {
		j := int(floorDiv(l.first+int64(i), 2) - nf)
		if j == len(out) {
			out = append(out, lateBin{})
		}
		out[j].merge(b)
	}
	l.width *= 2
	l.first = nf
	l.bins = out
}

// windows groups the bins into consecutive windows of at least one second
// holding lateWindowFill requests on average; it returns the windows and
// the span of one.
func (l *lateness) windows() ([]lateBin, int64) {
	var n int64
	for _, b := range l.bins {
		n += b.n
	}
	if n == 0 {
		return nil, 0
	}
	per := float64(n) / float64(len(l.bins))
	g := max(1, int(math.Ceil(lateWindowFill/per)))
	var out []lateBin
	for i := 0; i < len(l.bins); i += g {
		var w lateBin
		for _, b := range l.bins[i:min(i+g, len(l.bins))] {
			w.merge(b)
		}
		out = append(out, w)
	}
	return out, int64(g) * l.width
}

// kendallTau is Kendall's tau-a of xs against their order.
func kendallTau(xs []float64) float64 {
	n := len(xs)
	if n < 2 {
		return 0
	}
	var s int
	for i := range xs {
		for j := i + 1; j < n; j++ {
			switch {
			case xs[j] > xs[i]:
				s++
			case xs[j] < xs[i]:
				s--
			}
		}
	}
	return float64(s) / float64(n*(n-1)/2)
}

// judge fills l's rule fields from the gathered requests.
func (l *Lateness) judge(g *lateness) {
	l.Slope, l.SpanNS, l.Fraction = g.t.slope(), g.t.xmax-g.t.xmin, g.frac
	ws, span := g.windows()
	l.WindowNS = span
	var judged []lateBin
	var sumR float64
	var n int64
	for _, w := range ws {
		l.Late += w.late
		sumR += w.sumR
		n += w.n
		if w.n >= lateWindowMin {
			judged = append(judged, w)
		}
	}
	l.Windows = len(judged)
	if len(judged) >= lateTrendMinWin {
		// merge to at most lateTrendMaxWin windows, in order
		k := (len(judged) + lateTrendMaxWin - 1) / lateTrendMaxWin
		var means []float64
		for i := 0; i < len(judged); i += k {
			var m lateBin
			for _, w := range judged[i:min(i+k, len(judged))] {
				m.merge(w)
			}
			means = append(means, m.sumL/float64(m.n))
		}
		l.Tau = kendallTau(means)
	}
	meanR := 0.0
	if n > 0 {
		meanR = sumR / float64(n)
	}
	// The sustained rule: the window with the largest late share.
	worst, worstAt := -1.0, 0
	for i, w := range ws {
		if w.n < lateWindowMin {
			continue
		}
		if share := float64(w.late) / float64(w.n); share > worst {
			worst, worstAt = share, i
		}
	}
	growth := l.Slope * float64(l.SpanNS)
	switch {
	case worst > 0.5:
		w := ws[worstAt]
		from := float64(max(g.first*g.width+int64(worstAt)*span-g.t.xmin, 0)) / 1e9
		l.Behind = true
		l.Reason = fmt.Sprintf("%d of the %d requests due in the %.0f s of schedule from %.0f s on were sent late by more than %.0f%% of their own latency (mean lateness %.2f ms, mean latency %.2f ms)",
			w.late, w.n, float64(span)/1e9, from, g.frac*100, w.sumL/float64(w.n)/1e6, w.sumR/float64(w.n)/1e6)
	case l.Windows >= lateTrendMinWin && l.Tau >= lateTrendTau && growth > max(g.floor, lateTrendShare*meanR):
		l.Behind = true
		l.Reason = fmt.Sprintf("send lateness grew steadily, %.2f ms per second of schedule over %.2f s (%.2f ms in all against a mean latency of %.2f ms; rank correlation %.2f over %d windows)",
			l.Slope*1e3, float64(l.SpanNS)/1e9, growth/1e6, meanR/1e6, l.Tau, l.Windows)
	}
	if l.Behind && l.SendP99NS > l.P99NS {
		l.Reason += " (waits for a --concurrency slot left out)"
	}
}
