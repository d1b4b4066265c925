package htmlreport

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/internal/baseurl"
	"github.com/aiperf/toolkit/lib/plot"
	"github.com/aiperf/toolkit/lib/sweep"
)

// SweepPage is what the page of a sweep (aiperf-replay sweep --html) shows:
// its sweep.json.
type SweepPage struct {
	Title  string // "" means "aiperf-replay sweep"
	Source string // the sweep.json, as the user named it ("" leaves it out)
	State  *sweep.State
}

// Colours of the sweep's charts: verdicts, the measured lines and the
// reference lines.
var verdictColors = []struct{ verdict, color, shape string }{
	{sweep.Pass, "#2ca02c", ""},
	{sweep.Fail, "#d62728", "square"},
	{sweep.NotOffered, "#ff7f0e", "diamond"},
}

const (
	colorMain   = "#1f77b4" // achieved throughput, p50
	colorSecond = "#8c564b" // goodput, p99
	colorRef    = "#777"    // y = x, --min-good, an SLO
	colorAnswer = "#9467bd" // the answer's vertical line
)

// sweepCSS are the sweep page's own rules.
const sweepCSS = `table.steps { font-size: 12px; }
table.steps th { font-weight: 600; }
table.steps td { text-align: right; font-variant-numeric: tabular-nums; }
table.steps td.why { min-width: 120px; max-width: 260px; overflow-wrap: anywhere; }
table.steps td.text { text-align: left; }
td.pass { color: #1a7f1a; } td.fail { color: #c21d1d; } td.notoffered { color: #b35900; }
p.answer { font-size: 14px; line-height: 1.5; }
`

// limitText says what bounds an answer, by its Limit.
var limitText = map[string]string{
	"slo":        "a step above it missed the SLOs",
	"client":     "a step above it could not be offered by the client (it fell behind its schedule)",
	"throughput": "the throughput probe's completion rate, the most the server completes flat out",
	"ceiling":    "the ceiling, --max-concurrency: the SLOs hold at it (concurrency axis), or a step above it met them only with session starts held back by it (rate axis)",
	"none":       "no load met the SLOs",
}

// sweepView is a sweep's steps placed on its load axis.
type sweepView struct {
	st    *sweep.State
	by    string
	unit  string    // the load axis's unit
	x     []float64 // per step: its offered load on the axis (NaN: not drawn)
	order []int     // steps by x, those drawn
}

func newSweepView(st *sweep.State) *sweepView {
	v := &sweepView{st: st, by: st.Settings["by"]}
	if v.by == "" && st.Answer != nil {
		v.by = st.Answer.By
	}
	if v.by == "" {
		v.by = sweep.ByConcurrency
		for _, s := range st.Steps {
			if s.By == sweep.ByRate {
				v.by = sweep.ByRate
			}
		}
	}
	v.unit = "sessions in flight"
	if v.by == sweep.ByRate {
		v.unit = "sessions/s"
	}
	for i, s := range st.Steps {
		x := s.Load
		if s.By != v.by {
			// a probe at a concurrency on the rate axis: at its achieved
			// session rate, which is where the search put the bracket's end
			x = math.NaN()
			if s.SessionRate > 0 && !math.IsInf(s.SessionRate, 0) {
				x = s.SessionRate
			}
		}
		v.x = append(v.x, x)
		if !math.IsNaN(x) {
			v.order = append(v.order, i)
		}
	}
	slices.SortStableFunc(v.order, func(a, b int) int {
		switch {
		case v.x[a] < v.x[b]:
			return -1
		case v.x[a] > v.x[b]:
			return 1
		}
		return 0
	})
	return v
}

// line is the value f of each drawn step, in load order.
func (v *sweepView) line(name, color string, dash bool, f func(*sweep.Step) float64) plot.Series {
	s := plot.Series{Name: name, Kind: plot.Line, Color: color, Dash: dash}
	for _, i := range v.order {
		s.X = append(s.X, v.x[i])
		s.Y = append(s.Y, f(&v.st.Steps[i]))
	}
	return s
}

