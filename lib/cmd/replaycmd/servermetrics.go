package replaycmd

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/servermetrics"
	"github.com/urfave/cli/v2"
)

// smOptions are the server-metrics flags.
type smOptions struct {
	targets  cli.StringSlice
	off      bool
	interval string
}

func serverMetricsFlags(o *smOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "server-metrics", Usage: "scrape the Prometheus /metrics `URL` during the run (repeatable; default: the --url's origin + /metrics when it answers with Prometheus text)", Destination: &o.targets},
		&cli.BoolFlag{Name: "no-server-metrics", Usage: "scrape no /metrics", Destination: &o.off},
		&cli.StringFlag{Name: "server-metrics-interval", Value: "1s", Usage: "scrape every `D`", Destination: &o.interval},
	}
}

// smRun is a run's scraping: the collector and its JSONL stream.
type smRun struct {
	c       *servermetrics.Collector
	jsonl   *atomicfile.File
	dir     string
	stopped bool
	err     error
}

// startServerMetrics resolves the targets (the default one only when a
// probe finds Prometheus text there), opens the JSONL stream in dir and
// scrapes once before returning: before the first send. It returns nil
// when nothing is scraped.
func startServerMetrics(ctx context.Context, w io.Writer, o *smOptions, serverURL, dir string, quiet bool) (*smRun, error) {
	if o.off {
		if len(o.targets.Value()) > 0 {
			return nil, base.UsageError("--server-metrics and --no-server-metrics together")
		}
		return nil, nil
	}
	interval, err := duration("--server-metrics-interval", o.interval)
	if err != nil {
		return nil, err
	}
	if interval < 10*time.Millisecond {
		return nil, base.UsageError("--server-metrics-interval %s: want at least 10ms", o.interval)
	}
	targets := o.targets.Value()
	for _, t := range targets {
		if servermetrics.DefaultTarget(t) == "" {
			return nil, base.UsageError("--server-metrics %q: want an http(s) URL", t)
		}
	}
	if len(targets) == 0 {
		def := servermetrics.DefaultTarget(serverURL)
		if def == "" || !servermetrics.Probe(ctx, nil, def, 2*time.Second) {
			return nil, nil // no /metrics there: the run goes on without
		}
		targets = []string{def}
	}
	f, err := atomicfile.Create(filepath.Join(dir, servermetrics.JSONLFile))
	if err != nil {
		return nil, err
	}
	for _, name := range []string{servermetrics.JSONFile, servermetrics.CSVFile} {
		if _, err := atomicfile.Destination(filepath.Join(dir, name)); err != nil {
			f.Abort()
			return nil, err
		}
	}
	if !quiet {
		fmt.Fprintf(w, "aiperf-replay: scraping %v every %v\n", targets, interval)
	}
	c := servermetrics.Start(ctx, servermetrics.Options{Targets: targets, Interval: interval, JSONL: f})
	return &smRun{c: c, jsonl: f, dir: dir}, nil
}

// stop scrapes a last time (after the last answer) and ends the scraping.
func (r *smRun) stop(ctx context.Context) {
	if r == nil || r.stopped {
		return
	}
	r.stopped = true
	r.err = r.c.Stop(ctx)
}

// abort stops the scraping and drops the JSONL stream (a run that failed).
func (r *smRun) abort() {
	if r == nil {
		return
	}
	r.stop(context.Background())
	r.jsonl.Abort()
}

// write writes the three exports of the profiling window of sum, and
// returns the report for the console.
func (r *smRun) write(sum *metrics.Summary, meta servermetrics.Meta) (*servermetrics.Report, error) {
	if r == nil {
		return nil, nil
	}
	r.stop(context.Background())
	if r.err != nil {
		return nil, fmt.Errorf("%s: %w", r.jsonl.Name(), r.err)
	}
	if err := r.jsonl.Commit(); err != nil {
		return nil, err
	}
	w := servermetrics.Window{Start: sum.StartNS, End: sum.EndNS}
	if w.End <= w.Start { // no profiling answer: the whole run
		w = servermetrics.Window{Start: 0, End: 1<<63 - 1}
	}
	rep := r.c.Report(w)
	for _, x := range []struct {
		name string
		fn   func(io.Writer, *servermetrics.Report, servermetrics.Meta) error
	}{{servermetrics.JSONFile, servermetrics.WriteJSON}, {servermetrics.CSVFile, servermetrics.WriteCSV}} {
		f, err := atomicfile.Create(filepath.Join(r.dir, x.name))
		if err != nil {
			return nil, err
		}
		if err := x.fn(f, rep, meta); err != nil {
			f.Abort()
			return nil, err
		}
		if err := f.Commit(); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// printServerMetrics prints the warnings (always) and the summary beside
// the client's figures (unless quiet).
func printServerMetrics(w io.Writer, rep *servermetrics.Report, sum *metrics.Summary, quiet bool) {
	if rep != nil {
		for _, s := range servermetrics.Warnings(rep) {
			fmt.Fprintf(w, "aiperf-replay: warning: %s\n", s)
		}
	}
	if quiet {
		return
	}
	cf := clientFigures(sum)
	if rep == nil {
		rep = &servermetrics.Report{}
	}
	servermetrics.WriteConsole(w, rep, cf)
}

// clientFigures takes the client's side of the comparison from the
// summary.
func clientFigures(sum *metrics.Summary) servermetrics.ClientFigures {
	cf := servermetrics.ClientFigures{HitRate: math.NaN()}
	lat := func(tag string) *servermetrics.Latency {
		r := sum.Get(tag)
		if r == nil || r.Single {
			return nil
		}
		return &servermetrics.Latency{Avg: r.Avg, P50: r.P[4], P90: r.P[6], P99: r.P[8]}
	}
	cf.TTFT, cf.ITL = lat("time_to_first_token"), lat("inter_token_latency")
	single := func(tag string) float64 {
		if r := sum.Get(tag); r != nil {
			return r.Avg
		}
		return 0
	}
	cf.PromptTokens = single("total_isl")
	cf.GenerationTokens = single("total_osl")
	if r := sum.Get("cached_tokens"); r != nil {
		cf.CachedTokens, cf.CachedAnswers = r.Sum, r.Count
		if hr := sum.Get("prefix_cache_hit_rate"); hr != nil {
			cf.HitRate = hr.Avg / 100
		}
	}
	return cf
}
