package servermetrics

import (
	"math"
	"slices"
	"sort"
)

// Percentiles are the percentiles the reports give, aiperf's set.
var Percentiles = [9]float64{1, 5, 10, 25, 50, 75, 90, 95, 99}

// Window is the span the statistics cover: the profiling phase's first send
// to its last answer, in Unix ns.
type Window struct{ Start, End int64 }

// Report is what the collector gathered, summarized over a window.
type Report struct {
	Window  Window
	Targets []TargetReport
}

// TargetReport is one target's summary.
type TargetReport struct {
	URL                    string
	Fetches, Failures      int
	Skipped                int     // ticks skipped while a slow scrape was in flight
	Throttled              int     // ticks skipped to keep parsing within a fifth of a core
	WorkMS                 float64 // the last page's parse and store
	Errors                 map[string]int
	FirstError             string
	FirstFetch, LastFetch  int64
	AvgLatencyMS           float64
	Dropped                int // series past MaxSeries, summed over scrapes
	MaxSeries              int // the limit in force
	Thinned                int // times every other scrape was dropped (memory bound)
	Scrapes                int // successful scrapes kept
	BracketFrom, BracketTo int64
	// InWindow counts the scrapes inside the window (the engine summary's
	// gauge samples; the exports' gauges add the scrape after it, as
	// aiperf's do).
	InWindow int
	// Updates are the kept scrapes whose values differ from the scrape
	// before (aiperf's unique updates: its duplicates are pages equal to
	// the previous one), the first and last of them, and the median gap
	// between consecutive ones (NaN below two).
	Updates                 int
	FirstUpdate, LastUpdate int64
	MedianUpdateMS          float64
	Families                []FamilyReport // sorted by name
	Engine                  *EngineSummary // nil for an unknown engine
}

// FamilyReport is one metric family over the window.
type FamilyReport struct {
	Name, Type, Help, Unit string
	Series                 []SeriesReport
}

// SeriesReport is one series' statistics: exactly one of the pointers is set.
type SeriesReport struct {
	Labels  []Label
	Gauge   *GaugeStats
	Counter *CounterStats
	Hist    *HistStats
}

// GaugeStats are a gauge's statistics over the scrapes in the window
// (percentiles exact, linear between closest ranks as numpy's default).
type GaugeStats struct {
	N                  int
	Avg, Min, Max, Std float64
	P                  [9]float64
}

// CounterStats are a counter's increase over the window and its rate.
type CounterStats struct {
	Total, Rate float64
	Resets      int // decreases seen (a restart); each counts from zero
}

// HistStats are a histogram's deltas over the window.
type HistStats struct {
	Count, Sum, Avg    float64
	CountRate, SumRate float64
	Bounds, Cumulative []float64 // delta per bucket, cumulative as Prometheus keeps them
	P                  [9]float64
	HaveP              bool // the +Inf bucket rose
	Resets             int
	seconds            float64
}

// Report summarizes what was gathered over w. The counters' and histograms'
// deltas are taken between the scrapes that bracket the window (the last at
// or before its start, the first at or after its end; each scrape before
// the first send and after the last answer guarantees both), so the window
// is widened to them; the gauges' statistics use the scrapes inside the
// window (none when none falls inside: the gauges are then unknown, and
// Warnings says so). The zero Window is every scrape.
func (c *Collector) Report(w Window) *Report {
	r := &Report{Window: w}
	for _, t := range c.targets {
		t.mu.Lock()
		tr := t.report(w)
		tr.MaxSeries = c.o.Limits.MaxSeries
		r.Targets = append(r.Targets, tr)
		t.mu.Unlock()
	}
	return r
}

func (t *target) report(w Window) TargetReport {
	tr := TargetReport{
		URL: t.url, Fetches: t.fetches, Failures: t.failures, Skipped: t.skipped,
		Throttled: t.throttled, WorkMS: float64(t.workNS) / 1e6,
		FirstError: t.firstErr, FirstFetch: t.firstNS, LastFetch: t.lastNS,
		Dropped: t.dropped, Thinned: t.s.thinned, Scrapes: len(t.s.scrapes),
		Errors: map[string]int{},
	}
	for k, v := range t.errs {
		tr.Errors[k] = v
	}
	if ok := t.fetches - t.failures; ok > 0 {
		tr.AvgLatencyMS = float64(t.latencyNS) / float64(ok) / 1e6
	}
	s := t.s
	tr.MedianUpdateMS = math.NaN()
	if len(s.scrapes) == 0 {
		return tr
	}
	tr.Updates, tr.FirstUpdate, tr.LastUpdate, tr.MedianUpdateMS = s.updates()
	a := newAggregator(s, w)
	tr.BracketFrom, tr.BracketTo = s.scrapes[a.i0].t, s.scrapes[a.i1].t
	tr.InWindow = len(a.inside)
	tr.Families = a.families()
	tr.Engine = engineSummary(tr.Families, a)
	return tr
}

