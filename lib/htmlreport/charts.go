package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/plot"
)

// Chart sizes in pixels: two charts side by side on a page 1,180 px wide.
const (
	chartW = 570
	chartH = 300
)

// maxWindows bounds the windows of the p50/p99 lines, the throughput and
// the error counts: a window is the smallest of 1, 2 or 5 times a power of
// ten seconds (from 1 ms) that cuts the run's span into at most this many.
const maxWindows = 60

// exactCDF is the most values a CDF draws as exact steps; past it the CDF
// is drawn through cdfLevels quantiles.
const exactCDF = 2000

// windows cut the run's span [t0, t1) into n windows of d ns.
type windows struct {
	t0, d int64
	n     int
}

func chooseWindows(t0, t1 int64) windows {
	span := max(t1-t0, 1)
	d := int64(time.Millisecond)
	for steps := 0; ; steps++ {
		for _, m := range [...]int64{1, 2, 5} {
			if w := d * m; (span+w-1)/w <= maxWindows {
				return windows{t0: t0, d: w, n: int((span + w - 1) / w)}
			}
		}
		d *= 10
		if steps > 15 { // spans beyond 30 years: one window
			return windows{t0: t0, d: span, n: 1}
		}
	}
}

func (w windows) index(t int64) int {
	return min(max(int((t-w.t0)/w.d), 0), w.n-1)
}

// sec is t in seconds since the run's first send.
func (w windows) sec(t int64) float64 { return float64(t-w.t0) / 1e9 }

// axis is a time axis over the windows, in seconds since the first send.
func (w windows) axis(label string) plot.Axis {
	return plot.Axis{Label: label, FixMin: true, Min: 0, FixMax: true, Max: math.Max(w.sec(w.t0+int64(w.n)*w.d), 1e-3)}
}

func (w windows) String() string { return fmtDuration(time.Duration(w.d)) }

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	case d >= time.Second:
		return fmt.Sprintf("%g s", d.Seconds())
	default:
		return fmt.Sprintf("%d ms", d/time.Millisecond)
	}
}

// windowPercentiles returns, per window, its middle (s) and the p50 and p99
// of the values sent in it (NaN for a window without values, which breaks
// the line), by lib/metrics' percentile (numpy's linear method).
func windowPercentiles(col *column, w windows) (mid, p50, p99 []float64) {
	count := make([]int, w.n+1)
	for _, t := range col.t {
		count[w.index(t)+1]++
	}
	for i := 1; i <= w.n; i++ {
		count[i] += count[i-1]
	}
	vals := make([]float64, len(col.v))
	next := slices.Clone(count[:w.n])
	for i, t := range col.t {
		k := w.index(t)
		vals[next[k]] = col.v[i]
		next[k]++
	}
	for k := 0; k < w.n; k++ {
		mid = append(mid, w.sec(w.t0+int64(k)*w.d+w.d/2))
		part := vals[count[k]:count[k+1]]
		if len(part) == 0 {
			p50, p99 = append(p50, math.NaN()), append(p99, math.NaN())
			continue
		}
		slices.Sort(part)
		p50 = append(p50, metrics.PercentileSorted(part, 50))
		p99 = append(p99, metrics.PercentileSorted(part, 99))
	}
	return mid, p50, p99
}

// valueCap is the top of a value axis: the largest value, unless it lies
// far beyond the p99.9 (a few outliers would flatten everything else), in
// which case 1.2 × p99.9; values above it are drawn on the axis's edge and
// counted in the chart's note.
func valueCap(sorted []float64) (top float64, above int) {
	if len(sorted) == 0 {
		return 0, 0
	}
	most := sorted[len(sorted)-1]
	p999 := metrics.PercentileSorted(sorted, 99.9)
	if most <= 1.5*p999 || p999 <= 0 {
		return most, 0
	}
	top = 1.2 * p999
	i, _ := slices.BinarySearch(sorted, math.Nextafter(top, math.Inf(1)))
	return top, len(sorted) - i
}

// metricView is one metric's charts: its values over time and its CDF.
type metricView struct {
	tag, name, unit string
	col             *column
	sorted          []float64
	top             float64
	above           int
}

func newMetricView(tag, name, unit string, col *column) *metricView {
	v := &metricView{tag: tag, name: name, unit: unit, col: col, sorted: slices.Clone(col.v)}
	slices.Sort(v.sorted)
	v.top, v.above = valueCap(v.sorted)
	return v
}

