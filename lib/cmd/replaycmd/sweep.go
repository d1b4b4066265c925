package replaycmd

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/htmlreport"
	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/aiperf/toolkit/lib/sweep"
	"github.com/urfave/cli/v2"
)

// sweepFile is the sweep's state and result in its output folder.
const sweepFile = "sweep.json"

type sweepOptions struct {
	options        // the replay flags the sweep shares (url, endpoint, headers, ...)
	by             string
	minGood        float64
	tolerance      float64
	maxSteps       int
	maxConcurrency int
	stepRequests   int64
	stepDuration   string
	maxLateness    string
	page           string // --html
}

func sweepCommand() *cli.Command {
	var o sweepOptions
	return &cli.Command{
		Name:      "sweep",
		Usage:     "find the highest offered load at which the server meets the SLOs (--goodput)",
		ArgsUsage: "STORE",
		Description: "Runs steps of replay (in-process, each a normal run directory DIR/step-NN/) and searches for the\n" +
			"highest load at which at least --min-good percent of the requests meet every SLO of --goodput and the\n" +
			"client kept its schedule. Load is --by rate (sessions started per second, --arrival as in replay) or\n" +
			"--by concurrency (sessions in flight).\n\n" +
			"Search: a short synchronous probe (concurrency 1; it must pass, else no load meets the SLOs: exit 1)\n" +
			"and a throughput probe (--max-concurrency sessions in flight) bound the range: on the rate axis their\n" +
			"achieved session rates (no rate above what the server completes flat out is sustainable). Then\n" +
			"bisection in log space (the geometric mean of the bracket) until the bracket [highest pass, lowest\n" +
			"fail] is within --tolerance or --max-steps steps ran: the tolerance is relative, so halving the log\n" +
			"of the range meets it in a known number of steps; the good fraction is a cliff at saturation, on which\n" +
			"interpolation gains little and stalls.\n\n" +
			"Each step sends --step-requests profiling requests (or runs --step-duration) after --warmup requests,\n" +
			"on the store's sessions in order from the first, going around the store when it runs out; the\n" +
			"synchronous probe sends a fifth of that (at least 20). A closed-loop step of C sessions warms up\n" +
			"with at least C requests (its first C sends, all due at once, go out in a burst). A step the client\n" +
			"could not offer (its own send lateness p99 above --max-lateness, or on the rate axis the\n" +
			"--max-concurrency ceiling delaying starts) is marked \"not offered\" and never counts as a pass. The throughput probe's rate is the completion rate\n" +
			"in the middle 80% of its replies (ramp-up and drain left out).\n\n" +
			"Writes DIR/sweep.json (the settings, every step with its load, achieved throughput, good fraction,\n" +
			"TTFT/ITL/latency p50 and p99 and verdict, and the answer with its bracket) after every step, and the\n" +
			"table of steps and the answer on stdout. Rerun with the same DIR and settings, it reuses the finished\n" +
			"steps (an interrupted sweep resumes; a larger --max-steps or smaller --tolerance continues one);\n" +
			"other settings are refused (exit 2, naming them). Exit 0 with an answer, 1 when no load meets the SLOs.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "url", Usage: "server base `URL`", Destination: &o.url},
			&cli.StringFlag{Name: "goodput", Usage: "SLOs `\"METRIC:VALUE ...\"` in display units (required), e.g. \"time_to_first_token:100\"", Destination: &o.goodput},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "output `DIR` (required): sweep.json and step-NN/", Destination: &o.out},
			&cli.StringFlag{Name: "by", Value: sweep.ByRate, Usage: "load axis: `rate` (sessions/s) or concurrency", Destination: &o.by},
			&cli.StringFlag{Name: "arrival", Value: replay.ArrivalPoisson, Usage: "--by rate: arrival `PROCESS` poisson, constant or gamma", Destination: &o.arrival},
			&cli.Float64Flag{Name: "min-good", Value: 95, Usage: "a step passes when at least `PCT` percent of its requests meet every SLO", Destination: &o.minGood},
			&cli.Float64Flag{Name: "tolerance", Value: 5, Usage: "stop when the bracket's width is within `PCT` percent of its low end", Destination: &o.tolerance},
			&cli.IntFlag{Name: "max-steps", Value: 12, Usage: "run at most `N` steps, the two probes included", Destination: &o.maxSteps},
			&cli.IntFlag{Name: "max-concurrency", Value: 512, Usage: "the throughput probe's `N` sessions in flight, and the rate steps' ceiling", Destination: &o.maxConcurrency},
			&cli.Int64Flag{Name: "step-requests", Value: 200, Usage: "`N` profiling requests per step", Destination: &o.stepRequests},
			&cli.StringFlag{Name: "step-duration", Usage: "run each step for `D` instead of a request count", Destination: &o.stepDuration},
			&cli.Int64Flag{Name: "warmup", Value: 10, Usage: "`N` warmup requests before each step's profiling ones", Destination: &o.warmup},
			&cli.StringFlag{Name: "max-lateness", Value: "20ms", Usage: "a step whose client send lateness p99 exceeds `D` was not offered", Destination: &o.maxLateness},
			&cli.StringFlag{Name: "endpoint", Usage: "`TYPE` chat, completions, embeddings, responses, messages, raw or template (default: the store's)", Destination: &o.endpoint},
			&cli.StringFlag{Name: "path", Usage: "request `PATH`", Destination: &o.path},
			&cli.StringSliceFlag{Name: "H", Aliases: []string{"header"}, Usage: "extra request header `K:V`; repeatable", Destination: &o.headers},
			&cli.StringFlag{Name: "api-key-env", Usage: "send Authorization: Bearer $`VAR`", Destination: &o.apiKeyEnv},
			&cli.BoolFlag{Name: "insecure", Usage: "https: do not verify the server's certificate", Destination: &o.insecure},
			&cli.StringFlag{Name: "timeout", Usage: "per-request timeout `D` (default none)", Destination: &o.timeout},
			&cli.StringFlag{Name: "grace", Value: "30s", Usage: "after a step stops sending, wait up to `D` for requests in flight", Destination: &o.grace},
			&cli.StringFlag{Name: "max-response", Value: "64MiB", Usage: "fail a response larger than `SIZE`", Destination: &o.maxResponse},
			&cli.StringFlag{Name: "history", Value: replay.HistoryAuto, Usage: "multi-turn history: `auto`, on, off", Destination: &o.history},
			&cli.Uint64Flag{Name: "seed", Usage: "`N` seeds the arrival process", Destination: &o.seed},
			&cli.StringFlag{Name: "tokenizer", Value: "builtin", Usage: "count output tokens of answers without usage with `builtin`, none or a tokenizer.json", Destination: &o.tokenizer},
			&cli.BoolFlag{Name: "q", Aliases: []string{"quiet"}, Usage: "no line per step on stderr", Destination: &o.quiet},
			&cli.StringFlag{Name: "html", Usage: "after the last step, write the sweep as one self-contained HTML page to `FILE` (the steps, the answer, throughput, goodput, good fraction and latency percentiles against offered load)", Destination: &o.page},
		}, sweepConnFlags(&o.conn)...),
		Action: func(c *cli.Context) error { return runSweep(c, &o) },
	}
}