// aggregator computes statistics over one target's stored scrapes.
type aggregator struct {
	s      *series
	i0, i1 int   // bracketing scrapes
	inside []int // scrapes inside the window (the engine summary's gauges)
	// gauges are the exports' gauge samples: inside and, when some scrape
	// fell inside, the one that closes the bracket after the last answer
	// (aiperf's filter ends at the last update, past the profiling end).
	gauges []int
}

func newAggregator(s *series, w Window) *aggregator {
	a := &aggregator{s: s, i0: 0, i1: len(s.scrapes) - 1}
	for k, sc := range s.scrapes {
		if sc.t <= w.Start {
			a.i0 = k
		}
	}
	for k := len(s.scrapes) - 1; k >= 0; k-- {
		if s.scrapes[k].t >= w.End {
			a.i1 = k
		}
	}
	if a.i1 < a.i0 {
		a.i1 = a.i0
	}
	for k := a.i0; k <= a.i1; k++ {
		if t := s.scrapes[k].t; t >= w.Start && t <= w.End || w == (Window{}) {
			a.inside = append(a.inside, k)
		}
	}
	// No scrape inside the window (a run shorter than the interval): the
	// gauges are unknown. The bracketing scrapes, taken before the first
	// send and after the last answer, would show an idle server.
	a.gauges = a.inside
	if n := len(a.inside); n > 0 && a.inside[n-1] < a.i1 {
		a.gauges = append(slices.Clip(a.inside), a.i1)
	}
	return a
}

// updates counts the scrapes whose values differ from the previous
// scrape's (the first is one), with the first and last of their times and
// the median gap between consecutive ones in ms (NaN below two).
func (s *series) updates() (n int, first, last int64, medianMS float64) {
	var gaps []float64
	for k, sc := range s.scrapes {
		if k > 0 && sameValues(s.scrapes[k-1].vals, sc.vals) {
			continue
		}
		if n > 0 {
			gaps = append(gaps, float64(sc.t-last))
		} else {
			first = sc.t
		}
		n, last = n+1, sc.t
	}
	medianMS = math.NaN()
	if len(gaps) > 0 {
		slices.Sort(gaps)
		m := len(gaps) / 2
		medianMS = gaps[m]
		if len(gaps)%2 == 0 {
			medianMS = (gaps[m-1] + gaps[m]) / 2
		}
		medianMS /= 1e6
	}
	return n, first, last, medianMS
}

// sameValues reports whether two scrapes hold the same values (a column
// one lacks is NaN in it).
func sameValues(a, b []float64) bool {
	for i := range max(len(a), len(b)) {
		x, y := math.NaN(), math.NaN()
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
			return false
		}
	}
	return true
}

func (a *aggregator) seconds() float64 {
	return float64(a.s.scrapes[a.i1].t-a.s.scrapes[a.i0].t) / 1e9
}

// increase is a counter column's increase over the bracket (increases).
func (a *aggregator) increase(c int) (total float64, resets int, seen bool) {
	totals, resets, seen := a.increases([]int{c})
	return totals[0], resets, seen
}

