package replay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/aiperf/toolkit/lib/request"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/store"
)

// readBufSize is the response buffer of one request in flight. Long
// contexts stream large chunks quickly; a small buffer (aiohttp's 64 KiB
// default in the vLLM benchmark client) throttled such streams into the
// client's own latency. The client reads as much as the kernel has, up to
// this, per read; an SSE line longer than the buffer is assembled across
// reads, so no event size is refused below maxSSELine.
const readBufSize = 128 << 10

// DefaultMaxResponse is what one response may hold in memory unless
// Options.MaxResponse says otherwise: a non-streamed body (a 64 MiB answer
// is some 16 million tokens of text), or a stream's text and chunk times
// (8 bytes a chunk: a 100,000-token stream holds about 1.2 MB). A stream's
// other bytes (the JSON around the text, events without content) are
// parsed in the read buffer and never kept, so an endless stream that
// carries no text costs nothing and one that does fails once it holds
// this much, instead of growing until the machine runs out of memory.
const DefaultMaxResponse = 64 << 20

// keepBuf bounds the buffers a request state keeps on the free list: a
// state that held a larger response gives its buffers back to the garbage
// collector instead of pinning them for the rest of the run.
const keepBuf = 256 << 10

// maxErrorBody is how much of an error response is read for its message.
const maxErrorBody = 64 << 10

// reqState is everything one request in flight uses, reused from request
// to request through a free list (so its buffers are allocated once per
// request that was ever in flight at the same time, not once per request).
type reqState struct {
	rec      result.Record
	usage    result.Usage
	rp       reply
	sse      sseParser
	rr       respReader
	buf      []byte // read buffer
	hdr      []byte
	line     []byte
	body     []byte
	parts    [][]byte
	vec      [8][]byte
	parseErr *result.Error
	events   int    // events dispatched in this response
	limit    int    // what the response may hold (Options.MaxResponse)
	declared int64  // the body's Content-Length, -1 when absent or of coded bytes
	sseBytes int64  // bytes of the event stream
	start    []byte // the stream's first bytes, until its first event
	coded    []byte // decoded bytes of a compressed body
	t        int64  // time of the read being parsed
	emit     func(event, data []byte) error
	bodyFn   func(p []byte, t int64) error
	mode     int    // how the body is read
	http     rsHTTP // the HTTP timing (conntiming.go)
}

// Body modes.
const (
	modeUndecided = iota // 2xx without an event-stream type: sniff the first bytes
	modeSSE
	modeJSON
	modeError // non-2xx: read for the message
)

func newReqState() *reqState {
	rs := &reqState{buf: make([]byte, readBufSize), limit: DefaultMaxResponse}
	rs.emit = rs.onEvent
	rs.bodyFn = rs.onBody
	return rs
}

// stateList is a free list of request states that never shrinks: the
// number of states is the peak number of requests in flight.
type stateList struct {
	mu   sync.Mutex
	free []*reqState
}

func (l *stateList) get() *reqState {
	l.mu.Lock()
	if n := len(l.free); n > 0 {
		rs := l.free[n-1]
		l.free = l.free[:n-1]
		l.mu.Unlock()
		return rs
	}
	l.mu.Unlock()
	return newReqState()
}

func (l *stateList) put(rs *reqState) {
	trim := func(b []byte) []byte {
		if cap(b) > keepBuf {
			return nil
		}
		return b
	}
	rs.body, rs.line, rs.coded = trim(rs.body), trim(rs.line), trim(rs.coded)
	rs.rp.content, rs.rp.reasoning = trim(rs.rp.content), trim(rs.rp.reasoning)
	rs.rp.shape.buf = trim(rs.rp.shape.buf)
	rs.sse.line, rs.sse.data = trim(rs.sse.line), trim(rs.sse.data)
	if cap(rs.rec.ChunkOffsetsNS) > keepBuf/8 {
		rs.rec.ChunkOffsetsNS = nil
	}
	l.mu.Lock()
	l.free = append(l.free, rs)
	l.mu.Unlock()
}