// sweepRun is what the steps of a sweep share, decided once.
type sweepRun struct {
	c         *cli.Context
	o         *sweepOptions
	base      replay.Options
	st        *store.Reader
	storePath string
	mo        metrics.Options
	lateness  time.Duration
	duration  time.Duration
	// sessionsPerRequest turns achieved requests/s into sessions/s.
	sessionsPerRequest float64
}

func runSweep(c *cli.Context, o *sweepOptions) error {
	if c.NArg() != 1 {
		return base.UsageError("want one STORE argument, got %d", c.NArg())
	}
	if o.out == "" {
		return base.UsageError("-o DIR is required (the steps' run directories and sweep.json go there)")
	}
	if o.goodput == "" {
		return base.UsageError("--goodput is required: the SLOs a step must meet")
	}
	goodput, err := parseGoodput(o.goodput)
	if err != nil {
		return base.UsageError("--goodput: %v", err)
	}
	s := &sweep.Search{By: o.by, MinGood: o.minGood / 100, Tolerance: o.tolerance / 100, MaxSteps: o.maxSteps, MaxConcurrency: o.maxConcurrency}
	if err := s.Check(); err != nil {
		return base.UsageError("--%v", err)
	}
	if c.IsSet("arrival") && o.by != sweep.ByRate {
		return base.UsageError("--arrival: only --by rate has arrivals")
	}
	if o.stepRequests < 1 {
		return base.UsageError("--step-requests %d: want at least 1", o.stepRequests)
	}
	if o.warmup < 0 {
		return base.UsageError("--warmup %d: must not be negative", o.warmup)
	}
	r := &sweepRun{c: c, o: o, storePath: c.Args().First()}
	if r.duration, err = duration("--step-duration", o.stepDuration); err != nil {
		return err
	}
	if c.IsSet("step-duration") && r.duration == 0 {
		return base.UsageError("--step-duration %s: want a duration above 0", o.stepDuration)
	}
	if r.lateness, err = duration("--max-lateness", o.maxLateness); err != nil {
		return err
	}
	if r.base, err = o.replayOptions(c); err != nil {
		return err
	}
	st, err := store.Open(r.storePath, store.DefaultOpenOptions())
	if err != nil {
		return err
	}
	defer st.Close()
	r.st = st
	if st.Len() == 0 {
		return base.UsageError("%s: the store has no records", r.storePath)
	}
	r.sessionsPerRequest = float64(st.NumSessions()) / float64(st.Len())

	if err := os.MkdirAll(o.out, 0o777); err != nil {
		return err
	}
	statePath := filepath.Join(o.out, sweepFile)
	if o.page != "" { // after DIR is made: the page may go in it
		if err := checkHTML(o.page, r.storePath, statePath); err != nil {
			return err
		}
	}
	settings := o.settings(st, r.storePath, goodput)
	prior, err := sweep.LoadState(statePath)
	if err != nil {
		return &base.Error{Code: base.ExitTrouble, Err: err}
	}
	state := &sweep.State{Settings: settings}
	if prior != nil {
		if diff := sweep.DiffSettings(prior.Settings, settings); len(diff) > 0 {
			var parts []string
			for _, k := range diff {
				parts = append(parts, fmt.Sprintf("%s (%q there, %q now)", k, prior.Settings[k], settings[k]))
			}
			return base.UsageError("%s holds a sweep with other settings: %s; use another -o, or the same settings to resume it",
				statePath, strings.Join(parts, ", "))
		}
		s.Prior = prior.Steps
	}
	w := c.App.ErrWriter
	if !o.quiet {
		n := o.warmup + o.stepRequests
		switch {
		case r.duration > 0:
			fmt.Fprintf(w, "aiperf-replay sweep: each step runs %v after %d warmup requests; the store (%d requests) is replayed from its first session, going around it when it runs out\n",
				r.duration, o.warmup, st.Len())
		case n > int64(st.Len()):
			fmt.Fprintf(w, "aiperf-replay sweep: each step sends %d requests (%d warmup) and the store holds %d: steps go around the store, from its first session\n",
				n, o.warmup, st.Len())
		}
	}
	r.mo = metrics.Options{Streaming: true, Goodput: goodput}
	s.OnStep = func(stp sweep.Step, reused bool) error {
		state.Steps = append(state.Steps, stp)
		state.ElapsedSec += stp.ElapsedSec
		if !o.quiet {
			how := ""
			if reused {
				how = " (reused)"
			}
			fmt.Fprintf(w, "aiperf-replay sweep: step %d, %s at %s: %d requests, %.1f%% good, %.2f requests/s: %s%s\n",
				stp.N, stp.Kind, loadText(stp.By, stp.Load), stp.Requests, 100*stp.GoodFraction, stp.Throughput, verdictText(stp), how)
		}
		return state.Save(statePath)
	}
	steps, ans, err := s.Run(c.Context, sweep.RunnerFunc(r.step))
	if err != nil {
		return err
	}
	state.Steps, state.Answer = steps, &ans
	if err := state.Save(statePath); err != nil {
		return err
	}
	if o.page != "" {
		if err := writeSweepHTML(o.page, statePath, state); err != nil {
			return err
		}
	}
	if err := writeSweepTable(c.App.Writer, steps, ans, state.ElapsedSec); err != nil {
		return err
	}
	if !ans.Found {
		return base.No("no load meets the SLOs: %s", ans.Note)
	}
	return nil
}

