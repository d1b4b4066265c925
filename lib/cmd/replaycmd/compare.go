package replaycmd

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/compare"
	"github.com/aiperf/toolkit/lib/rundir"
	"github.com/urfave/cli/v2"
)

type compareOptions struct {
	old, new  cli.StringSlice
	alpha     float64
	minChange float64
	json      bool
	failOn    cli.StringSlice
	goodput   string
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
			"            a side there is no test (\"?\", and the change in the note); a trial in which every request\n" +
			"            failed counts 0\n" +
			"  rate      error_rate: the percentage of requests that failed (those cancelled on purpose left out),\n" +
			"            pooled over a side's trials; Fisher's exact test on failed and succeeded requests\n" +
			"A test counts only in the direction its statistic moved (a rank test can find new generally larger\n" +
			"while its p50 fell: \"~\", and the note says so). Latency rows count the requests that succeeded.\n" +
			"A change smaller than --min-change (5% by default: ten times the 0.1-0.5% by which two ordinary runs of one\n" +
			"setting differ on a quiet machine) is \"~\" too, with or without a test, and fails no gate: a large run finds\n" +
			"changes of 0.1% significant that mean nothing in practice.\n\n" +
			"--fail-on METRIC[.STAT]:+PCT% exits 1 when the statistic rose significantly by more than PCT percent\n" +
			"(-PCT%: fell), e.g. \"time_to_first_token.p99:+5%\", \"request_throughput:-5%\" or \"error_rate:+0%\":\n" +
			"a CI gate. From 0, any significant change in the limit's direction fails it; a metric the new side\n" +
			"lost (every request failed) fails it; a gate that cannot be judged (no test: one trial a side; the\n" +
			"metric absent from old) exits 2 rather than pass.\n\n" +
			"Warns (stderr) when the sides replayed different stores or ran with different settings (the records'\n" +
			"run info; the server URL is not compared, as an A/B test of two servers has two).",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "old", Usage: "a trial of the old side (`RUN`: run directory or records file); repeatable", Destination: &o.old},
			&cli.StringSliceFlag{Name: "new", Usage: "a trial of the new side (`RUN`); repeatable", Destination: &o.new},
			&cli.Float64Flag{Name: "alpha", Value: compare.DefaultAlpha, Usage: "significance level `A` (two-sided)", Destination: &o.alpha},
			&cli.Float64Flag{Name: "min-change", Value: compare.DefaultMinChange, Usage: "a change smaller than `PCT` percent is \"~\" and fails no gate, however small its p-value (0: none)", Destination: &o.minChange},
			&cli.BoolFlag{Name: "json", Usage: "print the comparison as JSON", Destination: &o.json},
			&cli.StringSliceFlag{Name: "fail-on", Usage: "exit 1 when `METRIC[.STAT]:±PCT%` changed significantly past PCT in the sign's direction; repeatable", Destination: &o.failOn},
			goodputFlag(&o.goodput, "SLOs `\"METRIC:VALUE ...\"` (adds goodput)"),
		},
		Action: func(c *cli.Context) error { return runCompare(c, &o) },
	}
}

func runCompare(c *cli.Context, o *compareOptions) error {
	if !(o.alpha > 0 && o.alpha < 1) {
		return base.UsageError("--alpha %v: want a level between 0 and 1", o.alpha)
	}
	if !(o.minChange >= 0) || math.IsInf(o.minChange, 0) {
		return base.UsageError("--min-change %v: want a percentage of 0 or more", o.minChange)
	}
	gates, err := rundir.ParseGates(o.failOn.Value())
	if err != nil {
		return err
	}
	gp, err := parseGoodput(o.goodput)
	if err != nil {
		return base.UsageError("--goodput: %v", err)
	}
	var sides [2]*rundir.Side
	for i, args := range compareArgs(c, o) {
		if args == nil {
			return base.UsageError("%s", compareArgsUsage(c, o))
		}
		if sides[i], err = rundir.LoadSide([]string{"old", "new"}[i], args); err != nil {
			return err
		}
		defer sides[i].Close()
	}
	if err := rundir.CheckSides(sides[0], sides[1]); err != nil {
		return err
	}
	warnings := rundir.CompareWarnings(sides[0], sides[1])
	warnAll(c.App.ErrWriter, warnings)
	tab, err := rundir.Compare(sides[0], sides[1], gp, compare.Options{Alpha: o.alpha, MinChange: o.minChange})
	if err != nil {
		return err
	}
	failures := tab.FailureWarnings()
	warnAll(c.App.ErrWriter, failures)
	warnings = append(warnings, failures...)
	return judgeCompare(c, o, sides, warnings, tab, gates)
}

// judgeCompare judges every gate that can be and prints the table (or the
// JSON) before a gate that cannot be judged is an error (exit 2): the
// failures of the others are not lost; a failed gate is exit 1.
func judgeCompare(c *cli.Context, o *compareOptions, sides [2]*rundir.Side, warnings []string, tab *compare.Table, gates []compare.Gate) error {
	var err error
	failed, jerr := tab.Judge(gates)
	var unjudged *compare.UnjudgedError
	if jerr != nil && !errors.As(jerr, &unjudged) {
		return jerr
	}
	rep := &compare.Report{Old: sides[0].Info(), New: sides[1].Info(), Warnings: warnings, Table: tab, Failed: failed}
	if unjudged != nil {
		rep.Unjudged = unjudged.Gates
	}
	if o.json {
		err = compare.WriteJSON(c.App.Writer, rep)
	} else {
		err = compare.WriteText(c.App.Writer, tab, "old", "new")
	}
	if err != nil {
		return err
	}
	for _, f := range failed {
		fmt.Fprintf(c.App.ErrWriter, "aiperf-replay: --fail-on: %s\n", f)
	}
	if unjudged != nil {
		for _, g := range unjudged.Gates[1:] {
			fmt.Fprintf(c.App.ErrWriter, "aiperf-replay: --fail-on %s\n", g)
		}
		return base.UsageError("--fail-on %s", unjudged.Gates[0])
	}
	if len(failed) > 0 {
		return base.No("%d of %d --fail-on gates failed", len(failed), len(gates))
	}
	return nil
}

// compareArgs are the two sides' arguments: OLD NEW, or --old and --new.
// Both are nil when the command line gives neither form.
func compareArgs(c *cli.Context, o *compareOptions) [2][]string {
	oldArgs, newArgs := o.old.Value(), o.new.Value()
	switch {
	case len(oldArgs) == 0 && len(newArgs) == 0 && c.NArg() == 2:
		return [2][]string{c.Args().Slice()[:1], c.Args().Slice()[1:]}
	case len(oldArgs) == 0 || len(newArgs) == 0 || c.NArg() > 0:
		return [2][]string{}
	}
	return [2][]string{oldArgs, newArgs}
}

// compareArgsUsage says what is wrong with a command line compareArgs
// refused.
func compareArgsUsage(c *cli.Context, o *compareOptions) string {
	switch {
	case len(o.old.Value()) == 0 && len(o.new.Value()) == 0:
		return fmt.Sprintf("want OLD NEW (or --old RUN... --new RUN...), got %d arguments", c.NArg())
	case c.NArg() > 0:
		return fmt.Sprintf("with --old and --new, give no arguments (got %s)", strings.Join(c.Args().Slice(), " "))
	}
	return "--old and --new: give both sides"
}
