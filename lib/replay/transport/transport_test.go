package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestProxyFor: net/http's rules (golang.org/x/net/http/httpproxy's
// documentation) for which proxy a target takes.
func TestProxyFor(t *testing.T) {
	env := map[string]string{
		"HTTP_PROXY":  "proxy:3128",
		"https_proxy": "http://u:p@sproxy:8080",
		"no_proxy":    " a.com, .b.com ,10.0.0.0/8, 192.168.1.5, c.com:8000, [::2]",
	}
	p := ProxyFromEnv(func(k string) string { return env[k] })
	for _, c := range []struct {
		scheme, host, want string
	}{
		{"http", "x.org", "http://proxy:3128"},
		{"http", "x.org:8000", "http://proxy:3128"},
		{"https", "x.org", "http://u:p@sproxy:8080"},
		{"http", "localhost:8000", ""},
		{"http", "127.0.0.9:80", ""},
		{"http", "[::1]:80", ""},
		{"http", "a.com", ""},
		{"http", "sub.a.com", ""},
		{"http", "aa.com", "http://proxy:3128"},
		{"http", "b.com", "http://proxy:3128"}, // a leading dot: subdomains only
		{"http", "x.b.com", ""},
		{"http", "10.1.2.3:80", ""},
		{"http", "11.1.2.3:80", "http://proxy:3128"},
		{"http", "192.168.1.5", ""},
		{"http", "c.com:8000", ""},
		{"http", "c.com:9000", "http://proxy:3128"},
		{"http", "[::2]:80", ""},
		{"http", "X.A.COM", ""},
	} {
		u, err := p.For(c.scheme, c.host)
		got := ""
		if u != nil {
			got = u.String()
		}
		if err != nil || got != c.want {
			t.Errorf("%s://%s: %q, %v; want %q", c.scheme, c.host, got, err, c.want)
		}
	}
	env["NO_PROXY"] = "*"
	if u, err := ProxyFromEnv(func(k string) string { return env[k] }).For("http", "x.org"); u != nil || err != nil {
		t.Errorf("NO_PROXY=*: %v, %v", u, err)
	}
	for v, want := range map[string]string{
		"socks5://s:1080": "HTTP_PROXY=socks5://s:1080: only http:// proxies",
		"https://s":       "HTTP_PROXY=https://s: only http:// proxies",
		"http://[bad":     `HTTP_PROXY="http://[bad": not a proxy address`,
	} {
		p := ProxyFromEnv(func(k string) string { return map[string]string{"HTTP_PROXY": v}[k] })
		if _, err := p.For("http", "x.org"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("HTTP_PROXY=%s: %v, want %q", v, err, want)
		}
	}
	cgi := ProxyFromEnv(func(k string) string {
		return map[string]string{"HTTP_PROXY": "proxy:1", "REQUEST_METHOD": "GET"}[k]
	})
	if _, err := cgi.For("http", "x.org"); err == nil || !strings.Contains(err.Error(), "CGI") {
		t.Errorf("CGI: %v", err)
	}
}

// connectProxy answers CONNECT with answer after delay, then (on 2xx)
// tunnels to backend; it returns its URL and the CONNECT requests seen.
func connectProxy(t *testing.T, backend, answer string, delay time.Duration) (*url.URL, chan *http.Request) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	seen := make(chan *http.Request, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					c.Close()
					return
				}
				seen <- req
				time.Sleep(delay)
				io.WriteString(c, answer)
				if !strings.Contains(answer, " 200 ") {
					c.Close()
					return
				}
				up, err := net.Dial("tcp", backend)
				if err != nil {
					c.Close()
					return
				}
				go func() { io.Copy(up, c); up.Close() }()
				io.Copy(c, up)
				c.Close()
			}()
		}
	}()
	return &url.URL{Scheme: "http", Host: l.Addr().String(), User: url.UserPassword("u", "p")}, seen
}

// TestDialConnect: an https target through a proxy is a CONNECT tunnel
// (with the proxy's credentials), timed in Connect; a refusal quotes the
// proxy's status line.
func TestDialConnect(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi") }))
	defer ts.Close()
	backend := strings.TrimPrefix(ts.URL, "https://")
	const delay = 20 * time.Millisecond
	pu, seen := connectProxy(t, backend, "HTTP/1.1 200 Connection established\r\n\r\n", delay)
	d := Dialer{Addr: "model.invalid:443", TLS: &tls.Config{InsecureSkipVerify: true}, Proxy: pu, Timeout: 5 * time.Second}
	nc, dt, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	req := <-seen
	if req.Method != "CONNECT" || req.Host != "model.invalid:443" || req.Header.Get("Proxy-Authorization") != "Basic dTpw" {
		t.Errorf("the proxy saw %s %s %v", req.Method, req.Host, req.Header)
	}
	if dt.Connect < int64(delay) || dt.TLS <= 0 || dt.DNS != 0 {
		t.Errorf("times %+v: want connect >= %v (the CONNECT answer's delay)", dt, delay)
	}
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(nc)
	if !strings.HasSuffix(string(b), "hi") {
		t.Errorf("through the tunnel: %q", b)
	}

	pu, _ = connectProxy(t, backend, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n", 0)
	d.Proxy = pu
	_, _, err = d.Dial(context.Background())
	if err == nil || !strings.Contains(err.Error(), `refused CONNECT model.invalid:443: "HTTP/1.1 407 Proxy Authentication Required"`) || strings.Contains(err.Error(), "u:p") {
		t.Errorf("407: %v", err)
	}
}

// TestDialForward: an http target through a proxy dials the proxy, and
// the requests carry ProxyAuth in absolute form.
func TestDialForward(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	d := Dialer{Addr: "model.invalid:80", Proxy: &url.URL{Scheme: "http", Host: l.Addr().String(), User: url.User("u")}}
	if !d.Forward() || d.Tunnel() || d.ProxyAuth() != "Basic dTo=" {
		t.Errorf("forward %v tunnel %v auth %q", d.Forward(), d.Tunnel(), d.ProxyAuth())
	}
	nc, _, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}
