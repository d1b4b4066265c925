// Package compare compares two sets of replay runs metric by metric, in
// the manner of benchstat: each side's statistic, the change, and whether
// the change is significant by a stated test, or "~" when it is not. It
// also parses and judges the gates (--fail-on) a CI run puts on the
// changes.
//
// The tests (package stats):
//
//   - p50 of a per-request metric: the Mann–Whitney U test on the
//     requests' values, pooled over each side's trials (exact without ties
//     up to stats.MaxExact values a side, else the normal approximation
//     with tie and continuity corrections);
//   - avg: Welch's t test on the requests' values (a rank test can call a
//     fall of the mean significant when the bulk rose and a few outliers
//     fell);
//   - p99: the quantile test (the pooled values' p99 splits each side into
//     the values above it and the others; Fisher's exact test on the 2×2
//     table), which needs a few hundred requests a side to find anything;
//   - a run-level figure (a throughput): Welch's t test over the trials'
//     values; with one trial on a side there is no test.
//
// The package never prints and imports only the standard library and
// lib/stats.
package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/stats"
)

// DefaultAlpha is the significance level unless Options say otherwise.
const DefaultAlpha = 0.05

// Statistics of a row.
const (
	StatP50  = "p50"
	StatP99  = "p99"
	StatAvg  = "avg"
	StatMean = "mean" // a run-level figure: the mean over the trials
)

// Tests named in Row.Test.
const (
	TestUExact  = "mann-whitney-exact"
	TestUNormal = "mann-whitney-normal"
	TestQuant   = "quantile-fisher"
	TestWelch   = "welch-t"
)

// Metric is one metric to compare.
type Metric struct {
	Tag  string // e.g. time_to_first_token
	Unit string // the display unit of the values, e.g. ms
	// PerRequest: the sides hold one value per request (rows p50, p99 and
	// avg); otherwise one value per trial (a row "mean").
	PerRequest bool
}

// Side is one side of a comparison.
type Side struct {
	// Values holds, per per-request metric, every request's value pooled
	// over the side's trials.
	Values map[string][]float64
	// Runs holds, per trial, the run-level figures by metric.
	Runs []map[string]float64
}

// Options tune Compare.
type Options struct {
	Alpha float64 // significance level; zero takes DefaultAlpha
}

// Row is one statistic of one metric on both sides.
type Row struct {
	Metric string  `json:"metric"`
	Stat   string  `json:"stat"`
	Unit   string  `json:"unit"`
	Old    float64 `json:"old"`
	New    float64 `json:"new"`
	// DeltaPct is (New - Old) / Old in percent; nil when Old is 0.
	DeltaPct *float64 `json:"delta_pct"`
	// P is the test's two-sided p-value; nil without a test (NoTest says
	// why).
	P           *float64 `json:"p"`
	Significant bool     `json:"significant"`
	Test        string   `json:"test,omitempty"`
	NoTest      string   `json:"no_test,omitempty"`
	NOld        int      `json:"n_old"` // values (per-request) or trials (run-level)
	NNew        int      `json:"n_new"`
}

// Table is a comparison.
type Table struct {
	Alpha float64 `json:"alpha"`
	Rows  []Row   `json:"rows"`
	// Missing names the metrics left out because a side has no value of
	// them ("time_to_first_token: no values in new").
	Missing []string `json:"missing,omitempty"`
}

// Compare compares old with new on each of ms, in order.
func Compare(ms []Metric, old, new Side, o Options) *Table {
	t := &Table{Alpha: o.Alpha}
	if t.Alpha == 0 {
		t.Alpha = DefaultAlpha
	}
	for _, m := range ms {
		if m.PerRequest {
			t.perRequest(m, old.Values[m.Tag], new.Values[m.Tag])
		} else {
			t.runLevel(m, trialValues(old.Runs, m.Tag), trialValues(new.Runs, m.Tag))
		}
	}
	return t
}

func trialValues(runs []map[string]float64, tag string) []float64 {
	var out []float64
	for _, r := range runs {
		if v, ok := r[tag]; ok {
			out = append(out, v)
		}
	}
	return out
}

func (t *Table) missing(tag string, nOld, nNew int) bool {
	switch {
	case nOld == 0 && nNew == 0:
		return true // neither run has it: not worth a word
	case nOld == 0:
		t.Missing = append(t.Missing, tag+": no values in old")
		return true
	case nNew == 0:
		t.Missing = append(t.Missing, tag+": no values in new")
		return true
	}
	return false
}

