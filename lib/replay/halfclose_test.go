package replay

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// halfCloseServer answers each request on a connection and, once the
// connection has been idle for idle, half-closes it (a FIN, as a server
// in a lingering close sends) and then says nothing more on it while it
// still reads: no RST ever comes. It counts the connections it accepted.
func halfCloseServer(t *testing.T, idle time.Duration) (url string, accepted *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int64{}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); l.Close() })
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n"
	serve := func(c *net.TCPConn) {
		defer c.Close()
		br := bufio.NewReader(c)
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
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go serve(c.(*net.TCPConn))
		}
	}()
	return "http://" + l.Addr().String(), accepted
}

// A keep-alive connection the server half-closed while it sat idle (a
// FIN, then silence; no RST follows) fails its next request at once, and
// the request goes again on a new connection: it neither waits for
// --timeout nor fails. (Writing the request inside the wait for its answer
// would miss that FIN, which came before the wait began.)
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
