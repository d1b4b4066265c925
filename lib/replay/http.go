package replay

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aiperf/toolkit/lib/internal/baseurl"
	"github.com/aiperf/toolkit/lib/replay/transport"
)

// The client speaks HTTP/1.1 itself, on plain or TLS connections, instead of
// going through net/http: a request is one writev of a prepared header and
// the body straight from the store's mapping, the response is read into one
// large buffer per request and parsed in place (status line, headers,
// chunked framing, server-sent events), and every read is timestamped where
// it returns. That keeps the client's CPU per request and its share of the
// measured latencies small, and it lets the first byte and each event be
// timed without hooks.

// endpoint is where requests go.
type endpoint struct {
	addr string      // host:port to dial, or a unix socket's path
	host string      // Host header value
	path string      // the request's path (and query)
	tls  *tls.Config // nil for http
	unix bool        // addr is a unix socket
	// proxy is the HTTP proxy from the environment (transport.Proxy);
	// nil: direct. For an http target the request line names the target
	// in absolute form (target).
	proxy *url.URL
}

// target is the request line's target: the path, or on an http target
// through a proxy the absolute URL.
func (ep *endpoint) target() string {
	if ep.proxy != nil && ep.tls == nil {
		return "http://" + ep.host + ep.path
	}
	return ep.path
}

// dialer is the transport.Dialer of ep's connections.
func (ep *endpoint) dialer(timeout time.Duration) transport.Dialer {
	d := transport.Dialer{Addr: ep.addr, TLS: ep.tls, Proxy: ep.proxy, Timeout: timeout, KeepAlive: 30 * time.Second, WrapTLS: underTLS}
	if ep.unix {
		d.Network = "unix"
	}
	return d
}

// parseEndpoint joins a base URL and a path. A base URL with a path of its
// own (a proxy prefix such as http://h/prefix) keeps it in front of path;
// a base URL that already ends in path is taken as the whole target. As in
// the Python aiperf, a base URL without a scheme ("localhost:8000", its
// default) is http, and one ending in /v1 does not double the path's
// leading /v1. path is made a valid request target: a leading slash is
// added when it lacks one, and characters a request line cannot carry are
// percent-encoded; the base URL's query goes after the path's own.
//
// A base URL unix:///run/vllm.sock is the unix socket at that path (all
// that follows unix://, taken literally); the request's path is path, and
// its Host header "localhost". The proxy is the environment's
// (transport.ProxyFromEnv): a target it names is reached through it, one
// it refuses (an https:// or socks5:// proxy) is an error naming the
// variable.
func parseEndpoint(base, path string, insecure bool) (endpoint, error) {
	if sock, ok := strings.CutPrefix(base, "unix://"); ok {
		if sock == "" {
			return endpoint{}, fmt.Errorf("url %q: no socket path (want unix:///path/to.sock)", base)
		}
		ep, err := parseEndpoint("http://localhost", path, insecure)
		ep.addr, ep.unix = sock, true
		return ep, err
	}
	u, err := baseurl.Parse(base)
	if errors.Is(err, baseurl.ErrScheme) {
		return endpoint{}, fmt.Errorf("url %q: want an http://, https:// or unix:// URL", base)
	}
	if err != nil {
		return endpoint{}, fmt.Errorf("url %q: %v", base, err)
	}
	var ep endpoint
	if u.Scheme == "https" {
		ep.tls = &tls.Config{ServerName: u.Hostname(), NextProtos: []string{"http/1.1"}, InsecureSkipVerify: insecure}
	}
	if u.User != nil {
		return ep, fmt.Errorf("url: credentials in the URL are not supported (pass the key in a header)")
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if ep.tls != nil {
			port = "443"
		}
	}
	ep.addr = net.JoinHostPort(u.Hostname(), port)
	ep.host = u.Host
	if base != "http://localhost" { // not a unix socket's
		if ep.proxy, err = transport.ProxyFromEnv(os.Getenv).For(u.Scheme, u.Host); err != nil {
			return ep, err
		}
	}
	var query string
	if path != "" {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		p, err := url.Parse(path)
		if err != nil || p.Scheme != "" || p.Host != "" {
			return ep, fmt.Errorf("path %q: not a request path", path)
		}
		path, query = p.EscapedPath(), p.RawQuery
	}
	prefix := strings.TrimSuffix(u.EscapedPath(), "/")
	switch {
	case path == "":
		ep.path = prefix
	case strings.HasSuffix(prefix, path):
		ep.path = prefix
	case strings.HasSuffix(prefix, "/v1") && strings.HasPrefix(path, "/v1/"):
		ep.path = prefix + strings.TrimPrefix(path, "/v1")
	default:
		ep.path = prefix + path
	}
	if ep.path == "" {
		ep.path = "/"
	}
	for _, q := range []string{query, u.RawQuery} {
		if q == "" {
			continue
		}
		if strings.Contains(ep.path, "?") {
			ep.path += "&" + q
		} else {
			ep.path += "?" + q
		}
	}
	return ep, nil
}

