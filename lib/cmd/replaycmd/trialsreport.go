package replaycmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/htmlreport"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/rundir"
	"github.com/urfave/cli/v2"
)

// reportAction is report: of a trials folder (reportTrials), or of
// results files and run folders (runReport).
func reportAction(c *cli.Context, ro *reportOptions) error {
	dir, err := trialsArg(c.Args().Slice())
	switch {
	case err != nil:
		return err
	case dir != "":
		return reportTrials(c, ro, dir)
	}
	return runReport(c, ro)
}

// trialsArg returns the trials folder among report's arguments, or "":
// one is read alone (its trials are summarized across, each its own run;
// merged with other inputs they would be one run of their pooled
// requests).
func trialsArg(args []string) (string, error) {
	for _, a := range args {
		if a != "-" && rundir.IsTrialsDir(a) {
			if len(args) > 1 {
				return "", base.UsageError("%s is a trials folder (--trials N -o DIR): report reads it alone, across its trials; "+
					"to merge trials into one run's summary name their folders (%s ...)", a, filepath.Join(a, rundir.TrialPrefix+"1"))
			}
			return a, nil
		}
	}
	return "", nil
}

// reportTrials is report of a trials folder: the table across its trials
// from their results as the run printed it (each trial's figures, not a
// pooled merge, whose throughput would count the pauses between trials),
// with -o (the folder itself) trials.json and the aggregate rewritten,
// and with --html the trials page.
func reportTrials(c *cli.Context, ro *reportOptions, dir string) error {
	if err := checkTrialsReport(c, ro, dir); err != nil {
		return err
	}
	side, level, err := rundir.LoadTrials(dir)
	if err != nil {
		return base.UsageError("%v", err)
	}
	defer side.Close()
	tap := &warnTap{w: c.App.ErrWriter}
	warnAll(tap, side.TrialsWarnings())
	gp := ro.goodput
	if !c.IsSet("goodput") {
		gp = runsGoodput(tap, side.Runs)
	}
	goodput, _ := parseGoodput(gp)
	ts, err := rundir.SummarizeTrials(side.Trials, metrics.Options{Goodput: goodput}, level)
	if err != nil {
		return &base.Error{Code: base.ExitTrouble, Err: err}
	}
	if len(ts.Figures) == 0 {
		return base.No("no profiling records in the trials of %s: nothing was measured", dir)
	}
	if ro.out != "" {
		if _, err := rundir.WriteTrials(dir, ts); err != nil {
			return err
		}
		dirs := make([]string, len(side.Trials))
		for i, f := range side.Trials {
			dirs[i] = filepath.Dir(f)
		}
		if err := writeAggregateOf(dir, dirs, level, rundir.AggregateCooldown(dir)); err != nil {
			return err
		}
	}
	if ro.html != "" {
		if err := writeTrialsHTML(ro.html, dir, side, ts, goodput, tap.warnings, tap.notes); err != nil {
			return err
		}
	}
	return rundir.WriteTrialsTable(c.App.Writer, ts)
}

// checkTrialsReport refuses report's flags that do not apply to a trials
// folder. -o is the folder itself or nothing: trials.json names the
// trial-K folders beside it, so one written elsewhere would list folders
// that are not there.
func checkTrialsReport(c *cli.Context, ro *reportOptions, dir string) error {
	if _, err := checkReportFlags(c, ro); err != nil {
		return err
	}
	for _, f := range []string{"slice-duration", "streaming", "allow-missing", "show-trace-timing", "steady-state", "steady-state-threshold"} {
		if c.IsSet(f) {
			return base.UsageError("--%s: not with a trials folder (%s): each trial is a run folder, report %s reads one", f, dir, filepath.Join(dir, rundir.TrialPrefix+"K"))
		}
	}
	if ro.out != "" {
		a, err1 := os.Stat(ro.out)
		b, err2 := os.Stat(dir)
		if err1 != nil || err2 != nil || !os.SameFile(a, b) {
			return base.UsageError("-o %s: a trials folder's summary (%s, %s/) lists the trial-K folders beside it, so it is written into the trials folder %s only (-o %s); report %s -o OUT writes one trial's exports",
				ro.out, rundir.TrialsFile, rundir.AggregateDir, dir, dir, filepath.Join(dir, rundir.TrialPrefix+"K"))
		}
	}
	if ro.html != "" {
		return checkHTML(ro.html, dir)
	}
	return nil
}

