// Package replay sends the request bodies of a store to an OpenAI-compatible
// server on a schedule and records, per request, when it was meant to go,
// when it went, and when each part of the answer came back.
//
// Bodies go out verbatim, as slices of the store's read-only mapping (a
// multi-turn conversation's history, when spliced in, is the only change).
// The schedule is open loop: a slow answer never delays the next send of a
// fixed or rate schedule; the results say how late each send was. Results
// stream to a writer as requests complete; nothing per request stays in
// memory.
package replay

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"
	"time"

	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/tokenizer"
)

// Schedules.
const (
	ScheduleAuto        = "auto"        // fixed when the store has timestamps, else concurrency (rate when Rate is set)
	ScheduleFixed       = "fixed"       // first turns at their trace timestamps ÷ Speedup
	ScheduleConcurrency = "concurrency" // Concurrency sessions in flight, each next one as soon as a slot frees
	ScheduleRate        = "rate"        // sessions start at Rate per second (Arrival process)
)

// Options configure a replay.
type Options struct {
	// URL is the server's base URL (http or https); Path is appended unless
	// URL already ends with it.
	URL  string
	Path string
	// Endpoint, when set, is the endpoint type the bodies are for
	// (request.Chat or request.Completions): its path is used unless Path
	// is set, and a store whose bodies are for the other one is refused
	// (every request would fail). "" takes the store's.
	Endpoint string
	// Headers are sent with every request, after the built-in ones.
	Headers []Header
	// APIKey, when set, is sent as "Authorization: Bearer APIKey". It is
	// never written to results or errors.
	APIKey   string
	Insecure bool // skip TLS certificate checks

	// Schedule is ScheduleAuto (""), ScheduleFixed, ScheduleConcurrency
	// or ScheduleRate. Auto is rate when Rate is set, else fixed when the
	// store has timestamps (Concurrency is then a ceiling), else
	// concurrency.
	Schedule    string
	Concurrency int     // sessions in flight (concurrency; 0 means 1); a ceiling for fixed and rate when > 0
	Rate        float64 // sessions per second (rate); only the rate schedule takes one
	// Arrival is ArrivalPoisson (the default), ArrivalConstant or
	// ArrivalGamma; only the rate schedule takes one.
	Arrival string
	// Smoothness is the gamma shape (0 means 1); set alone, it selects
	// ArrivalGamma. Only the rate schedule takes one.
	Smoothness float64
	// Speedup divides every trace time: timestamps and delays. 0 means 1.
	Speedup float64
	// StartOffset and EndOffset, when set, keep the sessions whose first
	// turn's timestamp lies in [StartOffset, EndOffset] (fixed schedule);
	// the schedule's zero is StartOffset when set, else the first
	// timestamp.
	StartOffset, EndOffset *time.Duration

	// RequestCount stops after this many profiling requests (0: every
	// record of the store once; with Duration, until Duration). Concurrency
	// and rate schedules go around the store again when it is exhausted;
	// a fixed schedule plays the trace once.
	RequestCount int64
	// Warmup requests go first and are marked as the warmup phase.
	Warmup int64
	// Duration stops sending this long after the start (0: no limit).
	Duration time.Duration
	// Grace is how long requests in flight may finish once sending has
	// stopped (Duration reached, or the context cancelled); then they are
	// cut and recorded as cancelled.
	Grace time.Duration
	// Cut, when closed, ends the grace period at once (a second SIGINT):
	// requests in flight are cut and recorded as cancelled, and Run returns
	// with everything recorded. nil: never.
	Cut <-chan struct{}
	// Stop, when closed, stops sending as Duration does (requests in
	// flight get the grace period; the run is not interrupted): a watcher
	// of the run (aiperf-replay --stop-on-saturation) ends it. nil: never.
	Stop <-chan struct{}

	CancelRate  float64       // fraction of requests cancelled on purpose, in [0, 1]
	CancelAfter time.Duration // how long after a cancelled request is fully written it is cut
	Timeout     time.Duration // per request, from the send to the end of the answer (0: none)
	// MaxResponse bounds what one response may hold in memory: a
	// non-streamed body, or a stream's text and chunk times (see
	// DefaultMaxResponse, the value for 0). A response past it fails with
	// ResponseTooLargeError.
	MaxResponse int64

	// Shard and Shards make this run shard Shard of Shards (0-based) of a
	// replay that N machines run together: it replays the store sessions
	// s with s mod Shards = Shard (the rule of aiperf-tokenize --shard, so
	// shard k is the same requests on every machine and no session is
	// split). Shards 0: the whole store. Rate, Concurrency, RequestCount
	// and Warmup are the whole replay's, and the plan gives this shard its
	// share of each, unless PerShard says they are this shard's already.
	Shard, Shards int
	PerShard      bool
	// StartAt, when not zero, is the wall-clock instant the schedule
	// starts at (every shard of a replay is given the same one): the run
	// connects, sleeps until then and takes it as the schedule's zero, so
	// a start that is late shows as send lateness. An instant more than
	// MaxStartLag in the past is refused.
	StartAt time.Time

	// ConnectionReuse is ReusePooled (default, ""), ReuseNever or
	// ReuseSticky (reuse.go).
	ConnectionReuse string
	// SessionHeader names the header that carries a session run's id on
	// every turn ("": DefaultSessionHeader); NoSessionHeader sends none.
	SessionHeader   string
	NoSessionHeader bool

	History string // HistoryAuto (default), HistoryOn or HistoryOff
	Seed    uint64 // seeds the arrival process and the choice of cancelled requests

	// Tokenizer, when set, is called once, before the run's clock starts
	// (not for embeddings), to count the output tokens of answers: those
	// without usage for their counts, those with usage for the client's
	// own (Record.ClientOutputTokens, aiperf's usage_*_diff_pct).
	Tokenizer func() (*tokenizer.Tokenizer, error)

	// Results receives the results JSONL (lib/result), one line per
	// request sent. Nil discards them.
	Results io.Writer
	// Observe, when set, sees every result as it is written, one at a
	// time. It must not keep the result.
	Observe func(*result.Record)
	// UserAgent is sent as User-Agent unless Headers sets one, and names
	// the tool in the results' run info.
	UserAgent string
	// StoreName names the store in the results' run info (a path).
	StoreName string
	// Config, when set, is a JSON object of the run's settings as the user
	// gave them (aiperf's input_config), carried in the results' run info.
	Config []byte
	// Counters, when set, are kept up to date while the replay runs (for a
	// live display).
	Counters *Counters
}