// conn is one pooled connection.
type conn struct {
	nc   net.Conn
	io   sock // nc's reads and request writes
	uses int
	// deadline: a request set a deadline on nc, which the next request on
	// it must clear (only the request holding the connection touches it).
	deadline bool
	abort    atomic.Int32 // abortReason set by pool.abortAll
	dialed   dialTimes    // how long opening it took (conntiming.go)
}

// abortDeadline is the past deadline abortAll gives the connections in use.
var abortDeadline = time.Unix(1, 0)

// setDeadline sets c's deadline (the read deadline only with readOnly; the
// zero time: none) without undoing abortAll's: a request that set its own
// after abortAll had marked c (the pool handed c out just before) puts the
// past one back. abortAll marks before it sets, so either this sees the
// mark or abortAll's deadline comes after this one.
func (c *conn) setDeadline(t time.Time, readOnly bool) {
	if readOnly {
		c.nc.SetReadDeadline(t)
	} else {
		c.nc.SetDeadline(t)
	}
	if c.abort.Load() != abortNone {
		c.nc.SetDeadline(abortDeadline)
	}
}

// Reasons a pool aborts connections in use.
const (
	abortNone  = iota
	abortGrace // the grace period after the end of sending ran out
)

// pool keeps idle keep-alive connections (LIFO, so the warmest is reused)
// and knows every open connection, so that abortAll can cut the requests
// in flight. Its size is not capped: it holds as many connections as there
// were requests in flight at once.
type pool struct {
	ep     endpoint
	dialer transport.Dialer

	mu       sync.Mutex
	idle     []*conn
	all      map[*conn]struct{}
	reason   int32 // once set, no connection goes back to idle
	closed   bool
	refills  int // background dials running
	refillWG sync.WaitGroup

	dials atomic.Int64
}

// maxRefills bounds the background dials that keep a spare connection.
const maxRefills = 2

func newPool(ep endpoint, dialTimeout time.Duration) *pool {
	return &pool{ep: ep, dialer: ep.dialer(dialTimeout), all: make(map[*conn]struct{})}
}

// get returns an idle connection or dials a new one. reused reports the
// former.
// Taking the last idle connection starts a background dial for a spare,
// so that a burst finds a connection ready instead of dialing inside its
// measured send.
func (p *pool) get(ctx context.Context) (c *conn, reused bool, err error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c = p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.refillLocked(ctx)
		p.mu.Unlock()
		return c, true, nil
	}
	p.refillLocked(ctx)
	p.mu.Unlock()
	c, err = p.dial(ctx)
	return c, false, err
}

