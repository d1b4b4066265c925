package replaycmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/compare"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/rundir"
	"github.com/urfave/cli/v2"
)

// compareRequestMetrics are the per-request metrics compare shows (p50,
// p99, avg), and compareRunMetrics the run-level figures (the trials'
// mean); a metric neither side has is left out.
var (
	compareRequestMetrics = []string{
		"time_to_first_token", "time_to_second_token", "inter_token_latency", "request_latency",
		"output_token_throughput_per_user", "output_sequence_length", "input_sequence_length",
	}
	compareRunMetrics = []string{"request_throughput", "output_token_throughput", "goodput"}
)

type compareOptions struct {
	old, new cli.StringSlice
	alpha    float64
	json     bool
	failOn   cli.StringSlice
	goodput  string
}

func compareCommand() *cli.Command {
	var o compareOptions
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare two sets of runs metric by metric, with the significance of each change",
		ArgsUsage: "OLD NEW  |  --old RUN... --new RUN...",
		Description: "Each side is a run directory (-o DIR), a records file, or a trials directory (--trials N -o DIR: all its\n" +
			"trial-K/). --old and --new (repeatable) list a side's trials one by one instead of the two arguments.\n\n" +
			"Prints, per metric, each side's statistic and the change (new - old) / old when it is significant, \"~\" when\n" +
			"it is not (benchstat's table):\n" +
			"  p50       per-request metrics (TTFT, ITL, latency, ...): the two-sided Mann-Whitney U test on every\n" +
			"            request's value, pooled over a side's trials: exact without ties up to 50 values a side,\n" +
			"            else the normal approximation with tie and continuity corrections\n" +
			"  avg       Welch's t test on every request's value\n" +
			"  p99       the quantile test: the pooled values' p99 splits each side into the values above it and the\n" +
			"            others, Fisher's exact test judges the 2x2 table (a few hundred requests a side are needed)\n" +
			"  mean      run-level figures (throughputs): Welch's t test over the trials' values; with one trial on\n" +
			"            a side there is no test (\"?\", and the change in the note)\n\n" +
			"--fail-on METRIC[.STAT]:+PCT% exits 1 when the statistic rose significantly by more than PCT percent\n" +
			"(-PCT%: fell), e.g. \"time_to_first_token.p99:+5%\" or \"request_throughput:-5%\": a CI gate.\n\n" +
			"Warns (stderr) when the sides replayed different stores or ran with different settings (the records'\n" +
			"run info; the server URL is not compared, as an A/B test of two servers has two).",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "old", Usage: "a trial of the old side (`RUN`: run directory or records file); repeatable", Destination: &o.old},
			&cli.StringSliceFlag{Name: "new", Usage: "a trial of the new side (`RUN`); repeatable", Destination: &o.new},
			&cli.Float64Flag{Name: "alpha", Value: compare.DefaultAlpha, Usage: "significance level `A` (two-sided)", Destination: &o.alpha},
			&cli.BoolFlag{Name: "json", Usage: "print the comparison as JSON", Destination: &o.json},
			&cli.StringSliceFlag{Name: "fail-on", Usage: "exit 1 when `METRIC[.STAT]:±PCT%` changed significantly past PCT in the sign's direction; repeatable", Destination: &o.failOn},
			&cli.StringFlag{Name: "goodput", Usage: "SLOs `\"METRIC:VALUE ...\"` (adds goodput)", Destination: &o.goodput},
		},
		Action: func(c *cli.Context) error { return runCompare(c, &o) },
	}
}

// compareSide is one side's inputs.
type compareSide struct {
	name   string   // "old" or "new"
	trials []string // records files, one per trial
	runs   []*result.RunInfo
}

