package replaycmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/htmlreport"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/rundir"
	"github.com/aiperf/toolkit/lib/servermetrics"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/urfave/cli/v2"
)

// A run, in the order of its steps: runOnce plans it (replay.NewPlan),
// opens its outputs and starts the watchers (live line, scraping,
// saturation); the engine runs it; then finish summarizes the results
// file (summarizeRun), writes the exports (writeRunOutputs), prints the
// console (printRun) and judges the exit status (judgeRun).

// runOnce runs the schedule once into o.out.
func runOnce(c *cli.Context, o *options, st *store.Reader, ro replay.Options, storePath string, goodput metrics.Goodput, maxErr float64) error {
	plan, err := replay.NewPlan(st, ro)
	if err != nil {
		return planError(err)
	}
	tap := &warnTap{w: c.App.ErrWriter} // the page shows the warnings
	w := io.Writer(tap)
	announce(w, o, plan)
	mo := metrics.Options{Streaming: plan.Streaming, Goodput: goodput}
	live, err := newLiveLine(c.App.ErrWriter, o.quiet, mo) // the terminal's, not the tap's
	if err != nil {
		return base.UsageError("%v", err)
	}
	f, recPath, claim, err := createOutputs(o.out, storePath, rundir.ClaimOptions{Force: o.force, Nested: o.nested, Follow: []string{o.html}})
	if err != nil {
		return err
	}
	defer claim.Release()
	defer f.Abort()
	if o.slice > 0 {
		if err := checkTimeslicesDest(o.out); err != nil {
			return err
		}
	}
	o.wire(plan, f, storePath, c, live)
	sm, err := startServerMetrics(c.Context, w, &o.sm, o.url, o.out, o.quiet)
	if err != nil {
		return err
	}
	defer sm.abort()
	var sat *saturationWatch
	if o.stopOnSaturation {
		sat = watchSaturation(c.Context, w, plan, o.satWindow)
	}
	live.start()
	stats, runErr := plan.Run(c.Context)
	live.stop()
	saturated := sat.end()
	sm.stop(c.Context) // the scrape after the last answer
	if stats == nil {  // nothing was sent: the server was not there
		return base.UsageError("%v", runErr)
	}
	if runErr != nil {
		return runErr
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if err := writeRun(tap, o, plan, st, stats, mo, recPath, maxErr, sm); err != nil {
		return err
	}
	if stats.Interrupted {
		return c.Context.Err()
	}
	if saturated != "" {
		return base.No("stopped early: the server is saturated (--stop-on-saturation)")
	}
	return nil
}

// wire points the plan's options at the run's results file, the second
// ^C, the live line and the run's description.
func (o *options) wire(plan *replay.Plan, f io.Writer, storePath string, c *cli.Context, live *liveLine) {
	plan.Options.Results = f
	plan.Options.Cut = base.SecondSignal(c.Context)
	plan.Options.Observe = live.observe
	plan.Options.Counters = &live.counters
	plan.Options.StoreName = storeName(storePath)
	if plan.Options.Arrival != "" {
		o.arrival = plan.Options.Arrival // the rate schedule's, gamma when --smoothness came alone
	}
	plan.Options.Config = o.inputConfig(storePath, plan.Schedule)
}

// announce prints the plan before the first send (unless quiet), and says
// when a fixed schedule will send fewer requests than asked (quiet or not).
func announce(w io.Writer, o *options, p *replay.Plan) {
	if !o.quiet {
		fmt.Fprintf(w, "aiperf-replay: %s\n", describePlan(p))
	}
	if n := p.Options.Warmup + p.Options.RequestCount; p.Schedule == replay.ScheduleFixed && p.Options.RequestCount > 0 &&
		p.Options.Duration == 0 && n > p.TraceRequests && n > 0 {
		fmt.Fprintf(w, "aiperf-replay: --request-count %d: the fixed schedule plays the trace once, and it holds %d requests (--warmup %d included): %d will be sent, not %d (the concurrency and rate schedules go around the store)\n",
			p.Options.RequestCount, p.TraceRequests, p.Options.Warmup, p.TraceRequests, n)
	}
	if p.WholeShort != "" {
		fmt.Fprintf(w, "aiperf-replay: %s\n", p.WholeShort)
	}
}

// finished is a run's results summarized: what its exports and console
// are written from.
type finished struct {
	plan     *replay.Plan // nil for a report
	stats    *replay.Stats
	mo       metrics.Options
	files    []string
	sum      *metrics.Summary
	col      *htmlreport.Collector
	run      metrics.Run
	slices   *metrics.Slices
	smReport *servermetrics.Report
	scraped  bool // the scrapes' JSONL is written (even when it could not be read back)
	ps       *prefixSummary
	steady   string       // --steady-state's console text (steady.go)
	parts    consoleParts // rendered once: the console and the page
}

// writeRun writes a finished run's exports and summary, and judges
// --max-error-rate (exit 1).
// profile_export.jsonl needs no summary: it is written beside the
// summary's reading of the records, on another core.
func writeRun(w *warnTap, o *options, plan *replay.Plan, st *store.Reader, stats *replay.Stats, mo metrics.Options, recPath string, maxErr float64, sm *smRun) error {
	rmo := mo
	rmo.Streaming = stats.StreamingMetrics(plan.Streaming) // as summarizeRun sets it
	rec, err := rundir.StartRecordExport(o.out, rmo, []string{recPath})
	if err != nil {
		return err
	}
	fin, err := summarizeRun(w, o, plan, st, stats, mo, recPath, sm)
	if err == nil {
		fin.parts = renderParts(fin.sum, o.conn.showTraceTiming, fin.ps, fin.smReport, fin.files)
		fin.parts.note = shardServerNote(o, fin)
		fin.parts.steady = fin.steady
		err = writeRunOutputs(o, fin, w)
	}
	// kept even when the rest failed: the run's records are committed
	if rerr := rec.Finish(true); err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	printRun(w, o, fin)
	return judgeRun(w, o, fin, maxErr)
}

// summarizeRun reads the results file back: the summary (and the HTML
// page's data), the run's description, the time slices, the server side
// and the prefix figures.
func summarizeRun(w io.Writer, o *options, plan *replay.Plan, st *store.Reader, stats *replay.Stats, mo metrics.Options, recPath string, sm *smRun) (*finished, error) {
	if stats.CeilingWaits > 0 {
		fmt.Fprintf(w, "aiperf-replay: the concurrency ceiling (--concurrency %d) delayed %d session starts, the longest by %v (send_lateness includes these waits; the fell-behind check does not)\n",
			plan.Options.Concurrency, stats.CeilingWaits, stats.CeilingMaxWait.Round(time.Microsecond))
	}
	mo.Streaming = stats.StreamingMetrics(plan.Streaming)
	if mo.Streaming != plan.Streaming {
		fmt.Fprintf(w, "aiperf-replay: warning: %s\n", streamingMismatch(plan.Streaming, stats))
	} else if note := notStreamingNote(plan); note != "" && !o.quiet {
		fmt.Fprintf(w, "%s%s\n", notePrefix, note)
	}
	fin := &finished{plan: plan, stats: stats, mo: mo, files: []string{recPath}}
	var err error
	if fin.sum, fin.col, err = summarizeCollect(fin.files, mo, o.html != ""); err != nil {
		return nil, err
	}
	fin.run = metrics.Run{BenchmarkID: stats.RunID, Version: "aiperf-replay " + base.Version, WasCancelled: stats.Interrupted}
	fin.run.InputConfig, fin.run.RunInfo = runConfig(recPath, plan, stats, fin.sum.Requests+fin.sum.ErrorRequests)
	if fin.slices, err = summarizeSlices(fin.files, mo, o.slice); err != nil {
		return nil, err
	}
	fin.scraped = sm != nil
	if fin.smReport, err = sm.write(w, fin.sum, servermetrics.Meta{Version: fin.run.Version, BenchmarkID: fin.run.BenchmarkID}); err != nil {
		return nil, err
	}
	if fin.ps, err = tracePrefix(st, fin.files, o.kvCapacity); err != nil {
		return nil, err
	}
	if fin.ps != nil {
		fin.ps.measure(fin.smReport, clientFigures(fin.sum).HitRate)
		sec, err := fin.ps.section()
		if err != nil {
			return nil, err
		}
		fin.run.Sections = append(fin.run.Sections, metrics.Section{Name: "prefix_cache", Value: sec})
	} else if o.kvCapacity > 0 {
		fmt.Fprintf(w, "aiperf-replay: --kv-capacity-blocks: the store has no hash_ids (pack one from a trace that has them), so no prefix-cache figures\n")
	}
	return fin, o.steady.addTo(fin, planTarget(plan))
}

// printRun prints the console's parts (the table, the prefix box, the
// server summary; its warnings even when quiet), the shards' note and
// the run's last line.
func printRun(w io.Writer, o *options, fin *finished) {
	stats := fin.stats
	fin.parts.print(w, w, o.quiet)
	if o.quiet {
		return
	}
	if fin.parts.note != "" {
		fmt.Fprintf(w, "aiperf-replay: note: %s\n", fin.parts.note)
	}
	cpu := ""
	if stats.Sent > 0 && stats.CPU > 0 {
		cpu = fmt.Sprintf(", client CPU %.1f µs a request", float64(stats.CPU.Nanoseconds())/1e3/float64(stats.Sent))
		if stats.Schedule != "concurrency" {
			// The process's CPU over the run: a paced run spends it on its
			// waits too, so the figure is not what a request costs.
			cpu += " (paced: its timers and scrapes count too)"
		}
	}
	fmt.Fprintf(w, "aiperf-replay: %d requests sent (%d failed) in %v, schedule %s%s; outputs in %s/ (%s)\n",
		stats.Sent, stats.Errors, stats.Elapsed.Round(time.Millisecond), stats.Schedule, cpu, o.out, strings.Join(runOutputs(o, fin), ", "))
}

// judgeRun says when nothing was profiled, and judges --max-error-rate,
// or its default (exit 1; see judgeErrors).
func judgeRun(w io.Writer, o *options, fin *finished, maxErr float64) error {
	stats, sum := fin.stats, fin.sum
	profiled := sum.Requests + sum.ErrorRequests
	switch {
	case profiled > 0:
	case stats.Sent == 0:
		fmt.Fprintf(w, "aiperf-replay: no profiling requests: none was sent; the metrics are empty\n")
	default:
		fmt.Fprintf(w, "aiperf-replay: no profiling requests: all %d requests sent were warmup (--warmup %d); the metrics are empty\n", stats.Sent, o.warmup)
	}
	if stats.Interrupted {
		return nil
	}
	return judgeErrors(w, fin, maxErr)
}

// createOutputs takes the output folder (rundir.Take: made, locked, and
// refused when it holds an earlier run's results unless --force), starts
// the records file, and checks that every export can be written there,
// before a request is sent (the exports are written after the run). No
// output may replace the store being replayed.
func createOutputs(dir, storePath string, co rundir.ClaimOptions) (*atomicfile.File, string, *rundir.Claim, error) {
	recPath := filepath.Join(dir, recordsFile)
	if sfi, err := os.Stat(storePath); err == nil {
		for _, name := range []string{recordsFile, exportJSONFile, exportCSVFile, exportRecordFile} {
			p := filepath.Join(dir, name)
			if fi, err := os.Lstat(p); err == nil && os.SameFile(sfi, fi) {
				return nil, "", nil, base.UsageError("%s is the store being replayed: choose another -o", p)
			}
		}
	}
	claim, err := rundir.Take(dir, co)
	if err != nil {
		return nil, "", nil, base.UsageError("%v", err)
	}
	f, err := atomicfile.Create(recPath)
	if err == nil {
		for _, name := range []string{exportJSONFile, exportCSVFile, exportRecordFile} {
			if _, err = atomicfile.Destination(filepath.Join(dir, name)); err != nil {
				f.Abort()
				break
			}
		}
	}
	if err != nil {
		claim.Release()
		return nil, "", nil, err
	}
	return f, recPath, claim, nil
}
