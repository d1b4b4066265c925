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
//     when the sizes multiply to at most stats.MaxExact², else the normal
//     approximation with tie and continuity corrections);
//   - avg: Welch's t test on the requests' values (a rank test can call a
//     fall of the mean significant when the bulk rose and a few outliers
//     fell);
//   - p99: the quantile test (the pooled values' p99 splits each side into
//     the values above it and the others; Fisher's exact test on the 2×2
//     table), which needs a few hundred requests a side to find anything;
//   - a run-level figure (a throughput): Welch's t test over the trials'
//     values; with one trial on a side there is no test;
//   - the error rate (failed requests over all, pooled over each side's
//     trials): Fisher's exact test on the 2×2 table of failed and
//     succeeded requests.
//
// A row whose test cannot reach α at its sizes (Row.MinP: a p99 of fewer
// than about 300 requests a side, a p50 of 3 a side) says so, and a gate
// on it cannot be judged.
//
// A test's finding counts only in the direction the row's statistic moved:
// a rank test can find one side generally larger while its p50 moved the
// other way (Row.Conflict), and such a row is not significant.
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
	StatRate = "rate" // the error rate: failed requests over all, in percent
)

// ErrorRate is the error rate's metric tag.
const ErrorRate = "error_rate"

// Tests named in Row.Test.
const (
	TestUExact  = "mann-whitney-exact"
	TestUNormal = "mann-whitney-normal"
	TestQuant   = "quantile-fisher"
	TestWelch   = "welch-t"
	TestFisher  = "fisher-exact"
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
	// Requests and Failed count the profiling requests and the failed ones,
	// over the side's trials (the error rate's row); no row when a side
	// has no request.
	Requests, Failed int64
}

// DefaultMinChange is aiperf-replay compare's --min-change, in percent:
// the practical threshold below which a change is "~" however small its
// p-value. Its ground (docs/replay.md, "compare"; scripts/bench/compare-aa.sh): A/A
// pairs of ordinary runs on a quiet machine differ significantly by 0.1 to
// 0.5 % (TTFT p50 -0.13 %, p=0.005), so 5 % is ten times that. On this
// shared 2-core machine at load 10-19, ten A/A pairs of 200 requests
// against aiperf-mock differed significantly by up to 24 % (TTFT p50) and
// 13 % (latency): there no fixed threshold separates noise from change,
// and the two sides must run at the same time, or as --trials.
const DefaultMinChange = 5.0

// Options tune Compare.
type Options struct {
	Alpha float64 // significance level; zero takes DefaultAlpha
	// MinChange is the practical threshold in percent: a change smaller
	// than it (|DeltaPct| < MinChange) is Negligible and never
	// Significant, whatever its p-value. 0: every significant change
	// counts.
	MinChange float64
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
	P *float64 `json:"p"`
	// Significant: the test finds the change (p < α, in the direction
	// the statistic moved) and it is not Negligible.
	Significant bool `json:"significant"`
	// Negligible: the change is smaller than Table.MinChange (or the
	// statistic did not move), whatever the test says: "~".
	Negligible bool `json:"negligible,omitempty"`
	// MinP is the smallest p-value the row's test can give at its sizes
	// (nil when any: Welch's t); Underpowered when it is not below α: the
	// row cannot find a difference, however large.
	MinP         *float64 `json:"min_p,omitempty"`
	Underpowered bool     `json:"underpowered,omitempty"`
	Test         string   `json:"test,omitempty"`
	NoTest       string   `json:"no_test,omitempty"`
	NOld         int      `json:"n_old"` // values (per-request), trials (run-level) or requests (rate)
	NNew         int      `json:"n_new"`
	// Conflict says why a test's finding does not count: it found the
	// sides differing in the direction opposite to the statistic's change.
	Conflict string `json:"conflict,omitempty"`

	small bool // the test found it, and the threshold made it "~"
}

// Table is a comparison.
type Table struct {
	Alpha float64 `json:"alpha"`
	// MinChange is the practical threshold in percent (Options.MinChange).
	MinChange float64 `json:"min_change_pct"`
	Rows      []Row   `json:"rows"`
	// Missing names the metrics left out because a side has no value of
	// them ("time_to_first_token: no values in new").
	Missing []string `json:"missing,omitempty"`
}

// Compare compares old with new on each of ms, in order.
func Compare(ms []Metric, old, new Side, o Options) *Table {
	t := &Table{Alpha: o.Alpha, MinChange: o.MinChange}
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
	t.errorRate(old, new)
	return t
}

