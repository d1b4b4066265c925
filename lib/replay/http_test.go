package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// pieceReader returns its data n bytes per Read.
type pieceReader struct {
	b []byte
	n int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := min(r.n, len(p), len(r.b))
	copy(p, r.b[:k])
	r.b = r.b[k:]
	return k, nil
}

// response is what readResponse saw.
type response struct {
	Status int
	Close  bool
	SSE    bool
	Body   string
	Clean  bool
	Err    string
}

// readResponse reads one response from raw, delivered n bytes a read,
// with a buffer of bufSize.
func readResponse(raw []byte, n, bufSize int) response {
	var rr respReader
	var clock int64
	rr.init(&pieceReader{b: raw, n: n}, make([]byte, bufSize), func() int64 { clock++; return clock })
	h, err := rr.readHead()
	if err != nil {
		return response{Err: errKind(err)}
	}
	var body bytes.Buffer
	clean, err := rr.readBody(&h, func(p []byte, t int64) error {
		if t == 0 {
			return errors.New("piece without a read time")
		}
		body.Write(p)
		return nil
	})
	out := response{Status: h.status, Close: h.close, SSE: h.sse, Body: body.String(), Clean: clean}
	if err != nil {
		out.Err = errKind(err)
		out.Body, out.Clean = "", false // how much arrived before an error depends on the pieces
	}
	return out
}

func errKind(err error) string {
	var pe *protoError
	switch {
	case errors.As(err, &pe):
		return "proto"
	case errors.Is(err, errShortBody):
		return "short"
	case isEOF(err):
		return "eof"
	}
	return err.Error()
}