// writeSweepHTML writes the sweep's page atomically.
func writeSweepHTML(path, statePath string, state *sweep.State) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := htmlreport.WriteSweep(f, htmlreport.SweepPage{Source: statePath, State: state}); err != nil {
		return fmt.Errorf("%s: %w", path, f.Named(err))
	}
	return f.Commit()
}

// settings are the sweep's settings that decide what a step measures.
// --tolerance and --max-steps are left out: they decide only where the
// search stops, and the steps before are the same, so a sweep may be
// continued with more steps or a tighter tolerance.
func (o *sweepOptions) settings(st *store.Reader, storePath string, g metrics.Goodput) map[string]string {
	sum := st.Sum()
	m := map[string]string{
		"store_sha256":    hex.EncodeToString(sum[:]),
		"url":             o.url,
		"endpoint":        o.endpoint,
		"path":            o.path,
		"header_names":    strings.Join(headerNames(o.headers.Value()), ","),
		"goodput":         g.String(),
		"min_good":        strconv.FormatFloat(o.minGood, 'g', -1, 64),
		"by":              o.by,
		"max_concurrency": strconv.Itoa(o.maxConcurrency),
		"step_requests":   strconv.FormatInt(o.stepRequests, 10),
		"step_duration":   o.stepDuration,
		"warmup":          strconv.FormatInt(o.warmup, 10),
		"max_lateness":    o.maxLateness,
		"timeout":         o.timeout,
		"history":         o.history,
		"seed":            strconv.FormatUint(o.seed, 10),
	}
	if o.by == sweep.ByRate {
		m["arrival"] = o.arrival
	}
	o.conn.sweepSettings(m)
	return m
}

