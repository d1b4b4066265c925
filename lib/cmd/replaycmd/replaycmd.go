// Package replaycmd is the aiperf-replay command: replay a store against an
// OpenAI-compatible endpoint, write per-request records and report the
// metrics.
package replaycmd

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/units"
	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/aiperf/toolkit/lib/tokenizer"
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

// duration reads an optional duration flag ("" means unset).
func duration(name, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := parseMS(s)
	if err != nil {
		return 0, base.UsageError("%s: %v", name, err)
	}
	return d, nil
}

// parseMS reads a duration flag by the one rule of every binary (a Go
// duration or a number of milliseconds: lib/internal/units).
func parseMS(s string) (time.Duration, error) { return units.ParseMS(s) }

func percent(name string, v float64) (float64, error) {
	if v < 0 || v > 100 {
		return 0, base.UsageError("%s %v: want a percentage in [0, 100]", name, v)
	}
	return v / 100, nil
}

// replayOptions turns the flags into library options (all but the
// outputs). The library judges the options (replay.NewPlan); what is
// judged here needs the command line itself: a flag typed at a value the
// library reads as "unset" (zero), and the flags' own syntax.
func (o *options) replayOptions(c *cli.Context) (replay.Options, error) {
	ro := replay.Options{
		URL:          o.url,
		Endpoint:     o.endpoint,
		Path:         o.path,
		Insecure:     o.insecure,
		Schedule:     o.schedule,
		Concurrency:  o.concurrency,
		Rate:         o.rate,
		Speedup:      o.speedup,
		RequestCount: o.requestCount,
		Warmup:       o.warmup,
		History:      o.history,
		Seed:         o.seed,
		UserAgent:    "aiperf-replay/" + base.Version,
	}
	if o.url == "" {
		return ro, base.UsageError("--url is required")
	}
	// The library reads 0 as "the default"; typed on the command line it is
	// a mistake, not a request for 1.
	for _, z := range []struct {
		name string
		zero bool
		want string
	}{{"speedup", o.speedup == 0, "a number above 0"}, {"smoothness", o.smoothness == 0, "a number above 0"},
		{"concurrency", o.concurrency == 0, "at least 1 (leave it out for no ceiling)"}} {
		if c.IsSet(z.name) && z.zero {
			return ro, base.UsageError("--%s 0: want %s", z.name, z.want)
		}
	}
	// The arrival process and its smoothness are the library's to default
	// (and to refuse for a schedule without arrivals): given only when set.
	if c.IsSet("arrival") {
		ro.Arrival = o.arrival
	}
	if c.IsSet("smoothness") {
		ro.Smoothness = o.smoothness
	}
	if c.IsSet("cancel-after") && o.cancelRate == 0 {
		return ro, base.UsageError("--cancel-after: needs --cancel-rate (no request is cancelled without it)")
	}
	var err error
	for _, d := range []struct {
		name string
		s    string
		dst  *time.Duration
	}{{"--duration", o.duration, &ro.Duration}, {"--grace", o.grace, &ro.Grace}, {"--cancel-after", o.cancelAfter, &ro.CancelAfter},
		{"--timeout", o.timeout, &ro.Timeout}} {
		if d.s == "" {
			continue
		}
		if *d.dst, err = duration(d.name, d.s); err != nil {
			return ro, err
		}
	}
	if c.IsSet("duration") && ro.Duration == 0 {
		return ro, base.UsageError("--duration %s: want a duration above 0 (leave it out for no limit)", o.duration)
	}
	for _, d := range []struct {
		name string
		s    string
		dst  **time.Duration
	}{{"--start-offset", o.startOffset, &ro.StartOffset}, {"--end-offset", o.endOffset, &ro.EndOffset}} {
		if d.s == "" {
			continue
		}
		v, err := duration(d.name, d.s)
		if err != nil {
			return ro, err
		}
		*d.dst = &v
	}
	if o.shard != "" {
		if ro.Shard, ro.Shards, err = replay.ParseShard(o.shard); err != nil {
			return ro, base.UsageError("--shard %v", err)
		}
	}
	ro.PerShard = o.perShard
	if o.startAt != "" {
		if ro.StartAt, err = replay.ParseStartAt(o.startAt, time.Now()); err != nil {
			return ro, base.UsageError("--start-at %v", err)
		}
	}
	if ro.MaxResponse, err = parseSize(o.maxResponse); err != nil {
		return ro, base.UsageError("--max-response %q: %v", o.maxResponse, err)
	}
	if ro.CancelRate, err = percent("--cancel-rate", o.cancelRate); err != nil {
		return ro, err
	}
	for _, h := range o.headers.Value() {
		k, v, ok := cutHeader(h)
		if !ok {
			return ro, base.UsageError("-H %q: want NAME:VALUE", h)
		}
		ro.Headers = append(ro.Headers, replay.Header{Name: k, Value: v})
	}
	if o.apiKeyEnv != "" {
		key := os.Getenv(o.apiKeyEnv)
		if key == "" {
			return ro, base.UsageError("--api-key-env: the environment variable %s is empty or unset", o.apiKeyEnv)
		}
		if strings.ContainsAny(key, "\r\n\x00") {
			return ro, base.UsageError("--api-key-env: the value of %s holds a line break", o.apiKeyEnv)
		}
		ro.APIKey = key
	}
	switch o.tokenizer {
	case "none":
	case "", "builtin":
		ro.Tokenizer = tokenizer.Builtin
	default:
		// Loaded now: a path that does not load is a usage error, not a
		// silent lack of output counts found after the run.
		t, err := tokenizer.Load(o.tokenizer)
		if err != nil {
			return ro, base.UsageError("--tokenizer: %v", err)
		}
		ro.Tokenizer = func() (*tokenizer.Tokenizer, error) { return t, nil }
	}
	o.conn.apply(&ro)
	return ro, nil
}

