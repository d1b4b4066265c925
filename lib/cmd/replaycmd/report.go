package replaycmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/htmlreport"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/rundir"
	"github.com/urfave/cli/v2"
)

// reportOptions are the flags of aiperf-replay report.
type reportOptions struct {
	out, goodput, streaming, sliceDuration, html string
	allowMissing, showTrace                      bool
	ownFolder                                    bool // -o is the one run's own folder (checkReportOut)
	steady                                       steadyOptions
}

func reportCommand() *cli.Command {
	ro := &reportOptions{}
	return &cli.Command{
		Name:      "report",
		Usage:     "recompute the summary from one or many records files (shards)",
		ArgsUsage: "DIR-or-RECORDS...",
		Description: "Reads results.jsonl files (a run's, or the shards of one run; - for stdin) and prints the summary table on\n" +
			"stdout, exact (every percentile from the values, in bounded memory). For one run's file it is that\n" +
			"run's summary. With -o DIR it also writes the export files there, with the run's id and settings.\n\n" +
			"Each run's records carry its settings and the store's identity: records of runs of different stores\n" +
			"are refused, runs of one store with different settings are merged with a warning naming them.\n\n" +
			"Shards (aiperf-replay --shard i/N) merge into the summary one run sending the same requests would give:\n" +
			"percentiles from all records, throughputs over the union of their spans (earliest send to latest end).\n" +
			"A shard given twice, shards of different N or of different stores, or a whole run beside shards are\n" +
			"refused; a missing shard is refused unless --allow-missing. The summary states the spread of the\n" +
			"shards' schedule starts (each shard's first send less its offset in the schedule), with a warning past 10 ms. A run's directory (-o DIR) stands for its results.jsonl (records.jsonl in runs before 2026-12), and brings its\n" +
			"server_metrics_export.jsonl: the server summary as the run printed it (and with -o, the server-metrics exports;\n" +
			"shards' scrapes are joined by target, one shard's taken where several scraped the same).\n\n" +
			"A trials folder (--trials N -o DIR) is read alone: the table across its trials, as the run printed it, from\n" +
			"each trial's own figures; -o is the folder itself (trials.json and the aggregate rewritten), --html its trials page.\n\n" +
			"--html FILE also writes the report as one self-contained HTML page (no script, nothing loaded from\n" +
			"elsewhere): the summary table, latencies over time with per-window p50/p99, their CDFs, output tokens/s,\n" +
			"requests in flight, send lateness and errors over time. Point clouds are binned to pixel cells, so a page\n" +
			"of a million requests stays small.",
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "allow-missing", Usage: "merge the shards given even when some of the replay's are missing (with a warning naming them)", Destination: &ro.allowMissing},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "also write the export files into `DIR`", Destination: &ro.out},
			goodputFlag(&ro.goodput, "SLOs `\"METRIC:VALUE ...\"` (default: the run's, as its records say; \"\" for none)"),
			&cli.StringFlag{Name: "streaming", Value: "auto", Usage: "streaming metrics (TTFT, ITL, ...): `auto` (from the records), true or false", Destination: &ro.streaming},
			sliceDurationFlag(&ro.sliceDuration),
			&cli.StringFlag{Name: "html", Usage: "also write the report as one self-contained HTML page to `FILE` (summary, latencies over time, CDFs, load, lateness, errors)", Destination: &ro.html},
			showTraceTimingFlag(&ro.showTrace),
		}, ro.steady.flags()...),
		Action: func(c *cli.Context) error { return reportAction(c, ro) }, // trialsreport.go
	}
}

// A report, in the order of its steps: reportInputs (the files, each
// once, their runs checked alike and as shards), the streaming setting,
// the per-record export started (beside the summary's pass), the summary,
// the server side rebuilt (rebuildServer), the exports
// (writeReportOutputs), the console.
func runReport(c *cli.Context, ro *reportOptions) error {
	slice, err := checkReportFlags(c, ro)
	if err != nil {
		return err
	}
	tap := &warnTap{w: c.App.ErrWriter} // the page shows the warnings
	files, runs, cleanup, err := reportInputs(c, tap, ro)
	if err != nil {
		return err
	}
	defer cleanup()
	ends, cancelled := checkEnds(files, runs)
	made := &reportMade{goodput: ro.goodput, slice: slice, cancelled: cancelled, merged: len(files) > 1, out: ro.out}
	if !c.IsSet("goodput") {
		made.goodput = runsGoodput(tap, runs)
	}
	mo := metrics.Options{}
	mo.Goodput, _ = parseGoodput(made.goodput)
	if mo.Streaming, err = reportStreaming(ro.streaming, files, runs); err != nil {
		return err
	}
	exp, err := startReportExport(ro.out, ro.html, mo, files)
	if err != nil {
		return err
	}
	defer exp.drop() // unless finished
	sum, col, err := summarizeCollect(files, mo, ro.html != "")
	if err != nil {
		return err
	}
	made.profiled = sum.Requests + sum.ErrorRequests
	for _, m := range ends {
		fmt.Fprintf(tap, "aiperf-replay: warning: %s\n", m)
	}
	if sum.Requests+sum.ErrorRequests == 0 { // a clean no, and nothing written
		return base.No("no profiling records in %s: nothing was measured (the file is empty, or holds only an end line or warmup requests)", displayNames(files))
	}
	run := reportRun(runs, made)
	srv, err := rebuildServer(tap, c.Args().Slice(), files, runs, ro.out, sum, run) // smreport.go
	if err != nil {
		return err
	}
	parts := renderParts(sum, ro.showTrace, srv.ps, srv.rep, files)
	parts.note, parts.noteWarnings, err = rundir.ShardNote(files, runs) // printed after the server summary
	if cerr := c.Context.Err(); cerr != nil {
		return cerr // interrupted: nothing is written, the folder's exports are untouched
	}
	if werr := writeReportOutputs(ro, files, runs, sum, col, mo, made, srv, &parts, tap); werr != nil {
		return werr
	}
	if ferr := exp.finish(); ferr != nil {
		return ferr
	}
	parts.print(c.App.Writer, c.App.ErrWriter, false)
	if parts.note != "" {
		fmt.Fprintln(c.App.Writer, parts.note)
	}
	return errors.Join(err, c.Context.Err()) // an interrupt once writing began: every output whole, exit 130
}