// step runs one step of the search as a replay into DIR/step-NN.
func (r *sweepRun) step(ctx context.Context, p sweep.Probe) (sweep.Step, error) {
	o := r.o
	ro := r.base
	ro.Arrival, ro.Smoothness, ro.Rate = "", 0, 0
	ro.RequestCount, ro.Warmup, ro.Duration = o.stepRequests, o.warmup, r.duration
	switch {
	case p.By == sweep.ByRate:
		ro.Schedule, ro.Rate, ro.Arrival = replay.ScheduleRate, p.Load, o.arrival
		ro.Concurrency = o.maxConcurrency
	default:
		ro.Schedule, ro.Concurrency = replay.ScheduleConcurrency, int(p.Load)
	}
	if p.Kind == sweep.KindSynchronous {
		// short: a fifth of a step, at least 20 requests (or a second),
		// so that one slow request does not fail it at 95 % good
		ro.RequestCount = max(o.stepRequests/5, min(o.stepRequests, 20))
		ro.Warmup = min(o.warmup, 2)
		if r.duration > 0 {
			ro.Duration = max(r.duration/5, min(r.duration, time.Second))
		}
	}
	switch {
	case p.Kind == sweep.KindThroughput && o.by == sweep.ByRate:
		// Only its completion rate is used (steadyRate), which the
		// warmup's replies would not change.
		ro.Warmup = 0
	case ro.Schedule == replay.ScheduleConcurrency:
		// A closed loop's first C sends are all due at its start: a client
		// gets them out in a burst, late by the burst's length, which
		// says nothing about keeping C in flight afterwards. They go in
		// the warmup, which is not judged.
		ro.Warmup = max(ro.Warmup, int64(ro.Concurrency))
	}
	if ro.Duration > 0 {
		ro.RequestCount = 0
	}
	dir := filepath.Join(o.out, fmt.Sprintf("step-%02d", p.N))
	plan, err := replay.NewPlan(r.st, ro)
	if err != nil {
		return sweep.Step{}, planError(err)
	}
	f, recPath, err := createOutputs(dir, r.storePath)
	if err != nil {
		return sweep.Step{}, err
	}
	defer f.Abort()
	plan.Options.Records = f
	plan.Options.Cut = base.SecondSignal(r.c.Context)
	plan.Options.StoreName = r.storePath
	var ends []int64
	plan.Options.Observe = func(rec *result.Record) {
		if rec.Phase != result.PhaseWarmup && rec.OK() {
			ends = append(ends, rec.EndNS)
		}
	}
	ropts := o.options
	ropts.schedule, ropts.concurrency, ropts.rate = plan.Schedule, plan.Options.Concurrency, plan.Options.Rate
	ropts.arrival, ropts.requestCount, ropts.warmup, ropts.duration = plan.Options.Arrival, plan.Options.RequestCount, plan.Options.Warmup, ""
	if ro.Duration > 0 {
		ropts.duration = ro.Duration.String()
	}
	plan.Options.Config = ropts.inputConfig(r.storePath, plan.Schedule)

	stats, err := plan.Run(ctx)
	if stats == nil {
		return sweep.Step{}, base.UsageError("%v", err)
	}
	if err != nil {
		return sweep.Step{}, err
	}
	if stats.Interrupted {
		return sweep.Step{}, ctx.Err()
	}
	if err := f.Commit(); err != nil {
		return sweep.Step{}, err
	}
	mo := r.mo
	mo.Streaming = stats.StreamingMetrics(plan.Streaming)
	files := []string{recPath}
	sum, err := summarize(files, mo)
	if err != nil {
		if !mo.Streaming {
			return sweep.Step{}, base.UsageError("--goodput: %v (the answers were not streamed)", err)
		}
		return sweep.Step{}, err
	}
	run := metrics.Run{BenchmarkID: stats.RunID, Version: "aiperf-replay " + base.Version, InputConfig: plan.Options.Config}
	if err := writeOutputs(dir, sum, mo, run, files); err != nil {
		return sweep.Step{}, err
	}
	stp := stepOf(sum, stats, r.sessionsPerRequest)
	if rate := steadyRate(ends); rate > 0 {
		stp.SessionRate = rate * r.sessionsPerRequest
	}
	stp.Dir = filepath.Base(dir)
	stp.Unoffered = r.unoffered(p, sum, stats)
	return stp, nil
}

