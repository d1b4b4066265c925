package replaycmd

import (
	"errors"

	"github.com/aiperf/toolkit/lib/replay"
	"github.com/urfave/cli/v2"
)

// flags are aiperf-replay's flags, in the order --help lists them.
func (o *options) flags() []cli.Flag {
	var fs []cli.Flag
	for _, g := range [][]cli.Flag{o.targetFlags(), o.scheduleFlags(), o.outputFlags(), o.steady.flags(), serverMetricsFlags(&o.sm), connFlags(&o.conn)} {
		fs = append(fs, g...)
	}
	return fs
}

// targetFlags are where requests go and what they carry.
func (o *options) targetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "url", Usage: "server base `URL` (http://host:port; host:port means http; unix:///PATH a unix socket; HTTP(S)_PROXY/NO_PROXY apply); the path is appended (once: a URL ending in /v1 takes /chat/completions)", Destination: &o.url},
		&cli.StringFlag{Name: "endpoint", Usage: "`TYPE` chat, completions, embeddings, responses, messages, raw or template (default: the store's; a store of another endpoint's bodies is refused; messages sends the API key as x-api-key, with anthropic-version)", Destination: &o.endpoint},
		&cli.StringFlag{Name: "path", Usage: "request `PATH` (overrides --endpoint and the store's)", Destination: &o.path},
		&cli.StringSliceFlag{Name: "H", Aliases: []string{"header"}, Usage: "extra request header `K:V`; repeatable", Destination: &o.headers},
		&cli.StringFlag{Name: "api-key-env", Usage: "send Authorization: Bearer $`VAR`", Destination: &o.apiKeyEnv},
		&cli.BoolFlag{Name: "insecure", Usage: "https: do not verify the server's certificate", Destination: &o.insecure},
	}
}

// scheduleFlags are when requests go, how many, and which of the store.
func (o *options) scheduleFlags() []cli.Flag {
	return []cli.Flag{
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
	}
}

// outputFlags are what a run writes and prints, and how it is judged.
func (o *options) outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tokenizer", Value: "builtin", Usage: "count output tokens of answers without usage with `builtin`, none or a tokenizer.json", Destination: &o.tokenizer},
		&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Value: "artifacts", Usage: "output `DIR` (one that holds an earlier run's results is refused without --force; one another run is writing into is refused)", Destination: &o.out},
		&cli.BoolFlag{Name: "force", Usage: "replace the results of an earlier run in -o DIR", Destination: &o.force},
		&cli.Float64Flag{Name: "max-error-rate", Value: -1, Usage: "exit 1 when more than `PCT` percent of the profiling requests failed (default 10, the client's own cancellations left out; 100: never)", Destination: &o.maxErrorRate},
		goodputFlag(&o.goodput, "SLOs `\"METRIC:VALUE ...\"` in display units, e.g. \"time_to_first_token:100 inter_token_latency:3.4\""),
		&cli.BoolFlag{Name: "q", Aliases: []string{"quiet"}, Usage: "no summary table and no live line", Destination: &o.quiet},
		sliceDurationFlag(&o.sliceDuration),
		&cli.BoolFlag{Name: "stop-on-saturation", Usage: "stop sending once the server is saturated (over --saturation-window it completes 10% fewer requests than were sent while the backlog grows steadily, or more than 10% of completions fail); the run is written and exits 1", Destination: &o.stopOnSaturation},
		&cli.StringFlag{Name: "saturation-window", Value: "30s", Usage: "--stop-on-saturation judges the last `D` of the run (never before D has passed)", Destination: &o.saturationWindow},
		kvCapacityFlag(&o.kvCapacity),
		&cli.StringFlag{Name: "html", Usage: "also write the report as one self-contained HTML page to `FILE`", Destination: &o.html},
		&cli.IntFlag{Name: "trials", Usage: "run the schedule `N` times into DIR/trial-1 ... DIR/trial-N and summarize the run-level figures across them (mean, confidence interval) in DIR/trials.json; --html writes one page of the trials", Destination: &o.trials},
		&cli.StringFlag{Name: "trial-pause", Usage: "with --trials: wait `D` between trials", Destination: &o.trialPause},
		&cli.Float64Flag{Name: "confidence-level", Value: 0.95, Usage: "with --trials: the confidence `LEVEL` of the intervals (0 < LEVEL < 1)", Destination: &o.confidence},
	}
}

// onceFlag is a string flag that may be given once: --goodput given twice
// took the last value without a word (the SLOs of one --goodput are
// checked for a metric given twice; two flags were not).
type onceFlag struct {
	dst *string
	set bool
}

func (f *onceFlag) Set(v string) error {
	if f.set {
		return errors.New("given twice: give every SLO in one --goodput \"METRIC:VALUE METRIC:VALUE\"")
	}
	f.set, *f.dst = true, v
	return nil
}

func (f *onceFlag) String() string {
	if f == nil || f.dst == nil {
		return ""
	}
	return *f.dst
}

// goodputFlag is --goodput, given at most once, into dst.
func goodputFlag(dst *string, usage string) cli.Flag {
	return &cli.GenericFlag{Name: "goodput", Usage: usage, Value: &onceFlag{dst: dst}}
}