// checkReportFlags refuses what report cannot do before it reads a file,
// and returns --slice-duration.
func checkReportFlags(c *cli.Context, ro *reportOptions) (time.Duration, error) {
	if c.NArg() == 0 {
		return 0, base.UsageError("want at least one records file")
	}
	slice, err := parseSliceDuration(c, ro.sliceDuration)
	if err != nil {
		return 0, err
	}
	if slice > 0 && ro.out == "" {
		return 0, base.UsageError("--slice-duration writes %s and .csv: it needs -o DIR", timeslicesJSONFile)
	}
	if _, err := parseGoodput(ro.goodput); err != nil {
		return 0, base.UsageError("--goodput: %v", err)
	}
	return slice, ro.steady.check(c)
}

// reportInputs resolves the arguments to results files (a run directory
// stands for its file; - is stdin, spooled), refuses one file given twice
// (its requests would count twice) and checks the runs they hold: of one
// store, and as shards, complete unless --allow-missing.
func reportInputs(c *cli.Context, errw io.Writer, ro *reportOptions) (files []string, runs []*result.RunInfo, cleanup func(), err error) {
	args, err := runDirs(c.Args().Slice())
	if err != nil {
		return nil, nil, nil, err
	}
	if ro.html != "" {
		if err := checkHTML(ro.html, args...); err != nil {
			return nil, nil, nil, err
		}
	}
	files, cleanup, err = spoolStdin(c.App.Reader, args)
	if err != nil {
		return nil, nil, nil, err
	}
	// a file of several runs (concatenated) is checked run by run
	files, unsplit, err := rundir.SplitRuns(files)
	if err != nil {
		cleanup()
		return nil, nil, nil, &base.Error{Code: base.ExitTrouble, Err: err}
	}
	spooled := cleanup
	cleanup = func() { unsplit(); spooled() }
	fail := func(err error) ([]string, []*result.RunInfo, func(), error) {
		cleanup()
		return nil, nil, nil, err
	}
	infos := make([]os.FileInfo, len(files))
	for i, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return fail(&base.Error{Code: base.ExitTrouble, Err: err})
		}
		for j := range i {
			if os.SameFile(infos[j], fi) {
				return fail(base.UsageError("%s and %s are the same file: its requests would count twice", files[j], f))
			}
		}
		infos[i] = fi
	}
	runs = readRuns(files)
	if err := checkRuns(errw, files, runs); err != nil {
		return fail(err)
	}
	if err := checkShardsOf(errw, files, runs, ro.allowMissing); err != nil {
		return fail(err)
	}
	if ro.ownFolder, err = checkReportOut(ro.out, files, runs); err != nil {
		return fail(err)
	}
	return files, runs, cleanup, nil
}

// reportStreaming is --streaming: auto takes it from the runs (or, for
// records written before they said, from the records themselves).
func reportStreaming(flag string, files []string, runs []*result.RunInfo) (bool, error) {
	switch flag {
	case "auto":
		if knownRuns(runs) {
			return streamingOf(files, runs)
		}
		return inferStreaming(files)
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, base.UsageError("--streaming %q: want auto, true or false", flag)
}

// writeReportOutputs writes, with -o, the exports and time slices (with
// the prefix figures), and with --html the page.
func writeReportOutputs(ro *reportOptions, files []string, runs []*result.RunInfo, sum *metrics.Summary, col *htmlreport.Collector, mo metrics.Options, made *reportMade, srv *serverRebuild, parts *consoleParts, tap *warnTap) error {
	var err error
	if parts.steady, made.steady, err = reportSteady(ro, files, mo, runs, sum); err != nil {
		return err
	}
	if ro.out != "" { // made by startReportExport, which writes profile_export.jsonl
		slices, err := summarizeSlices(files, mo, made.slice)
		if err != nil {
			return err
		}
		run := reportRun(runs, made)
		if run.Sections, err = srv.sections(); err != nil {
			return err
		}
		run.Sections = append(run.Sections, made.steady...)
		if err := rundir.WriteSummaryExports(ro.out, sum, run); err != nil {
			return err
		}
		if err := writeTimeslices(ro.out, slices, run); err != nil {
			return err
		}
		if !ro.ownFolder { // a run's own folder: its files are the run's
			dropStale(tap, ro.out, reportOutputs(slices, srv), "report")
		}
	}
	if ro.html != "" {
		return writeHTML(ro.html, col, sum, reportRun(runs, made).BenchmarkID, files, parts, tap)
	}
	return nil
}