// Counters follow a replay in progress; every field may be read at any
// time from any goroutine.
type Counters struct {
	Sent     atomic.Int64 // requests sent
	Done     atomic.Int64 // requests with their result written
	Errors   atomic.Int64 // results with an error
	InFlight atomic.Int64 // sent and not done
}

// Header is one request header.
type Header struct{ Name, Value string }

// Stats summarises a replay.
type Stats struct {
	RunID        string // prefix of every X-Request-ID and X-Correlation-ID of the run
	Schedule     string // the schedule that ran
	Sent         int64  // requests sent (each has a result)
	Results      int64  // results written
	Errors       int64  // results with an error
	Cancelled    int64  // results cut on purpose (cancel rate, grace period)
	Dials        int64  // connections opened
	CeilingWaits int64  // session starts delayed because Concurrency sessions were in flight
	// CeilingMaxWait is the longest such delay, from the start's intended
	// time.
	CeilingMaxWait time.Duration
	// Answered counts the successful results; Streamed those of them whose
	// answer was server-sent events (result.Record.Streamed). Streaming
	// metrics follow the answers: see StreamingMetrics.
	Answered, Streamed int64
	Interrupted        bool // the context was cancelled before the schedule ended
	Elapsed            time.Duration
	// CPU is the process's CPU time (user + system) while Run ran: the
	// client's cost, to divide by Sent.
	CPU time.Duration
}

