package replaycmd

import (
	"errors"
	"os"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/shard"
	"github.com/aiperf/toolkit/lib/internal/units"
	"github.com/aiperf/toolkit/lib/replay"
	"github.com/aiperf/toolkit/lib/tokenizer"
	"github.com/urfave/cli/v2"
)

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
	for _, step := range []func(*cli.Context, *replay.Options) error{
		o.scheduleOptions, o.durationOptions, o.placementOptions, o.requestOptions, o.tokenizerOption,
	} {
		if err := step(c, &ro); err != nil {
			return ro, err
		}
	}
	o.conn.apply(&ro)
	return ro, nil
}

// scheduleOptions refuses a 0 typed where the library reads 0 as "the
// default" (a mistake, not a request for 1), and passes the arrival
// process and its smoothness only when set (the library's to default, and
// to refuse for a schedule without arrivals).
func (o *options) scheduleOptions(c *cli.Context, ro *replay.Options) error {
	for _, z := range []struct {
		name string
		zero bool
		want string
	}{{"speedup", o.speedup == 0, "a number above 0"}, {"smoothness", o.smoothness == 0, "a number above 0"},
		{"concurrency", o.concurrency == 0, "at least 1 (leave it out for no ceiling)"}} {
		if c.IsSet(z.name) && z.zero {
			return base.UsageError("--%s 0: want %s", z.name, z.want)
		}
	}
	if c.IsSet("arrival") {
		ro.Arrival = o.arrival
	}
	if c.IsSet("smoothness") {
		ro.Smoothness = o.smoothness
	}
	if c.IsSet("cancel-after") && o.cancelRate == 0 {
		return base.UsageError("--cancel-after: needs --cancel-rate (no request is cancelled without it)")
	}
	return nil
}

// durationOptions reads --duration, --grace, --cancel-after, --timeout and
// the trace window's offsets.
func (o *options) durationOptions(c *cli.Context, ro *replay.Options) error {
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
			return err
		}
	}
	if c.IsSet("duration") && ro.Duration == 0 {
		return base.UsageError("--duration %s: want a duration above 0 (leave it out for no limit)", o.duration)
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
			return err
		}
		*d.dst = &v
	}
	return nil
}

// placementOptions reads --shard, --per-shard and --start-at.
func (o *options) placementOptions(c *cli.Context, ro *replay.Options) error {
	var err error
	if o.shard != "" || c != nil && c.IsSet("shard") { // --shard '' is no shard: refused
		if ro.Shard, ro.Shards, err = shard.Parse(o.shard); err != nil {
			return base.UsageError("--shard %q: %v (shard 0/4 is the first of four)", o.shard, err)
		}
	}
	ro.PerShard = o.perShard
	if o.startAt != "" {
		if ro.StartAt, err = replay.ParseStartAt(o.startAt, time.Now()); err != nil {
			return base.UsageError("--start-at %v", err)
		}
	}
	return nil
}

// requestOptions reads what shapes each request: --max-response,
// --cancel-rate, -H and --api-key-env.
func (o *options) requestOptions(_ *cli.Context, ro *replay.Options) error {
	var err error
	if ro.MaxResponse, err = parseSize(o.maxResponse); err != nil {
		return base.UsageError("--max-response %q: %v", o.maxResponse, err)
	}
	if ro.CancelRate, err = percent("--cancel-rate", o.cancelRate); err != nil {
		return err
	}
	for _, h := range o.headers.Value() {
		k, v, ok := cutHeader(h)
		if !ok {
			return base.UsageError("-H %q: want NAME:VALUE", h)
		}
		ro.Headers = append(ro.Headers, replay.Header{Name: k, Value: v})
	}
	if o.apiKeyEnv != "" {
		key := os.Getenv(o.apiKeyEnv)
		if key == "" {
			return base.UsageError("--api-key-env: the environment variable %s is empty or unset", o.apiKeyEnv)
		}
		if strings.ContainsAny(key, "\r\n\x00") {
			return base.UsageError("--api-key-env: the value of %s holds a line break", o.apiKeyEnv)
		}
		ro.APIKey = key
	}
	return nil
}

// tokenizerOption reads --tokenizer: a path is loaded now, so that one
// that does not load is a usage error, not a silent lack of output counts
// found after the run.
func (o *options) tokenizerOption(_ *cli.Context, ro *replay.Options) error {
	switch o.tokenizer {
	case "none":
	case "", "builtin":
		ro.Tokenizer = tokenizer.Builtin
	default:
		t, err := tokenizer.Load(o.tokenizer)
		if err != nil {
			return base.UsageError("--tokenizer: %v", err)
		}
		ro.Tokenizer = func() (*tokenizer.Tokenizer, error) { return t, nil }
	}
	return nil
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
