package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/stats"
)

// TrialsFile is the summary across trials that --trials N -o DIR writes
// into DIR.
const TrialsFile = "trials.json"

// trialFigures are the figures summarized across trials: the run-level
// ones (the trial's value) and statistics of per-request metrics (each
// trial's p50, p99 or avg is one value), as aiperf's --num-profile-runs
// aggregates its runs' summaries.
var trialFigures = []struct{ tag, stat string }{
	{"request_throughput", "avg"},
	{"output_token_throughput", "avg"},
	{"total_token_throughput", "avg"},
	{"goodput", "avg"},
	{"time_to_first_token", "p50"}, {"time_to_first_token", "p99"}, {"time_to_first_token", "avg"},
	{"inter_token_latency", "p50"}, {"inter_token_latency", "p99"}, {"inter_token_latency", "avg"},
	{"request_latency", "p50"}, {"request_latency", "p99"}, {"request_latency", "avg"},
	{"error_request_count", "avg"},
}

// TrialFigure is one figure across the trials, in trials.json.
type TrialFigure struct {
	Metric string    `json:"metric"`
	Stat   string    `json:"stat"`
	Unit   string    `json:"unit"`
	Values []float64 `json:"values"` // one per trial, in trial order
	Mean   float64   `json:"mean"`
	Std    *float64  `json:"std"` // sample standard deviation (n-1); null for one trial
	Min    float64   `json:"min"` //
	Max    float64   `json:"max"` //
	CV     *float64  `json:"cv"`  // std / mean; null for one trial or a zero mean
	SE     *float64  `json:"se"`  // std / sqrt(n)
	TCrit  *float64  `json:"t_critical"`
	CILow  *float64  `json:"ci_low"`
	CIHigh *float64  `json:"ci_high"`
	// MissingIn names the trials without a value of the figure (every
	// request failed there): Values and the statistics are over the
	// others. Empty when every trial has one.
	MissingIn []string `json:"missing_in,omitempty"`
}

// TrialsSummary is trials.json.
type TrialsSummary struct {
	Trials          int           `json:"trials"`
	ConfidenceLevel float64       `json:"confidence_level"`
	Dirs            []string      `json:"trial_dirs"`
	Figures         []TrialFigure `json:"metrics"`
}

// SummarizeTrials computes every figure across the trials' results files
// (one a trial, in trial order): its mean and, with two trials or more,
// its spread and confidence interval at level. A figure no trial has
// (goodput without SLOs, TTFT of unstreamed answers) is left out. A
// throughput of a trial in which every request failed is 0; its latencies
// are missing, and their figures are over the other trials, naming it
// (MissingIn).
func SummarizeTrials(files []string, o metrics.Options, level float64) (*TrialsSummary, error) {
	ts := &TrialsSummary{Trials: len(files), ConfidenceLevel: level}
	vals := make([][]float64, len(trialFigures)) // NaN: the trial has none
	units := make([]string, len(trialFigures))
	var failed []bool // no request of the trial succeeded
	for _, f := range files {
		ts.Dirs = append(ts.Dirs, filepath.Base(filepath.Dir(f)))
		mo := o
		var err error
		if mo.Streaming, err = Streaming([]string{f}, Runs([]string{f})); err != nil {
			return nil, err
		}
		sum, err := Summarize([]string{f}, mo)
		if err != nil {
			return nil, err
		}
		failed = append(failed, sum.Requests == 0)
		for i, fig := range trialFigures {
			v, unit, ok := trialValue(sum, fig.tag, fig.stat)
			if !ok {
				v = math.NaN()
			} else {
				units[i] = unit
			}
			vals[i] = append(vals[i], v)
		}
	}
	for i, fig := range trialFigures {
		xs := vals[i]
		if slices.Contains(CompareRunMetrics, fig.tag) || fig.tag == "total_token_throughput" {
			// a throughput of a trial that completed nothing is 0, not
			// missing, when the other trials have it
			for k, x := range xs {
				if math.IsNaN(x) && failed[k] && slices.ContainsFunc(xs, func(v float64) bool { return !math.IsNaN(v) }) {
					xs[k] = 0
				}
			}
		}
		var have []float64
		var missing []string
		for k, x := range xs {
			if math.IsNaN(x) {
				missing = append(missing, ts.Dirs[k])
			} else {
				have = append(have, x)
			}
		}
		if len(have) > 0 {
			tf := acrossTrials(fig.tag, fig.stat, units[i], have, level)
			tf.MissingIn = missing
			ts.Figures = append(ts.Figures, tf)
		}
	}
	return ts, nil
}

