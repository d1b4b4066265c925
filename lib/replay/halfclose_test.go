package replay

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// halfCloseServer answers each request on a connection and, once the
// connection has been idle for idle, half-closes it (a FIN, as a server
// in a lingering close sends) and then says nothing more on it while it
// still reads: no RST ever comes. It counts the connections it accepted.
func halfCloseServer(t *testing.T, idle time.Duration) (url string, accepted *atomic.Int64) {
	return connServer(t, func(c *net.TCPConn, br *bufio.Reader, done <-chan struct{}) {
		for {
			c.SetReadDeadline(time.Now().Add(idle))
			req, err := http.ReadRequest(br)
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					c.CloseWrite()
					c.SetReadDeadline(time.Time{})
					go func() { <-done; c.Close() }()
					io.Copy(io.Discard, br) // silent, until the client closes
				}
				return
			}
			io.Copy(io.Discard, req.Body)
			writeSSEAnswer(c)
		}
	})
}

// A keep-alive connection the server half-closed while it sat idle (a
// FIN, then silence; no RST follows) fails its next request at once, and
// the request goes again on a new connection: it neither waits for
// --timeout nor fails. (Writing the request inside the wait for its answer
// without first checking the pooled connection, checkIdle, would miss that
// FIN, which came before the wait began.)
func TestHalfClosedIdleConnection(t *testing.T) {
	url, accepted := halfCloseServer(t, 30*time.Millisecond)
	st := singleTurns(t, 3, 500*time.Millisecond, func(i int) []byte { return chatBody("q", 1, true) })
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Concurrency: 1, Timeout: 10 * time.Second})
	if len(recs) != 3 || stats.Errors != 0 {
		t.Fatalf("%d records, %d errors", len(recs), stats.Errors)
	}
	for _, r := range recs {
		if r.Err != nil {
			t.Errorf("record %d: %v", r.Record, r.Err)
		}
	}
	if n := accepted.Load(); n < 3 {
		t.Errorf("the server accepted %d connections; every request after a lull needs a new one", n)
	}
}

// writeSSEAnswer writes a complete streamed answer with keep-alive
// framing.
func writeSSEAnswer(w io.Writer) {
	const body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n"
	fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// connServer serves each accepted connection with fn on 127.0.0.1 and
// counts the connections.
func connServer(t *testing.T, fn func(c *net.TCPConn, br *bufio.Reader, done <-chan struct{})) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer c.Close()
				fn(c.(*net.TCPConn), bufio.NewReader(c), done)
			}()
		}
	}()
	return "http://" + l.Addr().String(), &n
}

// A server that answers with keep-alive framing and then at once closes
// its side (FIN) without saying "Connection: close", as a lingering close
// does: the next request on the pooled connection must see the close
// before it writes and go on a new connection at once, whatever the server
// does next. Before the pooled connection was checked (checkIdle), a
// request reused within 20 ms waited for the answer: until --timeout when
// the server kept reading or drained and closed (no reset comes), and ~500
// ms late when it reset after a pause (net/http's closeWriteAndWait).
func TestHalfCloseRightAfterAnswer(t *testing.T) {
	for _, then := range []string{"keeps reading", "drains 100 ms, closes", "waits 500 ms, resets"} {
		url, conns := connServer(t, func(c *net.TCPConn, br *bufio.Reader, done <-chan struct{}) {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			writeSSEAnswer(c)
			c.CloseWrite()
			switch then {
			case "keeps reading":
				go func() { <-done; c.Close() }()
				io.Copy(io.Discard, br)
			case "drains 100 ms, closes":
				c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				io.Copy(io.Discard, br)
			case "waits 500 ms, resets":
				select {
				case <-time.After(500 * time.Millisecond):
				case <-done:
				}
			}
		})
		st := singleTurns(t, 3, 0, func(i int) []byte { return chatBody("q", 1, true) })
		start := time.Now()
		recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Concurrency: 1, Timeout: 3 * time.Second})
		took := time.Since(start)
		if stats.Errors != 0 || len(recs) != 3 || took > 400*time.Millisecond || conns.Load() < 3 {
			t.Errorf("server %s: %d records, %d errors, %d connections, %v; want 3 answers on 3 connections (and the pool's spare) at once", then, len(recs), stats.Errors, conns.Load(), took)
		}
	}
}