// check refuses option values that are wrong whatever the store (NewPlan
// checks the rest against the store).
func (o *Options) check() error {
	switch o.Schedule {
	case "", ScheduleAuto, ScheduleFixed, ScheduleConcurrency, ScheduleRate:
	default:
		return optErr("schedule", " %q: unknown schedule (want auto, fixed, concurrency or rate)", o.Schedule)
	}
	switch o.Arrival {
	case "", ArrivalPoisson, ArrivalConstant, ArrivalGamma:
	default:
		return optErr("arrival", " %q: unknown arrival process (want poisson, constant or gamma)", o.Arrival)
	}
	switch o.History {
	case "", HistoryAuto, HistoryOn, HistoryOff:
	default:
		return optErr("history", " %q: unknown history mode (want auto, on or off)", o.History)
	}
	bad := func(x float64) bool { return x < 0 || math.IsNaN(x) || math.IsInf(x, 0) }
	for _, c := range []struct {
		option string
		bad    bool
		want   string
	}{
		{"concurrency", o.Concurrency < 0, "must not be negative"},
		{"rate", bad(o.Rate), "must be a positive number"},
		{"smoothness", bad(o.Smoothness), "must be a positive number"},
		{"speedup", bad(o.Speedup), "must be a positive number"},
		{"request-count", o.RequestCount < 0, "must not be negative"},
		{"warmup", o.Warmup < 0, "must not be negative"},
		{"max-response", o.MaxResponse < 0, "must not be negative"},
		{"duration", o.Duration < 0, "must not be negative"},
		{"grace", o.Grace < 0, "must not be negative"},
		{"timeout", o.Timeout < 0, "must not be negative"},
		{"cancel-after", o.CancelAfter < 0, "must not be negative"},
		{"cancel-rate", o.CancelRate < 0 || o.CancelRate > 1 || math.IsNaN(o.CancelRate), "must be in [0, 1]"},
		{"start-offset", o.StartOffset != nil && *o.StartOffset < 0, "must not be negative"},
		{"end-offset", o.EndOffset != nil && *o.EndOffset < 0, "must not be negative"},
		{"end-offset", o.StartOffset != nil && o.EndOffset != nil && *o.EndOffset < *o.StartOffset, "is before the start offset"},
	} {
		if c.bad {
			return optErr(c.option, ": %s", c.want)
		}
	}
	if err := o.checkShard(); err != nil {
		return err
	}
	if err := o.checkReuse(); err != nil {
		return err
	}
	for _, h := range o.Headers {
		if err := checkHeader(h); err != nil {
			return &OptionError{Msg: err.Error()}
		}
	}
	return nil
}

// StreamingMetrics reports whether the run's streaming metrics (TTFT, ITL,
// TTST, ICL, ...) apply: they follow what the answers were, whatever the
// store's metadata says (a store packed from "stream": true payloads
// before aiperf-pack read the bodies says false): any streamed answer
// makes them apply, answers that all came whole make them not; with no
// successful answer, the store's bodies decide (store is Plan.Streaming).
func (s *Stats) StreamingMetrics(store bool) bool {
	if s.Answered == 0 {
		return store
	}
	return s.Streamed > 0
}

// ownHeaders are set by the client on every request: a second copy would
// break the framing (a Transfer-Encoding beside the Content-Length leaves
// the server waiting for chunks that never come) or contradict the ids the
// results carry.
var ownHeaders = []string{"content-length", "transfer-encoding", "x-request-id", "x-correlation-id"}

func checkHeader(h Header) error {
	if h.Name == "" {
		return errors.New("header with an empty name")
	}
	for _, own := range ownHeaders {
		if asciiEqualFold([]byte(h.Name), own) {
			return fmt.Errorf("header %s: set by the client on every request", h.Name)
		}
	}
	for i := 0; i < len(h.Name); i++ {
		c := h.Name[i]
		if c <= ' ' || c >= 0x7f || c == ':' || c == '"' || c == '(' || c == ')' || c == ',' || c == '/' || c == ';' ||
			c == '<' || c == '=' || c == '>' || c == '?' || c == '@' || c == '[' || c == '\\' || c == ']' || c == '{' || c == '}' {
			return fmt.Errorf("header name %q: invalid character %q", h.Name, c)
		}
	}
	for i := 0; i < len(h.Value); i++ {
		if c := h.Value[i]; c == '\r' || c == '\n' || c == 0 {
			return fmt.Errorf("header %s: value holds a line break or NUL", h.Name)
		}
	}
	return nil
}