// trialValue is a trial's value of a figure and its unit; ok is false when
// the trial has none.
func trialValue(sum *metrics.Summary, tag, stat string) (v float64, unit string, ok bool) {
	r := sum.Get(tag)
	switch {
	case r == nil && tag == "error_request_count":
		return 0, "requests", true // no failed request: aiperf leaves the metric out; here it is 0
	case r == nil:
		return 0, "", false
	case stat == "avg":
		return r.Avg, r.Unit, true
	}
	p, _ := strconv.ParseFloat(stat[1:], 64)
	v, ok = r.Percentile(p)
	return v, r.Unit, ok
}

// acrossTrials summarizes one figure's values, one a trial.
func acrossTrials(tag, stat, unit string, xs []float64, level float64) TrialFigure {
	tf := TrialFigure{Metric: tag, Stat: stat, Unit: unit, Values: xs, Min: xs[0], Max: xs[0]}
	for _, x := range xs {
		tf.Min, tf.Max = min(tf.Min, x), max(tf.Max, x)
	}
	mean, lo, hi, ok := stats.MeanCI(xs, level)
	tf.Mean = mean
	if ok {
		n := float64(len(xs))
		sd := math.Sqrt(stats.Variance(xs))
		se := sd / math.Sqrt(n)
		tc := stats.TQuantile((1+level)/2, n-1)
		tf.Std, tf.SE, tf.TCrit, tf.CILow, tf.CIHigh = &sd, &se, &tc, &lo, &hi
		if mean != 0 {
			cv := sd / math.Abs(mean)
			tf.CV = &cv
		}
	}
	return tf
}

// WriteTrials writes ts as dir's TrialsFile, atomically, and returns its
// path.
func WriteTrials(dir string, ts *TrialsSummary) (string, error) {
	b, err := json.MarshalIndent(ts, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, TrialsFile)
	return path, atomicfile.WriteFile(path, bytes.NewReader(append(b, '\n')))
}

