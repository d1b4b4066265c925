// Package replaycmd is the aiperf-replay command: replay a store against an
// OpenAI-compatible endpoint, write per-request records and report the
// metrics.
package replaycmd

import (
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/urfave/cli/v2"
)

type options struct {
	url, endpoint, path    string
	headers                cli.StringSlice
	apiKeyEnv              string
	insecure               bool
	schedule               string
	concurrency            int
	rate                   float64
	arrival                string
	smoothness             float64
	speedup                float64
	startOffset, endOffset string
	requestCount, warmup   int64
	duration, grace        string
	cancelRate             float64
	cancelAfter, timeout   string
	maxResponse            string
	history                string
	seed                   uint64
	shard, startAt         string
	perShard               bool
	tokenizer              string
	out                    string
	maxErrorRate           float64
	goodput                string
	quiet                  bool
	sliceDuration          string
	slice                  time.Duration // --slice-duration parsed
	stopOnSaturation       bool
	saturationWindow       string
	satWindow              time.Duration // --saturation-window parsed
	sm                     smOptions
	kvCapacity             int // prefix.go
	html                   string
	trials                 int         // --trials (trials.go)
	trialPause             string      // --trial-pause
	confidence             float64     // --confidence-level
	conn                   connOptions // conn.go
}

// New returns the aiperf-replay application.
func New() *cli.App {
	var o options
	return &cli.App{
		Name:      "aiperf-replay",
		Usage:     "replay a store against an OpenAI-compatible server and report latency metrics",
		ArgsUsage: "STORE",
		Description: "Sends every body of STORE verbatim, straight from its mapping, on the schedule chosen:\n" +
			"  auto         rate when --rate is given; else fixed when the store has timestamps (--concurrency N\n" +
			"               alone is then a ceiling of N sessions in flight, not a schedule); else concurrency\n" +
			"  fixed        first turns at their trace timestamps (relative to the first) divided by --speedup\n" +
			"  concurrency  --concurrency sessions in flight; each next one starts when a slot frees\n" +
			"  rate         sessions start at --rate per second (--arrival poisson|constant|gamma)\n" +
			"Later turns of a session go once the previous turn is complete, plus the turn's delay. The schedule is\n" +
			"open loop: a slow answer never delays a fixed or rate send; each record says how late its send was.\n" +
			"The schedule resolved, and what bounds it, is printed before the first send (unless -q).\n\n" +
			"Writes DIR/results.jsonl (one line per request sent), DIR/profile_export_aiperf.json and .csv,\n" +
			"DIR/profile_export.jsonl (the Python aiperf's shapes) and the summary table on stderr. On a terminal a\n" +
			"live line shows progress. SIGINT stops sending, lets requests in flight finish within --grace, writes\n" +
			"everything and exits 130; a second SIGINT cuts them at once and still writes everything, a third\n" +
			"exits at once. --max-error-rate turns a failed run into exit 1.\n\n" +
			"The API key is read from the environment variable --api-key-env names, never from a flag, and is\n" +
			"written nowhere.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "url", Usage: "server base `URL` (http://host:port; host:port means http); the path is appended (once: a URL ending in /v1 takes /chat/completions)", Destination: &o.url},
			&cli.StringFlag{Name: "endpoint", Usage: "`TYPE` chat, completions, embeddings, responses, messages, raw or template (default: the store's; a store of another endpoint's bodies is refused; messages sends the API key as x-api-key, with anthropic-version)", Destination: &o.endpoint},
			&cli.StringFlag{Name: "path", Usage: "request `PATH` (overrides --endpoint and the store's)", Destination: &o.path},
			&cli.StringSliceFlag{Name: "H", Aliases: []string{"header"}, Usage: "extra request header `K:V`; repeatable", Destination: &o.headers},
			&cli.StringFlag{Name: "api-key-env", Usage: "send Authorization: Bearer $`VAR`", Destination: &o.apiKeyEnv},
			&cli.BoolFlag{Name: "insecure", Usage: "https: do not verify the server's certificate", Destination: &o.insecure},
			&cli.StringFlag{Name: "schedule", Value: replay.ScheduleAuto, Usage: "`MODE`: auto, fixed, concurrency or rate", Destination: &o.schedule},
			&cli.IntFlag{Name: "concurrency", Usage: "sessions in flight (concurrency; a ceiling for fixed and rate, which auto picks unless --schedule concurrency)", Destination: &o.concurrency},
			&cli.Float64Flag{Name: "rate", Usage: "session starts per second (rate; alone it selects the rate schedule)", Destination: &o.rate},
			&cli.StringFlag{Name: "arrival", Value: replay.ArrivalPoisson, Usage: "rate: arrival `PROCESS` poisson, constant or gamma", Destination: &o.arrival},
			&cli.Float64Flag{Name: "smoothness", Value: 1, Usage: "gamma arrivals: shape (1 = poisson, <1 burstier, >1 smoother); alone it selects gamma", Destination: &o.smoothness},
			&cli.Float64Flag{Name: "speedup", Value: 1, Usage: "divide trace times (timestamps and delays) by `X`", Destination: &o.speedup},
			&cli.StringFlag{Name: "start-offset", Usage: "fixed: keep sessions starting at trace time `MS` or later; it becomes the zero", Destination: &o.startOffset},
			&cli.StringFlag{Name: "end-offset", Usage: "fixed: keep sessions starting at trace time `MS` or earlier", Destination: &o.endOffset},
			&cli.Int64Flag{Name: "request-count", Usage: "stop after `N` profiling requests (default: every record once)", Destination: &o.requestCount},
			&cli.Int64Flag{Name: "warmup", Usage: "send `N` warmup requests first, excluded from the metrics", Destination: &o.warmup},
			&cli.StringFlag{Name: "duration", Usage: "stop sending after `D` (1m, 30s)", Destination: &o.duration},
			&cli.StringFlag{Name: "grace", Value: "30s", Usage: "after sending stops, wait up to `D` for requests in flight, then cut them", Destination: &o.grace},
			&cli.Float64Flag{Name: "cancel-rate", Usage: "cancel `PCT` percent of requests on purpose", Destination: &o.cancelRate},
			&cli.StringFlag{Name: "cancel-after", Value: "0", Usage: "cut a cancelled request `D` after it is fully written", Destination: &o.cancelAfter},
			&cli.StringFlag{Name: "timeout", Usage: "per-request timeout `D` (default none)", Destination: &o.timeout},
			&cli.StringFlag{Name: "max-response", Value: "64MiB", Usage: "fail a response that would hold more than `SIZE` in memory: a whole body, or a stream's text and chunk times (8 bytes a chunk)", Destination: &o.maxResponse},
			&cli.StringFlag{Name: "history", Value: replay.HistoryAuto, Usage: "multi-turn: splice earlier turns and the server's replies into each body: `auto`, on, off", Destination: &o.history},
			&cli.Uint64Flag{Name: "seed", Usage: "seed of the arrival process and of the cancelled requests", Destination: &o.seed},
			&cli.StringFlag{Name: "shard", Usage: "replay sessions i, i+N, ... of the store as shard `i/N` of a replay N machines run together (the rule of aiperf-tokenize --shard); rate, concurrency and counts are divided among the shards", Destination: &o.shard},
			&cli.BoolFlag{Name: "per-shard", Usage: "with --shard: --rate, --concurrency, --request-count and --warmup are this shard's, not the whole replay's", Destination: &o.perShard},
			&cli.StringFlag{Name: "start-at", Usage: "start the schedule at `TIME` (RFC 3339, e.g. 2026-12-02T10:00:00.000Z, or +30s from now), the same for every shard; a time past by more than 1 s is refused", Destination: &o.startAt},
			&cli.StringFlag{Name: "tokenizer", Value: "builtin", Usage: "count output tokens of answers without usage with `builtin`, none or a tokenizer.json", Destination: &o.tokenizer},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Value: "artifacts", Usage: "output `DIR`", Destination: &o.out},
			&cli.Float64Flag{Name: "max-error-rate", Value: -1, Usage: "exit 1 when more than `PCT` percent of the profiling requests failed", Destination: &o.maxErrorRate},
			&cli.StringFlag{Name: "goodput", Usage: "SLOs `\"METRIC:VALUE ...\"` in display units, e.g. \"time_to_first_token:100 inter_token_latency:3.4\"", Destination: &o.goodput},
			&cli.BoolFlag{Name: "q", Aliases: []string{"quiet"}, Usage: "no summary table and no live line", Destination: &o.quiet},
			sliceDurationFlag(&o.sliceDuration),
			&cli.BoolFlag{Name: "stop-on-saturation", Usage: "stop sending once the server is saturated (over --saturation-window it completes 10% fewer requests than were sent while the backlog grows steadily, or more than 10% of completions fail); the run is written and exits 1", Destination: &o.stopOnSaturation},
			&cli.StringFlag{Name: "saturation-window", Value: "30s", Usage: "--stop-on-saturation judges the last `D` of the run (never before D has passed)", Destination: &o.saturationWindow},
			kvCapacityFlag(&o.kvCapacity),
			&cli.StringFlag{Name: "html", Usage: "also write the report as one self-contained HTML page to `FILE`", Destination: &o.html},
			&cli.IntFlag{Name: "trials", Usage: "run the schedule `N` times into DIR/trial-1 ... DIR/trial-N and summarize the run-level figures across them (mean, confidence interval) in DIR/trials.json", Destination: &o.trials},
			&cli.StringFlag{Name: "trial-pause", Usage: "with --trials: wait `D` between trials", Destination: &o.trialPause},
			&cli.Float64Flag{Name: "confidence-level", Value: 0.95, Usage: "with --trials: the confidence `LEVEL` of the intervals (0 < LEVEL < 1)", Destination: &o.confidence},
		}, append(serverMetricsFlags(&o.sm), connFlags(&o.conn)...)...),
		Action: func(c *cli.Context) error {
			return runReplay(c, &o)
		},
		Commands: []*cli.Command{reportCommand(), sweepWithReport(), compareCommand(), scrapeAgentCommand()},
	}
}