// increases is the increase over the bracket of each of the columns of
// one series (a counter's value; a histogram's buckets, count and sum):
// the sum of the rises between consecutive scrapes holding it, a fall
// counting as a restart from zero (Prometheus' increase()). A restart is
// the series': when any column falls at a scrape, every column counts its
// value there from zero (a restarted server's histogram may fall in its
// count and not in a bucket that happens to have grown past its old value;
// per-column counting would then mix lifetimes), and a column out of the
// page at that scrape counts from zero when it is back. A column's start is
// its last value at or before the bracket's first scrape, so one left out
// of that page alone keeps its earlier value. A series no scrape held
// before (a page that was read) was born during the bracket, as a server
// creates a labelled series on its first event (a model's first request):
// it counts from 0, not from the first value seen. A column new to a
// series that was there (a bucket the page had left out) starts at its
// first value seen: from 0 it would count its whole past. A restart shows
// only as a fall: a series that restarts while out of the pages and comes
// back above its old value is counted from its old value.
func (a *aggregator) increases(cols []int) (totals []float64, resets int, seen bool) {
	totals = make([]float64, len(cols))
	prev := make([]float64, len(cols))
	born := true // no column of the series before the bracket
	for j, c := range cols {
		prev[j] = math.NaN() // no start yet: the first value seen is one
		for k := a.i0; k >= 0; k-- {
			if v := a.s.value(k, c); !math.IsNaN(v) {
				prev[j], born = v, false
				break
			}
		}
	}
	if born {
		for j := range prev {
			prev[j] = 0
		}
	}
	for k := a.i0 + 1; k <= a.i1; k++ {
		reset := false
		for j, c := range cols {
			if v := a.s.value(k, c); v < prev[j] {
				reset = true
			}
		}
		if reset {
			resets++
		}
		for j, c := range cols {
			v := a.s.value(k, c)
			switch {
			case math.IsNaN(v) && reset:
				prev[j] = 0 // restarted while out of the page: from zero when back
			case math.IsNaN(v):
			case reset:
				totals[j] += v
				prev[j] = v
			case math.IsNaN(prev[j]):
				prev[j] = v
			default:
				totals[j] += v - prev[j]
				prev[j] = v
			}
		}
	}
	for _, c := range cols {
		for k := a.i0; k <= a.i1 && !seen; k++ {
			seen = !math.IsNaN(a.s.value(k, c))
		}
	}
	return totals, resets, seen
}

