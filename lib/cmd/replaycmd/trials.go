package replaycmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/stats"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/urfave/cli/v2"
)

// trialPrefix names the run directories of --trials: DIR/trial-1, ...
const trialPrefix = "trial-"

// trialsFile is the summary --trials writes into DIR.
const trialsFile = "trials.json"

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

// runTrials runs the schedule o.trials times, each a normal run into
// o.out/trial-K, pausing --trial-pause between them, then writes
// o.out/trials.json: every figure's mean and confidence interval across
// the trials. A trial over --max-error-rate does not stop the others (the
// exit is 1 at the end); an interrupt stops after the trial it cut, and the
// summary covers the trials that finished.
func runTrials(c *cli.Context, o *options, st *store.Reader, ro replay.Options, storePath string, goodput metrics.Goodput, maxErr float64) error {
	if o.trials < 1 {
		return base.UsageError("--trials %d: want at least 1", o.trials)
	}
	if !(o.confidence > 0 && o.confidence < 1) {
		return base.UsageError("--confidence-level %v: want a level between 0 and 1 (0.95 for 95%%)", o.confidence)
	}
	if o.shard != "" || o.startAt != "" {
		return base.UsageError("--trials: not with --shard or --start-at (a sharded replay's trials would need one start per trial)")
	}
	pause, err := duration("--trial-pause", o.trialPause)
	if err != nil {
		return err
	}
	w := c.App.ErrWriter
	var done []string // the finished trials' records files
	var no error
	for k := 1; k <= o.trials; k++ {
		if k > 1 && pause > 0 {
			if err := sleep(c.Context, pause); err != nil {
				break
			}
		}
		to := *o
		to.out = filepath.Join(o.out, trialPrefix+strconv.Itoa(k))
		if !o.quiet {
			fmt.Fprintf(w, "aiperf-replay: trial %d of %d into %s/\n", k, o.trials, to.out)
		}
		err := runOnce(c, &to, st, ro, storePath, goodput, maxErr)
		var be *base.Error
		switch {
		case err == nil:
		case errors.As(err, &be) && be.Code == base.ExitNo:
			if no == nil {
				no = base.No("trial %d: %v", k, be.Err)
			}
		case c.Context.Err() != nil:
			return errors.Join(err, writeTrials(w, o, done, goodput))
		default:
			return err
		}
		done = append(done, filepath.Join(to.out, recordsFile))
	}
	if err := writeTrials(w, o, done, goodput); err != nil {
		return err
	}
	if c.Context.Err() != nil {
		return c.Context.Err()
	}
	return no
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// trialFigure is one figure across the trials, in trials.json.
type trialFigure struct {
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
}

// trialsSummary is trials.json.
type trialsSummary struct {
	Trials          int           `json:"trials"`
	ConfidenceLevel float64       `json:"confidence_level"`
	Dirs            []string      `json:"trial_dirs"`
	Figures         []trialFigure `json:"metrics"`
}

// summarizeTrials computes every figure across the trials' records.
func summarizeTrials(files []string, o metrics.Options, level float64) (*trialsSummary, error) {
	ts := &trialsSummary{Trials: len(files), ConfidenceLevel: level}
	vals := make([][]float64, len(trialFigures))
	units := make([]string, len(trialFigures))
	for _, f := range files {
		ts.Dirs = append(ts.Dirs, filepath.Base(filepath.Dir(f)))
		runs := readRuns([]string{f})
		mo := o
		var err error
		if knownRuns(runs) {
			mo.Streaming, err = streamingOf([]string{f}, runs)
		} else {
			mo.Streaming, err = inferStreaming([]string{f})
		}
		if err != nil {
			return nil, err
		}
		sum, err := summarize([]string{f}, mo)
		if err != nil {
			return nil, err
		}
		for i, fig := range trialFigures {
			r := sum.Get(fig.tag)
			v, ok := 0.0, r != nil
			switch {
			case !ok && fig.tag == "error_request_count":
				ok = true // no failed request: aiperf leaves the metric out; here it is 0
				units[i] = "requests"
			case !ok:
			case fig.stat == "avg":
				v = r.Avg
			default:
				p, _ := strconv.ParseFloat(fig.stat[1:], 64)
				v, ok = r.Percentile(p)
			}
			if ok {
				vals[i] = append(vals[i], v)
				if r != nil {
					units[i] = r.Unit
				}
			}
		}
	}
	for i, fig := range trialFigures {
		xs := vals[i]
		if len(xs) != len(files) || len(xs) == 0 {
			continue // not in every trial (goodput without SLOs, TTFT of unstreamed answers)
		}
		tf := trialFigure{Metric: fig.tag, Stat: fig.stat, Unit: units[i], Values: xs, Min: xs[0], Max: xs[0]}
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
		ts.Figures = append(ts.Figures, tf)
	}
	return ts, nil
}

// writeTrials writes o.out/trials.json over the finished trials and,
// unless quiet, the table on w.
func writeTrials(w io.Writer, o *options, files []string, goodput metrics.Goodput) error {
	if len(files) == 0 {
		return nil
	}
	ts, err := summarizeTrials(files, metrics.Options{Goodput: goodput}, o.confidence)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(ts, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(o.out, trialsFile)
	if err := atomicfile.WriteFile(path, bytes.NewReader(append(b, '\n'))); err != nil {
		return err
	}
	if !o.quiet {
		writeTrialsTable(w, ts)
		fmt.Fprintf(w, "aiperf-replay: %d trials; the summary across them is in %s\n", ts.Trials, path)
	}
	return nil
}

// writeTrialsTable prints the summary across trials.
func writeTrialsTable(w io.Writer, ts *trialsSummary) {
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
	fmt.Fprintf(w, "Across %d trials:\n", ts.Trials)
	for _, r := range rows {
		var b strings.Builder
		for j, s := range r {
			pad := strings.Repeat(" ", width[j]-len([]rune(s)))
			if j == 0 {
				b.WriteString(s + pad)
			} else {
				b.WriteString("  " + pad + s)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}