func (t *Table) perRequest(m Metric, x, y []float64) {
	if t.missing(m.Tag, len(x), len(y)) {
		return
	}
	sx, sy := slices.Clone(x), slices.Clone(y)
	slices.Sort(sx)
	slices.Sort(sy)
	u := stats.MannWhitney(x, y)
	uTest := TestUNormal
	if u.Method == stats.MethodExact {
		uTest = TestUExact
	}
	q := stats.QuantileTest(x, y, 99)
	// The mean's own test: a rank test can find the bulk shifted up while
	// a few outliers pull the mean down, and would then call a fall of the
	// mean significant.
	w, ok := stats.Welch(x, y)
	wTest, wP, wNo := TestWelch, w.P, ""
	switch {
	case ok:
	case len(x) < 2 || len(y) < 2:
		wTest, wP, wNo = "", math.NaN(), "1 value"
	case stats.Mean(x) == stats.Mean(y):
		wP = 1 // no variance and equal: no difference
	default:
		wTest, wP, wNo = "", math.NaN(), "no variance"
	}
	for _, r := range []struct {
		stat     string
		old, new float64
		p        float64
		test     string
		noTest   string
	}{
		{StatP50, stats.Percentile(sx, 50), stats.Percentile(sy, 50), u.P, uTest, ""},
		{StatP99, stats.Percentile(sx, 99), stats.Percentile(sy, 99), q.P, TestQuant, ""},
		{StatAvg, stats.Mean(x), stats.Mean(y), wP, wTest, wNo},
	} {
		t.add(Row{Metric: m.Tag, Stat: r.stat, Unit: m.Unit, Old: r.old, New: r.new, Test: r.test, NoTest: r.noTest, NOld: len(x), NNew: len(y)}, r.p)
	}
}

func (t *Table) runLevel(m Metric, x, y []float64) {
	if t.missing(m.Tag, len(x), len(y)) {
		return
	}
	row := Row{Metric: m.Tag, Stat: StatMean, Unit: m.Unit, Old: stats.Mean(x), New: stats.Mean(y), NOld: len(x), NNew: len(y)}
	switch w, ok := stats.Welch(x, y); {
	case len(x) < 2 || len(y) < 2:
		row.NoTest = "1 trial"
	case !ok:
		row.NoTest = "no variance"
	default:
		row.Test = TestWelch
		t.add(row, w.P)
		return
	}
	t.add(row, math.NaN())
}

func (t *Table) add(r Row, p float64) {
	if r.Old != 0 {
		d := (r.New - r.Old) / math.Abs(r.Old) * 100
		r.DeltaPct = &d
	}
	if !math.IsNaN(p) {
		r.P = &p
		r.Significant = p < t.Alpha
	}
	t.Rows = append(t.Rows, r)
}

// Find returns the row of metric's stat, or nil.
func (t *Table) Find(metric, stat string) *Row {
	for i := range t.Rows {
		if t.Rows[i].Metric == metric && t.Rows[i].Stat == stat {
			return &t.Rows[i]
		}
	}
	return nil
}

// Gate is a limit on a change: "time_to_first_token.p99:+5%" fails when
// the p99 of TTFT rose significantly by more than 5 %; "request_throughput:-3%"
// when the throughput fell significantly by more than 3 %.
type Gate struct {
	Spec   string  // as given
	Metric string  // the metric's tag
	Stat   string  // p50, p99, avg or mean
	Limit  float64 // signed percent: positive limits a rise, negative a fall
}

// ParseGate reads "METRIC[.STAT]:(+|-)PCT[%]". STAT is p50, p99, avg or
// mean (the trials' mean of a run-level figure, also meant when STAT is
// left out). The sign is required: it says which direction is a
// regression.
func ParseGate(s string) (Gate, error) {
	g := Gate{Spec: s}
	name, lim, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || name == "" {
		return g, errors.New("want METRIC[.STAT]:+PCT% or METRIC[.STAT]:-PCT%")
	}
	g.Metric, g.Stat = name, StatMean
	if m, st, ok := strings.Cut(name, "."); ok {
		switch st {
		case StatP50, StatP99, StatAvg, StatMean:
		default:
			return g, fmt.Errorf("statistic %q: want p50, p99, avg or mean", st)
		}
		g.Metric, g.Stat = m, st
	}
	if g.Metric == "" {
		return g, errors.New("want METRIC[.STAT]:+PCT% or METRIC[.STAT]:-PCT%")
	}
	lim = strings.TrimSuffix(strings.TrimSpace(lim), "%")
	if lim == "" || (lim[0] != '+' && lim[0] != '-') {
		return g, fmt.Errorf("limit %q: want a signed percentage (+5%% fails on a rise past 5%%, -5%% on a fall)", lim)
	}
	v, err := strconv.ParseFloat(lim, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return g, fmt.Errorf("limit %q: not a number", lim)
	}
	g.Limit = v
	if lim[0] == '-' && v == 0 {
		g.Limit = math.Copysign(0, -1)
	}
	return g, nil
}

// Judge returns, for each gate the table breaks, why: a significant change
// past its limit in its direction. A gate on a row the table lacks is an
// error (the metric is absent from a side, or not this kind).
func (t *Table) Judge(gates []Gate) (failed []string, err error) {
	for _, g := range gates {
		r := t.Find(g.Metric, g.Stat)
		if r == nil {
			return nil, fmt.Errorf("%s: the comparison has no %s of %s", g.Spec, g.Stat, g.Metric)
		}
		if !r.Significant || r.DeltaPct == nil {
			continue
		}
		d := *r.DeltaPct
		if math.Signbit(g.Limit) && d < g.Limit || !math.Signbit(g.Limit) && d > g.Limit {
			failed = append(failed, fmt.Sprintf("%s.%s changed %+.2f%% (%s), past %s", g.Metric, g.Stat, d, formatP(*r.P), g.Spec))
		}
	}
	return failed, nil
}