func (p *pool) refillLocked(ctx context.Context) {
	if len(p.idle) > 0 || p.refills >= maxRefills || p.closed || p.reason != abortNone {
		return
	}
	p.refills++
	p.refillWG.Add(1)
	go func() {
		defer p.refillWG.Done()
		c, err := p.dial(ctx)
		p.mu.Lock()
		p.refills--
		p.mu.Unlock()
		if err == nil {
			p.put(c)
		}
	}()
}

// warm dials n connections in parallel and keeps them idle.
func (p *pool) warm(ctx context.Context, n int) error {
	errs := make(chan error, n)
	for range n {
		go func() {
			c, err := p.dial(ctx)
			if err == nil {
				c.uses-- // put counts a use
				p.put(c)
			}
			errs <- err
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (p *pool) dial(ctx context.Context) (*conn, error) {
	nc, dt, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	c := &conn{nc: nc, io: newSock(nc), dialed: dt}
	p.mu.Lock()
	if p.reason != abortNone {
		p.mu.Unlock()
		nc.Close()
		return nil, errAborted
	}
	p.all[c] = struct{}{}
	p.mu.Unlock()
	return c, nil
}

var errAborted = errors.New("aborted")

// put returns a connection after a complete response.
func (p *pool) put(c *conn) {
	c.uses++
	p.mu.Lock()
	if p.reason != abortNone || p.closed {
		p.mu.Unlock()
		p.drop(c)
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// drop closes a connection that must not be reused.
func (p *pool) drop(c *conn) {
	c.nc.Close()
	p.mu.Lock()
	delete(p.all, c)
	p.mu.Unlock()
}

// abortAll makes every read and write in flight fail now, marking the
// connections with reason, and closes the idle ones.
func (p *pool) abortAll(reason int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reason = reason
	for c := range p.all {
		c.abort.Store(reason) // before the deadline: see conn.setDeadline
		c.nc.SetDeadline(abortDeadline)
	}
	for _, c := range p.idle {
		c.nc.Close()
		delete(p.all, c)
	}
	p.idle = nil
}

// close waits for background dials and closes every connection: idle
// ones, and those sessions held for their next turn (no request is in
// flight when it is called).
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.refillWG.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.all {
		c.nc.Close()
		delete(p.all, c)
	}
	p.idle = nil
}

// protoError is a response that breaks HTTP/1.1.
type protoError struct{ msg string }

func (e *protoError) Error() string { return e.msg }

func protoErrorf(format string, args ...any) error {
	return &protoError{fmt.Sprintf(format, args...)}
}

// head is a response's status line and the headers the client acts on.
type head struct {
	status        int
	contentLength int64 // -1 when absent
	chunked       bool
	close         bool // the server will close the connection after this response
	sse           bool // Content-Type: text/event-stream
	// codings are the content codings of the body in the order they were
	// applied (Content-Encoding, identity left out); ncodings of them.
	codings  [maxCodings]uint8
	ncodings int
	coding   string // the Content-Encoding value, when it names a coding not decoded
	location string // a redirect's (3xx) Location, clipped
}

// Content codings (RFC 9110 §8.4.1) the client decodes.
const (
	codingGzip    = iota + 1 // gzip, x-gzip
	codingDeflate            // deflate: the zlib format (raw deflate also read)
	codingOther              // any other: the response fails with ContentEncodingError
)

// maxCodings bounds the codings applied one over the other.
const maxCodings = 4

// maxHead bounds the status line and headers of a response.
const maxHead = 64 << 10

// respReader reads one response from a connection into buf, parsing in
// place. Every read is timestamped when it returns, and every event the
// parser completes within a read's bytes takes that read's time: that is
// when its last byte reached the client, as closely as the socket can say.
//
// Several events in one read share its time, so the gaps between them are
// 0 (an inter-token latency near 0, a huge output-token throughput per
// user). It happens when the server wrote them together (one segment; the
// truth, which no client can split) or when the client read late and the
// kernel had queued them. A smaller read buffer while a stream is in
// progress would not recover their arrival times: the bytes are already
// queued, and successive small reads of them return microseconds apart,
// spread by the client's own syscalls, not by the network (and cost about
// 0.6 µs a read more: BenchmarkQueuedReads). Kernel receive timestamps
// (SO_TIMESTAMPNS) do not either: TCP merges a segment that arrives while
// earlier bytes wait into the queued buffer and stamps the merge with the
// newest arrival. So the buffer stays large (a read takes all the kernel
// has), and the reads' times are what the records hold.
type respReader struct {
	buf       []byte
	r, w      int
	rd        interface{ Read([]byte) (int, error) }
	now       func() int64
	firstByte int64 // time of the first read that returned bytes
	lastRead  int64 // time of the read that returned the bytes at buf[r:w]
	err       error // sticky read error, reported once the buffer is drained
	nread     int64 // bytes read
	reads     int64 // reads that returned bytes
}

func (rr *respReader) init(rd interface{ Read([]byte) (int, error) }, buf []byte, now func() int64) {
	*rr = respReader{buf: buf[:cap(buf)], rd: rd, now: now}
}

// fill reads more bytes after buf[r:w], moving them to the front first
// when the buffer is full.
func (rr *respReader) fill() error {
	if rr.err != nil {
		return rr.err
	}
	if rr.r == rr.w {
		rr.r, rr.w = 0, 0
	} else if rr.w == len(rr.buf) {
		if rr.r == 0 {
			return protoErrorf("response headers larger than %d bytes", len(rr.buf))
		}
		rr.w = copy(rr.buf, rr.buf[rr.r:rr.w])
		rr.r = 0
	}
	n, err := rr.rd.Read(rr.buf[rr.w:])
	if n > 0 {
		t := rr.now()
		rr.lastRead = t
		rr.nread += int64(n)
		rr.reads++
		if rr.firstByte == 0 {
			rr.firstByte = t
		}
		rr.w += n
	}
	if err != nil {
		rr.err = err
		if n > 0 {
			return nil
		}
		return err
	}
	return nil
}

// readHead reads a final (non-1xx) status line and its headers.
func (rr *respReader) readHead() (head, error) {
	for {
		h, err := rr.readOneHead()
		if err != nil {
			return h, err
		}
		if h.status >= 200 {
			return h, nil
		}
		if h.status == 101 {
			return h, protoErrorf("unexpected 101 Switching Protocols")
		}
		// 100 Continue, 103 Early Hints...: a final response follows.
	}
}

func (rr *respReader) readOneHead() (head, error) {
	h := head{contentLength: -1}
	from := 0 // bytes of buf[r:w] already searched, less the 3 a blank line may straddle
	for {
		b := rr.buf[rr.r:rr.w]
		if end := headEnd(b, from); end >= 0 {
			if end > maxHead {
				return h, protoErrorf("response headers larger than %d bytes", maxHead)
			}
			if err := parseHead(b[:end], &h); err != nil {
				return h, err
			}
			rr.r += end
			return h, nil
		}
		if len(b) >= maxHead {
			return h, protoErrorf("response headers larger than %d bytes", maxHead)
		}
		from = max(0, len(b)-3)
		if err := rr.fill(); err != nil {
			return h, err
		}
	}
}

// headEnd returns the length of the header block at the start of b (up to
// and including the blank line), or -1 if b does not hold all of it yet.
// The search starts at from.
func headEnd(b []byte, from int) int {
	for i := max(from, 0); i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		if i < len(b) && b[i] == '\n' {
			return i + 1
		}
		if i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n' {
			return i + 2
		}
	}
	return -1
}

// parseHead parses a status line and header lines (b ends with the blank
// line).
func parseHead(b []byte, h *head) error {
	line, rest := cutLine(b)
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || (line[7] != '0' && line[7] != '1') || line[8] != ' ' {
		return protoErrorf("malformed status line %q", clip(line, 60))
	}
	http10 := line[7] == '0'
	code := line[9:12]
	for _, c := range code {
		if c < '0' || c > '9' {
			return protoErrorf("malformed status line %q", clip(line, 60))
		}
	}
	if len(line) > 12 && line[12] != ' ' {
		return protoErrorf("malformed status line %q", clip(line, 60))
	}
	h.status = int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0')
	keepAlive := false
	for len(rest) > 0 {
		line, rest = cutLine(rest)
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue // obsolete line folding: ignore the continuation
		}
		c := bytes.IndexByte(line, ':')
		if c <= 0 {
			return protoErrorf("malformed header line %q", clip(line, 60))
		}
		name, value := line[:c], bytes.TrimSpace(line[c+1:])
		switch {
		case asciiEqualFold(name, "content-length"):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 {
				return protoErrorf("bad Content-Length %q", clip(value, 40))
			}
			if h.contentLength >= 0 && h.contentLength != n {
				return protoErrorf("conflicting Content-Length headers")
			}
			h.contentLength = n
		case asciiEqualFold(name, "transfer-encoding"):
			// The last coding decides the framing; only chunked is read.
			last := value
			if i := bytes.LastIndexByte(value, ','); i >= 0 {
				last = bytes.TrimSpace(value[i+1:])
			}
			if asciiEqualFold(last, "chunked") {
				h.chunked = true
			} else if len(last) > 0 && !asciiEqualFold(last, "identity") {
				return protoErrorf("unsupported Transfer-Encoding %q", clip(value, 40))
			}
		case asciiEqualFold(name, "connection"):
			for rest := value; rest != nil; {
				var tok []byte
				tok, rest = cutToken(rest)
				if asciiEqualFold(tok, "close") {
					h.close = true
				} else if asciiEqualFold(tok, "keep-alive") {
					keepAlive = true
				}
			}
		case asciiEqualFold(name, "content-encoding"):
			for rest := value; rest != nil; {
				var tok []byte
				tok, rest = cutToken(rest)
				var c uint8
				switch {
				case len(tok) == 0 || asciiEqualFold(tok, "identity"):
					continue
				case asciiEqualFold(tok, "gzip") || asciiEqualFold(tok, "x-gzip"):
					c = codingGzip
				case asciiEqualFold(tok, "deflate"):
					c = codingDeflate
				default:
					c = codingOther
				}
				if c == codingOther || h.ncodings == maxCodings {
					h.coding = clip(value, 60)
					c = codingOther
				}
				if h.ncodings < maxCodings {
					h.codings[h.ncodings] = c
					h.ncodings++
				}
			}
		case asciiEqualFold(name, "content-type"):
			mt := value
			if i := bytes.IndexByte(mt, ';'); i >= 0 {
				mt = mt[:i]
			}
			h.sse = asciiEqualFold(bytes.TrimSpace(mt), "text/event-stream")
		case h.status >= 300 && h.status < 400 && asciiEqualFold(name, "location"):
			h.location = clip(value, 200)
		}
	}
	if http10 && !keepAlive {
		h.close = true
	}
	if h.chunked {
		h.contentLength = -1 // Transfer-Encoding overrides Content-Length
	}
	return nil
}

// cutToken returns the first element of a comma-separated header value,
// trimmed, and the rest after its comma (nil after the last element).
func cutToken(v []byte) (tok, rest []byte) {
	if i := bytes.IndexByte(v, ','); i >= 0 {
		return bytes.TrimSpace(v[:i]), v[i+1:]
	}
	return bytes.TrimSpace(v), nil
}

func cutLine(b []byte) (line, rest []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil
	}
	line, rest = b[:i], b[i+1:]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// hasBody reports whether a response to a POST with this status carries a
// body.
func (h *head) hasBody() bool {
	return h.status != 204 && h.status != 304 && h.status >= 200
}

// readBody reads the body as h frames it, calling fn with each piece and
// the time of the read that brought it. clean reports that the body ended
// exactly where its framing says, with no byte after it, so that the
// connection can carry another request (unless h.close).
func (rr *respReader) readBody(h *head, fn func(p []byte, t int64) error) (clean bool, err error) {
	b := newBodyReader(rr, h)
	for {
		if err := b.next(); err != nil {
			if err == io.EOF {
				return b.clean, nil
			}
			return false, err
		}
		if err := fn(b.p, b.t); err != nil {
			return false, err
		}
	}
}

// bodyReader hands out the pieces of a body as h frames it, one at a time
// (readBody pushes them to a function; an io.Reader over it feeds a
// decompressor).
type bodyReader struct {
	rr    *respReader
	kind  int // how the body is framed
	ch    chunked
	left  int64  // Content-Length framing: bytes still to come
	p     []byte // the current piece, a slice of the read buffer
	t     int64  // the time of the read that brought p
	clean bool   // at io.EOF: see readBody
}

// Body framings.
const (
	bodyNone    = iota // no body (204, 304)
	bodyChunked        // Transfer-Encoding: chunked
	bodyLength         // Content-Length
	bodyClose          // until the server closes the connection
)

// newBodyReader reads the body of h (the head's fields are copied, so
// that h never escapes).
func newBodyReader(rr *respReader, h *head) bodyReader {
	b := bodyReader{rr: rr, left: h.contentLength}
	switch {
	case !h.hasBody():
		b.kind = bodyNone
	case h.chunked:
		b.kind = bodyChunked
	case h.contentLength >= 0:
		b.kind = bodyLength
	default:
		b.kind = bodyClose
	}
	return b
}

// errPiece stops the chunked decoder once it has handed out a piece.
var errPiece = errors.New("piece")

// next makes b.p the next piece of the body (valid until the next call)
// and b.t its read time; it returns io.EOF at the body's end.
func (b *bodyReader) next() error {
	rr := b.rr
	b.p = nil
	switch b.kind {
	case bodyNone:
		b.clean = rr.r == rr.w
		return io.EOF
	case bodyChunked:
		for {
			if b.ch.state == chDone {
				b.clean = rr.r == rr.w && rr.err == nil
				return io.EOF
			}
			if rr.r == rr.w {
				if err := rr.fill(); err != nil {
					return bodyReadErr(err)
				}
			}
			t := rr.lastRead
			n, _, err := b.ch.feed(rr.buf[rr.r:rr.w], func(p []byte) error {
				b.p, b.t = p, t
				return errPiece
			})
			rr.r += n
			if err == errPiece {
				return nil
			}
			if err != nil {
				return err
			}
		}
	case bodyLength:
		if b.left == 0 {
			b.clean = rr.r == rr.w && rr.err == nil
			return io.EOF
		}
		if rr.r == rr.w {
			if err := rr.fill(); err != nil {
				return bodyReadErr(err)
			}
		}
		p := rr.buf[rr.r:rr.w]
		if int64(len(p)) > b.left {
			p = p[:b.left]
		}
		rr.r += len(p)
		b.left -= int64(len(p))
		b.p, b.t = p, rr.lastRead
		return nil
	default: // until the server closes the connection
		for rr.r == rr.w {
			if err := rr.fill(); err != nil {
				if isEOF(err) {
					b.clean = false
					return io.EOF
				}
				return err
			}
		}
		b.p, b.t = rr.buf[rr.r:rr.w], rr.lastRead
		rr.r = rr.w
		return nil
	}
}

// Read implements io.Reader over the pieces, for a decompressor: the
// bytes it returns arrived at b.t. Errors of the connection are wrapped in
// *connError, so that they can be told from the decompressor's own.
func (b *bodyReader) Read(dst []byte) (int, error) {
	for len(b.p) == 0 {
		if err := b.next(); err != nil {
			if err == io.EOF {
				return 0, io.EOF
			}
			return 0, &connError{err}
		}
	}
	n := copy(dst, b.p)
	b.p = b.p[n:]
	return n, nil
}

// connError is a failure of the connection below a decompressor.
type connError struct{ err error }

func (e *connError) Error() string { return e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// errShortBody is a body cut off before the end its framing announced.
var errShortBody = errors.New("connection closed before the response ended")

func bodyReadErr(err error) error {
	if isEOF(err) {
		return errShortBody
	}
	return err
}

// chunked decodes the chunked transfer coding (RFC 9112 §7.1)
// incrementally. Chunk extensions and trailer fields are read and ignored.
type chunked struct {
	state   int
	size    int64 // the chunk size being parsed, then the bytes left in the chunk
	digits  int
	lineLen int
	ext     bool // past the size digits (in BWS or extensions)
	blank   bool // the trailer line so far is empty
}

const (
	chSize = iota
	chData
	chDataCR
	chDataLF
	chTrailer
	chDone
)

// maxChunkLine bounds a chunk-size line (with extensions) and a trailer line.
const maxChunkLine = 4096

// feed consumes bytes of p, calling fn with the data of each chunk. It
// returns how many bytes it consumed (all of p unless the body ended) and
// whether the body ended.
func (c *chunked) feed(p []byte, fn func([]byte) error) (int, bool, error) {
	i := 0
	for i < len(p) {
		switch c.state {
		case chSize:
			b := p[i]
			i++
			c.lineLen++
			if c.lineLen > maxChunkLine {
				return i, false, protoErrorf("chunk size line longer than %d bytes", maxChunkLine)
			}
			switch {
			case b == '\n':
				if c.digits == 0 {
					return i, false, protoErrorf("chunk size line without a size")
				}
				c.lineLen, c.digits, c.ext = 0, 0, false
				if c.size == 0 {
					c.state, c.blank = chTrailer, true
				} else {
					c.state = chData
				}
			case c.ext || b == '\r' || b == ';' || b == ' ' || b == '\t':
				// extensions, white space and the CR of CRLF run to the line end
				c.ext = true
			default:
				v, ok := unhex(b)
				if !ok {
					return i, false, protoErrorf("bad byte %q in chunk size", b)
				}
				if c.size > 1<<40 {
					return i, false, protoErrorf("chunk size too large")
				}
				c.size = c.size<<4 | int64(v)
				c.digits++
			}
		case chData:
			n := len(p) - i
			if int64(n) > c.size {
				n = int(c.size)
			}
			data := p[i : i+n]
			i += n
			c.size -= int64(n)
			if c.size == 0 {
				c.state = chDataCR
			}
			if err := fn(data); err != nil {
				return i, false, err
			}
		case chDataCR:
			switch p[i] {
			case '\r':
				c.state = chDataLF
			case '\n':
				c.state = chSize
			default:
				return i, false, protoErrorf("chunk data not followed by CRLF")
			}
			i++
		case chDataLF:
			if p[i] != '\n' {
				return i, false, protoErrorf("chunk data not followed by CRLF")
			}
			i++
			c.state = chSize
		case chTrailer:
			b := p[i]
			i++
			c.lineLen++
			if c.lineLen > maxChunkLine {
				return i, false, protoErrorf("trailer line longer than %d bytes", maxChunkLine)
			}
			switch b {
			case '\n':
				if c.blank {
					c.state = chDone
					return i, true, nil
				}
				c.lineLen, c.blank = 0, true
			case '\r':
			default:
				c.blank = false
			}
		case chDone:
			return i, true, nil
		}
	}
	return i, c.state == chDone, nil
}

func unhex(b byte) (byte, bool) {
	switch {
	case '0' <= b && b <= '9':
		return b - '0', true
	case 'a' <= b && b <= 'f':
		return b - 'a' + 10, true
	case 'A' <= b && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}