// WriteTrialsTable prints the summary across trials as a table: a figure
// a row, its mean, standard deviation, confidence interval and coefficient
// of variation.
func WriteTrialsTable(w io.Writer, ts *TrialsSummary) error {
	pct := strconv.FormatFloat(100*ts.ConfidenceLevel, 'g', -1, 64) + "% CI"
	rows := [][]string{{"metric", "stat", "mean", "std", pct, "cv"}}
	g := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for _, f := range ts.Figures {
		std, ci, cv := "-", "- (1 trial)", "-"
		if f.Std != nil {
			std, ci = g(*f.Std), "["+g(*f.CILow)+", "+g(*f.CIHigh)+"]"
		}
		if f.CV != nil {
			cv = strconv.FormatFloat(100**f.CV, 'f', 1, 64) + "%"
		}
		rows = append(rows, []string{f.Metric + " (" + f.Unit + ")", f.Stat, g(f.Mean), std, ci, cv})
	}
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for j, s := range r {
			width[j] = max(width[j], len([]rune(s)))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Across %d trials:\n", ts.Trials)
	for _, r := range rows {
		for j, s := range r {
			pad := strings.Repeat(" ", width[j]-len([]rune(s)))
			if j == 0 {
				b.WriteString(s + pad)
			} else {
				b.WriteString("  " + pad + s)
			}
		}
		b.WriteByte('\n')
	}
	writeMissing(&b, ts)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMissing notes the figures some trials have no value of, grouped by
// the trials that lack them.
func writeMissing(w io.Writer, ts *TrialsSummary) {
	var sets []string
	figs := map[string][]string{}
	for _, f := range ts.Figures {
		if len(f.MissingIn) == 0 {
			continue
		}
		k := strings.Join(f.MissingIn, ", ")
		if _, ok := figs[k]; !ok {
			sets = append(sets, k)
		}
		figs[k] = append(figs[k], f.Metric+" "+f.Stat)
	}
	for _, k := range sets {
		n := ts.Trials - strings.Count(k, ", ") - 1
		fmt.Fprintf(w, "note: %s: over %d of %d trials (%s had no value: no request succeeded there, or none had the metric)\n", strings.Join(figs[k], ", "), n, ts.Trials, k)
	}
}

// listedTrials returns the trial folders dir's trials.json lists, or nil
// when it has none. A listing that is not one of trials a --trials run
// wrote (a name that is not trial-K, a trial twice, a count that is not
// the trials listed) is refused: an edited trials.json would pool what
// the run did not measure.
func listedTrials(dir string) ([]string, error) {
	path := filepath.Join(dir, TrialsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ts struct {
		Trials *int     `json:"trials"`
		Dirs   []string `json:"trial_dirs"`
	}
	if err := json.Unmarshal(b, &ts); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if ts.Trials != nil && *ts.Trials != len(ts.Dirs) {
		return nil, fmt.Errorf("%s: trials: %d, and trial_dirs lists %d", path, *ts.Trials, len(ts.Dirs))
	}
	out := make([]string, 0, len(ts.Dirs))
	for i, d := range ts.Dirs {
		if _, ok := TrialNumber(d); !ok {
			return nil, fmt.Errorf("%s: trial_dirs: %q is not a trial folder's name (trial-K)", path, d)
		}
		if slices.Contains(ts.Dirs[:i], d) {
			return nil, fmt.Errorf("%s: trial_dirs: %q is listed twice: its requests would count twice", path, d)
		}
		out = append(out, filepath.Join(dir, d))
	}
	return out, nil
}

// unlistedTrials names the trial-K folders of dir that its trials.json
// does not list (listed): left out, and said.
func unlistedTrials(dir string, listed []string) []string {
	all, _ := TrialDirs(dir)
	var out []string
	for _, d := range all {
		if !slices.Contains(listed, d) {
			out = append(out, fmt.Sprintf("%s is not among the trials %s lists: left out (a trial of an earlier run of more trials, or put there since)", d, filepath.Join(dir, TrialsFile)))
		}
	}
	return out
}

// IsTrialsDir reports whether arg is a trials folder (--trials N -o DIR):
// a folder without a results file of its own that holds a trials.json or
// trial-K folders.
func IsTrialsDir(arg string) bool {
	if !isDir(arg) {
		return false
	}
	if _, ok := Results(arg); ok {
		return false
	}
	if _, err := os.Stat(filepath.Join(arg, TrialsFile)); err == nil {
		return true
	}
	ds, _ := TrialDirs(arg)
	return len(ds) > 0
}

// LoadTrials reads the trials folder dir as compare reads a side (LoadSide):
// the results of the trials its trials.json lists, each a whole run,
// once. level is trials.json's confidence level (0.95 without one). Close
// the side when done.
func LoadTrials(dir string) (s *Side, level float64, err error) {
	s, err = LoadSide(dir, []string{dir})
	if err != nil {
		return nil, 0, err
	}
	level = 0.95
	if b, err := os.ReadFile(filepath.Join(dir, TrialsFile)); err == nil {
		var ts struct {
			Level float64 `json:"confidence_level"`
		}
		if json.Unmarshal(b, &ts) == nil && ts.Level > 0 && ts.Level < 1 {
			level = ts.Level
		}
	}
	return s, level, nil
}

// ByTrial is f's value in each of the trials dirs (TrialsSummary.Dirs),
// NaN in those it names missing.
func (f TrialFigure) ByTrial(dirs []string) []float64 {
	out := make([]float64, len(dirs))
	k := 0
	for i, d := range dirs {
		if slices.Contains(f.MissingIn, d) || k >= len(f.Values) {
			out[i] = math.NaN()
			continue
		}
		out[i] = f.Values[k]
		k++
	}
	return out
}

// AggregateCooldown is the pause between trials that dir's aggregate
// (AggregateJSON) records, 0 without one: a report rewriting the
// aggregate keeps what the run said.
func AggregateCooldown(dir string) float64 {
	b, err := os.ReadFile(filepath.Join(dir, AggregateDir, AggregateJSON))
	if err != nil {
		return 0
	}
	var a struct {
		Metadata struct {
			Cooldown float64 `json:"cooldown_seconds"`
		} `json:"metadata"`
	}
	json.Unmarshal(b, &a) // a damaged one reads as no pause
	return a.Metadata.Cooldown
}