// errorRate adds the error rate's row: failed requests over all, pooled
// over each side's trials, and Fisher's exact test on the 2×2 table.
func (t *Table) errorRate(old, new Side) {
	if old.Requests == 0 || new.Requests == 0 {
		return
	}
	ro := 100 * float64(old.Failed) / float64(old.Requests)
	rn := 100 * float64(new.Failed) / float64(new.Requests)
	p := stats.FisherExact(old.Failed, old.Requests-old.Failed, new.Failed, new.Requests-new.Failed)
	// the smallest p of these sizes, not of these failures: every request
	// of new failed and none of old (conditioning on the failures seen
	// would call 0 against 3 failures of 300 too few: review finding)
	minP := stats.FisherMinP(old.Requests, new.Requests, new.Requests)
	t.add(Row{Metric: ErrorRate, Stat: StatRate, Unit: "%", Old: ro, New: rn, Test: TestFisher,
		NOld: int(old.Requests), NNew: int(new.Requests), MinP: &minP}, p, rn-ro)
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
	// each test's direction: positive when it finds new the larger
	uDir := float64(len(x))*float64(len(y))/2 - u.U
	qDir := float64(q.AboveY)/float64(q.NY) - float64(q.AboveX)/float64(q.NX)
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
		wP = 0 // no variance on either side and different: t is infinite
	}
	for _, r := range []struct {
		stat     string
		old, new float64
		p        float64
		dir      float64
		test     string
		noTest   string
		minP     *float64
	}{
		{StatP50, stats.Percentile(sx, 50), stats.Percentile(sy, 50), u.P, uDir, uTest, "", &u.MinP},
		{StatP99, stats.Percentile(sx, 99), stats.Percentile(sy, 99), q.P, qDir, TestQuant, "", &q.MinP},
		{StatAvg, stats.Mean(x), stats.Mean(y), wP, stats.Mean(y) - stats.Mean(x), wTest, wNo, nil},
	} {
		t.add(Row{Metric: m.Tag, Stat: r.stat, Unit: m.Unit, Old: r.old, New: r.new, Test: r.test, NoTest: r.noTest, NOld: len(x), NNew: len(y), MinP: r.minP}, r.p, r.dir)
	}
}

func (t *Table) runLevel(m Metric, x, y []float64) {
	if t.missing(m.Tag, len(x), len(y)) {
		return
	}
	row := Row{Metric: m.Tag, Stat: StatMean, Unit: m.Unit, Old: stats.Mean(x), New: stats.Mean(y), NOld: len(x), NNew: len(y)}
	dir := row.New - row.Old
	switch w, ok := stats.Welch(x, y); {
	case len(x) < 2 || len(y) < 2:
		row.NoTest = "1 trial"
	case !ok && row.Old == row.New:
		row.Test = TestWelch
		t.add(row, 1, dir) // no variance and equal: no difference
		return
	case !ok:
		row.Test = TestWelch
		t.add(row, 0, dir) // no variance on either side and different: t is infinite
		return
	default:
		row.Test = TestWelch
		t.add(row, w.P, dir)
		return
	}
	t.add(row, math.NaN(), dir)
}

// add appends r with its test's p-value (NaN: no test) and the direction
// the test found (positive: new the larger). A significant finding counts
// only when the statistic moved the same way.
func (t *Table) add(r Row, p, dir float64) {
	if r.Old != 0 {
		d := (r.New - r.Old) / math.Abs(r.Old) * 100
		r.DeltaPct = &d
	}
	if math.IsNaN(p) {
		r.MinP = nil
	} else {
		r.P = &p
		r.Significant = p < t.Alpha
		// (a statistic that did not move needs no power: it is past no limit)
		r.Underpowered = r.MinP != nil && *r.MinP >= t.Alpha && r.New != r.Old
		if change := r.New - r.Old; r.Significant && (change == 0 || (change > 0) != (dir > 0)) {
			r.Significant = false
			larger, moved := "new", "rose"
			if dir < 0 {
				larger = "old"
			}
			switch {
			case change < 0:
				moved = "fell"
			case change == 0:
				moved = "did not move"
			}
			r.Conflict = fmt.Sprintf("the test finds %s's values larger; the %s %s", larger, r.Stat, moved)
		}
	}
	r.Negligible = t.negligible(&r)
	r.small = r.Significant && r.Negligible
	r.Significant = r.Significant && !r.Negligible
	r.Underpowered = r.Underpowered && !r.Negligible
	t.Rows = append(t.Rows, r)
}

// negligible reports whether r's change is below the practical threshold:
// the statistic did not move, or moved by less than MinChange percent of
// its old value (a change from 0 is never negligible). With no threshold
// only a statistic that did not move is.
func (t *Table) negligible(r *Row) bool {
	switch {
	case r.New == r.Old:
		return t.MinChange > 0
	case r.DeltaPct == nil:
		return false
	}
	return math.Abs(*r.DeltaPct) < t.MinChange
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

// ParseGate reads "METRIC[.STAT]:(+|-)PCT%". STAT is p50, p99, avg or
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
		case StatP50, StatP99, StatAvg, StatMean, StatRate:
		default:
			return g, fmt.Errorf("statistic %q: want p50, p99, avg, mean or rate", st)
		}
		g.Metric, g.Stat = m, st
	}
	if g.Metric == "" {
		return g, errors.New("want METRIC[.STAT]:+PCT% or METRIC[.STAT]:-PCT%")
	}
	given := strings.TrimSpace(lim)
	lim, pct := strings.CutSuffix(given, "%")
	if lim == "" || (lim[0] != '+' && lim[0] != '-') || !pct {
		// (a bare +5 could be read as 5 ms as well as 5 %)
		return g, fmt.Errorf("limit %q: want a signed percentage (+5%% fails on a rise past 5%%, -5%% on a fall)", given)
	}
	v, err := strconv.ParseFloat(lim, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return g, fmt.Errorf("limit %q: not a number", given)
	}
	g.Limit = v
	if lim[0] == '-' && v == 0 {
		g.Limit = math.Copysign(0, -1)
	}
	return g, nil
}

