package mock

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// rng is splitmix64: small, fast and seedable per request, so that a seeded
// server gives the same errors, faults, jitter and lengths to the same
// sequence of requests.
type rng struct{ x uint64 }

func newRNG(seed, n uint64) rng { return rng{x: seed ^ (n * 0x9e3779b97f4a7c15)} }

func (r *rng) next() uint64 {
	r.x += 0x9e3779b97f4a7c15
	z := r.x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float returns a uniform value in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// jitter returns a uniform duration in [-j, j].
func (r *rng) jitter(j time.Duration) time.Duration {
	if j <= 0 {
		return 0
	}
	return time.Duration(r.next()%uint64(2*j+1)) - j
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// maxBody bounds a request body (a long-context prompt is a few MB).
const maxBody = 256 << 20

func (s *Server) completion(w http.ResponseWriter, r *http.Request, api string) {
	chat := api == apiChat
	arrived := time.Now()
	if r.Method != http.MethodPost {
		methodNotAllowed(w, http.MethodPost)
		return
	}
	n := uint64(s.requests.Add(1))
	rg := newRNG(s.cfg.Seed, n)
	s.metrics.running.Add(1)
	defer s.metrics.running.Add(-1)

	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	body, err := readBody(r.Body, (*bp)[:0], r.ContentLength)
	*bp = body[:0]
	if err != nil {
		s.bad.Add(1)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "reading the body: "+err.Error())
		return
	}
	q, err := parseAPIRequest(body, api)
	if err != nil {
		s.bad.Add(1)
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if name, ok := s.unknownModel(q.model); ok {
		writeError(w, http.StatusNotFound, "NotFoundError", "The model `"+name+"` does not exist.")
		return
	}

	fault := s.cfg.Fault
	if fault != FaultNone && rg.float() >= s.cfg.FaultRate {
		fault = FaultNone
	}
	if h := r.Header.Get(FaultHeader); h != "" {
		if err := checkFault(h); err != nil {
			s.bad.Add(1)
			writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		fault = h
	}
	errHit := s.cfg.ErrorRate > 0 && rg.float() < s.cfg.ErrorRate
	if fault != FaultNone {
		s.faults.Add(1)
	}
	switch {
	case fault == Fault429:
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "rate_limit_error", "mock: injected 429")
		return
	case fault == Fault503:
		writeError(w, http.StatusServiceUnavailable, "server_error", "mock: injected 503")
		return
	case fault == Fault307:
		w.Header().Set("Location", "/redirected"+r.URL.Path)
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	case errHit:
		s.errors.Add(1)
		writeError(w, http.StatusInternalServerError, "server_error", "mock: injected error")
		return
	}

	reply := replyPlan{
		chat:    chat,
		api:     eventAPI(api),
		id:      n,
		model:   q.model,
		fault:   fault,
		usage:   q.includeUsage,
		offset:  rg.next(),
		arrived: arrived,
		log:     s.cfg.Log.get(r, n, arrived),
	}
	defer s.cfg.Log.send(reply.log)
	if reply.model == nil {
		reply.model = s.model
	}
	ctx := r.Context()
	if fault == FaultSlowHeaders && !s.sleepUntil(ctx, arrived.Add(s.cfg.FaultDelay)) {
		return
	}
	start, release, ok := s.admit(ctx, arrived)
	if !ok {
		return
	}
	clock := s.schedule(start, &rg)
	defer func() { release(clock.end(reply.tokens)) }()
	if api == apiEmbeddings {
		s.embed(ctx, w, &reply, &q, clock) // api.go
	} else if q.stream {
		// Headers go first, as a server answers before its prefill; the
		// prompt is counted within the time to first token.
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		if rc.Flush() != nil {
			return
		}
		if reply.log != nil {
			reply.log.stream, reply.log.header = true, wallNS(time.Now())
		}
		s.plan(&reply, &q, &rg, clock)
		s.stream(ctx, w, rc, &reply, clock)
	} else {
		s.plan(&reply, &q, &rg, clock)
		s.whole(ctx, w, &reply, clock)
	}
	s.tokens.Add(int64(reply.tokens))
	s.noteDone(&reply)
}

// plan counts the prompt, looks it up in the prefix cache, moves the first
// token by the prefill of its uncached part and sizes the reply.
func (s *Server) plan(p *replyPlan, q *request, rg *rng, clock *tokenClock) {
	p.prompt = s.counts.count(q.input, func(fn func(string)) { inputTexts(q.input, fn) })
	s.cachePrompt(p, q)
	if !clock.fast && s.cfg.PrefillPerToken > 0 {
		clock.first = clock.first.Add(time.Duration(p.prompt-p.cached) * s.cfg.PrefillPerToken)
	}
	p.tokens, p.finish = s.budget(q.maxTokens, p.prompt, rg)
	if p.chat || p.api != "" {
		p.reasoning = min(s.cfg.ReasoningTokens, p.tokens)
	}
}

// readBody reads r into buf (grown as needed) up to maxBody bytes.
func readBody(r io.Reader, buf []byte, size int64) ([]byte, error) {
	if size > maxBody {
		return buf, errTooLarge
	}
	if size > 0 && int64(cap(buf)) < size {
		buf = make([]byte, 0, size)
	}
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= maxBody {
				return buf, errTooLarge
			}
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

var errTooLarge = &bodyError{"request body larger than 256 MiB"}

type bodyError struct{ s string }

func (e *bodyError) Error() string { return e.s }

// budget returns the reply length and its finish reason.
func (s *Server) budget(maxTokens, prompt int64, rg *rng) (int, string) {
	if maxTokens > 0 {
		return int(maxTokens), "length"
	}
	// The Python aiperf mock's rule without max_tokens: 0.8–1.2 times the
	// prompt, capped at max(2×prompt, 16) tokens.
	n := int64(float64(prompt) * (0.8 + 0.4*rg.float()))
	n = min(max(n, 1), max(2*prompt, 16))
	return int(n), "stop"
}

// tokenClock gives the due time of each output token.
type tokenClock struct {
	fast  bool
	first time.Time
	itl   time.Duration
	jit   time.Duration
	rg    rng
	n     int       // tokens scheduled so far
	last  time.Time // the due time of token n-1
}

func (s *Server) schedule(arrived time.Time, rg *rng) *tokenClock {
	c := &tokenClock{fast: s.cfg.Fast, itl: s.cfg.ITL, jit: s.cfg.ITLJitter, rg: rng{x: rg.next()}}
	if !c.fast {
		c.first = arrived.Add(s.cfg.TTFT + s.cfg.decodeStep() + rg.jitter(s.cfg.TTFTJitter))
	}
	return c
}

// due returns when token i should go out (i never decreasing from call to
// call): token 0 at the first-token time, which only the TTFT jitter moves,
// and each next token one gap after the one before, the gap ITL ± the ITL
// jitter (uniform, and never below 0), so that every gap between the
// intended times lies in the documented range. (Jittering each token's
// place on a fixed TTFT + i×ITL grid instead would make a gap the
// difference of two jitters, ITL ± 2J, and jitter the first token with the
// ITL's.) The times are absolute: a late wake-up shortens the next wait
// instead of delaying every later token.
func (c *tokenClock) due(i int) time.Time {
	if c.fast {
		return time.Time{}
	}
	if c.n == 0 {
		c.last, c.n = c.first, 1
	}
	for ; c.n <= i; c.n++ {
		c.last = c.last.Add(max(c.itl+c.rg.jitter(c.jit), 0))
	}
	return c.last
}

// epoch is the origin of the mock's monotonic clock.
var epoch = time.Now()

func mono() int64 { return int64(time.Since(epoch)) }

// sleepUntil waits until t, precisely (pace.Sleeper), unless ctx ends
// first; it reports whether it waited.
func (s *Server) sleepUntil(ctx context.Context, t time.Time) bool {
	return s.sleeper.Until(int64(t.Sub(epoch)), ctx.Done()) && ctx.Err() == nil
}

// sleepFor waits d unless ctx ends first.
func (s *Server) sleepFor(ctx context.Context, d time.Duration) bool {
	return s.sleepUntil(ctx, time.Now().Add(d))
}

// replyPlan is one reply to write.
type replyPlan struct {
	chat      bool
	id        uint64
	model     []byte
	prompt    int64
	tokens    int
	reasoning int
	finish    string
	offset    uint64
	fault     string
	usage     bool   // stream_options.include_usage
	api       string // apiResponses or apiMessages (api.go); "" for chat and completions

	arrived   time.Time
	lastToken time.Time // when the last token went out (metrics.go)
	cached    int64     // prompt tokens the prefix cache served
	cacheOn   bool      // a prefix cache looked the prompt up: report cached
	log       *logEntry // this request's line of Config.Log, or nil
}

func (s *Server) appendHead(b []byte, p *replyPlan, object string) []byte {
	if p.chat {
		b = append(b, `{"id":"chatcmpl-`...)
	} else {
		b = append(b, `{"id":"cmpl-`...)
	}
	b = strconv.AppendUint(b, p.id, 10)
	b = append(b, `","object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, s.start, 10)
	b = append(b, `,"model":`...)
	return append(b, p.model...)
}

func appendUsage(b []byte, p *replyPlan) []byte {
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, p.prompt, 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(p.tokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, p.prompt+int64(p.tokens), 10)
	if p.cacheOn {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, p.cached, 10)
		b = append(b, '}')
	}
	if p.reasoning > 0 {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(p.reasoning), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// stream writes the reply as server-sent events, one flushed write per event.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, p *replyPlan, clock *tokenClock) {
	object := "chat.completion.chunk"
	if !p.chat {
		object = "text_completion"
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	b := (*bp)[:0]
	cut := p.tokens / 2 // where reset, stall and malformed strike
	for i := 0; i < p.tokens; i++ {
		var due time.Time
		if !clock.fast {
			due = clock.due(i)
			if !s.sleepUntil(ctx, due) {
				return
			}
		} else if ctx.Err() != nil {
			return
		}
		if i == cut {
			switch p.fault {
			case FaultReset:
				reset(rc)
				return
			case FaultStall:
				s.sleepFor(ctx, s.cfg.FaultDelay)
				abort(rc)
				return
			}
		}
		if p.api != "" {
			b = s.appendEventToken(b[:0], p, i) // api.go
		} else {
			b = s.appendChunkToken(b[:0], p, i, object)
		}
		if i == cut && p.fault == FaultMalformed {
			b = b[:len(b)*2/3] // cut inside the JSON
		}
		b = append(b, "\n\n"...)
		if _, err := w.Write(b); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		p.log.logChunk(due)
		if !clock.fast { // --fast: one note for the reply, below
			s.noteToken(p, i, time.Now())
		}
	}
	if clock.fast {
		now := time.Now()
		s.noteWhole(p, now, now)
	}
	if p.api != "" {
		b = s.appendEventTail(b[:0], p)
	} else {
		b = s.appendChunkTail(b[:0], p, object)
	}
	*bp = b
	if _, err := w.Write(b); err == nil && rc.Flush() == nil && p.log != nil {
		p.log.end = wallNS(time.Now())
	}
}

// appendChunkToken appends the chat or completions chunk of token i.
func (s *Server) appendChunkToken(b []byte, p *replyPlan, i int, object string) []byte {
	b = append(b, "data: "...)
	b = s.appendHead(b, p, object)
	if p.chat {
		b = append(b, `,"choices":[{"index":0,"delta":{`...)
		if i == 0 {
			b = append(b, `"role":"assistant",`...)
		}
		if i < p.reasoning {
			b = append(b, `"reasoning_content":"`...)
		} else {
			b = append(b, `"content":"`...)
		}
		b = append(b, s.text.piece(p.offset, i)...)
		b = append(b, `"},"finish_reason":null}]}`...)
	} else {
		b = append(b, `,"choices":[{"index":0,"text":"`...)
		b = append(b, s.text.piece(p.offset, i)...)
		b = append(b, `","logprobs":null,"finish_reason":null}]}`...)
	}
	return b
}

// appendChunkTail appends the chat or completions stream's last chunks.
func (s *Server) appendChunkTail(b []byte, p *replyPlan, object string) []byte {
	b = append(b, "data: "...)
	b = s.appendHead(b, p, object)
	if p.chat {
		b = append(b, `,"choices":[{"index":0,"delta":{},"finish_reason":"`...)
	} else {
		b = append(b, `,"choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"`...)
	}
	b = append(b, p.finish...)
	b = append(b, `"}]}`+"\n\n"...)
	if p.usage {
		b = append(b, "data: "...)
		b = s.appendHead(b, p, object)
		b = append(b, `,"choices":[],`...)
		b = appendUsage(b, p)
		b = append(b, "}\n\n"...)
	}
	return append(b, "data: [DONE]\n\n"...)
}

// whole writes a non-streamed reply once the last token is due.
func (s *Server) whole(ctx context.Context, w http.ResponseWriter, p *replyPlan, clock *tokenClock) {
	if !clock.fast && p.tokens > 0 && !s.sleepUntil(ctx, clock.due(p.tokens-1)) {
		return
	}
	if clock.fast {
		s.noteWhole(p, time.Now(), time.Now())
	} else if p.tokens > 0 {
		s.noteWhole(p, clock.first, clock.due(p.tokens-1)) // token 0 is due at first
	}
	if p.fault == FaultReset {
		reset(http.NewResponseController(w))
		return
	}
	if p.fault == FaultStall {
		s.sleepFor(ctx, s.cfg.FaultDelay)
		abort(http.NewResponseController(w))
		return
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	b := (*bp)[:0]
	object := "chat.completion"
	if !p.chat {
		object = "text_completion"
	}
	if p.api != "" {
		b = s.appendEventWhole(b, p) // api.go
	} else {
		b = s.appendWhole(b, p, object)
	}
	if p.fault == FaultMalformed {
		b = b[:len(b)*2/3]
	}
	*bp = b
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if _, err := w.Write(b); err == nil && p.log != nil && http.NewResponseController(w).Flush() == nil {
		var due time.Time
		if !clock.fast && p.tokens > 0 {
			due = clock.due(p.tokens - 1) // the reply goes when its last token is due
		}
		p.log.logChunk(due) // the one write: header, first and last token, end
		p.log.header, p.log.end = p.log.first, p.log.first
	}
}

// appendWhole appends a whole chat or completions reply.
func (s *Server) appendWhole(b []byte, p *replyPlan, object string) []byte {
	b = s.appendHead(b, p, object)
	if p.chat {
		b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant",`...)
		if p.reasoning > 0 {
			b = append(b, `"reasoning_content":"`...)
			for i := 0; i < p.reasoning; i++ {
				b = append(b, s.text.piece(p.offset, i)...)
			}
			b = append(b, `",`...)
		}
		b = append(b, `"content":"`...)
		for i := p.reasoning; i < p.tokens; i++ {
			b = append(b, s.text.piece(p.offset, i)...)
		}
		b = append(b, `"},"finish_reason":"`...)
	} else {
		b = append(b, `,"choices":[{"index":0,"text":"`...)
		for i := 0; i < p.tokens; i++ {
			b = append(b, s.text.piece(p.offset, i)...)
		}
		b = append(b, `","logprobs":null,"finish_reason":"`...)
	}
	b = append(b, p.finish...)
	b = append(b, `"}],`...)
	b = appendUsage(b, p)
	return append(b, '}')
}

// reset takes the connection over and closes it with a TCP reset.
// Whatever was flushed has gone out; nothing else is written first (a
// flush here would send a status line for a response not yet begun).
func reset(rc *http.ResponseController) {
	c, _, err := rc.Hijack()
	if err != nil {
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// abort takes the connection over and closes it without ending the
// response (no last chunk): the client sees the stream cut short.
func abort(rc *http.ResponseController) {
	if c, _, err := rc.Hijack(); err == nil {
		c.Close()
	}
}