// markers are one Markers series per verdict present, at the values fs
// of each step.
func (v *sweepView) markers(fs ...func(*sweep.Step) float64) []plot.Series {
	var out []plot.Series
	for _, vc := range verdictColors {
		s := plot.Series{Name: vc.verdict, Kind: plot.Markers, Color: vc.color, Shape: vc.shape}
		for _, i := range v.order {
			st := &v.st.Steps[i]
			if st.Verdict != vc.verdict {
				continue
			}
			for _, f := range fs {
				s.X = append(s.X, v.x[i])
				s.Y = append(s.Y, f(st))
			}
		}
		if len(s.X) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// answerLine is the answer as a vertical line from 0 to top, or nothing
// when the sweep found none.
func (v *sweepView) answerLine(top float64) []plot.Series {
	a := v.st.Answer
	if a == nil || !a.Found || !(a.Load > 0) || math.IsInf(a.Load, 0) {
		return nil
	}
	return []plot.Series{{Name: "answer " + fmtNum(a.Load), Kind: plot.Line, Color: colorAnswer, Dash: true,
		X: []float64{a.Load, a.Load}, Y: []float64{0, top}}}
}

// hline is a horizontal reference line across the drawn steps and the
// answer.
func (v *sweepView) hline(name string, y float64) plot.Series {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, i := range v.order {
		lo, hi = min(lo, v.x[i]), max(hi, v.x[i])
	}
	if a := v.st.Answer; a != nil && a.Found && a.Load > 0 {
		lo, hi = min(lo, a.Load), max(hi, a.Load)
	}
	if math.IsInf(lo, 0) {
		return plot.Series{Name: name, Kind: plot.Line, Color: colorRef, Dash: true}
	}
	return plot.Series{Name: name, Kind: plot.Line, Color: colorRef, Dash: true, X: []float64{0, hi}, Y: []float64{y, y}}
}

// top is the largest finite value of the series, 1 when there is none.
func top(ss []plot.Series) float64 {
	t := 0.0
	for _, s := range ss {
		for _, y := range s.Y {
			if !math.IsNaN(y) && !math.IsInf(y, 0) {
				t = max(t, y)
			}
		}
	}
	if t == 0 {
		return 1
	}
	return t
}

func (v *sweepView) chart(title, ylabel string) *plot.Chart {
	return &plot.Chart{
		Title: title, Width: chartW, Height: chartH,
		X:     plot.Axis{Label: "offered load (" + v.unit + ")", FixMin: true, Min: 0},
		Y:     plot.Axis{Label: ylabel, FixMin: true, Min: 0},
		Empty: "no step",
	}
}

// throughputChart: the achieved rate and the goodput against the offered
// load, with y = x on the rate axis.
func (v *sweepView) throughputChart() (*plot.Chart, string) {
	achieved := func(s *sweep.Step) float64 { return s.Throughput }
	unit := "requests/s"
	caption := "Achieved requests/s (aiperf's request_throughput: requests over the step's span) and goodput (requests/s meeting every SLO: the achieved rate × the good fraction) of each step against its offered load. " +
		"Sessions in flight and requests/s are different units, so there is no y = x line."
	if v.by == sweep.ByRate {
		achieved = func(s *sweep.Step) float64 { return s.SessionRate }
		unit = "sessions/s"
		caption = "Achieved sessions/s (completed in the middle 80 % of the step, ramp-up and drain left out: the table's \"steady\") and goodput (that rate × the good fraction: good requests/s when a session is one request) of each step against its offered rate. " +
			"The dashed grey line is y = x: a server that keeps up follows it. The two probes ran at a concurrency and are drawn at their achieved rate."
	}
	good := func(s *sweep.Step) float64 { return achieved(s) * s.GoodFraction }
	c := v.chart("Achieved throughput and goodput", unit)
	c.Series = []plot.Series{
		v.line("achieved", colorMain, false, achieved),
		v.line("goodput", colorSecond, false, good),
	}
	if v.by == sweep.ByRate {
		ref := v.hline("y = x", 0)
		if len(ref.X) == 2 {
			ref.Y[1] = ref.X[1]
		}
		c.Series = append(c.Series, ref)
	}
	c.Series = append(c.Series, v.markers(achieved, good)...)
	c.Series = append(c.Series, v.answerLine(top(c.Series))...)
	return c, caption
}

// goodChart: the good fraction, with the --min-good threshold.
func (v *sweepView) goodChart() (*plot.Chart, string) {
	pct := func(s *sweep.Step) float64 { return 100 * s.GoodFraction }
	c := v.chart("Good requests", "requests meeting every SLO (%)")
	c.Y.FixMax, c.Y.Max = true, 100
	c.Series = []plot.Series{v.line("good", colorMain, false, pct)}
	caption := "The share of each step's requests that met every SLO (failed requests are not good)."
	if mg, err := strconv.ParseFloat(v.st.Settings["min_good"], 64); err == nil && mg > 0 && mg <= 100 {
		c.Series = append(c.Series, v.hline("--min-good "+strconv.FormatFloat(mg, 'g', -1, 64)+" %", mg))
		caption += " A step passes at or above the dashed line (--min-good) if the client also kept its schedule."
	}
	c.Series = append(c.Series, v.markers(pct)...)
	c.Series = append(c.Series, v.answerLine(100)...)
	return c, caption
}

// latencyChart: a metric's p50 and p99 per step, with its SLO if any.
func (v *sweepView) latencyChart(tag, name string, get func(*sweep.Step) sweep.Pctl) (*plot.Chart, string) {
	// a step in which every request failed has no latency (NaN: no marker)
	p50 := func(s *sweep.Step) float64 {
		if !s.Answered() {
			return math.NaN()
		}
		return get(s).P50
	}
	p99 := func(s *sweep.Step) float64 {
		if !s.Answered() {
			return math.NaN()
		}
		return get(s).P99
	}
	c := v.chart(name+" p50 and p99", "ms")
	c.Series = []plot.Series{v.line("p50", colorMain, false, p50), v.line("p99", colorSecond, false, p99)}
	caption := fmt.Sprintf("The p50 and p99 of each step's %s (%s) against its offered load.", name, tag)
	if slo, ok := sloOf(v.st.Settings["goodput"], tag); ok {
		c.Series = append(c.Series, v.hline("SLO "+strconv.FormatFloat(slo, 'g', -1, 64)+" ms", slo))
		caption += " The dashed grey line is its SLO (a request meets it at or below)."
	}
	c.Series = append(c.Series, v.markers(p50, p99)...)
	yTop := top(c.Series)
	if t, probe := v.scaleWithoutProbe(p50, p99, c.Series); t > 0 {
		// The throughput probe runs the server flat out: its latency
		// (seconds, where the SLO is milliseconds) would flatten every
		// other step and the SLO line onto the axis.
		yTop = t
		c.Y.FixMax, c.Y.Max = true, t
		caption += fmt.Sprintf(" The throughput probe's %s (%s ms at its p99) is left out of the scale: its markers sit on the top edge.", name, fmtNum(probe))
	}
	c.Series = append(c.Series, v.answerLine(yTop)...)
	return c, caption
}

// scaleWithoutProbe is the top of a latency chart's y axis with the
// throughput probe's values left out (those of the other steps and the
// reference lines, with a margin), and the probe's largest value; 0 when
// the probe fits on that scale anyway (within 1.5 times its top) or there
// is no other value.
func (v *sweepView) scaleWithoutProbe(p50, p99 func(*sweep.Step) float64, series []plot.Series) (yTop, probe float64) {
	rest := 0.0
	for _, i := range v.order {
		st := &v.st.Steps[i]
		for _, y := range []float64{p50(st), p99(st)} {
			if math.IsNaN(y) || math.IsInf(y, 0) {
				continue
			}
			if st.Kind == sweep.KindThroughput {
				probe = max(probe, y)
			} else {
				rest = max(rest, y)
			}
		}
	}
	for _, s := range series { // the SLO line
		if s.Kind == plot.Line && s.Color == colorRef {
			for _, y := range s.Y {
				rest = max(rest, y)
			}
		}
	}
	if !(rest > 0) || probe <= 1.5*rest {
		return 0, probe
	}
	return 1.15 * rest, probe
}

// sloOf finds tag's value in the settings' goodput ("TAG:VALUE ...").
func sloOf(goodput, tag string) (float64, bool) {
	for _, f := range strings.Fields(goodput) {
		k, val, ok := strings.Cut(f, ":")
		if !ok || k != tag {
			continue
		}
		x, err := strconv.ParseFloat(val, 64)
		if err == nil && x > 0 && !math.IsInf(x, 0) {
			return x, true
		}
	}
	return 0, false
}

// WriteSweep writes the page of a sweep: its answer, the table of its
// steps and charts against the offered load (throughput and goodput, the
// good fraction, TTFT, ITL and latency p50 and p99), each step marked by
// its verdict and the answer by a vertical line.
func WriteSweep(w io.Writer, p SweepPage) error {
	st := p.State
	if st == nil {
		st = &sweep.State{}
	}
	title := p.Title
	if title == "" {
		title = "aiperf-replay sweep"
	}
	v := newSweepView(st)
	var b strings.Builder
	writeHead(&b, title, sweepCSS)

	b.WriteString("<p class=\"meta\">")
	if p.Source != "" {
		fmt.Fprintf(&b, "Sweep <code>%s</code>: ", esc(p.Source))
	}
	fmt.Fprintf(&b, "%d steps on the %s axis (%s), %s s of runs.", len(st.Steps), esc(v.by), esc(v.unit), fmtNum(st.ElapsedSec))
	set := st.Settings
	if g := set["goodput"]; g != "" {
		fmt.Fprintf(&b, " SLOs <code>%s</code> (ms); a step passes when at least %s %% of its requests meet every one and the client kept its schedule (send lateness p99 within %s).",
			esc(g), esc(orDash(set["min_good"])), esc(orDash(set["max_lateness"])))
	}
	if u, err := baseurl.Parse(set["url"]); err == nil { // as the sweep took its --url
		// the host alone: no user information, and no address a reader
		// of the page could take for a link
		fmt.Fprintf(&b, " Server <code>%s</code> (%s)", esc(u.Host), esc(u.Scheme))
		if s := set["store_sha256"]; len(s) >= 12 {
			fmt.Fprintf(&b, ", store sha256 %s…", esc(s[:12]))
		}
		b.WriteString(".")
	}
	b.WriteString("</p>\n")

	b.WriteString("<h2>Answer</h2>\n<p class=\"answer\">")
	switch a := st.Answer; {
	case a == nil:
		b.WriteString("The sweep has not ended: no answer yet.")
	case !a.Found:
		fmt.Fprintf(&b, "No load meets the SLOs: %s.", esc(a.Note))
	default:
		fmt.Fprintf(&b, "<strong>%s %s</strong>", fmtNum(a.Load), esc(v.unit))
		// the bracket as sweep.json holds it (Lo and Hi are not saved)
		lo, hi := a.Bracket[0], a.Bracket[1]
		above := "none above it failed"
		switch {
		case hi > 0 && a.Limit == "throughput":
			above = fmtNum(hi) + " is the throughput probe's completion rate, the most the server completes"
		case hi > 0:
			above = fmtNum(hi) + " did not"
		}
		fmt.Fprintf(&b, ", bracket [%s, %s]: %s met the SLOs, %s. ", fmtNum(lo), fmtNum(math.Max(hi, lo)), fmtNum(lo), above)
		fmt.Fprintf(&b, "Limited by <code>%s</code>", esc(a.Limit))
		if t := limitText[a.Limit]; t != "" {
			fmt.Fprintf(&b, ": %s", esc(t))
		}
		switch {
		case a.Converged && a.By == "concurrency" && hi > 0 && hi-lo <= 1:
			b.WriteString("; converged (no whole number of sessions lies between)")
		case a.Converged:
			b.WriteString("; converged (the bracket is within the tolerance)")
		default:
			b.WriteString("; not converged")
		}
		fmt.Fprintf(&b, "; after %d steps.", a.Steps)
		if a.Note != "" {
			fmt.Fprintf(&b, " %s.", esc(strings.TrimSuffix(a.Note, ".")))
		}
	}
	b.WriteString("</p>\n")

	writeSteps(&b, st.Steps)

	var figs []figure
	add := func(c *plot.Chart, caption string) {
		figs = append(figs, figure{c.SVG(), esc(caption + " Markers are the steps, by verdict; the dashed purple line is the answer.")})
	}
	add(v.throughputChart())
	add(v.goodChart())
	add(v.latencyChart("time_to_first_token", "TTFT", func(s *sweep.Step) sweep.Pctl { return s.TTFT }))
	add(v.latencyChart("inter_token_latency", "ITL", func(s *sweep.Step) sweep.Pctl { return s.ITL }))
	add(v.latencyChart("request_latency", "Request latency", func(s *sweep.Step) sweep.Pctl { return s.Latency }))
	writeSection(&b, "Against the offered load", figs)

	b.WriteString("<h2>How the charts are drawn</h2>\n<p class=\"how\">")
	b.WriteString(esc("Each step is drawn at its offered load (" + v.unit + "), the lines joining the steps in load order. " +
		"Green circles passed, red squares missed the SLOs, orange diamonds could not be offered by the client (never a pass). " +
		"Every value is the step's own, as sweep.json holds it; each step's run directory holds its records and report."))
	b.WriteString("</p>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeSteps writes the table of the steps.
func writeSteps(b *strings.Builder, steps []sweep.Step) {
	b.WriteString("<h2>Steps</h2>\n")
	if len(steps) == 0 {
		b.WriteString("<p>No step ran.</p>\n")
		return
	}
	b.WriteString("<table class=\"steps\">\n<thead><tr><th>Step</th><th>Kind</th><th>Schedule</th><th>Offered load</th>" +
		"<th>Requests</th><th>Achieved req/s</th><th>Steady sessions/s</th><th>Good</th>" +
		"<th>TTFT p50 / p99 ms</th><th>ITL p50 / p99 ms</th><th>Latency p50 / p99 ms</th><th>Send lateness p99 ms</th><th>Verdict</th><th>Run</th></tr></thead>\n<tbody>\n")
	pair := func(p sweep.Pctl) string { return fmtNum(p.P50) + " / " + fmtNum(p.P99) }
	for _, s := range steps {
		load := fmtNum(s.Load) + " sessions/s"
		if s.By == sweep.ByConcurrency {
			load = fmtNum(s.Load) + " in flight"
		}
		verdict := esc(s.Verdict)
		if s.Unoffered != "" {
			verdict += ": " + esc(s.Unoffered)
		}
		if s.Unsustained != "" {
			verdict += ": " + esc(s.Unsustained)
		}
		ttft, itl, lat := s.Latencies()
		fmt.Fprintf(b, "<tr><td>%d</td><td class=\"text\">%s</td><td class=\"text\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s %%</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"text why %s\">%s</td><td class=\"text\"><code>%s</code></td></tr>\n",
			s.N, esc(s.Kind), esc(s.By), esc(load), groupInt(s.Requests), fmtNum(s.Throughput), fmtNum(s.SessionRate), strconv.FormatFloat(s.GoodPct(), 'f', 1, 64),
			pair(ttft), pair(itl), pair(lat), fmtNum(s.LatenessP99), esc(strings.ReplaceAll(s.Verdict, " ", "")), verdict, esc(s.Dir))
	}
	b.WriteString("</tbody>\n</table>\n")
}