// Judge returns, for each gate the table breaks, why: a significant change
// past its limit in its direction (from 0, any significant change in the
// limit's direction), or the metric lost on the new side (every request
// failed, or none has it). A gate the table cannot judge is an error: the
// metric is absent from the old side or from both, its row has no test
// (one trial a side), or it moved past the limit while its test cannot
// reach α at its sizes (Row.Underpowered): a gate that cannot fail must
// not pass in silence. The error is then an *UnjudgedError naming every
// such gate, and failed still lists the others' failures.
func (t *Table) Judge(gates []Gate) (failed []string, err error) {
	var unjudged []string
	defer func() {
		if len(unjudged) > 0 {
			err = &UnjudgedError{Gates: unjudged}
		}
	}()
	for _, g := range gates {
		r := t.Find(g.Metric, g.Stat)
		if r == nil {
			if slices.Contains(t.Missing, g.Metric+": no values in new") {
				failed = append(failed, fmt.Sprintf("%s has no values in new (old has them), past %s", g.Metric, g.Spec))
				continue
			}
			why := ""
			if slices.Contains(t.Missing, g.Metric+": no values in old") {
				why = " (no values in old)"
			}
			unjudged = append(unjudged, fmt.Sprintf("%s: the comparison has no %s of %s%s", g.Spec, g.Stat, g.Metric, why))
			continue
		}
		if r.P == nil {
			unjudged = append(unjudged, fmt.Sprintf("%s: %s.%s cannot be judged: no test (%s, n=%d+%d)", g.Spec, g.Metric, g.Stat, r.NoTest, r.NOld, r.NNew))
			continue
		}
		past := g.past(r)
		if r.Negligible {
			continue // below --min-change: no change, whatever the limit
		}
		if past && r.Underpowered {
			unjudged = append(unjudged, fmt.Sprintf("%s: %s.%s cannot be judged at n=%d+%d: it moved past the limit, but its test's smallest p-value there is %.3f, not below α %g, so no change could fail the gate (%s)",
				g.Spec, g.Metric, g.Stat, r.NOld, r.NNew, *r.MinP, t.Alpha, underpoweredHint(r.Stat)))
			continue
		}
		if !past || !r.Significant {
			continue
		}
		if r.DeltaPct == nil {
			failed = append(failed, fmt.Sprintf("%s.%s changed from 0 to %s (%s), past %s", g.Metric, g.Stat, formatValue(r.New), formatP(*r.P), g.Spec))
			continue
		}
		failed = append(failed, fmt.Sprintf("%s.%s changed %+.2f%% (%s), past %s", g.Metric, g.Stat, *r.DeltaPct, formatP(*r.P), g.Spec))
	}
	return failed, nil
}

// past reports whether r's statistic moved past g's limit in its
// direction (from 0: any change the limit's way), significant or not. A
// change that is not past it passes the gate whatever the test's power.
func (g Gate) past(r *Row) bool {
	rise := !math.Signbit(g.Limit)
	if r.DeltaPct == nil {
		return r.New != r.Old && rise == (r.New > r.Old)
	}
	d := *r.DeltaPct
	return !rise && d < g.Limit || rise && d > g.Limit
}

// UnjudgedError lists the gates a table cannot judge, each with why. Judge
// judges the others all the same: their failures are not lost.
type UnjudgedError struct{ Gates []string }

func (e *UnjudgedError) Error() string { return strings.Join(e.Gates, "; ") }

// underpoweredHint says what an underpowered row of stat needs.
func underpoweredHint(stat string) string {
	switch stat {
	case StatP99:
		return "a p99 needs about 300 requests a side"
	case StatRate:
		return "too few failed requests on both sides together"
	}
	return "more requests a side"
}

// FailureWarnings names each side on which requests failed: its latency
// rows count only the ones that succeeded, which a reader of the table
// would not guess (a build that fails half its requests is not faster).
func (t *Table) FailureWarnings() []string {
	r := t.Find(ErrorRate, StatRate)
	if r == nil {
		return nil
	}
	var out []string
	for _, side := range []struct {
		name string
		rate float64
		n    int
	}{{"old", r.Old, r.NOld}, {"new", r.New, r.NNew}} {
		if side.rate > 0 {
			failed := int(math.Round(side.rate * float64(side.n) / 100))
			out = append(out, fmt.Sprintf("%s: %d of %d requests failed (%.1f%%): its latency rows count the %d that succeeded",
				side.name, failed, side.n, side.rate, side.n-failed))
		}
	}
	return out
}