// gaugeValues are column c's values at the gauges' samples.
func (a *aggregator) gaugeValues(c int) []float64 {
	var vs []float64
	for _, k := range a.gauges {
		if v := a.s.value(k, c); !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	return vs
}

// groupKey identifies a series of a family (all a histogram's columns).
func groupKey(fam string, ls []Label) string { return seriesKey(fam, ls, 0, 0) }

func (a *aggregator) families() []FamilyReport {
	type group struct {
		labels  []Label
		value   int
		buckets []int
		sum     int
		count   int
	}
	byFam := map[string][]string{}
	groups := map[string]*group{}
	for i, c := range a.s.cols {
		k := groupKey(c.family, c.labels)
		g := groups[k]
		if g == nil {
			g = &group{labels: c.labels, value: -1, sum: -1, count: -1}
			groups[k] = g
			byFam[c.family] = append(byFam[c.family], k)
		}
		switch c.part {
		case partValue:
			g.value = i
		case partBucket:
			g.buckets = append(g.buckets, i)
		case partSum:
			g.sum = i
		case partCount:
			g.count = i
		}
	}
	names := make([]string, 0, len(byFam))
	for n := range byFam {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []FamilyReport
	for _, n := range names {
		fi := a.s.fams[n]
		fr := FamilyReport{Name: n, Type: fi.typ, Help: fi.help, Unit: inferUnit(n, fi.help)}
		for _, k := range byFam[n] {
			g := groups[k]
			sr := SeriesReport{Labels: g.labels}
			switch {
			case fi.typ == TypeHistogram:
				sr.Hist = a.hist(g.buckets, g.sum, g.count)
			case fi.typ == TypeCounter && g.value >= 0:
				total, resets, seen := a.increase(g.value)
				if !seen {
					continue
				}
				cs := &CounterStats{Total: total, Resets: resets}
				if sec := a.seconds(); sec > 0 {
					cs.Rate = total / sec
				}
				sr.Counter = cs
			case g.value >= 0:
				vs := a.gaugeValues(g.value)
				if len(vs) == 0 {
					continue
				}
				sr.Gauge = gaugeStats(vs)
			default:
				continue
			}
			fr.Series = append(fr.Series, sr)
		}
		slices.SortStableFunc(fr.Series, func(x, y SeriesReport) int { return slices.CompareFunc(x.Labels, y.Labels, cmpLabel) })
		if len(fr.Series) > 0 {
			out = append(out, fr)
		}
	}
	return out
}

// hist computes a histogram series' deltas over the bracket.
func (a *aggregator) hist(buckets []int, sum, count int) *HistStats {
	h := &HistStats{seconds: a.seconds()}
	slices.SortFunc(buckets, func(x, y int) int {
		lx, ly := a.s.cols[x].le, a.s.cols[y].le
		switch {
		case lx < ly:
			return -1
		case lx > ly:
			return 1
		}
		return 0
	})
	cols := slices.Clone(buckets)
	for _, c := range []int{count, sum} {
		if c >= 0 {
			cols = append(cols, c)
		}
	}
	totals, resets, _ := a.increases(cols)
	h.Resets = resets
	for i, b := range buckets {
		h.Bounds = append(h.Bounds, a.s.cols[b].le)
		h.Cumulative = append(h.Cumulative, totals[i])
	}
	rest := totals[len(buckets):]
	if count >= 0 {
		h.Count, rest = rest[0], rest[1:]
	} else if n := len(h.Cumulative); n > 0 {
		h.Count = h.Cumulative[n-1]
	}
	if sum >= 0 {
		h.Sum = rest[0]
	}
	h.finish()
	return h
}

// finish derives the mean, the rates and the estimated percentiles.
func (h *HistStats) finish() {
	if h.Count > 0 {
		h.Avg = h.Sum / h.Count
	}
	if h.seconds > 0 {
		h.CountRate, h.SumRate = h.Count/h.seconds, h.Sum/h.seconds
	}
	if n := len(h.Cumulative); n > 0 && h.Cumulative[n-1] > 0 {
		h.HaveP = true
		for i, p := range Percentiles {
			h.P[i] = Quantile(p/100, h.Bounds, h.Cumulative)
		}
	}
}

// OneBucket reports whether the p50 and the p99 fall in one bucket, and
// its bounds (lo 0 for the first; hi +Inf for the last): the histogram
// then says only that they lie between, and the interpolated percentiles
// are spread evenly over the bucket whatever the values (an ITL of 0.1 ms
// reads p50 5 ms, p99 9.9 ms in vLLM's first bucket, 0 to 10 ms).
func (h *HistStats) OneBucket() (lo, hi float64, ok bool) {
	lo, hi, ok = h.Bucket(0.5)
	if lo99, hi99, ok99 := h.Bucket(0.99); !ok || !ok99 || lo99 != lo || hi99 != hi {
		return 0, 0, false
	}
	return lo, hi, true
}

// Bucket is the bucket the q-quantile (0..1) falls in: the bounds its
// estimate (Quantile) is interpolated between (lo 0 for the first; hi +Inf
// for the last). ok is false for an empty histogram.
func (h *HistStats) Bucket(q float64) (lo, hi float64, ok bool) {
	n := len(h.Cumulative)
	if n == 0 || h.Cumulative[n-1] <= 0 || len(h.Bounds) != n {
		return 0, 0, false
	}
	b := sort.Search(n, func(i int) bool { return h.Cumulative[i] >= q*h.Cumulative[n-1] })
	if b >= n {
		return 0, 0, false
	}
	if b > 0 {
		lo = h.Bounds[b-1]
	}
	return lo, h.Bounds[b], true
}

// Quantile estimates the q-quantile (0..1) of a classic histogram from
// cumulative counts by upper bound, by Prometheus' histogram_quantile rule:
// the rank q·total falls in the first bucket whose cumulative count reaches
// it, and the value is interpolated linearly inside that bucket (its lower
// bound is the previous bound, 0 for the first bucket when its bound is
// positive). A rank in the +Inf bucket gives the highest finite bound.
// NaN when the histogram is empty.
func Quantile(q float64, bounds, cum []float64) float64 {
	n := len(cum)
	if n == 0 || cum[n-1] <= 0 || len(bounds) != n {
		return math.NaN()
	}
	rank := q * cum[n-1]
	b := sort.Search(n, func(i int) bool { return cum[i] >= rank })
	if b >= n {
		b = n - 1
	}
	if math.IsInf(bounds[b], 1) {
		if b == 0 {
			return math.NaN()
		}
		return bounds[b-1]
	}
	lower, prev := 0.0, 0.0
	if b > 0 {
		lower, prev = bounds[b-1], cum[b-1]
	} else if bounds[0] <= 0 {
		return bounds[0]
	}
	in := cum[b] - prev
	if in <= 0 {
		return bounds[b]
	}
	return lower + (bounds[b]-lower)*(rank-prev)/in
}

func gaugeStats(vs []float64) *GaugeStats {
	g := &GaugeStats{N: len(vs), Min: math.Inf(1), Max: math.Inf(-1)}
	var sum float64
	for _, v := range vs {
		sum += v
		g.Min, g.Max = min(g.Min, v), max(g.Max, v)
	}
	g.Avg = sum / float64(len(vs))
	if len(vs) > 1 {
		var ss float64
		for _, v := range vs {
			ss += (v - g.Avg) * (v - g.Avg)
		}
		g.Std = math.Sqrt(ss / float64(len(vs)-1))
	}
	sorted := slices.Clone(vs)
	slices.Sort(sorted)
	for i, p := range Percentiles {
		g.P[i] = exactPercentile(sorted, p)
	}
	return g
}

// exactPercentile interpolates linearly between the closest ranks (numpy's
// default, as aiperf's gauge percentiles).
func exactPercentile(sorted []float64, p float64) float64 {
	pos := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (sorted[lo+1]-sorted[lo])*(pos-float64(lo))
}
