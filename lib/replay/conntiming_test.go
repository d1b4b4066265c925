package replay

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/mock"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/store"
)

// slowTLS serves h over TLS with a handshake that waits d before the
// server's hello.
func slowTLS(t testing.TB, h http.Handler, d time.Duration) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes the pool's spare dials leave when it closes
	ts.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		if d > 0 {
			time.Sleep(d)
		}
		return nil, nil
	}}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts.URL
}

// checkPhases checks what every timed record must satisfy: the phases
// from the send add up to the record's latency, and bytes went both ways.
func checkPhases(t *testing.T, r *result.Record) *result.HTTP {
	t.Helper()
	h := r.HTTP
	if r.Err != nil || h == nil {
		t.Fatalf("record %d: error %v, http %+v", r.Record, r.Err, h)
	}
	if sum := h.SendingNS + h.WaitingNS + h.ReceivingNS; sum != r.EndNS-r.SentNS {
		t.Errorf("record %d: sending+waiting+receiving = %d, want end-sent = %d", r.Record, sum, r.EndNS-r.SentNS)
	}
	if h.WaitingNS != r.FirstByteNS-r.SentNS-h.SendingNS {
		t.Errorf("record %d: waiting %d does not end at the first byte", r.Record, h.WaitingNS)
	}
	if h.DataSent <= 0 || h.DataReceived <= 0 || h.ChunksSent != 1 || h.ChunksReceived < 1 || h.TLSNS > h.ConnectingNS {
		t.Errorf("record %d: %+v", r.Record, h)
	}
	return h
}

// TestHTTPTimingTLS: with a handshake the server delays, a request that
// opens its connection reports tls_handshaking and connecting of at least
// the delay; one on a pooled connection reports 0 for both.
func TestHTTPTimingTLS(t *testing.T) {
	const delay = 20 * time.Millisecond
	srv, err := mock.New(mock.Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	url := slowTLS(t, srv, delay)
	st := singleTurns(t, 4, 0, func(int) []byte { return chatBody("q", 3, true) })

	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Insecure: true, Concurrency: 1, ConnectionReuse: ReuseNever})
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	for i := range recs {
		h := checkPhases(t, &recs[i])
		if h.Reused || h.TLSNS < int64(delay) || h.ConnectingNS < h.TLSNS || h.DNSNS != 0 {
			t.Errorf("never: record %d: %+v, want a new connection with tls >= %v", i, h, delay)
		}
	}

	recs, _ = replayAll(t, context.Background(), st, Options{URL: url, Insecure: true, Concurrency: 1})
	for i := range recs {
		h := checkPhases(t, &recs[i])
		if !h.Reused || h.ConnectingNS != 0 || h.TLSNS != 0 || h.DNSNS != 0 {
			t.Errorf("pooled: record %d: %+v, want a reused connection with no connecting time", i, h)
		}
	}
}

// slowDial connects after waiting d (a TCP connect on loopback cannot be
// delayed from user space: the kernel completes it before accept).
func slowDial(d time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if d > 0 {
			time.Sleep(d)
		}
		var nd net.Dialer
		return nd.DialContext(ctx, network, addr)
	}
}

// TestDialTimes: the pool times the connect and the handshake of a dial,
// and a connection it hands out again is reused.
func TestDialTimes(t *testing.T) {
	const dConn, dTLS = 15 * time.Millisecond, 10 * time.Millisecond
	url := slowTLS(t, http.NotFoundHandler(), dTLS)
	for _, host := range []string{"", "localhost"} {
		u := url
		if host != "" {
			u = strings.Replace(url, "127.0.0.1", host, 1)
		}
		ep, err := parseEndpoint(u, "/", true)
		if err != nil {
			t.Fatal(err)
		}
		p := newPool(ep, 5*time.Second)
		p.dialer.DialTCP = slowDial(dConn)
		c, reused, err := p.get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if reused || c.dialed.Connect < int64(dConn) || c.dialed.TLS < int64(dTLS) {
			t.Errorf("%s: reused %v, %+v: want connect >= %v, tls >= %v", u, reused, c.dialed, dConn, dTLS)
		}
		if host == "" && c.dialed.DNS != 0 {
			t.Errorf("%s: dns %d for an address", u, c.dialed.DNS)
		}
		p.put(c)
		c2, reused, err := p.get(context.Background())
		if err != nil || !reused || c2 != c {
			t.Errorf("%s: second get: %v, reused %v", u, err, reused)
		}
		p.close()
	}
}