// A server that says "408 Request Timeout" on an idle keep-alive
// connection and closes it (as HAProxy and other front ends do when their
// idle timer fires): the next request must not take the 408 as its answer.
func TestStale408OnIdleConnection(t *testing.T) {
	url, conns := connServer(t, func(c *net.TCPConn, br *bufio.Reader, _ <-chan struct{}) {
		for {
			c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			req, err := http.ReadRequest(br)
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					c.Write([]byte("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
				}
				return
			}
			io.Copy(io.Discard, req.Body)
			writeSSEAnswer(c)
		}
	})
	st := singleTurns(t, 2, 200*time.Millisecond, func(i int) []byte { return chatBody("q", 1, true) })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Concurrency: 1, Timeout: 5 * time.Second})
	for _, r := range recs {
		if r.Err != nil || r.Status != 200 {
			t.Errorf("record %d: status %d, %v; want 200 (the 408 was said before the request)", r.Record, r.Status, r.Err)
		}
	}
	if conns.Load() < 2 {
		t.Errorf("%d connections, want 2 (and the pool's spare)", conns.Load())
	}
}

// A server that answers 413 without reading a large body and resets the
// connection (net/http with a handler that does not read it): the record
// is the server's 413, sent once, not the write's "broken pipe".
func TestEarlyAnswerToLargeBody(t *testing.T) {
	var requests atomic.Int64
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
	}))
	big := []byte(`{"messages":[{"role":"user","content":"` + strings.Repeat("x", 16<<20) + `"}],"model":"m","stream":true,"max_tokens":1}`)
	st := singleTurns(t, 1, 0, func(i int) []byte { return big })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Concurrency: 1, Timeout: 10 * time.Second})
	if len(recs) != 1 || recs[0].Err == nil || recs[0].Err.Code != 413 || recs[0].Status != 413 {
		t.Fatalf("got %+v, want the server's 413", recs)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the server got the request %d times, want 1", n)
	}
}

// tlsConnServer is connServer over TLS (httptest's certificate; replay
// with Insecure): fn gets each handshaken connection.
func tlsConnServer(t *testing.T, fn func(c *tls.Conn, br *bufio.Reader)) (string, *atomic.Int64) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS()
	cfg := ts.TLS.Clone()
	ts.Close()
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer c.Close()
				fn(c.(*tls.Conn), bufio.NewReader(c))
			}()
		}
	}()
	return "https://" + l.Addr().String(), &n
}

// The TLS twin of TestStale408OnIdleConnection and of a keep-alive
// timeout: a TLS server that, after 50 ms idle, says 408, or closes its
// side (close_notify), and then reads on in silence. The next request on
// the pooled connection must find that before it writes
// (netSock.checkIdle) and go on a new connection: before the check, the
// 408 was read as its answer.
// Requests that follow each other at once reuse the connection: the
// check that finds nothing is not taken for stale.
func TestStaleIdleTLSConnection(t *testing.T) {
	for _, says := range []string{"408", "close_notify"} {
		url, conns := tlsConnServer(t, func(c *tls.Conn, br *bufio.Reader) {
			for {
				c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				req, err := http.ReadRequest(br)
				if err != nil {
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						c.SetDeadline(time.Time{})
						if says == "408" {
							c.Write([]byte("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
						} else {
							c.CloseWrite()
						}
						io.Copy(io.Discard, br) // silent, until the client closes
					}
					return
				}
				io.Copy(io.Discard, req.Body)
				writeSSEAnswer(c)
			}
		})
		st := singleTurns(t, 2, 200*time.Millisecond, func(i int) []byte { return chatBody("q", 1, true) })
		recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Insecure: true, Concurrency: 1, Timeout: 5 * time.Second})
		for _, r := range recs {
			if r.Err != nil || r.Status != 200 {
				t.Errorf("%s: record %d: status %d, %v; want 200 (the server closed the idle connection before the request)", says, r.Record, r.Status, r.Err)
			}
		}
		if conns.Load() < 2 {
			t.Errorf("%s: %d connections, want 2 (and the pool's spare)", says, conns.Load())
		}
	}
	url, conns := tlsConnServer(t, func(c *tls.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			writeSSEAnswer(c)
		}
	})
	st := singleTurns(t, 20, 0, func(i int) []byte { return chatBody("q", 1, true) })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Insecure: true, Concurrency: 1, Timeout: 5 * time.Second})
	reused := 0
	for _, r := range recs {
		if r.Err != nil || r.Status != 200 {
			t.Errorf("back to back: record %d: status %d, %v", r.Record, r.Status, r.Err)
		}
		if r.HTTP != nil && r.HTTP.Reused {
			reused++
		}
	}
	if reused != 20 || conns.Load() > 1+maxRefills {
		t.Errorf("back to back: %d of 20 requests reused a connection, over %d connections; want all 20, over the warm one and the pool's spares", reused, conns.Load())
	}
}
