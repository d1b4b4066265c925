// Package mock is an OpenAI-compatible inference server for tests, demos and
// benchmarks of the replay client: POST /v1/chat/completions and
// /v1/completions (streamed as server-sent events or not), /v1/responses
// (OpenAI Responses API events), /v1/messages (Anthropic Messages events)
// and /v1/embeddings (api.go), GET /v1/models,
// /health and /metrics (vLLM's engine metrics, see metrics.go). It generates tokens on a schedule (time to first token, then one
// token per inter-token latency, with optional jitter), reports usage with
// prompt tokens counted by a real tokenizer, and can inject faults (a reset
// or stalled stream, a malformed chunk, slow headers, 429/503 answers) so
// that a client's error paths can be tested against real bytes on a socket.
//
// It follows the Python aiperf mock server where that one defines behaviour:
// without max_tokens a reply is 0.8–1.2× the prompt's length (at most
// max(2×prompt, 16) tokens) and ends with finish_reason "stop"; with
// max_tokens (or max_completion_tokens) it is exactly that long and ends with
// "length"; stream_options.include_usage adds a usage chunk before [DONE].
//
// The request path never decodes a body into Go values: the few members it
// needs are found with lib/jsonx, and every reply is assembled from
// pre-escaped token texts, so that with Fast set the server costs little CPU
// next to the client it serves.
package mock

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/aiperf/toolkit/lib/internal/pace"
	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/tokenizer"
)

// Faults that Config.Fault (or the X-Mock-Fault request header) selects.
const (
	FaultNone        = ""
	FaultReset       = "reset"        // stream half the reply, then reset the connection (RST)
	FaultStall       = "stall"        // stream half the reply, then send nothing more until Config.FaultDelay passes or the client leaves
	FaultMalformed   = "malformed"    // one chunk (or the whole non-streamed body) is truncated JSON
	FaultSlowHeaders = "slow-headers" // wait Config.FaultDelay before the response headers
	Fault429         = "429"          // answer 429 Too Many Requests with an OpenAI error body
	Fault503         = "503"          // answer 503 Service Unavailable with an OpenAI error body
	Fault307         = "307"          // answer 307 Temporary Redirect to /redirected + the path
)

// Faults lists every fault mode.
var Faults = []string{FaultReset, FaultStall, FaultMalformed, FaultSlowHeaders, Fault429, Fault503, Fault307}

// FaultHeader is a request header that selects a fault for that one request,
// overriding Config.Fault and Config.FaultRate. It exists for tests that share
// one server between scenarios.
const FaultHeader = "X-Mock-Fault"

// Config sets the server's behaviour. The zero value streams instantly
// (no latency) and counts prompt tokens by text length.
type Config struct {
	TTFT       time.Duration // time to first token
	ITL        time.Duration // inter-token latency
	TTFTJitter time.Duration // each TTFT is TTFT ± up to this much (uniform); only this moves the first token
	ITLJitter  time.Duration // each gap between two tokens is ITL ± up to this much (uniform, never below 0)
	Fast       bool          // no latency at all (TTFT, ITL and jitter ignored)

	ErrorRate float64 // fraction of requests answered with HTTP 500, in [0, 1]
	Seed      uint64  // seeds errors, faults, jitter and reply lengths

	Fault      string        // one of Faults, or "" for none
	FaultRate  float64       // fraction of requests that get Fault, in [0, 1]; 0 means 1
	FaultDelay time.Duration // how long slow-headers waits and stall stalls; 0 means 2 s

	// Tokenizer counts prompt tokens for usage.prompt_tokens and cuts the
	// reply text into tokens. Nil counts one token per 4 bytes of text and
	// emits words.
	Tokenizer *tokenizer.Tokenizer
	// Model is listed by /v1/models and named in replies to requests that
	// carry no model. "" means "mock-model".
	Model string
	// StrictModel answers 404 (vLLM's NotFoundError, "The model `x` does
	// not exist.") to a request that names another model than Model, as
	// vLLM and ollama do; a request naming none is served.
	StrictModel bool
	// ReasoningTokens is how many of each reply's first tokens are sent as
	// reasoning_content (counted in the token budget, reported as
	// usage.completion_tokens_details.reasoning_tokens).
	ReasoningTokens int

	// Slots, when above 0, is how many requests are decoded at once; the
	// others wait in FIFO order, and the wait shows in their TTFT. See
	// slots.go for the capacity this gives.
	Slots int
	// TokenRate, when above 0, is each slot's decode speed in tokens per
	// second: every token, the first included, takes 1/TokenRate (it
	// replaces ITL; the first token is due TTFT + 1/TokenRate after
	// admission).
	TokenRate float64
	// PrefixCacheBlocks, when positive, simulates a prefix cache of that
	// many blocks of BlockBytes bytes (see prefix.go): replies report
	// usage.prompt_tokens_details.cached_tokens and /metrics counts
	// queries and hits.
	PrefixCacheBlocks int
	BlockBytes        int // 0 means DefaultBlockBytes
	// PrefillPerToken is added to the time to first token for every prompt
	// token the prefix cache did not serve (every token without a cache).
	PrefillPerToken time.Duration

	// Log, when set, gets one line a completion request with the server's
	// arrival and write times (log.go). The caller closes it after the
	// server has stopped.
	Log *RequestLog
}