// writeTrialsHTML writes the trials page atomically: ts at its top, then
// each trial of side, read again one at a time for its summary and charts.
func writeTrialsHTML(path, dir string, side *rundir.Side, ts *rundir.TrialsSummary, goodput metrics.Goodput, warnings, notes []string) error {
	page := htmlreport.TrialsPage{Source: dir, Level: ts.ConfidenceLevel, Names: ts.Dirs, Warnings: warnings, Notes: notes}
	for _, f := range ts.Figures {
		page.Figures = append(page.Figures, htmlreport.TrialRow{Metric: f.Metric, Stat: f.Stat, Unit: f.Unit, Mean: f.Mean,
			Std: f.Std, CILow: f.CILow, CIHigh: f.CIHigh, CV: f.CV, Values: f.ByTrial(ts.Dirs)})
	}
	page.Trial = func(i int) (htmlreport.Page, *htmlreport.Collector, error) {
		return trialPage(side.Trials[i], goodput)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := htmlreport.WriteTrials(f, page); err != nil {
		return fmt.Errorf("%s: %w", path, f.Named(err))
	}
	return f.Commit()
}

// trialPage summarizes one trial's results file for its section of the
// trials page, collecting its charts' data.
func trialPage(file string, goodput metrics.Goodput) (htmlreport.Page, *htmlreport.Collector, error) {
	runs := readRuns([]string{file})
	mo := metrics.Options{Goodput: goodput}
	var err error
	if mo.Streaming, err = rundir.Streaming([]string{file}, runs); err != nil {
		return htmlreport.Page{}, nil, err
	}
	sum, col, err := summarizeCollect([]string{file}, mo, true)
	if err != nil {
		return htmlreport.Page{}, nil, err
	}
	var console strings.Builder
	if err := metrics.WriteConsole(&console, sum, ""); err != nil {
		return htmlreport.Page{}, nil, err
	}
	p := htmlreport.Page{Sources: []string{displayName(file)}, Summary: sum, Console: console.String(), Run: runs[0]}
	if runs[0] != nil {
		p.RunID = runs[0].ID
	}
	return p, col, nil
}

// tapTrials returns where a --trials run prints: with --html, a warnTap
// in front of the app's error writer, for the page to show what the
// trials warned (restore puts the writer back).
func tapTrials(c *cli.Context, o *options) (w io.Writer, restore func()) {
	if o.html == "" {
		return c.App.ErrWriter, func() {}
	}
	tap := &warnTap{w: c.App.ErrWriter}
	c.App.ErrWriter = tap
	return tap, func() { c.App.ErrWriter = tap.w }
}

// once is ss, each string at its first place only.
func once(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// trialsRunHTML writes the page of the trials a --trials run just wrote
// into dir, read back as report reads the folder; its warnings are those
// the run printed (w, a warnTap), each once, and what the folder leaves
// out or doubts.
func trialsRunHTML(path, dir string, ts *rundir.TrialsSummary, goodput metrics.Goodput, w io.Writer) error {
	side, _, err := rundir.LoadTrials(dir)
	if err != nil {
		return err
	}
	defer side.Close()
	var warns, notes []string
	if tap, ok := w.(*warnTap); ok {
		tap.mu.Lock()
		warns, notes = once(tap.warnings), once(tap.notes)
		tap.mu.Unlock()
	}
	return writeTrialsHTML(path, dir, side, ts, goodput, append(warns, side.TrialsWarnings()...), notes)
}