// overTime is a chart of the values over time: every request a point at its
// send time, and the p50 and p99 of each window as lines.
func (v *metricView) overTime(w windows, empty string) (*plot.Chart, string) {
	x := make([]float64, len(v.col.t))
	for i, t := range v.col.t {
		x[i] = w.sec(t)
	}
	mid, p50, p99 := windowPercentiles(v.col, w)
	c := &plot.Chart{
		Title: v.name + " over time", Width: chartW, Height: chartH,
		X:     w.axis("send time (s since the first send)"),
		Y:     plot.Axis{Label: v.unit, FixMin: true, Min: math.Min(0, first(v.sorted))},
		Empty: empty,
		Series: []plot.Series{
			{Name: "request", Kind: plot.Points, Color: "#4c72b0", X: x, Y: v.col.v},
			{Name: "p50 per " + w.String(), Kind: plot.Line, Color: "#2ca02c", X: mid, Y: p50},
			{Name: "p99 per " + w.String(), Kind: plot.Line, Color: "#d62728", X: mid, Y: p99},
		},
	}
	if v.above > 0 {
		c.Y.FixMax, c.Y.Max = true, v.top
	}
	return c, v.capNote("axis")
}

func first(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	return s[0]
}

func (v *metricView) capNote(axis string) string {
	if v.above == 0 {
		return ""
	}
	return fmt.Sprintf("The %s is cut at 1.2 × p99.9 (%s %s): %s of %s values above it are drawn on its edge (max %s %s).",
		axis, fmtNum(v.top), v.unit, groupInt(int64(v.above)), groupInt(int64(len(v.sorted))), fmtNum(v.sorted[len(v.sorted)-1]), v.unit)
}

// cdf is the metric's empirical CDF: exact steps for up to exactCDF
// values, else a line through the quantiles at 0, 0.1 %, ..., 100 % and
// the tail's 99.91 % ... 99.99 %, each by lib/metrics' percentile.
func (v *metricView) cdf(empty string) (*plot.Chart, string) {
	var x, y []float64
	kind := plot.Line
	n := len(v.sorted)
	switch {
	case n == 0:
	case n <= exactCDF:
		kind = plot.Step
		x = append(x, v.sorted[0])
		y = append(y, 0)
		for i, s := range v.sorted {
			x = append(x, s)
			y = append(y, float64(i+1)/float64(n))
		}
	default:
		var levels []float64
		for k := 0; k <= 1000; k++ {
			levels = append(levels, float64(k)/10)
			if k == 999 {
				for j := 1; j <= 9; j++ {
					levels = append(levels, 99.9+float64(j)/100)
				}
			}
		}
		for _, p := range levels {
			x = append(x, metrics.PercentileSorted(v.sorted, p))
			y = append(y, p/100)
		}
	}
	c := &plot.Chart{
		Title: v.name + " CDF", Width: chartW, Height: chartH,
		X:      plot.Axis{Label: v.unit, FixMin: true, Min: math.Min(0, first(v.sorted))},
		Y:      plot.Axis{Label: "fraction of requests", FixMin: true, Min: 0, FixMax: true, Max: 1},
		Empty:  empty,
		Series: []plot.Series{{Name: v.name, Kind: kind, Color: "#4c72b0", X: x, Y: y}},
	}
	if v.above > 0 {
		c.X.FixMax, c.X.Max = true, v.top
	}
	return c, v.capNote("x axis")
}

// throughput is the output tokens per second of each window: each request's
// output tokens spread evenly over the time from its first content to its
// end, summed per window, over the window's length (the last window's
// length ends with the run).
func throughput(c *Collector, w windows, t1 int64, runAvg float64, haveAvg bool) *plot.Chart {
	per := make([]float64, w.n)
	counted := 0
	for q := range c.all() {
		if q.tokens == 0 {
			continue
		}
		counted++
		tok, from, to := float64(q.tokens), q.first, q.end
		if to <= from {
			per[w.index(to)] += tok
			continue
		}
		rate := tok / float64(to-from)
		for k := w.index(from); k <= w.index(to); k++ {
			ws, we := w.t0+int64(k)*w.d, w.t0+int64(k+1)*w.d
			if k == w.n-1 {
				we = max(we, to)
			}
			if k == 0 {
				ws = min(ws, from)
			}
			if ov := min(to, we) - max(from, ws); ov > 0 {
				per[k] += rate * float64(ov)
			}
		}
	}
	x := make([]float64, 0, w.n+1)
	y := make([]float64, 0, w.n+1)
	for k := range per {
		x = append(x, w.sec(w.t0+int64(k)*w.d))
		// the last window ends with the run (a partial window is divided
		// by its own length)
		length := min(w.d, max(t1-(w.t0+int64(k)*w.d), 1))
		y = append(y, per[k]/(float64(length)/1e9))
	}
	x = append(x, w.sec(w.t0+int64(w.n)*w.d))
	y = append(y, y[len(y)-1])
	ch := &plot.Chart{
		Title: "Output tokens/s over time", Width: chartW, Height: chartH,
		X:      w.axis("time (s since the first send)"),
		Y:      plot.Axis{Label: "output tokens/s", FixMin: true, Min: 0},
		Empty:  "no output tokens counted",
		Series: []plot.Series{{Name: "per " + w.String(), Kind: plot.Step, Color: "#4c72b0", X: x, Y: y}},
	}
	if counted == 0 {
		ch.Series = nil
	}
	if haveAvg && counted > 0 {
		ch.Series = append(ch.Series, plot.Series{Name: "run average (the table's)", Kind: plot.Line, Dash: true, Color: "#555",
			X: []float64{0, x[len(x)-1]}, Y: []float64{runAvg, runAvg}})
	}
	return ch
}