// steadyRate is the completion rate in the middle of a step: the
// completions after the first tenth's last one, up to the last tenth's
// first, over that span. The ramp-up (a closed loop's first replies all
// come one service time in) and the drain (the last ones trickle out) are
// left out, so a saturated server's rate reads as its capacity whatever the
// step's length. 0 with fewer than 10 completions.
func steadyRate(ends []int64) float64 {
	n := len(ends)
	if n < 10 {
		return 0
	}
	slices.Sort(ends)
	tLo, tHi := ends[n/10], ends[n-1-n/10]
	if tHi <= tLo {
		return 0
	}
	// completions in (tLo, tHi]: ties at either end counted once, on the
	// same side, so that replies that end together do not bias the rate
	after := func(t int64) int { i, _ := slices.BinarySearch(ends, t+1); return i }
	return float64(after(tHi)-after(tLo)) / (float64(tHi-tLo) / 1e9)
}

// unoffered says why the client did not offer the step's load, or "": its
// own send lateness p99 (ceiling waits left out) above --max-lateness, or
// on the rate axis the --max-concurrency ceiling delaying starts. The rate
// axis's throughput probe is not judged: only its completion rate is used,
// and a closed loop that starts --max-concurrency sessions at once is late
// in its first burst on any client.
func (r *sweepRun) unoffered(p sweep.Probe, sum *metrics.Summary, stats *replay.Stats) string {
	if p.Kind == sweep.KindThroughput && r.o.by == sweep.ByRate {
		return ""
	}
	var why []string
	if p.By == sweep.ByRate && stats.CeilingWaits > 0 {
		why = append(why, fmt.Sprintf("the --max-concurrency ceiling (%d) delayed %d session starts, the longest by %v",
			r.o.maxConcurrency, stats.CeilingWaits, stats.CeilingMaxWait.Round(time.Microsecond)))
	}
	if l := sum.Lateness; l.Count > 0 && l.P99NS > float64(r.lateness) {
		why = append(why, fmt.Sprintf("send lateness p99 %.2f ms above --max-lateness %v", l.P99NS/1e6, r.lateness))
	}
	return strings.Join(why, "; ")
}