// Stats counts what the server did.
type Stats struct {
	Requests  int64 // completion requests received
	Errors    int64 // answered with an injected HTTP 500
	Faults    int64 // given a fault
	Tokens    int64 // output tokens sent
	BadInputs int64 // answered 400
}

// Server is the mock. It is safe for concurrent use.
type Server struct {
	cfg     Config
	model   []byte // JSON string literal
	text    *text
	counts  *countCache
	start   int64 // unix seconds, for "created"
	sleeper *pace.Sleeper
	slots   *slots // nil without Config.Slots

	requests, errors, faults, tokens, bad atomic.Int64

	metrics *engineMetrics // /metrics (metrics.go)
	prefix  *prefixCache   // nil without a prefix cache (prefix.go)
}

// Check reports what New would refuse in cfg, without the tokenizer: a
// command checks its flags before it loads one.
func (cfg Config) Check() error {
	if cfg.ErrorRate < 0 || cfg.ErrorRate > 1 {
		return fmt.Errorf("mock: error rate %v outside [0, 1]", cfg.ErrorRate)
	}
	if cfg.FaultRate < 0 || cfg.FaultRate > 1 {
		return fmt.Errorf("mock: fault rate %v outside [0, 1]", cfg.FaultRate)
	}
	if err := checkFault(cfg.Fault); err != nil {
		return err
	}
	if cfg.TTFT < 0 || cfg.ITL < 0 || cfg.TTFTJitter < 0 || cfg.ITLJitter < 0 || cfg.ReasoningTokens < 0 ||
		cfg.PrefixCacheBlocks < 0 || cfg.BlockBytes < 0 || cfg.PrefillPerToken < 0 {
		return fmt.Errorf("mock: negative latency or token count")
	}
	if cfg.Slots < 0 || cfg.TokenRate < 0 || cfg.TokenRate != cfg.TokenRate {
		return fmt.Errorf("mock: negative slots or token rate")
	}
	return nil
}

// New checks cfg and prepares a server.
func New(cfg Config) (*Server, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.FaultRate == 0 {
		cfg.FaultRate = 1
	}
	if cfg.FaultDelay == 0 {
		cfg.FaultDelay = 2 * time.Second
	}
	if step := cfg.decodeStep(); step > 0 {
		cfg.ITL = step
	}
	if cfg.Model == "" {
		cfg.Model = "mock-model"
	}
	s := &Server{
		cfg:     cfg,
		model:   jsonx.AppendString(nil, cfg.Model),
		text:    newText(cfg.Tokenizer),
		counts:  newCountCache(cfg.Tokenizer),
		start:   time.Now().Unix(),
		sleeper: pace.NewSleeper(mono),
		metrics: newEngineMetrics(),
		prefix:  newPrefixCache(cfg.PrefixCacheBlocks, cfg.BlockBytes),
	}
	if cfg.Slots > 0 {
		s.slots = newSlots(cfg.Slots)
	}
	return s, nil
}

func checkFault(f string) error {
	if f == FaultNone {
		return nil
	}
	for _, k := range Faults {
		if f == k {
			return nil
		}
	}
	return fmt.Errorf("mock: unknown fault %q (want one of %v)", f, Faults)
}

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	return Stats{Requests: s.requests.Load(), Errors: s.errors.Load(), Faults: s.faults.Load(), Tokens: s.tokens.Load(), BadInputs: s.bad.Load()}
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/chat/completions":
		s.completion(w, r, apiChat)
	case "/v1/completions":
		s.completion(w, r, apiCompletions)
	case "/v1/responses":
		s.completion(w, r, apiResponses)
	case "/v1/messages":
		s.completion(w, r, apiMessages)
	case "/v1/embeddings":
		s.completion(w, r, apiEmbeddings)
	case "/v1/models":
		if r.Method != http.MethodGet {
			methodNotAllowed(w, http.MethodGet)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		b := append([]byte(`{"object":"list","data":[{"id":`), s.model...)
		b = append(b, `,"object":"model","created":0,"owned_by":"aiperf-mock"}]}`...)
		w.Write(b)
	case "/metrics":
		s.serveMetrics(w, r)
	case "/health", "/":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
	default:
		writeError(w, http.StatusNotFound, "not_found_error", "no route for "+r.URL.Path)
	}
}

// Serve accepts connections on l until it is closed, with keep-alive and
// without server-side timeouts (a stalled stream is the client's to abandon).
// It returns the *http.Server so that the caller can shut it down, and a
// channel that delivers Serve's error (nil after Shutdown or Close).
func (s *Server) Serve(l net.Listener) (*http.Server, <-chan error) {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: time.Minute, MaxHeaderBytes: 1 << 20}
	done := make(chan error, 1)
	go func() {
		err := hs.Serve(l)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	return hs, done
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method not allowed")
}

// writeError answers with an OpenAI-style error object.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b := append([]byte(`{"error":{"message":`), jsonx.AppendString(nil, msg)...)
	b = append(b, `,"type":`...)
	b = jsonx.AppendString(b, typ)
	b = fmt.Appendf(b, `,"code":%d}}`, status)
	w.Write(b)
}
