// Package replaycmd is the aiperf-replay command: replay a store against an
// OpenAI-compatible endpoint, write per-request results and report the
// metrics.
package replaycmd

import (
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
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
	force                  bool // --force: replace an earlier run's results in out
	nested                 bool // out is a trial's folder in a --trials run's
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
	steady                 steadyOptions
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
			"exits at once. A run where more than 10% of the requests failed exits 1 (--max-error-rate sets the rate).\n\n" +
			"The API key is read from the environment variable --api-key-env names, never from a flag, and is\n" +
			"written nowhere.",
		Flags: o.flags(),
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
	if c.IsSet("max-error-rate") { // -1, the flag's "unset", typed is refused as any value outside [0, 100]
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
	if err := o.steady.check(c); err != nil {
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
