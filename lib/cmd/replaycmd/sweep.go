package replaycmd

import (
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/aiperf/toolkit/lib/sweep"
	"github.com/urfave/cli/v2"
)

type sweepOptions struct {
	options        // the replay flags the sweep shares (url, endpoint, headers, ...)
	by             string
	minGood        float64
	tolerance      float64
	maxSteps       int
	maxConcurrency int
	stepRequests   int64
	stepDuration   string
	minStep        string // --min-step-duration
	maxLateness    string
	maxStepTime    string
	page           string // --html
}

// sweepDescription is sweep's --help text.
const sweepDescription = "Runs steps of replay (in-process, each a normal run directory DIR/step-NN/) and searches for the\n" +
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
	"synchronous probe sends a fifth of that (at least 20). A search step on the rate axis sends for at\n" +
	"least --min-step-duration (10 s): above the server's capacity a queue grows with time, not with\n" +
	"requests, and a step that ends before it has built passes a rate the server cannot sustain (a mock\n" +
	"of 66.7 requests/s at most passed 65.7/s in 40-request steps, and served 44% of a 30 s run at that\n" +
	"rate within the SLO). A closed-loop step of C sessions warms up\n" +
	"with at least C requests (its first C sends, all due at once, go out in a burst). A step the client\n" +
	"could not offer (its own send lateness p99 above --max-lateness, or on the rate axis the\n" +
	"--max-concurrency ceiling delaying starts) is marked \"not offered\" and never counts as a pass. The throughput probe's rate is the completion rate\n" +
	"in the middle 80% of its replies (ramp-up and drain left out). A rate step whose server completed more than 10% fewer sessions/s\n" +
	"than were sent (both in the middle 80% of the step) was not sustained: a fail, so the answer is a load the server sustained.\n" +
	"A step the client could not offer at a quarter of the range's top or less ends the sweep: the client machine is busy (exit 1).\n" +
	"A step stops sending after --max-step-time; after the probes the sweep prints an estimate of the steps and time left.\n\n" +
	"Writes DIR/sweep.json (the settings, every step with its load, achieved throughput, good fraction,\n" +
	"TTFT/ITL/latency p50 and p99 and verdict, and the answer with its bracket) after every step, and the\n" +
	"table of steps and the answer on stdout. Rerun with the same DIR and settings, it reuses the finished\n" +
	"steps (an interrupted sweep resumes; a larger --max-steps or smaller --tolerance continues one);\n" +
	"other settings are refused (exit 2, naming them). Exit 0 with an answer, 1 when no load meets the SLOs."

func sweepCommand() *cli.Command {
	var o sweepOptions
	return &cli.Command{
		Name:        "sweep",
		Usage:       "find the highest offered load at which the server meets the SLOs (--goodput)",
		ArgsUsage:   "STORE",
		Description: sweepDescription,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "url", Usage: "server base `URL`", Destination: &o.url},
			goodputFlag(&o.goodput, "SLOs `\"METRIC:VALUE ...\"` in display units (required), e.g. \"time_to_first_token:100\""),
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "output `DIR` (required): sweep.json and step-NN/", Destination: &o.out},
			&cli.StringFlag{Name: "by", Value: sweep.ByRate, Usage: "load axis: `rate` (sessions/s) or concurrency", Destination: &o.by},
			&cli.StringFlag{Name: "arrival", Value: replay.ArrivalPoisson, Usage: "--by rate: arrival `PROCESS` poisson, constant or gamma", Destination: &o.arrival},
			&cli.Float64Flag{Name: "min-good", Value: 95, Usage: "a step passes when at least `PCT` percent of its requests meet every SLO", Destination: &o.minGood},
			&cli.Float64Flag{Name: "tolerance", Value: 5, Usage: "stop when the bracket's width is within `PCT` percent of its low end", Destination: &o.tolerance},
			&cli.IntFlag{Name: "max-steps", Value: 12, Usage: "run at most `N` steps, the two probes included", Destination: &o.maxSteps},
			&cli.IntFlag{Name: "max-concurrency", Value: 512, Usage: "the throughput probe's `N` sessions in flight, and the rate steps' ceiling", Destination: &o.maxConcurrency},
			&cli.Int64Flag{Name: "step-requests", Value: 200, Usage: "`N` profiling requests per step", Destination: &o.stepRequests},
			&cli.StringFlag{Name: "step-duration", Usage: "run each step for `D` instead of a request count", Destination: &o.stepDuration},
			&cli.StringFlag{Name: "min-step-duration", Value: "10s", Usage: "--by rate: a search step sends for at least `D` (rate × D × requests a session when that is more than --step-requests; 0: no floor)", Destination: &o.minStep},
			&cli.Int64Flag{Name: "warmup", Value: 10, Usage: "`N` warmup requests before each step's profiling ones", Destination: &o.warmup},
			&cli.StringFlag{Name: "max-step-time", Value: "5m", Usage: "a step stops sending after `D`, whatever its size (0: no cap)", Destination: &o.maxStepTime},
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
		}, append(sweepConnFlags(&o.conn), o.steady.flags()...)...),
		Action: func(c *cli.Context) error { return runSweep(c, &o) },
	}
}