// header returns the fixed start of every request's head, up to the value
// of Content-Length.
func (r *runner) header() []byte {
	var b []byte
	b = append(b, "POST "...)
	b = append(b, r.ep.target()...)
	b = append(b, " HTTP/1.1\r\n"...)
	has := func(name string) bool {
		for _, h := range r.o.Headers {
			if asciiEqualFold([]byte(h.Name), name) {
				return true
			}
		}
		return false
	}
	if !has("host") {
		b = append(b, "Host: "...)
		b = append(b, r.ep.host...)
		b = append(b, "\r\n"...)
	}
	if a := r.pool.dialer.ProxyAuth(); a != "" && r.pool.dialer.Forward() && !has("proxy-authorization") {
		b = append(b, "Proxy-Authorization: "...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	if !has("user-agent") {
		ua := r.o.UserAgent
		if ua == "" {
			ua = "aiperf-replay"
		}
		b = append(b, "User-Agent: "...)
		b = append(b, ua...)
		b = append(b, "\r\n"...)
	}
	if !has("content-type") {
		b = append(b, "Content-Type: application/json\r\n"...)
	}
	if !has("accept-encoding") {
		// No Accept-Encoding would mean any coding is acceptable (RFC 9110
		// §12.5.3); see readCoded.
		b = append(b, "Accept-Encoding: identity\r\n"...)
	}
	for _, h := range r.o.Headers {
		b = append(b, h.Name...)
		b = append(b, ": "...)
		b = append(b, h.Value...)
		b = append(b, "\r\n"...)
	}
	if r.p.Endpoint == request.Messages {
		b = r.anthropicHeaders(b, has)
	} else if r.o.APIKey != "" && !has("authorization") {
		b = append(b, "Authorization: Bearer "...)
		b = append(b, r.o.APIKey...)
		b = append(b, "\r\n"...)
	}
	return append(b, "Content-Length: "...)
}

// sendTurn sends the session's next turn, if the budget allows, and
// writes its record. It reports whether the turn was sent.
func (r *runner) sendTurn(sess *session, intended int64) bool {
	seq, ok := r.take()
	if !ok {
		return false
	}
	defer r.inflight.Done()
	i, ok := r.st.Lookup(sess.s, uint32(sess.turn))
	if !ok { // cannot happen: turns < SessionLen
		return false
	}
	e := r.st.Entry(i)
	var body []byte // nil for a format 3 store: its parts come from the mapping
	if !r.st.Spanned() {
		body = r.st.Payload(i)
	}

	if c := r.o.Counters; c != nil {
		c.Sent.Add(1)
		c.InFlight.Add(1)
	}
	rs := r.states.get()
	R := &rs.rec
	offs := R.ChunkOffsetsNS[:0]
	*R = result.Record{
		Record:         i,
		Session:        sess.id,
		Turn:           int(e.Turn),
		RequestID:      r.numberedID("-", seq),
		CorrelationID:  sess.corr,
		SessionNum:     int(sess.num),
		Shard:          r.o.Shard,
		Shards:         r.o.Shards,
		Phase:          result.PhaseProfiling,
		IntendedNS:     intended,
		InputTokens:    int64(e.InputTokens),
		ChunkOffsetsNS: offs,
	}
	if seq < r.o.Warmup {
		R.Phase = result.PhaseWarmup
	}
	if sess.turn == 0 {
		R.CeilingWaitNS = sess.wait
	}
	if e.Flags&store.FlagMaxTokens != 0 {
		R.MaxTokens = int64(e.MaxTokens)
	}
	if body == nil {
		rs.parts = r.st.AppendParts(rs.parts[:0], i) // spans, no assembly copy
	} else {
		rs.parts = sess.hist.parts(rs.parts[:0], body, e)
	}
	R.InputTokens = sess.hist.inputTokens(R.InputTokens)
	r.exchange(rs, sess, seq)
	rs.timeDone()
	r.count(rs)

	sess.prevEnd = R.EndNS
	sess.turn++
	if sess.turn < sess.turns {
		sess.hist.add(body, e, rs.rp.content, R.OutputTokens, R.OutputSource != "")
	}

	if R.Err != nil {
		r.errors.Add(1)
		if r.secret != nil {
			R.Err.Message, R.Err.Type = r.secret.redact(R.Err.Message), r.secret.redact(R.Err.Type)
		}
	}
	if R.Cancelled {
		r.cancelled.Add(1)
	}
	rs.line = result.Append(rs.line[:0], R)
	r.sink.put(R, rs.line)
	if c := r.o.Counters; c != nil {
		c.Done.Add(1)
		c.InFlight.Add(-1)
		if R.Err != nil {
			c.Errors.Add(1)
		}
	}
	r.states.put(rs)
	return true
}

// cancelled reports whether request seq is one of those CancelRate picks:
// a hash of the seed and the sequence number, so the choice is the same on
// every run with the same seed and costs no shared state.
func (r *runner) cancelPick(seq int64) bool {
	if r.o.CancelRate <= 0 {
		return false
	}
	x := uint64(seq)*0x9e3779b97f4a7c15 ^ r.o.Seed
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11)/(1<<53) < r.o.CancelRate
}

// exchange sends the request in rs and reads the answer into rs.rec.
func (r *runner) exchange(rs *reqState, sess *session, seq int64) {
	R := &rs.rec
	total := 0
	for _, p := range rs.parts {
		total += len(p)
	}
	hdr := append(rs.hdr[:0], r.hdr...)
	hdr = strconv.AppendInt(hdr, int64(total), 10)
	hdr = append(hdr, "\r\nX-Request-ID: "...)
	hdr = append(hdr, R.RequestID...)
	if r.sessHdr != nil {
		hdr = append(hdr, r.sessHdr...)
		hdr = append(hdr, sess.corr...)
	}
	hdr = append(hdr, "\r\n\r\n"...)
	rs.hdr = hdr

	cancel := r.cancelPick(seq)
	rs.rp.reset()
	rs.parseErr = nil
	rs.events = 0
	rs.limit = int(min(r.o.MaxResponse, math.MaxInt))
	if rs.limit <= 0 {
		rs.limit = DefaultMaxResponse
	}

	for attempt := 0; ; attempt++ {
		var c *conn
		var reused bool
		var err error
		asked := r.clk.now()
		if attempt == 0 {
			c, reused, err = r.connFor(sess)
		} else {
			// The idle connection was stale: so may be every other idle
			// one (a server's keep-alive timeout closes them all during a
			// lull), so the second attempt goes on a new connection.
			c, err = r.pool.dial(r.abortCtx)
		}
		if err != nil {
			now := r.clk.now()
			R.SentNS, R.EndNS = now, now
			R.Err, R.Cancelled = dialFailure(err)
			return
		}
		R.SentNS = r.clk.now()
		rs.timeConn(c, reused, asked, R.SentNS)
		var timeoutAt int64
		if r.o.Timeout > 0 {
			timeoutAt = R.SentNS + int64(r.o.Timeout)
			c.setDeadline(r.clk.at(timeoutAt), false)
			c.deadline = true
		} else if c.deadline {
			c.setDeadline(time.Time{}, false)
			c.deadline = false
		}
		// A request the cancel rate picks gets its read deadline once it is
		// written, so it waits for the answer in its first read; the others
		// wait inside writeAwait, which saves the read that would find
		// nothing (the answer cannot have come yet). A pooled connection is
		// checked first (checkIdle): a close the server made while it sat
		// idle, or bytes it said unasked, mean nothing is sent on it.
		v := append(append(rs.vec[:0], hdr), rs.parts...)
		var sent int64
		if cancel {
			if reused {
				err = c.io.checkIdle()
			}
			if err == nil {
				if err = c.io.writeParts(v); err == nil {
					sent = r.clk.now()
				}
			}
		} else {
			sent, err = c.io.writeAwait(v, r.now, reused)
		}
		var werr error
		if err != nil && sent == 0 && earlyAnswer(err) {
			// The server may have answered before it had the whole request
			// (a 413 for a body it would not read) and then reset the
			// connection: the answer is still in the socket. Read it; the
			// write's error stands if none comes.
			werr, err, sent = err, nil, r.clk.now()
		}
		if err != nil && sent == 0 {
			r.pool.drop(c)
			if reused && attempt == 0 && retryable(err) {
				continue
			}
			R.EndNS = r.clk.now()
			R.Err, R.Cancelled = r.failure(c, err, false, 0, timeoutAt)
			return
		}
		if werr == nil { // a cut write sent less than this: no send timing
			rs.timeSent(sent, len(hdr), total)
		}
		var cancelAt int64
		if cancel {
			cancelAt = r.clk.now() + int64(r.o.CancelAfter)
			if timeoutAt == 0 || cancelAt < timeoutAt {
				c.setDeadline(r.clk.at(cancelAt), true)
				c.deadline = true
			}
		}
		rs.rr.init(c.io, rs.buf, r.now)
		rs.rr.err = err // the wait for the answer failed: the first read reports it
		h, err := rs.rr.readHead()
		if err != nil && werr != nil && rs.rr.firstByte == 0 {
			err = werr // no early answer
		}
		if err != nil {
			r.pool.drop(c)
			if reused && attempt == 0 && rs.rr.firstByte == 0 && retryable(err) {
				continue
			}
			R.FirstByteNS = rs.rr.firstByte
			R.EndNS = r.clk.now()
			R.Err, R.Cancelled = r.failure(c, err, cancel, cancelAt, timeoutAt)
			return
		}
		R.FirstByteNS = rs.rr.firstByte
		R.Status = h.status
		switch {
		case h.status < 200 || h.status > 299:
			rs.mode = modeError
		case h.sse:
			rs.mode = modeSSE
		default:
			rs.mode = modeUndecided
		}
		rs.sse.max = min(rs.limit, maxSSELine)
		rs.sse.reset()
		rs.body, rs.start, rs.sseBytes = rs.body[:0], rs.start[:0], 0
		rs.declared = -1
		if h.ncodings == 0 {
			rs.declared = h.contentLength
		}
		var clean bool
		switch {
		case h.ncodings > 0 && h.hasBody():
			clean, err = rs.readCoded(&h)
		default:
			clean, err = rs.rr.readBody(&h, rs.bodyFn)
		}
		if err != nil {
			r.pool.drop(c)
			R.EndNS = r.clk.now()
			R.Err, R.Cancelled = r.failure(c, err, cancel, cancelAt, timeoutAt)
			return
		}
		R.EndNS = rs.rr.lastRead
		if R.EndNS == 0 || !h.hasBody() {
			R.EndNS = r.clk.now()
		}
		r.release(sess, c, clean && !h.close && werr == nil)
		r.finish(rs, &h)
		return
	}
}

// onBody takes a piece of a response body.
func (rs *reqState) onBody(p []byte, t int64) error {
	rs.t = t
	rs.timeBody(len(p), t)
	switch rs.mode {
	case modeUndecided:
		q := bytes.TrimLeft(p, " \t\r\n")
		if len(q) == 0 {
			if !reserve(&rs.body, len(p), rs.limit) {
				return rs.bodyTooLarge(int64(len(rs.body) + len(p)))
			}
			rs.body = append(rs.body, p...)
			return nil
		}
		if bytes.HasPrefix(q, []byte("data:")) || q[0] == ':' || bytes.HasPrefix(q, []byte("event:")) {
			rs.mode = modeSSE
			return rs.onStream(p)
		}
		rs.mode = modeJSON
		if rs.declared > int64(rs.limit) {
			return rs.bodyTooLarge(rs.declared) // refused before it is read
		}
		fallthrough
	case modeJSON:
		need := len(p)
		if rest := rs.declared - int64(len(rs.body)); rest > int64(need) && rest <= int64(rs.limit) {
			need = int(rest) // the whole body at once: no growth
		}
		if !reserve(&rs.body, need, rs.limit) {
			return rs.bodyTooLarge(int64(len(rs.body) + len(p)))
		}
		rs.body = append(rs.body, p...)
	case modeSSE:
		return rs.onStream(p)
	case modeError:
		if room := maxErrorBody - len(rs.body); room > 0 {
			rs.body = append(rs.body, p[:min(room, len(p))]...)
		}
	}
	return nil
}

// maxStart is how much of a stream's start is kept, until its first
// event, for the error of a body that is no event stream.
const maxStart = 200

func (rs *reqState) onStream(p []byte) error {
	rs.sseBytes += int64(len(p))
	if rs.events == 0 && len(rs.start) < maxStart {
		rs.start = append(rs.start, p[:min(len(p), maxStart-len(rs.start))]...)
	}
	return rs.sse.feed(p, rs.emit)
}

// reserve makes room for n more bytes in *b within budget, the capacity
// *b may reach, and reports whether it could. It grows *b to twice its
// capacity (or what is needed, at most budget) by itself rather than by
// append, whose growth of large slices by a quarter would leave four
// times the final size in garbage on the way to it and a capacity past
// the budget: what a response holds is its buffers' capacity, so that
// --max-response bounds the memory and not only the bytes.
func reserve(b *[]byte, n, budget int) bool {
	if cap(*b)-len(*b) >= n {
		return true
	}
	need := len(*b) + n
	if need > budget {
		return false
	}
	nb := make([]byte, len(*b), min(max(2*cap(*b), need, 4096), budget))
	copy(nb, *b)
	*b = nb
	return true
}

func (rs *reqState) bodyTooLarge(n int64) error {
	return &errTooLarge{"response body of " + sizeString(n) + " or more, above the " + sizeString(int64(rs.limit)) + " a response may hold"}
}

// onEvent takes one server-sent event.
func (rs *reqState) onEvent(event, data []byte) error {
	R := &rs.rec
	if string(event) == "error" {
		rs.rp.readError(append([]byte(nil), data...))
		return nil
	}
	rs.events++
	if len(data) == 0 || data[0] != '{' { // the common chunk starts with its brace
		d := bytes.TrimSpace(data)
		if len(d) == 0 {
			// An event without data ("data:" then a blank line, or white
			// space) is dispatched by the event-stream rules with empty
			// data; it carries no chunk (servers send it as a keep-alive).
			return nil
		}
		if bytes.Equal(d, doneMarker) {
			rs.rp.done = true
			return nil
		}
	}
	// The text a chunk adds is a part of its data: room for it is made
	// before, within what the response may hold, so that the text's buffer
	// never outgrows the limit (see reserve).
	rp, times := &rs.rp, 8*cap(R.ChunkOffsetsNS)
	if !reserve(&rp.content, len(data), rs.limit-cap(rp.reasoning)-times) ||
		len(rp.reasoning) > 0 && !reserve(&rp.reasoning, len(data), rs.limit-cap(rp.content)-times) {
		return rs.streamTooLarge()
	}
	c, rsn, err := rs.rp.chunk(data)
	if err != nil {
		if rs.parseErr == nil {
			rs.parseErr = &result.Error{Type: "ResponseParseError", Message: "event " + strconv.Itoa(rs.events) + ": malformed JSON chunk: " + clip(data, 120)}
		}
		return nil
	}
	if c || rsn {
		if o := R.ChunkOffsetsNS; len(o) == cap(o) {
			n := max(2*cap(o), 64)
			if cap(rs.rp.content)+cap(rs.rp.reasoning)+8*n > rs.limit {
				return rs.streamTooLarge()
			}
			R.ChunkOffsetsNS = append(make([]int64, 0, n), o...)
		}
		R.ChunkOffsetsNS = append(R.ChunkOffsetsNS, rs.t-R.SentNS)
		if R.FirstTokenNS == 0 {
			R.FirstTokenNS = rs.t
		}
		if c && R.FirstOutputNS == 0 {
			R.FirstOutputNS = rs.t
		}
		if n := len(R.ChunkOffsetsNS); n >= result.MaxChunks || cap(rs.rp.content)+cap(rs.rp.reasoning)+8*cap(R.ChunkOffsetsNS) > rs.limit {
			return rs.streamTooLarge()
		}
	}
	return nil
}

func (rs *reqState) streamTooLarge() error {
	n := len(rs.rec.ChunkOffsetsNS)
	if n >= result.MaxChunks {
		return &errTooLarge{"more than " + strconv.Itoa(result.MaxChunks-1) + " content chunks, the most a record holds"}
	}
	return &errTooLarge{"the stream's text (" + sizeString(int64(len(rs.rp.content)+len(rs.rp.reasoning))) + ") and chunk times (" +
		strconv.Itoa(n) + ") exceed the " + sizeString(int64(rs.limit)) + " a response may hold"}
}

// sizeString writes n bytes in the largest binary unit that divides it.
func sizeString(n int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{" GiB", 30}, {" MiB", 20}, {" KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// finish turns a complete response into the record's outcome.
func (r *runner) finish(rs *reqState, h *head) {
	R := &rs.rec
	R.Streamed = rs.mode == modeSSE
	switch rs.mode {
	case modeError:
		R.Err = httpError(h.status, rs.body)
		if h.status >= 300 && h.status < 400 {
			R.Err.Message = redirectMessage(h.location)
		}
		return
	case modeSSE:
		if rs.events == 0 && rs.rp.srvErr == nil && rs.parseErr == nil {
			// Not one event: the body is no event stream (an HTML page, a
			// JSON error, compressed or random bytes under the event-stream
			// type), which the event-stream rules would read as nothing.
			msg := "empty event stream"
			if rs.sseBytes > 0 {
				msg = "no server-sent event in the " + strconv.FormatInt(rs.sseBytes, 10) + "-byte text/event-stream body: " + clip(rs.start, 120)
			}
			R.Err = &result.Error{Code: h.status, Type: "EventStreamError", Message: msg}
			return
		}
	case modeJSON, modeUndecided:
		if len(bytes.TrimSpace(rs.body)) == 0 {
			R.Err = &result.Error{Code: h.status, Type: "ResponseParseError", Message: "empty response body"}
			return
		}
		c, rsn, err := rs.rp.chunk(rs.body)
		if err != nil {
			R.Err = &result.Error{Code: h.status, Type: "ResponseParseError", Message: "malformed JSON body: " + clip(rs.body, 120)}
			return
		}
		if c || rsn {
			R.FirstTokenNS = R.EndNS
			R.FirstOutputNS = 0
			if c {
				R.FirstOutputNS = R.EndNS
			}
			R.ChunkOffsetsNS = append(R.ChunkOffsetsNS, R.EndNS-R.SentNS)
		}
	}
	switch e := rs.rp.srvErr; {
	case e != nil:
		if e.Code == 0 {
			e.Code = h.status
		}
		R.Err = e
	case rs.parseErr != nil:
		rs.parseErr.Code = h.status
		R.Err = rs.parseErr
	case rs.rp.usageErr != "":
		R.Err = &result.Error{Code: h.status, Type: "ResponseParseError", Message: rs.rp.usageErr}
	case len(R.ChunkOffsetsNS) == 0:
		// An answer without content (only a tool call, only event types
		// the client does not read, only usage) is the Python aiperf's
		// invalid record, an error: it is one here as well, so the run's
		// count of failures and its exports agree.
		e := noContent // its own: the record's error is redacted in place
		R.Err = &e
	}
}

// noContent is the error of an answer without content, aiperf's
// InvalidInferenceResultError (it carries no code), in the words
// lib/metrics gives records written before the replay said it.
var noContent = result.Error{
	Type:    "InvalidInferenceResultError",
	Message: "Invalid inference result: no responses with actual content were received from the server",
}

// count sets the record's token counts: from the last usage the server
// sent, else (for a successful answer) by tokenizing the received text.
// A usage object that reports no completion tokens for an answer that has
// text is taken for the placeholder some servers put on every chunk.
// When the counts come from usage, the client's tokenizer (if the replay
// has one) also counts the successful answer's text into ClientOutputTokens,
// as aiperf's client-side output length, so usage_completion_tokens_diff_pct
// can compare the two.
func (r *runner) count(rs *reqState) {
	R, rp := &rs.rec, &rs.rp
	if rp.hasUsage && rp.usageErr == "" {
		rs.usage = rp.usage
		R.Usage = &rs.usage
		if rp.usage.CompletionTokens > 0 || len(rp.content)+len(rp.reasoning) == 0 {
			R.OutputSource = result.SourceUsage
			R.ReasoningTokens = rp.usage.ReasoningTokens
			R.OutputTokens = max(rp.usage.CompletionTokens-rp.usage.ReasoningTokens, 0)
			if R.Err == nil && len(rp.content)+len(rp.reasoning) > 0 {
				if t := r.tok.get(); t != nil {
					R.ClientCounted = true
					R.ClientOutputTokens = int64(countText(t, rp.content))
					R.ClientReasoningTokens = int64(countText(t, rp.reasoning))
				}
			}
			return
		}
	}
	if R.Err != nil {
		return
	}
	if len(rp.content)+len(rp.reasoning) == 0 {
		R.OutputSource = result.SourceClient
		return
	}
	t := r.tok.get()
	if t == nil {
		return
	}
	R.OutputSource = result.SourceClient
	R.OutputTokens = int64(countText(t, rp.content))
	R.ReasoningTokens = int64(countText(t, rp.reasoning))
}

// retryable reports whether a failure on a reused keep-alive connection
// before any response byte means the server had closed it while idle; the
// request is then sent again on a new connection.
func retryable(err error) bool {
	var se *staleError
	return isEOF(err) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &se)
}

// earlyAnswer reports whether a failed write may have been cut by the
// server's answer: the connection was reset or shut (not a deadline, an
// abort or a stale pooled connection, where nothing can have answered).
func earlyAnswer(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func dialFailure(err error) (*result.Error, bool) {
	if errors.Is(err, errAborted) || errors.Is(err, context.Canceled) {
		return &result.Error{Code: 499, Type: "RequestCancellationError", Message: "not sent: the grace period ended"}, true
	}
	return &result.Error{Type: "ConnectionError", Message: netMessage(err)}, false
}

// failure classifies a failed exchange.
func (r *runner) failure(c *conn, err error, cancel bool, cancelAt, timeoutAt int64) (*result.Error, bool) {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		if c.abort.Load() == abortGrace {
			return &result.Error{Code: 499, Type: "RequestCancellationError", Message: "cut when the grace period after sending ended"}, true
		}
		if cancel && (timeoutAt == 0 || cancelAt <= timeoutAt) {
			return &result.Error{Code: 499, Type: "RequestCancellationError", Message: "cancelled " + r.o.CancelAfter.String() + " after it was sent, as the cancel rate asks"}, true
		}
		return &result.Error{Type: "TimeoutError", Message: "no complete response within " + r.o.Timeout.String()}, false
	case errors.Is(err, errShortBody):
		return &result.Error{Type: "ConnectionError", Message: err.Error()}, false
	case isEOF(err):
		return &result.Error{Type: "ConnectionError", Message: "connection closed before the response"}, false
	}
	var pe *protoError
	if errors.As(err, &pe) {
		return &result.Error{Type: "ProtocolError", Message: pe.msg}, false
	}
	var big *errTooLarge
	if errors.As(err, &big) {
		return &result.Error{Type: "ResponseTooLargeError", Message: big.msg}, false
	}
	var enc *encodingError
	if errors.As(err, &enc) {
		return &result.Error{Type: "ContentEncodingError", Message: enc.msg}, false
	}
	return &result.Error{Type: "ConnectionError", Message: netMessage(err)}, false
}

// netMessage shortens a network error to its cause.
func netMessage(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by peer"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	}
	return err.Error()
}