// stepOf reads a step's measurements from its summary.
func stepOf(sum *metrics.Summary, stats *replay.Stats, sessionsPerRequest float64) sweep.Step {
	n := sum.Requests + sum.ErrorRequests
	s := sweep.Step{Requests: n, Errors: sum.ErrorRequests, Good: sum.Good, ElapsedSec: stats.Elapsed.Seconds()}
	if sum.Goodput == nil {
		s.Good = 0
	}
	if n > 0 {
		s.GoodFraction = float64(s.Good) / float64(n)
	}
	if m := sum.Get("request_throughput"); m != nil {
		s.Throughput = m.Avg
	} else if span := sum.EndNS - sum.StartNS; span > 0 {
		s.Throughput = float64(sum.Requests) / (float64(span) / 1e9)
	}
	s.SessionRate = s.Throughput * sessionsPerRequest
	pct := func(tag string) sweep.Pctl {
		m := sum.Get(tag)
		if m == nil {
			return sweep.Pctl{}
		}
		p50, _ := m.Percentile(50)
		p99, _ := m.Percentile(99)
		return sweep.Pctl{P50: p50, P99: p99}
	}
	s.TTFT, s.ITL, s.Latency = pct("time_to_first_token"), pct("inter_token_latency"), pct("request_latency")
	s.LatenessP99 = sum.Lateness.P99NS / 1e6
	return s
}

func loadText(by string, load float64) string {
	if by == sweep.ByConcurrency {
		return plural(int(load), "session") + " in flight"
	}
	return strconv.FormatFloat(load, 'g', 4, 64) + " sessions/s"
}

func verdictText(s sweep.Step) string {
	if s.Unoffered != "" {
		return "not offered (" + s.Unoffered + ")"
	}
	return s.Verdict
}

// writeSweepTable prints the steps and the answer.
func writeSweepTable(w io.Writer, steps []sweep.Step, ans sweep.Answer, elapsed float64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%4s  %-11s  %-11s  %8s  %9s  %9s  %6s  %17s  %8s  %11s  %s\n",
		"step", "kind", "by", "load", "req/s", "steady", "good", "ttft p50/p99 ms", "itl p99", "latency p99", "verdict")
	f := func(x float64) string {
		if math.IsNaN(x) {
			return "-"
		}
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	for _, s := range steps {
		fmt.Fprintf(&b, "%4d  %-11s  %-11s  %8s  %9s  %9s  %5.1f%%  %17s  %8s  %11s  %s\n",
			s.N, s.Kind, s.By, strconv.FormatFloat(s.Load, 'g', 5, 64), f(s.Throughput), f(s.SessionRate), 100*s.GoodFraction,
			f(s.TTFT.P50)+" / "+f(s.TTFT.P99), f(s.ITL.P99), f(s.Latency.P99), s.Verdict)
	}
	b.WriteString("(load: sessions/s for rate, sessions in flight for concurrency; req/s: achieved requests/s; steady: sessions/s\n" +
		" completed in the middle 80% of the step, the throughput probe's bounds the rate axis; times in ms)\n")
	if ans.Found {
		unit := "sessions/s"
		if ans.By == sweep.ByConcurrency {
			unit = "sessions in flight"
		}
		hi := "-"
		if ans.Hi > 0 {
			hi = strconv.FormatFloat(ans.Hi, 'g', 5, 64)
		}
		fmt.Fprintf(&b, "answer: %s %s (bracket [%s, %s], limited by %s, %s) after %d steps, %.1f s of runs\n",
			strconv.FormatFloat(ans.Load, 'g', 5, 64), unit, strconv.FormatFloat(ans.Lo, 'g', 5, 64), hi, ans.Limit,
			map[bool]string{true: "converged", false: "not converged"}[ans.Converged], ans.Steps, elapsed)
	} else {
		fmt.Fprintf(&b, "answer: none (%s) after %d steps\n", ans.Note, ans.Steps)
	}
	if ans.Found && ans.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", ans.Note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