// BenchmarkDialTimes reports the median timed connect and handshake
// (µs) when the dialer and the server's handshake add no delay and when
// they add 5 ms each: the difference of the two is what the timing saw of
// the known delays (the issue's ±1 ms check; the delay-free run holds the
// handshake's own CPU and the scheduling of a loaded machine).
func BenchmarkDialTimes(b *testing.B) {
	for _, d := range []time.Duration{0, 5 * time.Millisecond} {
		b.Run(d.String(), func(b *testing.B) {
			url := slowTLS(b, http.NotFoundHandler(), d)
			ep, err := parseEndpoint(url, "/", true)
			if err != nil {
				b.Fatal(err)
			}
			p := newPool(ep, 5*time.Second)
			p.dialer.DialTCP = slowDial(d)
			defer p.close()
			var conns, tlss []float64
			for b.Loop() {
				c, err := p.dial(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				conns = append(conns, float64(c.dialed.Connect)/1e3)
				tlss = append(tlss, float64(c.dialed.TLS)/1e3)
				p.drop(c)
			}
			b.ReportMetric(median(conns), "connect-p50-us")
			b.ReportMetric(median(tlss), "tls-p50-us")
		})
	}
}

// sessionStore is n sessions of turns turns each.
func sessionStore(t testing.TB, n, turns int) *store.Reader {
	spec := &store.Spec{}
	for s := range n {
		spec.Sessions = append(spec.Sessions, fmt.Sprintf("s%d", s))
		for turn := range turns {
			spec.Records = append(spec.Records, store.Record{
				Entry:   store.Entry{Line: uint64(turns*s + turn + 1), Session: uint32(s), Turn: uint32(turn), InputTokens: 5},
				Payload: chatBody("q", 2, true)})
		}
	}
	return openSpec(t, spec)
}

// seen records, per value of a header, the remote addresses its requests
// came from.
type seen struct {
	mu    sync.Mutex
	ports map[string]map[string]bool
	none  int // requests without the header
}

func watch(name string, h http.Handler) (*seen, http.Handler) {
	s := &seen{ports: map[string]map[string]bool{}}
	return s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get(name)
		s.mu.Lock()
		if v == "" {
			s.none++
		} else {
			if s.ports[v] == nil {
				s.ports[v] = map[string]bool{}
			}
			s.ports[v][r.RemoteAddr] = true
		}
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// TestStickySessions: with ReuseSticky every turn of a session arrives on
// one connection (one remote port) and carries the session header, named
// as the options say; without a header name none is sent.
func TestStickySessions(t *testing.T) {
	srv, err := mock.New(mock.Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	const sessions, turns = 6, 3
	st := sessionStore(t, sessions, turns)
	for _, tc := range []struct {
		name, header string
		none         bool
	}{{"default", "", false}, {"named", "X-Session-Affinity", false}, {"no header", "", true}} {
		want := tc.header
		if want == "" {
			want = DefaultSessionHeader
		}
		s, h := watch(want, srv)
		url := serve(t, h)
		recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Concurrency: 3,
			ConnectionReuse: ReuseSticky, SessionHeader: tc.header, NoSessionHeader: tc.none})
		if len(recs) != sessions*turns {
			t.Fatalf("%s: %d records", tc.name, len(recs))
		}
		byCorr := map[string][]bool{}
		for _, r := range recs {
			if r.Err != nil || r.HTTP == nil {
				t.Fatalf("%s: %v", tc.name, r.Err)
			}
			byCorr[r.CorrelationID] = append(byCorr[r.CorrelationID], r.HTTP.Reused)
		}
		for corr, reused := range byCorr {
			n := 0
			for _, u := range reused {
				if !u {
					n++
				}
			}
			if len(reused) != turns || n != 1 {
				t.Errorf("%s: session %s: reused %v, want one new connection for %d turns", tc.name, corr, reused, turns)
			}
		}
		if stats.Dials != sessions+1 { // one dial checks the server is there
			t.Errorf("%s: %d dials for %d sticky sessions", tc.name, stats.Dials, sessions)
		}
		if tc.none {
			if s.none != sessions*turns || len(s.ports) != 0 {
				t.Errorf("%s: %d requests without %s, %d with", tc.name, s.none, want, len(s.ports))
			}
			continue
		}
		if s.none != 0 || len(s.ports) != sessions {
			t.Errorf("%s: %d requests without %s; %d session ids, want %d", tc.name, s.none, want, len(s.ports), sessions)
		}
		for id, ports := range s.ports {
			if len(ports) != 1 {
				t.Errorf("%s: session %s came from %d remote ports: %v", tc.name, id, len(ports), ports)
			}
		}
	}
}

func TestReuseOptions(t *testing.T) {
	st := singleTurns(t, 1, 0, func(int) []byte { return chatBody("q", 2, true) })
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{ConnectionReuse: "often"}, `connection-reuse "often": unknown strategy`},
		{Options{SessionHeader: "Bad Name"}, `session-header`},
		{Options{SessionHeader: "X-Request-ID"}, `session-header`},
		{Options{SessionHeader: "X-S", Headers: []Header{{"x-s", "1"}}}, `X-S is also given as a header`},
	} {
		tc.o.URL = "http://127.0.0.1:1"
		_, err := Run(context.Background(), st, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	n atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestBodyTiming: the record's body members are what the Python aiperf's
// aiohttp trace sees. A server that sends its head at once and its first
// event 30 ms later: body_waiting (aiperf's http_req_waiting) holds the
// 30 ms, waiting_ns ends at the head; the body bytes are the request
// body and the de-chunked response body, the connection's bytes are
// everything written and read. An answer that is not streamed is one
// delivery at its end.
func TestBodyTiming(t *testing.T) {
	const pause = 30 * time.Millisecond
	const ev1 = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"
	const ev2 = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n"
	const head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	wire := fmt.Sprintf("%s%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", head, len(ev1), ev1, len(ev2), ev2)
	const json = `{"choices":[{"index":0,"message":{"content":"hi"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`
	jsonWire := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(json), json)

	for _, streamed := range []bool{true, false} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var got atomic.Int64 // request bytes the server read
		go func() {
			for {
				nc, err := l.Accept()
				if err != nil {
					return
				}
				go func() {
					defer nc.Close()
					cc := &countingConn{Conn: nc}
					br := bufio.NewReader(cc)
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					got.Store(cc.n.Load() - int64(br.Buffered()))
					if !streamed {
						io.WriteString(nc, jsonWire)
						io.Copy(io.Discard, br)
						return
					}
					io.WriteString(nc, head)
					time.Sleep(pause)
					io.WriteString(nc, wire[len(head):len(head)+len(fmt.Sprintf("%x\r\n%s\r\n", len(ev1), ev1))])
					time.Sleep(pause)
					io.WriteString(nc, wire[len(head)+len(fmt.Sprintf("%x\r\n%s\r\n", len(ev1), ev1)):])
					io.Copy(io.Discard, br)
				}()
			}
		}()
		body := chatBody("q", 3, true)
		st := singleTurns(t, 1, 0, func(int) []byte { return body })
		recs, _ := replayAll(t, context.Background(), st, Options{URL: "http://" + l.Addr().String(), Concurrency: 1})
		l.Close()
		if len(recs) != 1 || recs[0].Err != nil || recs[0].HTTP == nil {
			t.Fatalf("streamed %v: %+v", streamed, recs)
		}
		r := &recs[0]
		h := r.HTTP
		if h.BodySent != int64(len(body)) || h.DataSent != got.Load() {
			t.Errorf("streamed %v: body_sent %d, data_sent %d; want the body's %d and the %d bytes the server read", streamed, h.BodySent, h.DataSent, len(body), got.Load())
		}
		if !streamed {
			if h.BodyReceived != int64(len(json)) || h.DataReceived != int64(len(jsonWire)) || h.BodyChunksReceived != 1 || h.BodyReceivingNS != 0 ||
				h.BodyWaitingNS != r.EndNS-r.SentNS-h.SendingNS {
				t.Errorf("not streamed: %+v; want one delivery of %d bytes at the end (%d on the wire)", h, len(json), len(jsonWire))
			}
			continue
		}
		if h.BodyReceived != int64(len(ev1+ev2)) || h.DataReceived != int64(len(wire)) {
			t.Errorf("body_received %d, data_received %d; want the events' %d bytes and the %d on the wire", h.BodyReceived, h.DataReceived, len(ev1+ev2), len(wire))
		}
		if h.BodyWaitingNS < int64(pause) || h.WaitingNS > h.BodyWaitingNS || h.BodyChunksReceived < 1 || h.BodyChunksReceived > 2 {
			t.Errorf("%+v: want body_waiting >= %v (the head came first), waiting_ns to the head, 1 or 2 deliveries", h, pause)
		}
		if h.BodyChunksReceived == 2 && h.BodyReceivingNS < int64(pause) {
			t.Errorf("two deliveries %v apart, body_receiving %d", pause, h.BodyReceivingNS)
		}
		if end := r.SentNS + h.SendingNS + h.BodyWaitingNS + h.BodyReceivingNS; end > r.EndNS {
			t.Errorf("the last body delivery (%d) is after the record's end (%d)", end, r.EndNS)
		}
	}
}