var responseCases = []struct {
	name, in string
	want     response
}{
	{"content-length", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello",
		response{Status: 200, Body: "hello", Clean: true}},
	{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n",
		response{Status: 200, SSE: true, Body: "hello, world", Clean: true}},
	{"chunk extensions and trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0;x\r\nTrailer: 1\r\nMore: 2\r\n\r\n",
		response{Status: 200, Body: "hello", Clean: true}},
	{"hex sizes", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
		response{Status: 200, Body: "0123456789", Clean: true}},
	{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", response{Status: 200, Body: "hi", Clean: true}},
	{"chunked bare LF", "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nhi\n0\n\n", response{Status: 200, Body: "hi", Clean: true}},
	{"until close", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it", response{Status: 200, Close: true, Body: "all of it"}},
	{"http/1.0 closes", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", response{Status: 200, Close: true, Body: "hi", Clean: true}},
	{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi", response{Status: 200, Body: "hi", Clean: true}},
	{"100 continue first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", response{Status: 200, Body: "x", Clean: true}},
	{"204", "HTTP/1.1 204 No Content\r\n\r\n", response{Status: 204, Clean: true}},
	{"error status", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy", response{Status: 503, Body: "busy", Clean: true}},
	{"header case", "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nCONTENT-TYPE: Text/Event-Stream; charset=utf-8\r\n\r\nhi", response{Status: 200, SSE: true, Body: "hi", Clean: true}},
	{"chunked wins over length", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", response{Status: 200, Body: "x", Clean: true}},
	{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", response{Status: 200, Err: "short"}},
	{"chunked cut", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", response{Status: 200, Err: "short"}},
	{"no headers end", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n", response{Err: "eof"}},
	{"empty", "", response{Err: "eof"}},
	{"not http", "SSH-2.0-OpenSSH\r\n\r\n", response{Err: "proto"}},
	{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", response{Err: "proto"}},
	{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", response{Err: "proto"}},
	{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", response{Err: "proto"}},
	{"gzip coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", response{Err: "proto"}},
	{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", response{Status: 200, Err: "proto"}},
	{"chunk without CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n", response{Status: 200, Err: "proto"}},
	{"101", "HTTP/1.1 101 Switching Protocols\r\n\r\n", response{Err: "proto"}},
	{"header without colon", "HTTP/1.1 200 OK\r\nbroken\r\n\r\n", response{Err: "proto"}},
}

func TestReadResponse(t *testing.T) {
	for _, tc := range responseCases {
		for _, n := range []int{1, 3, 1 << 20} {
			if got := readResponse([]byte(tc.in), n, 4096); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s (reads of %d): got %+v, want %+v", tc.name, n, got, tc.want)
			}
		}
	}
}

// Bytes after a response's end make the connection unusable (read with the
// body, they are detected at once; arriving later, they break the next
// response's status line).
func TestBytesAfterBody(t *testing.T) {
	if got := readResponse([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxyz"), 1<<20, 4096); got.Clean || got.Body != "x" {
		t.Errorf("got %+v", got)
	}
}

func TestHeadersTooLarge(t *testing.T) {
	in := "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxHead) + "\r\n\r\n"
	if got := readResponse([]byte(in), 1000, readBufSize); got.Err != "proto" {
		t.Errorf("got %+v", got)
	}
	// A small buffer refuses headers that do not fit it.
	if got := readResponse([]byte("HTTP/1.1 200 OK\r\nX: "+strings.Repeat("a", 100)+"\r\n\r\n"), 7, 64); got.Err != "proto" {
		t.Errorf("got %+v", got)
	}
}

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct{ url, path, addr, host, target string }{
		{"http://127.0.0.1:8000", "/v1/chat/completions", "127.0.0.1:8000", "127.0.0.1:8000", "/v1/chat/completions"},
		{"http://h:1/", "/v1/completions", "h:1", "h:1", "/v1/completions"},
		{"http://h", "/v1/x", "h:80", "h", "/v1/x"},
		{"https://h", "/v1/x", "h:443", "h", "/v1/x"},
		{"http://h:1/prefix", "/v1/x", "h:1", "h:1", "/prefix/v1/x"},
		{"http://h:1/v1/chat/completions", "/v1/chat/completions", "h:1", "h:1", "/v1/chat/completions"},
		{"http://h:1/v1?k=1", "/x", "h:1", "h:1", "/v1/x?k=1"},
		{"http://[::1]:9/", "/x", "[::1]:9", "[::1]:9", "/x"},
		// as the Python aiperf: no scheme means http, and a base URL ending
		// in /v1 does not double the path's /v1
		{"localhost:8000", "/v1/x", "localhost:8000", "localhost:8000", "/v1/x"},
		{"127.0.0.1:8000/v1", "/v1/x", "127.0.0.1:8000", "127.0.0.1:8000", "/v1/x"},
		{"http://h:1/v1", "/v1/chat/completions", "h:1", "h:1", "/v1/chat/completions"},
		{"http://h:1/v1/", "/v1/completions", "h:1", "h:1", "/v1/completions"},
		{"http://h:1/proxy/v1", "/v1/x", "h:1", "h:1", "/proxy/v1/x"},
		{"http://h:1/v10", "/v1/x", "h:1", "h:1", "/v10/v1/x"},
		// a path given without its slash, or with characters a request
		// line cannot carry, is made a valid request target
		{"http://h:1", "v1/x", "h:1", "h:1", "/v1/x"},
		{"http://h:1", "/v1/a b", "h:1", "h:1", "/v1/a%20b"},
		{"http://h:1", "/v1/x?k=1", "h:1", "h:1", "/v1/x?k=1"},
		{"http://h:1?a=1", "/v1/x?k=1", "h:1", "h:1", "/v1/x?k=1&a=1"},
	} {
		ep, err := parseEndpoint(tc.url, tc.path, false)
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if ep.addr != tc.addr || ep.host != tc.host || ep.path != tc.target {
			t.Errorf("%s + %s: addr %s host %s path %s", tc.url, tc.path, ep.addr, ep.host, ep.path)
		}
	}
	for _, bad := range []string{"ftp://h", "http://", "http://u:p@h/", "http://h:1/a\x00b"} {
		if _, err := parseEndpoint(bad, "/x", false); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// FuzzResponse feeds arbitrary server bytes through the whole decoder (the
// status line and headers, the framing, the events and the chunks'
// JSON): it must never panic or hang, and must read the same whatever the
// sizes of the reads.
func FuzzResponse(f *testing.F) {
	for _, tc := range responseCases {
		f.Add([]byte(tc.in), uint8(2))
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
		"52\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":{\"completion_tokens\":1}}\n\n\r\n"+
		"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"), uint8(5))
	for _, c := range codedResponses() {
		f.Add(c, uint8(4))
	}
	f.Fuzz(func(t *testing.T, raw []byte, step uint8) {
		a := readResponse(raw, 1<<20, 4096)
		b := readResponse(raw, int(step%13)+1, 4096)
		a.Clean, b.Clean = false, false // depends on whether bytes after the end were read yet
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("whole: %+v\nreads of %d: %+v", a, step%13+1, b)
		}
		// The content decoders, whatever the reads' sizes.
		if da, db := readDecoded(raw, 1<<20), readDecoded(raw, int(step%13)+1); da != db {
			t.Fatalf("decoded whole: %+v\nreads of %d: %+v", da, step%13+1, db)
		}
		// The event and chunk layers on top.
		if a.Err == "" {
			rs := newReqState()
			rs.rec.SentNS = 0
			rs.t = 1
			rs.mode = modeSSE
			if err := rs.onBody([]byte(a.Body), 1); err == nil {
				var rp reply
				rp.chunk([]byte(a.Body))
				errorMessage([]byte(a.Body))
			}
		}
	})
}

// decoded is what readDecoded saw.
type decoded struct{ Body, Err string }

// readDecoded reads one response of raw, n bytes a read, through its
// content codings (into a 1 MiB limit), as exchange does.
func readDecoded(raw []byte, n int) decoded {
	rs := newReqState()
	rs.limit = 1 << 20
	rs.rr.init(&pieceReader{b: raw, n: n}, rs.buf, func() int64 { return 1 })
	h, err := rs.rr.readHead()
	if err != nil || h.ncodings == 0 || !h.hasBody() {
		return decoded{}
	}
	rs.mode = modeJSON
	if _, err := rs.readCoded(&h); err != nil {
		var ee *encodingError
		var big *errTooLarge
		switch {
		case errors.As(err, &ee):
			return decoded{Err: "encoding"}
		case errors.As(err, &big):
			return decoded{Err: "too large"}
		}
		return decoded{Err: errKind(err)}
	}
	return decoded{Body: string(rs.body)}
}

// TestTLSHandshakeTimeout: an https URL whose server accepts and never
// answers the TLS handshake fails within the dial timeout (--timeout when
// shorter), instead of hanging the run forever.
func TestTLSHandshakeTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent, until the test ends
		}
	}()
	st := singleTurns(t, 1, 0, func(int) []byte { return chatBody("q", 2, true) })
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), st, Options{URL: "https://" + l.Addr().String(), Timeout: 200 * time.Millisecond})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "connecting to") || !strings.Contains(err.Error(), "TLS handshake: no answer within 200ms") {
			t.Fatalf("got %v, want a connection error", err)
		}
	case <-time.After(30 * time.Second): // 150 times the timeout: only a hang gets here
		t.Fatal("the TLS handshake with a silent server did not time out")
	}
}

// readResponseTCP is readResponse over a loopback TCP connection read by
// the shipped sock (rawSock on Linux), the server
// writing raw in pieces of n bytes with a pause after each, then closing.
func readResponseTCP(t *testing.T, raw []byte, n int, pause time.Duration) response {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for b := raw; len(b) > 0; {
			k := min(n, len(b))
			if _, err := c.Write(b[:k]); err != nil {
				return
			}
			b = b[k:]
			time.Sleep(pause)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	s := newSock(c)
	if _, ok := s.(*netSock); ok {
		t.Skip("no raw sock on this platform")
	}
	var rr respReader
	var clock int64
	rr.init(s, make([]byte, 4096), func() int64 { clock++; return clock })
	h, err := rr.readHead()
	if err != nil {
		return response{Err: errKind(err)}
	}
	var body bytes.Buffer
	var last int64
	clean, err := rr.readBody(&h, func(p []byte, t int64) error {
		if t == 0 || t < last {
			return errors.New("piece without a read time, or out of order")
		}
		last = t
		body.Write(p)
		return nil
	})
	out := response{Status: h.status, Close: h.close, SSE: h.sse, Body: body.String(), Clean: clean}
	if err != nil {
		out.Err = errKind(err)
		out.Body, out.Clean = "", false
	}
	return out
}

// The shipped sock (raw reads through the poller) reads every response
// as net.Conn does, in one write or in pieces that make it wait.
func TestReadResponseRawSock(t *testing.T) {
	for _, tc := range responseCases {
		for _, n := range []int{3, 1 << 20} {
			if got := readResponseTCP(t, []byte(tc.in), n, 200*time.Microsecond); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s (writes of %d): got %+v, want %+v", tc.name, n, got, tc.want)
			}
		}
	}
	// bytes after the last chunk, in the same read: not clean
	got := readResponseTCP(t, []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\nxyz"), 1<<20, 0)
	if got.Clean || got.Body != "x" || got.Err != "" {
		t.Errorf("bytes after the body: got %+v", got)
	}
	// a stalled chunked body ends at the read deadline with the read's error
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n"))
			time.Sleep(2 * time.Second)
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var rr respReader
	rr.init(newSock(c), make([]byte, 4096), func() int64 { return 1 })
	h, err := rr.readHead()
	if err != nil {
		t.Fatal(err)
	}
	_, err = rr.readBody(&h, func([]byte, int64) error { return nil })
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("stalled body: got %v, want the read deadline's timeout", err)
	}

	// a body that never ends and never lets the socket empty (a server
	// faster than the client) ends at the read deadline too
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
		chunk := []byte(fmt.Sprintf("%x\r\n%s\r\n", 8000, bytes.Repeat([]byte("x"), 8000)))
		for range 1 << 20 {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	c2, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	rr.init(newSock(c2), make([]byte, 4096), func() int64 { return 1 })
	if h, err = rr.readHead(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	slow := func([]byte, int64) error { time.Sleep(time.Microsecond); return nil }
	if _, err = rr.readBody(&h, slow); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("endless body: got %v, want the read deadline's timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("endless body: the deadline (300 ms) ended the read after %v", d)
	}
}

// A chunked body cut by the server's close (a FIN, or a reset) that
// arrived, with the body's last bytes, before the client read them: the
// read that returns those bytes does not show the close, and the poller
// will not wake again for it. The client must still see the close at once
// (unexpected EOF, or the reset), not wait for a deadline that by default
// never comes.
func TestReadResponseCloseBeforeRead(t *testing.T) {
	for _, reset := range []bool{false, true} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		dialed, closed := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(closed)
			c, err := ln.Accept()
			if err != nil {
				return
			}
			<-dialed
			// more than the client's buffer, so that bytes stay in the
			// socket after the head's read
			c.Write([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s", 20000, bytes.Repeat([]byte("x"), 10000))))
			if reset {
				c.(*net.TCPConn).SetLinger(0)
			}
			c.Close()
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		close(dialed)
		<-closed
		time.Sleep(50 * time.Millisecond) // the close has arrived
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var rr respReader
		rr.init(newSock(c), make([]byte, 4096), func() int64 { return 1 })
		h, err := rr.readHead()
		if err != nil {
			if reset {
				continue // the reset discarded the bytes before the head was read
			}
			t.Fatal(err)
		}
		start := time.Now()
		_, err = rr.readBody(&h, func([]byte, int64) error { return nil })
		var ne net.Error
		if err == nil || errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("reset %v: got %v after %v, want the close's error", reset, err, time.Since(start))
		}
	}
}

// A request that sets its deadlines after abortAll marked its connection
// (the pool handed it out just before) does not undo the abort: its reads
// still fail at once, and the run does not wait past the grace period.
func TestSetDeadlineKeepsAbort(t *testing.T) {
	c, _ := tcpPair(t)
	cn := &conn{nc: c}
	cn.abort.Store(abortGrace)
	c.SetDeadline(abortDeadline)
	go func() { time.Sleep(5 * time.Second); c.Close() }() // only a lost abort waits for this
	for _, tc := range []struct {
		t        time.Time
		readOnly bool
	}{{time.Time{}, false}, {time.Now().Add(time.Hour), false}, {time.Now().Add(time.Hour), true}} {
		cn.setDeadline(tc.t, tc.readOnly)
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("deadline %v (read only %v) on an aborted connection: read gave %v, want the abort's deadline", tc.t, tc.readOnly, err)
		}
	}
}