func runCompare(c *cli.Context, o *compareOptions) error {
	if !(o.alpha > 0 && o.alpha < 1) {
		return base.UsageError("--alpha %v: want a level between 0 and 1", o.alpha)
	}
	gates, err := parseGates(o.failOn.Value())
	if err != nil {
		return err
	}
	gp, err := parseGoodput(o.goodput)
	if err != nil {
		return base.UsageError("--goodput: %v", err)
	}
	oldArgs, newArgs := o.old.Value(), o.new.Value()
	switch {
	case len(oldArgs) == 0 && len(newArgs) == 0:
		if c.NArg() != 2 {
			return base.UsageError("want OLD NEW (or --old RUN... --new RUN...), got %d arguments", c.NArg())
		}
		oldArgs, newArgs = c.Args().Slice()[:1], c.Args().Slice()[1:]
	case c.NArg() > 0:
		return base.UsageError("with --old and --new, give no arguments (got %s)", strings.Join(c.Args().Slice(), " "))
	case len(oldArgs) == 0 || len(newArgs) == 0:
		return base.UsageError("--old and --new: give both sides")
	}
	sides := [2]*compareSide{{name: "old"}, {name: "new"}}
	for i, args := range [2][]string{oldArgs, newArgs} {
		if err := sides[i].load(args); err != nil {
			return err
		}
	}
	warnings := compareWarnings(sides)
	for _, w := range warnings {
		fmt.Fprintf(c.App.ErrWriter, "aiperf-replay: warning: %s\n", w)
	}
	var ms []compare.Metric
	for _, tag := range compareRequestMetrics {
		info, _ := metrics.Lookup(tag)
		ms = append(ms, compare.Metric{Tag: tag, Unit: info.Unit, PerRequest: true})
	}
	for _, tag := range compareRunMetrics {
		info, _ := metrics.Lookup(tag)
		ms = append(ms, compare.Metric{Tag: tag, Unit: info.Unit})
	}
	var data [2]compare.Side
	for i, s := range sides {
		if data[i], err = s.measure(gp); err != nil {
			return err
		}
	}
	tab := compare.Compare(ms, data[0], data[1], compare.Options{Alpha: o.alpha})
	failed, err := tab.Judge(gates)
	if err != nil {
		return base.UsageError("--fail-on %v", err)
	}
	if o.json {
		rep := &compare.Report{
			Old:      compare.SideInfo{Files: displayList(sides[0].trials), Trials: len(sides[0].trials)},
			New:      compare.SideInfo{Files: displayList(sides[1].trials), Trials: len(sides[1].trials)},
			Warnings: warnings, Table: tab, Failed: failed,
		}
		err = compare.WriteJSON(c.App.Writer, rep)
	} else {
		err = compare.WriteText(c.App.Writer, tab, "old", "new")
	}
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		for _, f := range failed {
			fmt.Fprintf(c.App.ErrWriter, "aiperf-replay: --fail-on: %s\n", f)
		}
		return base.No("%d of %d --fail-on gates failed", len(failed), len(gates))
	}
	return nil
}

// parseGates reads the --fail-on specs and checks that each names a
// statistic compare shows.
func parseGates(specs []string) ([]compare.Gate, error) {
	var gates []compare.Gate
	for _, s := range specs {
		g, err := compare.ParseGate(s)
		if err != nil {
			return nil, base.UsageError("--fail-on %q: %v", s, err)
		}
		perRequest := slices.Contains(compareRequestMetrics, g.Metric)
		switch {
		case !perRequest && !slices.Contains(compareRunMetrics, g.Metric):
			return nil, base.UsageError("--fail-on %q: compare shows no metric %q (it shows %s, %s)", s, g.Metric,
				strings.Join(compareRequestMetrics, ", "), strings.Join(compareRunMetrics, ", "))
		case perRequest && g.Stat == compare.StatMean:
			return nil, base.UsageError("--fail-on %q: %s is a per-request metric: name its .p50, .p99 or .avg", s, g.Metric)
		case !perRequest && g.Stat != compare.StatMean:
			return nil, base.UsageError("--fail-on %q: %s is a run-level figure: compare shows the trials' mean (leave .%s out)", s, g.Metric, g.Stat)
		}
		gates = append(gates, g)
	}
	return gates, nil
}

// load finds the side's records files and their run info.
func (s *compareSide) load(args []string) error {
	for _, a := range args {
		if a == "-" {
			return base.UsageError("%s: compare reads files, not stdin", s.name)
		}
		files, err := trialFiles(a)
		if err != nil {
			return err
		}
		s.trials = append(s.trials, files...)
	}
	infos := make([]os.FileInfo, len(s.trials))
	for i, f := range s.trials {
		fi, err := os.Stat(f)
		if err != nil {
			return &base.Error{Code: base.ExitTrouble, Err: err}
		}
		for j := range i {
			if os.SameFile(infos[j], fi) {
				return base.UsageError("%s: %s is given twice: its requests would count twice", s.name, f)
			}
		}
		infos[i] = fi
	}
	s.runs = readRuns(s.trials)
	for i, r := range s.runs {
		if r != nil && r.Shards > 0 {
			return base.UsageError("%s: %s holds shard %d/%d of a run: compare takes whole runs (each shard would count as a trial)", s.name, s.trials[i], r.Shard, r.Shards)
		}
	}
	return nil
}