func runReplay(c *cli.Context, o *options) error {
	if c.NArg() != 1 {
		return base.UsageError("want one STORE argument, got %d", c.NArg())
	}
	maxErr := -1.0
	if o.maxErrorRate != -1 {
		v, err := percent("--max-error-rate", o.maxErrorRate)
		if err != nil {
			return err
		}
		maxErr = v
	}
	if o.kvCapacity < 0 {
		return base.UsageError("--kv-capacity-blocks %d: want a number of blocks", o.kvCapacity)
	}
	goodput, err := parseGoodput(o.goodput)
	if err != nil {
		return base.UsageError("--goodput: %v", err)
	}
	if o.slice, err = parseSliceDuration(c, o.sliceDuration); err != nil {
		return err
	}
	if o.satWindow, err = o.saturationOptions(c); err != nil {
		return err
	}
	ro, err := o.replayOptions(c)
	if err != nil {
		return err
	}
	storePath := c.Args().First()
	if o.html != "" {
		if err := checkHTML(o.html, storePath); err != nil {
			return err
		}
	}
	st, err := store.Open(storePath, store.DefaultOpenOptions())
	if err != nil {
		return err
	}
	defer st.Close()
	if c.IsSet("trials") {
		return runTrials(c, o, st, ro, storePath, goodput, maxErr)
	}
	return runOnce(c, o, st, ro, storePath, goodput, maxErr)
}
