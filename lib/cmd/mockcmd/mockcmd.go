// Package mockcmd is the aiperf-mock command: an OpenAI-compatible test
// server on loopback.
package mockcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/units"
	"github.com/aiperf/toolkit/lib/mock"
	"github.com/aiperf/toolkit/lib/tokenizer"
	"github.com/urfave/cli/v2"
)

type options struct {
	listen                           string
	ttft, itl, ttftJitter, itlJitter string
	fast                             bool
	errorRate, faultRate             float64
	seed                             uint64
	fault, faultDelay                string
	tokenizer, model                 string
	strictModel                      bool
	reasoning                        int
	slots                            int
	tokenRate                        float64
	engine                           engineOptions // prefix.go
	log                              string
}

// New returns the aiperf-mock application.
func New() *cli.App {
	var o options
	return &cli.App{
		Name:  "aiperf-mock",
		Usage: "an OpenAI-compatible test server: chat, completions, responses, messages and embeddings, streamed (SSE) or not",
		Description: "Serves POST /v1/chat/completions, /v1/completions, /v1/responses (OpenAI Responses), /v1/messages\n" +
			"(Anthropic Messages) and /v1/embeddings, GET /v1/models, /metrics (vLLM's) and /health. Prints its base\n" +
			"URL on stdout once it listens (with --listen 127.0.0.1:0 the port is picked free), then serves until\n" +
			"SIGINT or SIGTERM. Replies are max_tokens tokens long (0.8-1.2x the prompt without it); usage counts\n" +
			"prompt tokens with the tokenizer. Latencies take a Go duration (20ms, 1.5s) or a number of ms.\n\n" +
			"Faults (--fault): reset (reset the connection mid-stream), stall (stop sending mid-stream for\n" +
			"--fault-delay), malformed (one chunk of truncated JSON), slow-headers (wait --fault-delay before the\n" +
			"headers), 429, 503, 307 (a redirect to /redirected + the path). A request header X-Mock-Fault: MODE selects a fault for that request alone.\n\n" +
			"Capacity: --slots N decodes N requests at once and queues the rest (FIFO; the wait is part of TTFT);\n" +
			"--token-rate R makes every token take 1/R, so a reply of n tokens holds its slot S = ttft + n/R and the\n" +
			"server completes at most N/S requests per second (N*R/n with --ttft 0).\n\n" +
			"GET /metrics serves vLLM's engine metrics (Prometheus text): running requests, KV-cache usage, prefix-cache\n" +
			"queries and hits, prompt and generation tokens, TTFT and ITL histograms. --prefix-cache-blocks simulates\n" +
			"a prefix cache over --block-bytes blocks of the prompt's text; --prefill-per-token charges its misses.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8000", Usage: "`ADDR` to listen on (port 0 picks a free port), or unix:///PATH for a unix socket", Destination: &o.listen},
			&cli.StringFlag{Name: "ttft", Value: "20ms", Usage: "time to first token", Destination: &o.ttft},
			&cli.StringFlag{Name: "itl", Value: "5ms", Usage: "inter-token latency", Destination: &o.itl},
			&cli.StringFlag{Name: "ttft-jitter", Value: "0", Usage: "uniform jitter `J`: each TTFT is ttft ± J (the ITL jitter never moves the first token)", Destination: &o.ttftJitter},
			&cli.StringFlag{Name: "itl-jitter", Value: "0", Usage: "uniform jitter `J`: each gap between tokens is itl ± J (never below 0)", Destination: &o.itlJitter},
			&cli.BoolFlag{Name: "fast", Usage: "no latency at all (for client benchmarks)", Destination: &o.fast},
			&cli.Float64Flag{Name: "error-rate", Usage: "answer `PCT` percent of requests with HTTP 500", Destination: &o.errorRate},
			&cli.Uint64Flag{Name: "seed", Usage: "seed errors, faults, jitter and reply lengths", Destination: &o.seed},
			&cli.StringFlag{Name: "fault", Usage: "inject `MODE`: " + strings.Join(mock.Faults, ", "), Destination: &o.fault},
			&cli.Float64Flag{Name: "fault-rate", Value: 100, Usage: "give the fault to `PCT` percent of requests", Destination: &o.faultRate},
			&cli.StringFlag{Name: "fault-delay", Value: "2s", Usage: "how long slow-headers waits and stall stalls", Destination: &o.faultDelay},
			&cli.StringFlag{Name: "tokenizer", Value: "builtin", Usage: "`builtin` (Qwen3), none (4 bytes a token), or a tokenizer.json path", Destination: &o.tokenizer},
			&cli.StringFlag{Name: "model", Value: "mock-model", Usage: "model `NAME` listed by /v1/models", Destination: &o.model},
			&cli.BoolFlag{Name: "strict-model", Usage: "answer 404 (\"The model `x` does not exist.\", as vLLM) to a request naming another model than --model", Destination: &o.strictModel},
			&cli.IntFlag{Name: "slots", Usage: "decode at most `N` requests at once; the others wait in FIFO order (the wait shows in TTFT); 0: no limit", Destination: &o.slots},
			&cli.Float64Flag{Name: "token-rate", Usage: "decode `R` tokens per second per slot (replaces --itl; the first token is due --ttft + 1/R after admission)", Destination: &o.tokenRate},
			&cli.StringFlag{Name: "log", Usage: "write one JSON line a completion request to `FILE`: its X-Request-ID, arrival, header, first- and last-token and every chunk's write time and due time (wall clock, ns)", Destination: &o.log},
			&cli.IntFlag{Name: "reasoning-tokens", Usage: "send the first `N` tokens of each chat reply as reasoning_content", Destination: &o.reasoning},
		}, engineFlags(&o.engine)...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return base.UsageError("unexpected argument %q", c.Args().First())
			}
			cfg, err := o.config()
			if err != nil {
				return base.UsageError("%v", err)
			}
			if o.log != "" {
				closeLog, err := openLog(o.log, &cfg)
				if err != nil {
					return err
				}
				defer closeLog(c)
			}
			return serve(c.Context, c, o.listen, cfg)
		},
	}
}

