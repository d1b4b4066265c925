package transport

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Proxy is the proxy set in the environment, read by net/http's rules
// (http.ProxyFromEnvironment, golang.org/x/net/http/httpproxy), so that a
// host net/http reaches through a proxy is reached here the same way:
//
//   - HTTP_PROXY (or http_proxy) for http targets, HTTPS_PROXY (or
//     https_proxy) for https ones, the upper-case name first; a value
//     without a scheme ("proxy:3128") is http://;
//   - NO_PROXY (or no_proxy) is a comma-separated list of hosts not to
//     proxy: an IP address, a CIDR prefix (10.0.0.0/8), a domain name that
//     matches itself and its subdomains ("foo.com" matches "bar.foo.com"),
//     one with a leading dot that matches subdomains only, any of them
//     with a port (host:80, which then must match too); "*" proxies none;
//   - "localhost" and loopback addresses are never proxied;
//   - under CGI (REQUEST_METHOD set) HTTP_PROXY is refused (httpoxy).
//
// Only http:// proxies are spoken: an https:// or socks5:// one is an
// error naming the variable, never ignored.
type Proxy struct {
	HTTP, HTTPS       string // the values
	HTTPVar, HTTPSVar string // the variables they came from
	NoProxy           string
	CGI               bool
}

// ProxyFromEnv reads the proxy variables with getenv (os.Getenv).
func ProxyFromEnv(getenv func(string) string) Proxy {
	var p Proxy
	p.HTTP, p.HTTPVar = envAny(getenv, "HTTP_PROXY", "http_proxy")
	p.HTTPS, p.HTTPSVar = envAny(getenv, "HTTPS_PROXY", "https_proxy")
	p.NoProxy, _ = envAny(getenv, "NO_PROXY", "no_proxy")
	p.CGI = getenv("REQUEST_METHOD") != ""
	return p
}

func envAny(getenv func(string) string, names ...string) (string, string) {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v, n
		}
	}
	return "", ""
}

// For returns the proxy for a target of scheme ("http" or "https") at
// hostport (host or host:port), nil for none.
func (p Proxy) For(scheme, hostport string) (*url.URL, error) {
	val, name := p.HTTP, p.HTTPVar
	if scheme == "https" {
		val, name = p.HTTPS, p.HTTPSVar
	}
	if val == "" {
		return nil, nil
	}
	u, err := parseProxy(val)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %v", name, val, err)
	}
	if !p.use(scheme, hostport) {
		return nil, nil
	}
	if scheme == "http" && p.CGI {
		return nil, fmt.Errorf("%s is refused under CGI (REQUEST_METHOD is set; see golang.org/s/cgihttpproxy)", name)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("%s=%s: only http:// proxies are supported (unset it, or add the host to NO_PROXY)", name, Redact(u))
	}
	return u, nil
}

// parseProxy is net/http's reading of a proxy value, except that a value
// with a scheme that does not parse is an error (net/http would retry it
// with http:// in front).
func parseProxy(v string) (*url.URL, error) {
	u, err := url.Parse(v)
	if (err != nil || u.Scheme == "" || u.Host == "") && !strings.Contains(v, "://") {
		if u2, err2 := url.Parse("http://" + v); err2 == nil && u2.Host != "" {
			return u2, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("not a proxy address: %v", err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("not a proxy address: no host")
	}
	return u, nil
}

// use reports whether a target is proxied under NO_PROXY.
func (p Proxy) use(scheme, hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	if ip != nil && ip.IsLoopback() {
		return false
	}
	for _, e := range strings.Split(p.NoProxy, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e == "*" {
			return false
		}
		if _, cidr, err := net.ParseCIDR(e); err == nil {
			if ip != nil && cidr.Contains(ip) {
				return false
			}
			continue
		}
		eh, ep, err := net.SplitHostPort(e)
		if err != nil {
			eh, ep = e, ""
		}
		eh = strings.Trim(eh, "[]")
		if eh == "" || (ep != "" && ep != port) {
			continue
		}
		if eip := net.ParseIP(eh); eip != nil {
			if ip != nil && eip.Equal(ip) {
				return false
			}
			continue
		}
		eh = strings.TrimPrefix(eh, "*")
		if strings.HasPrefix(eh, ".") {
			if strings.HasSuffix(host, eh) {
				return false
			}
			continue
		}
		if host == eh || strings.HasSuffix(host, "."+eh) {
			return false
		}
	}
	return true
}

// Redact is u without its password, for messages.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Redacted()
}