// trialFiles expands one argument: a records file, a run directory (its
// records.jsonl) or a trials directory (its trial-K/records.jsonl, in K's
// order).
func trialFiles(arg string) ([]string, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, &base.Error{Code: base.ExitTrouble, Err: err}
	}
	if !fi.IsDir() {
		return []string{arg}, nil
	}
	if _, err := os.Stat(filepath.Join(arg, recordsFile)); err == nil {
		return []string{filepath.Join(arg, recordsFile)}, nil
	}
	trials, err := trialDirs(arg)
	if err != nil {
		return nil, err
	}
	if len(trials) == 0 {
		return nil, base.UsageError("%s is a folder with neither a %s (a run's -o DIR) nor trial-K/ folders (--trials N -o DIR)", arg, recordsFile)
	}
	var out []string
	for _, d := range trials {
		p := filepath.Join(d, recordsFile)
		if _, err := os.Stat(p); err != nil {
			return nil, base.UsageError("%s has no %s: an unfinished trial?", d, recordsFile)
		}
		out = append(out, p)
	}
	return out, nil
}

// trialDirs lists dir's trial-K folders in K's order.
func trialDirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &base.Error{Code: base.ExitTrouble, Err: err}
	}
	type trial struct {
		k    int
		path string
	}
	var ts []trial
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), rundir.TrialPrefix)
		if k, err := strconv.Atoi(rest); ok && err == nil && k > 0 && e.IsDir() {
			ts = append(ts, trial{k, filepath.Join(dir, e.Name())})
		}
	}
	slices.SortFunc(ts, func(a, b trial) int { return a.k - b.k })
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.path
	}
	return out, nil
}

// compareWarnings says where the sides' runs differ: in store or settings
// between the sides (the first trial of each), and among a side's trials.
func compareWarnings(sides [2]*compareSide) []string {
	var out []string
	diff := func(what string, a, b *result.RunInfo, ignore ...string) {
		ignore = append(ignore, outputSettings...)
		if same, known := a.SameStore(b); known && !same {
			out = append(out, fmt.Sprintf("%s replayed different stores (%s, sha256 %s; %s, sha256 %s)",
				what, a.Store.Path, short(a.Store.SHA256), b.Store.Path, short(b.Store.SHA256)))
		}
		d := slices.DeleteFunc(a.Diff(b, ignore...), func(s string) bool {
			return slices.Contains(ignore, "url") && strings.HasPrefix(s, "url: ")
		})
		if len(d) > 0 {
			out = append(out, fmt.Sprintf("%s ran with different settings (%s)", what, strings.Join(d, "; ")))
		}
	}
	for _, s := range sides {
		for i, r := range s.runs {
			if r == nil {
				out = append(out, fmt.Sprintf("%s: %s has no run info (written before records carried it): its store and settings are not checked", s.name, s.trials[i]))
				continue
			}
			if i > 0 && s.runs[0] != nil {
				diff(fmt.Sprintf("the %s trials %s and %s", s.name, s.trials[0], s.trials[i]), s.runs[0], r)
			}
		}
	}
	if a, b := sides[0].runs[0], sides[1].runs[0]; a != nil && b != nil {
		diff("old and new", a, b, "url")
	}
	return out
}

// measure reads the side's records: every request's values of the
// per-request metrics, pooled, and each trial's run-level figures.
func (s *compareSide) measure(gp metrics.Goodput) (compare.Side, error) {
	side := compare.Side{Values: map[string][]float64{}}
	mo := metrics.Options{Goodput: gp}
	var err error
	if knownRuns(s.runs) {
		mo.Streaming, err = streamingOf(s.trials, s.runs)
	} else {
		mo.Streaming, err = inferStreaming(s.trials)
	}
	if err != nil {
		return side, err
	}
	for _, f := range s.trials {
		sum, err := summarize([]string{f}, mo)
		if err != nil {
			return side, err
		}
		run := map[string]float64{}
		for _, tag := range compareRunMetrics {
			if r := sum.Get(tag); r != nil {
				run[tag] = r.Avg
			}
		}
		side.Runs = append(side.Runs, run)
	}
	src, closer, err := openRecords(s.trials)()
	if err != nil {
		return side, err
	}
	defer closer.Close()
	vals, err := metrics.Values(src, mo, compareRequestMetrics...)
	if err != nil {
		var de *result.DecodeError
		if errors.As(err, &de) {
			return side, &base.Error{Code: base.ExitTrouble, Err: err}
		}
		return side, err
	}
	for i, tag := range compareRequestMetrics {
		if len(vals[i]) > 0 {
			side.Values[tag] = vals[i]
		}
	}
	return side, nil
}

func displayList(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = displayName(f)
	}
	return out
}