func (o *options) config() (mock.Config, error) {
	cfg := mock.Config{Fast: o.fast, Seed: o.seed, Fault: o.fault, Model: o.model, StrictModel: o.strictModel, ReasoningTokens: o.reasoning,
		Slots: o.slots, TokenRate: o.tokenRate}
	if o.slots < 0 {
		return cfg, errors.New("--slots must not be negative")
	}
	if o.tokenRate < 0 || o.tokenRate != o.tokenRate {
		return cfg, errors.New("--token-rate must not be negative")
	}
	for _, d := range []struct {
		name string
		s    string
		dst  *time.Duration
	}{{"--ttft", o.ttft, &cfg.TTFT}, {"--itl", o.itl, &cfg.ITL}, {"--ttft-jitter", o.ttftJitter, &cfg.TTFTJitter},
		{"--itl-jitter", o.itlJitter, &cfg.ITLJitter}, {"--fault-delay", o.faultDelay, &cfg.FaultDelay}} {
		v, err := units.ParseMS(d.s)
		if err != nil {
			return cfg, fmt.Errorf("%s: %v", d.name, err)
		}
		*d.dst = v
	}
	for _, p := range []struct {
		name string
		v    float64
		dst  *float64
	}{{"--error-rate", o.errorRate, &cfg.ErrorRate}, {"--fault-rate", o.faultRate, &cfg.FaultRate}} {
		if p.v < 0 || p.v > 100 {
			return cfg, fmt.Errorf("%s %v: want a percentage in [0, 100]", p.name, p.v)
		}
		*p.dst = p.v / 100
	}
	if o.faultRate == 0 {
		cfg.Fault = mock.FaultNone
	}
	if o.reasoning < 0 {
		return cfg, errors.New("--reasoning-tokens must not be negative")
	}
	if err := o.engine.apply(&cfg); err != nil {
		return cfg, err
	}
	if err := cfg.Check(); err != nil { // before a tokenizer is loaded
		return cfg, err
	}
	switch o.tokenizer {
	case "none":
	case "", "builtin":
		t, err := tokenizer.Builtin()
		if err != nil {
			return cfg, err
		}
		cfg.Tokenizer = t
	default:
		t, err := tokenizer.Load(o.tokenizer)
		if err != nil {
			return cfg, fmt.Errorf("--tokenizer: %v", err)
		}
		cfg.Tokenizer = t
	}
	return cfg, nil
}

// openLog starts --log FILE's request log into cfg.Log; the function it
// returns writes what is queued and closes the file, once the server stopped.
func openLog(path string, cfg *mock.Config) (func(*cli.Context), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, base.UsageError("--log: %v", err)
	}
	cfg.Log = mock.NewRequestLog(f)
	return func(c *cli.Context) {
		err := cfg.Log.Close()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(c.App.ErrWriter, "aiperf-mock: --log %s: %v\n", path, err)
		}
	}, nil
}

func serve(ctx context.Context, c *cli.Context, addr string, cfg mock.Config) error {
	srv, err := mock.New(cfg)
	if err != nil {
		return base.UsageError("%v", err)
	}
	network, url := "tcp", "http://"
	if p, ok := strings.CutPrefix(addr, "unix://"); ok {
		network, url, addr = "unix", "unix://", p // the socket is removed at the end
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		return err
	}
	hs, done := srv.Serve(l)
	fmt.Fprintf(c.App.Writer, "%s%s\n", url, l.Addr())
	if f, ok := c.App.Writer.(interface{ Sync() error }); ok {
		f.Sync()
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	// Stopping is this server's normal end: close the listener and the
	// idle connections, give streams in flight a moment, exit 0.
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	return <-done
}