// inFlight is the number of requests in flight (sent, not yet ended) over
// time, reduced to each pixel column of the chart: its highest count and
// its time-weighted mean.
func inFlight(c *Collector, w windows, t1 int64) *plot.Chart {
	t0 := w.t0
	ch := &plot.Chart{
		Title: "Requests in flight over time", Width: chartW, Height: chartH,
		X: w.axis("time (s since the first send)"),
		Y: plot.Axis{Label: "requests", FixMin: true, Min: 0},
	}
	if c.n == 0 {
		return ch
	}
	starts, ends := make([]int64, 0, c.n), make([]int64, 0, c.n)
	for q := range c.all() {
		starts, ends = append(starts, q.sent), append(ends, q.end)
	}
	slices.Sort(starts)
	slices.Sort(ends)
	cols := ch.PlotWidth()
	span := float64(max(t1-t0, 1))
	colStart := func(k int) int64 { return t0 + int64(float64(k)*span/float64(cols)) }
	var xs, hi, mean []float64
	cur, i, j := 0, 0, 0
	for k := 0; k < cols; k++ {
		a, b := colStart(k), colStart(k+1)
		if k == cols-1 {
			b = t1 + 1
		}
		peak := cur
		area := 0.0
		last := a
		for {
			// the next event in the column: a start, or an end (an end
			// and a start at one instant: the end first)
			var at int64
			isEnd := false
			switch {
			case j < len(ends) && (i >= len(starts) || ends[j] <= starts[i]):
				at, isEnd = ends[j], true
			case i < len(starts):
				at = starts[i]
			default:
				at = b
			}
			if at >= b {
				break
			}
			area += float64(cur) * float64(at-last)
			last = at
			if isEnd {
				cur--
				j++
			} else {
				cur++
				i++
				peak = max(peak, cur)
			}
		}
		area += float64(cur) * float64(b-last)
		xs = append(xs, float64(a-t0)/1e9)
		hi = append(hi, float64(peak))
		mean = append(mean, area/float64(max(b-a, 1)))
	}
	xs = append(xs, float64(t1-t0)/1e9)
	hi = append(hi, hi[len(hi)-1])
	mean = append(mean, mean[len(mean)-1])
	ch.Series = []plot.Series{
		{Name: "highest per pixel column", Kind: plot.Step, Color: "#d62728", X: xs, Y: hi},
		{Name: "time-weighted mean", Kind: plot.Step, Color: "#4c72b0", X: xs, Y: mean},
	}
	return ch
}

// errorKinds is how many error kinds get a line of their own; the rest
// share one.
const errorKinds = 6

// errorsOverTime counts the failed requests of each window by kind (type
// and code), the most frequent kinds first.
func errorsOverTime(c *Collector, w windows) *plot.Chart {
	order := make([]int, len(c.kinds))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c.errCount[a] != c.errCount[b] {
			if c.errCount[a] > c.errCount[b] {
				return -1
			}
			return 1
		}
		if c.kinds[a] < c.kinds[b] {
			return -1
		}
		return 1
	})
	line := make([]int, len(c.kinds)) // kind -> series
	names := []string{}
	for rank, k := range order {
		if rank < errorKinds || len(order) == errorKinds+1 {
			line[k] = len(names)
			names = append(names, c.kinds[k])
		} else {
			line[k] = errorKinds
			if len(names) == errorKinds {
				names = append(names, "other kinds")
			}
		}
	}
	counts := make([][]float64, len(names))
	for i := range counts {
		counts[i] = make([]float64, w.n+1)
	}
	for q := range c.all() {
		if q.kind >= 0 {
			counts[line[q.kind]][w.index(q.sent)]++
		}
	}
	x := make([]float64, w.n+1)
	for k := range x {
		x[k] = w.sec(w.t0 + int64(k)*w.d)
	}
	ch := &plot.Chart{
		Title: "Errors over time by kind", Width: chartW, Height: chartH,
		X: w.axis("send time (s since the first send)"),
		Y: plot.Axis{Label: "failed requests per " + w.String(), FixMin: true, Min: 0},
	}
	for i, name := range names {
		ys := counts[i]
		ys[w.n] = ys[w.n-1]
		ch.Series = append(ch.Series, plot.Series{Name: name, Kind: plot.Step, X: x, Y: ys})
	}
	return ch
}
