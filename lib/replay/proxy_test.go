package replay

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/mock"
)

// testProxy is a loopback HTTP proxy that sends every target to backend
// (host:port): CONNECT tunnels, answered after delay, and absolute-form
// requests forwarded. It notes each request line and Proxy-Authorization.
type testProxy struct {
	URL  string // http://u:p@127.0.0.1:port
	mu   sync.Mutex
	seen []string
}

func (p *testProxy) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

func startProxy(t *testing.T, backend string, delay time.Duration) *testProxy {
	t.Helper()
	p := &testProxy{}
	fwd := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.Out.URL.Scheme, r.Out.URL.Host = "http", backend
	}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := r.Method + " " + r.RequestURI + " auth=" + r.Header.Get("Proxy-Authorization")
		p.mu.Lock()
		p.seen = append(p.seen, line)
		p.mu.Unlock()
		if r.Method != http.MethodConnect {
			r.Header.Del("Proxy-Authorization")
			fwd.ServeHTTP(w, r)
			return
		}
		up, err := net.Dial("tcp", backend)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		time.Sleep(delay)
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			up.Close()
			return
		}
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	})
	u, _ := url.Parse(serve(t, h))
	u.User = url.UserPassword("u", "p")
	p.URL = u.String()
	return p
}

// TestProxyForward: with HTTP_PROXY set, an http target that is not
// loopback is reached through the proxy, each request in absolute form
// with the proxy's credentials (the host does not resolve: only the proxy
// can reach it, as with net/http).
func TestProxyForward(t *testing.T) {
	backend, _ := startMock(t, mock.Config{Fast: true})
	p := startProxy(t, strings.TrimPrefix(backend, "http://"), 0)
	t.Setenv("HTTP_PROXY", p.URL)
	t.Setenv("NO_PROXY", "")
	st := singleTurns(t, 3, 0, func(int) []byte { return chatBody("q", 3, true) })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: "http://model.invalid:8000", Concurrency: 1})
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	for i := range recs {
		checkPhases(t, &recs[i])
	}
	want := "POST http://model.invalid:8000/v1/chat/completions auth=Basic dTpw"
	lines := p.lines()
	if len(lines) != 3 || lines[0] != want {
		t.Errorf("the proxy saw %q, want 3 of %q", lines, want)
	}
}

// TestProxyConnect: with HTTPS_PROXY set, an https target is reached
// through a CONNECT tunnel, and the tunnel's set-up is timed in the
// connection's connecting phase, as the TCP connect of a direct one is.
func TestProxyConnect(t *testing.T) {
	const delay = 20 * time.Millisecond
	srv, err := mock.New(mock.Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	tlsURL, _ := url.Parse(slowTLS(t, srv, 0))
	p := startProxy(t, tlsURL.Host, delay)
	t.Setenv("HTTPS_PROXY", p.URL)
	t.Setenv("NO_PROXY", "other.invalid,10.0.0.0/8")
	st := singleTurns(t, 2, 0, func(int) []byte { return chatBody("q", 3, true) })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: "https://model.invalid:8443/v1", Insecure: true, Concurrency: 1, ConnectionReuse: ReuseNever})
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	for i := range recs {
		h := checkPhases(t, &recs[i])
		if h.Reused || h.TLSNS <= 0 || h.ConnectingNS-h.TLSNS < int64(delay) {
			t.Errorf("record %d: %+v, want connecting - tls >= the proxy's %v", i, h, delay)
		}
	}
	for _, l := range p.lines() {
		if l != "CONNECT model.invalid:8443 auth=Basic dTpw" {
			t.Errorf("the proxy saw %q", l)
		}
	}
}

// TestProxyEnv: loopback targets and NO_PROXY hosts go direct; a proxy
// that is not http:// is refused naming its variable, never ignored.
func TestProxyEnv(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1") // nothing listens
	t.Setenv("HTTPS_PROXY", "socks5://127.0.0.1:1080")
	t.Setenv("NO_PROXY", ".internal")
	for _, u := range []string{"http://127.0.0.1:8000", "localhost:8000", "http://[::1]:8000", "http://a.internal"} {
		ep, err := parseEndpoint(u, "/v1/completions", false)
		if err != nil || ep.proxy != nil {
			t.Errorf("%s: proxy %v, err %v; want direct", u, ep.proxy, err)
		}
	}
	ep, err := parseEndpoint("http://model.invalid", "/v1/completions", false)
	if err != nil || ep.proxy == nil || ep.target() != "http://model.invalid/v1/completions" {
		t.Errorf("http://model.invalid: proxy %v, target %q, err %v", ep.proxy, ep.target(), err)
	}
	_, err = parseEndpoint("https://model.invalid", "/v1/completions", false)
	if err == nil || !strings.Contains(err.Error(), "HTTPS_PROXY=socks5://127.0.0.1:1080: only http:// proxies") {
		t.Errorf("socks5 proxy: %v", err)
	}
}

// TestUnixSocket: --url unix:///path replays over a unix socket, with the
// request path from the store and Host localhost.
func TestUnixSocket(t *testing.T) {
	srv, err := mock.New(mock.Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "m.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var host string
	var mu sync.Mutex
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		host = r.Host + " " + r.URL.Path
		mu.Unlock()
		srv.ServeHTTP(w, r)
	})}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1") // never for a socket
	st := singleTurns(t, 3, 0, func(int) []byte { return chatBody("q", 3, true) })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: "unix://" + sock, Concurrency: 2})
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	for i := range recs {
		checkPhases(t, &recs[i])
	}
	if host != "localhost /v1/chat/completions" {
		t.Errorf("the server saw %q", host)
	}
	// the 404 follow-up asks the same socket
	if ids, err := ListModels(context.Background(), Options{URL: "unix://" + sock}); err != nil || len(ids) != 1 || ids[0] != "mock-model" {
		t.Errorf("ListModels over the socket: %q, %v", ids, err)
	}
}

// TestRedirectNotFollowed: a 307 is a failed request whose message names
// the Location; the request is sent once, to the target alone.
func TestRedirectNotFollowed(t *testing.T) {
	var n atomic.Int32
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Redirect(w, r, "http://other.invalid/v1/chat/completions", http.StatusTemporaryRedirect)
	}))
	st := singleTurns(t, 2, 0, func(int) []byte { return chatBody("q", 3, true) })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Concurrency: 1})
	for _, r := range recs {
		if r.Err == nil || r.Err.Code != 307 || r.Err.Type != "Temporary Redirect" ||
			!strings.HasPrefix(r.Err.Message, "redirected to http://other.invalid/v1/chat/completions: redirects are not followed") {
			t.Errorf("record %d: %+v", r.Record, r.Err)
		}
	}
	if len(recs) != 2 || n.Load() != 2 {
		t.Errorf("%d records, %d requests", len(recs), n.Load())
	}
}
