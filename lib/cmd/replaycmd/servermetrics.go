package replaycmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/internal/redact"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/rundir"
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

// smRun is a run's scraping: the scrape agent (agent.go) and the JSONL
// stream it appends to.
type smRun struct {
	agent    *servermetrics.Agent
	jsonl    *atomicfile.File
	dir      string
	interval time.Duration
	stats    []servermetrics.AgentStats
	stopped  bool
	agentErr error // the agent died, hung or failed: a warning and a gap
}

// startServerMetrics resolves the targets (the default one only when a
// probe finds Prometheus text there), opens the JSONL stream in dir and
// starts the scrape agent, which scrapes once before this returns: before
// the first send. It returns nil when nothing is scraped; an agent that
// does not start is a warning, and the run goes on without.
func startServerMetrics(ctx context.Context, w io.Writer, o *smOptions, serverURL, dir string, quiet bool) (*smRun, error) {
	targets, interval, err := o.resolve(ctx, serverURL)
	if err != nil || len(targets) == 0 {
		return nil, err
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
		fmt.Fprintf(w, "aiperf-replay: scraping %v every %v\n", redactAll(targets), interval)
	}
	a, err := startAgent(targets, interval, f.File, w)
	if err != nil {
		f.Abort()
		fmt.Fprintf(w, "aiperf-replay: warning: server metrics: the scrape agent did not start (%v): no server metrics for this run\n", err)
		return nil, nil
	}
	return &smRun{agent: a, jsonl: f, dir: dir, interval: interval}, nil
}

// resolve judges the flags and returns the targets to scrape (none: no
// scraping).
func (o *smOptions) resolve(ctx context.Context, serverURL string) ([]string, time.Duration, error) {
	if o.off {
		if len(o.targets.Value()) > 0 {
			return nil, 0, base.UsageError("--server-metrics and --no-server-metrics together")
		}
		return nil, 0, nil
	}
	interval, err := duration("--server-metrics-interval", o.interval)
	if err != nil {
		return nil, 0, err
	}
	if interval < 10*time.Millisecond {
		return nil, 0, base.UsageError("--server-metrics-interval %s: want at least 10ms", o.interval)
	}
	var targets []string
	for _, t := range o.targets.Value() {
		u := servermetrics.Target(t)
		if u == "" {
			return nil, 0, base.UsageError("--server-metrics %q: want an http(s) URL", t)
		}
		targets = append(targets, u)
	}
	if len(targets) == 0 {
		def := servermetrics.DefaultTarget(serverURL)
		if def == "" || !servermetrics.Probe(ctx, nil, def, 2*time.Second) {
			return nil, 0, nil // no /metrics there: the run goes on without
		}
		targets = []string{def}
	}
	return targets, interval, nil
}

// warmupWarnings names, per target, the warmup requests whose answers
// ended after the scrape that opens the deltas: the server's counters
// include their work (there is no scrape at the end of the warmup).
func warmupWarnings(rep *servermetrics.Report, files []string) []string {
	var out []string
	whose := ""
	if runs := readRuns(files); len(runs) == 1 && runs[0] != nil && runs[0].Shards > 1 {
		whose = fmt.Sprintf(" (this shard's; the other %d shards' warmups are in the deltas too)", runs[0].Shards-1)
	}
	for _, t := range rep.Targets {
		if t.Scrapes == 0 {
			continue
		}
		n, err := rundir.WarmupAfter(files, t.BracketFrom)
		if err != nil || n == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("server metrics %s: %s%s ended after the scrape that opens the deltas: the server's counters include their work (a shorter --server-metrics-interval, or fewer warmup requests, narrows this)", t.URL, plural(int(n), "warmup request"), whose))
	}
	return out
}

// stop has the agent scrape a last time (after the last answer) and end.
func (r *smRun) stop(context.Context) {
	if r == nil || r.stopped {
		return
	}
	r.stopped = true
	r.stats, r.agentErr = r.agent.Stop(2*scrapeTimeout(r.interval) + 5*time.Second)
}

// abort stops the scraping and drops the JSONL stream (a run that failed).
func (r *smRun) abort() {
	if r == nil {
		return
	}
	if !r.stopped {
		r.stopped = true
		r.agent.Kill()
	}
	r.jsonl.Abort() // a no-op once committed
}

// write commits the JSONL stream, rebuilds the series from it and writes
// the JSON and CSV exports of the profiling window of sum; it returns the
// report for the console. What the agent failed to scrape is a warning.
func (r *smRun) write(w io.Writer, sum *metrics.Summary, meta servermetrics.Meta) (*servermetrics.Report, error) {
	if r == nil {
		return nil, nil
	}
	r.stop(context.Background())
	if r.agentErr != nil {
		fmt.Fprintf(w, "aiperf-replay: warning: server metrics: the scrape agent %v: the scrapes it did not make are gaps\n", r.agentErr)
	}
	if err := r.jsonl.Commit(); err != nil {
		return nil, err
	}
	c, warns, err := servermetrics.LoadFile(r.jsonl.Name())
	var le *servermetrics.LineError
	if errors.As(err, &le) { // the run is complete without them
		fmt.Fprintf(w, "aiperf-replay: warning: server metrics: %v: no server-metrics exports\n", err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, s := range warns {
		fmt.Fprintf(w, "aiperf-replay: warning: %s\n", s)
	}
	c.SetAgentStats(r.stats)
	return servermetrics.WriteExports(r.dir, c, profilingWindow(sum), meta)
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

// redactAll is urls without their credentials, for messages.
func redactAll(urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = redact.URL(u)
	}
	return out
}