// planError turns a refusal of the plan into a usage error, with the flag
// syntax in front of the option it names.
func planError(err error) error {
	var oe *replay.OptionError
	if errors.As(err, &oe) && oe.Option != "" {
		return base.UsageError("--%s", oe.Msg)
	}
	return base.UsageError("%v", err)
}

// cutHeader splits "Name: value".
func cutHeader(h string) (name, value string, ok bool) {
	k, v, ok := strings.Cut(h, ":")
	k = strings.TrimSpace(k)
	return k, strings.TrimSpace(v), ok && k != ""
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

func reportCommand() *cli.Command {
	var out, goodput, streaming, sliceDuration, htmlPath string
	var allowMissing, showTrace bool
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
			"--html FILE also writes the report as one self-contained HTML page (no script, nothing loaded from\n" +
			"elsewhere): the summary table, latencies over time with per-window p50/p99, their CDFs, output tokens/s,\n" +
			"requests in flight, send lateness and errors over time. Point clouds are binned to pixel cells, so a page\n" +
			"of a million requests stays small.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "allow-missing", Usage: "merge the shards given even when some of the replay's are missing (with a warning naming them)", Destination: &allowMissing},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "also write the export files into `DIR`", Destination: &out},
			&cli.StringFlag{Name: "goodput", Usage: "SLOs `\"METRIC:VALUE ...\"`", Destination: &goodput},
			&cli.StringFlag{Name: "streaming", Value: "auto", Usage: "streaming metrics (TTFT, ITL, ...): `auto` (from the records), true or false", Destination: &streaming},
			sliceDurationFlag(&sliceDuration),
			&cli.StringFlag{Name: "html", Usage: "also write the report as one self-contained HTML page to `FILE` (summary, latencies over time, CDFs, load, lateness, errors)", Destination: &htmlPath},
			showTraceTimingFlag(&showTrace),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return base.UsageError("want at least one records file")
			}
			slice, err := parseSliceDuration(c, sliceDuration)
			if err != nil {
				return err
			}
			if slice > 0 && out == "" {
				return base.UsageError("--slice-duration writes %s and .csv: it needs -o DIR", timeslicesJSONFile)
			}
			gp, err := parseGoodput(goodput)
			if err != nil {
				return base.UsageError("--goodput: %v", err)
			}
			args, err := runDirs(c.Args().Slice())
			if err != nil {
				return err
			}
			if htmlPath != "" {
				if err := checkHTML(htmlPath, args...); err != nil {
					return err
				}
			}
			files, cleanup, err := spoolStdin(c.App.Reader, args)
			if err != nil {
				return err
			}
			defer cleanup()
			infos := make([]os.FileInfo, len(files))
			for i, f := range files {
				fi, err := os.Stat(f)
				if err != nil {
					return &base.Error{Code: base.ExitTrouble, Err: err}
				}
				// Shards are distinct files: one given twice would count
				// its requests twice.
				for j := range i {
					if os.SameFile(infos[j], fi) {
						return base.UsageError("%s and %s are the same file: its requests would count twice", files[j], f)
					}
				}
				infos[i] = fi
			}
			runs := readRuns(files)
			if err := checkRuns(c.App.ErrWriter, files, runs); err != nil {
				return err
			}
			if err := checkShardsOf(c.App.ErrWriter, files, runs, allowMissing); err != nil {
				return err
			}
			mo := metrics.Options{Goodput: gp}
			switch streaming {
			case "auto":
				if knownRuns(runs) {
					mo.Streaming, err = streamingOf(files, runs)
				} else {
					mo.Streaming, err = inferStreaming(files) // records written before they said
				}
				if err != nil {
					return err
				}
			case "true":
				mo.Streaming = true
			case "false":
			default:
				return base.UsageError("--streaming %q: want auto, true or false", streaming)
			}
			sum, col, err := summarizeCollect(files, mo, htmlPath != "")
			if err != nil {
				return err
			}
			if sum.Requests+sum.ErrorRequests == 0 {
				fmt.Fprintf(c.App.ErrWriter, "aiperf-replay: no profiling records in %s; the metrics are empty\n", displayNames(files))
			}
			srv, err := rebuildServer(c.App.ErrWriter, c.Args().Slice(), files, runs, out, sum, reportRun(runs, slice)) // smreport.go
			if err != nil {
				return err
			}
			if out != "" {
				if err := os.MkdirAll(out, 0o777); err != nil {
					return err
				}
				slices, err := summarizeSlices(files, mo, slice)
				if err != nil {
					return err
				}
				run := reportRun(runs, slice)
				if run.Sections, err = srv.sections(); err != nil {
					return err
				}
				if err := writeOutputs(out, sum, mo, run, files); err != nil {
					return err
				}
				if err := writeTimeslices(out, slices, run); err != nil {
					return err
				}
			}
			if htmlPath != "" {
				if err := writeHTML(htmlPath, col, sum, reportRun(runs, slice).BenchmarkID, files); err != nil {
					return err
				}
			}
			if err := metrics.WriteConsole(c.App.Writer, sum, ""); err != nil {
				return err
			}
			if err := writeTraceTiming(c.App.Writer, showTrace, sum); err != nil {
				return err
			}
			srv.print(c.App.Writer, c.App.ErrWriter, sum)
			note, err := shardNote(c.App.ErrWriter, files, runs)
			if note != "" {
				fmt.Fprintln(c.App.Writer, note)
			}
			return err
		},
	}
}