// parseSweep checks the flags and decides what every step shares.
func parseSweep(c *cli.Context, o *sweepOptions) (*sweepRun, *sweep.Sweep, error) {
	switch {
	case c.NArg() != 1:
		return nil, nil, base.UsageError("want one STORE argument, got %d", c.NArg())
	case o.out == "":
		return nil, nil, base.UsageError("-o DIR is required (the steps' run directories and sweep.json go there)")
	case o.goodput == "":
		return nil, nil, base.UsageError("--goodput is required: the SLOs a step must meet")
	}
	goodput, err := parseGoodput(o.goodput)
	if err != nil {
		return nil, nil, base.UsageError("--goodput: %v", err)
	}
	sw := &sweep.Sweep{Search: sweep.Search{By: o.by, MinGood: o.minGood / 100, Tolerance: o.tolerance / 100, MaxSteps: o.maxSteps, MaxConcurrency: o.maxConcurrency},
		Dir: o.out, Requests: o.stepRequests, Warmup: o.warmup}
	switch err := sw.Check(); {
	case err != nil:
		return nil, nil, base.UsageError("--%v", err)
	case c.IsSet("arrival") && o.by != sweep.ByRate:
		return nil, nil, base.UsageError("--arrival: only --by rate has arrivals")
	case c.IsSet("min-step-duration") && o.by != sweep.ByRate:
		return nil, nil, base.UsageError("--min-step-duration: only --by rate steps have a floor (a concurrency step is its request count)")
	case c.IsSet("step-duration") && c.IsSet("step-requests"):
		return nil, nil, base.UsageError("--step-duration and --step-requests together: a step runs for one or the other")
	case o.stepRequests < 1:
		return nil, nil, base.UsageError("--step-requests %d: want at least 1", o.stepRequests)
	case o.warmup < 0:
		return nil, nil, base.UsageError("--warmup %d: must not be negative", o.warmup)
	}
	r := &sweepRun{c: c, o: o, storePath: c.Args().First(), mo: metrics.Options{Streaming: true, Goodput: goodput}}
	if sw.Duration, err = duration("--step-duration", o.stepDuration); err != nil {
		return nil, nil, err
	}
	if c.IsSet("step-duration") && sw.Duration == 0 {
		return nil, nil, base.UsageError("--step-duration %s: want a duration above 0", o.stepDuration)
	}
	if sw.MinDuration, err = duration("--min-step-duration", o.minStep); err != nil {
		return nil, nil, err
	}
	if sw.MaxLateness, err = duration("--max-lateness", o.maxLateness); err != nil {
		return nil, nil, err
	}
	if sw.MaxStepTime, err = duration("--max-step-time", o.maxStepTime); err != nil {
		return nil, nil, err
	}
	if err := o.steady.check(c); err != nil {
		return nil, nil, err
	}
	if r.base, err = o.replayOptions(c); err != nil {
		return nil, nil, err
	}
	return r, sw, nil
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
		"min_step":        o.minStep,
		"warmup":          strconv.FormatInt(o.warmup, 10),
		"max_lateness":    o.maxLateness,
		"max_step_time":   o.maxStepTime,
		"timeout":         o.timeout,
		"history":         o.history,
		"seed":            strconv.FormatUint(o.seed, 10),
	}
	if o.by == sweep.ByRate {
		m["arrival"] = o.arrival
	}
	o.conn.sweepSettings(m)
	if o.steady.on { // a step judged over its plateau (absent: over the whole step)
		m["steady_state"] = strconv.FormatFloat(o.steady.threshold, 'g', -1, 64)
	}
	return m
}
