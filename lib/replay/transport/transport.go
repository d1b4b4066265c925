// Package transport opens the replay client's connections: to a host
// directly (TCP, then TLS on https), to a unix socket, or through an HTTP
// proxy (a CONNECT tunnel for https targets; for http targets the
// connection is to the proxy itself and the requests name their target
// in absolute form, as curl and net/http do). Each phase of an open is
// timed, so that a proxied connection's figures mean what a direct one's
// do. It speaks no HTTP past a CONNECT: requests and responses are
// lib/replay's.
package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Times are the phases of opening one connection, in ns.
type Times struct {
	DNS     int64 // resolving the name dialed (the proxy's, through one)
	Connect int64 // the TCP (or unix) connect, and a proxy's CONNECT answer
	TLS     int64 // the TLS handshake with the target
}

// Dialer opens connections to one target.
type Dialer struct {
	Network string      // "tcp" (default) or "unix"
	Addr    string      // the target's host:port, or the socket's path
	TLS     *tls.Config // nil: plain
	// Proxy is the HTTP proxy (http://[user:pass@]host[:port]); nil:
	// direct. With TLS the connection is tunnelled to Addr by CONNECT;
	// without, it is the proxy's, and the requests must be absolute-form
	// carrying ProxyAuth.
	Proxy     *url.URL
	Timeout   time.Duration // bounds the whole open; 0: none
	KeepAlive time.Duration
	// DialTCP connects (tests slow it down); nil: a net.Dialer's.
	DialTCP func(ctx context.Context, network, addr string) (net.Conn, error)
	// WrapTLS gives the connection a TLS client runs over; nil: itself.
	WrapTLS func(net.Conn) net.Conn
}

// Tunnel reports whether connections go through a CONNECT tunnel.
func (d *Dialer) Tunnel() bool { return d.Proxy != nil && d.TLS != nil }

// Forward reports whether requests go to the proxy in absolute form.
func (d *Dialer) Forward() bool { return d.Proxy != nil && d.TLS == nil }

// ProxyAuth is the Proxy-Authorization value of the proxy's user
// information, "" without any.
func (d *Dialer) ProxyAuth() string {
	if d.Proxy == nil || d.Proxy.User == nil {
		return ""
	}
	pw, _ := d.Proxy.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(d.Proxy.User.Username()+":"+pw))
}

// Where names what is dialed, for messages: the target, and the proxy.
func (d *Dialer) Where() string {
	switch {
	case d.Network == "unix":
		return "unix:" + d.Addr
	case d.Proxy != nil:
		return d.Addr + " through the proxy " + d.Proxy.Redacted()
	}
	return d.Addr
}

// Dial opens a connection, timing its phases.
func (d *Dialer) Dial(ctx context.Context) (net.Conn, Times, error) {
	var dt Times
	dctx := ctx
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	late := func(err error, what string) error {
		if ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%s: no answer within %v", what, d.Timeout)
		}
		return err
	}
	dialTCP := d.DialTCP
	if dialTCP == nil {
		nd := net.Dialer{KeepAlive: d.KeepAlive}
		dialTCP = nd.DialContext
	}
	var nc net.Conn
	var err error
	if d.Network == "unix" {
		t := time.Now()
		nc, err = dialTCP(dctx, "unix", d.Addr)
		dt.Connect = int64(time.Since(t))
		if err != nil {
			if ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("dial unix:%s: no connection within %v", d.Addr, d.Timeout)
			}
			return nil, dt, err
		}
	} else {
		addr := d.Addr
		if d.Proxy != nil {
			addr = proxyAddr(d.Proxy)
		}
		nc, err = d.dialHost(dctx, dialTCP, addr, &dt)
		if err != nil {
			if ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("dial %s: no connection within %v", addr, d.Timeout)
			}
			return nil, dt, err
		}
	}
	if d.Tunnel() {
		t := time.Now()
		err = d.connect(dctx, nc)
		dt.Connect += int64(time.Since(t))
		if err != nil {
			nc.Close()
			return nil, dt, late(err, "CONNECT "+d.Addr+" at the proxy "+d.Proxy.Redacted())
		}
	}
	if d.TLS == nil {
		return nc, dt, nil
	}
	// The handshake is part of the dial, under the same timeout: a server
	// that accepts and never answers must not hang the run.
	t := time.Now()
	under := nc
	if d.WrapTLS != nil {
		under = d.WrapTLS(nc)
	}
	tc := tls.Client(under, d.TLS)
	err = tc.HandshakeContext(dctx)
	dt.TLS = int64(time.Since(t))
	if err != nil {
		nc.Close()
		if ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("TLS handshake: no answer within %v", d.Timeout)
		}
		return nil, dt, err
	}
	return tc, dt, nil
}

// dialHost resolves addr's host (unless it is an address) and connects
// to its addresses in turn.
func (d *Dialer) dialHost(ctx context.Context, dialTCP func(context.Context, string, string) (net.Conn, error), addr string, dt *Times) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs := []string{addr}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err != nil {
		t := time.Now()
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		dt.DNS = int64(time.Since(t))
		if err != nil {
			return nil, err
		}
		addrs = addrs[:0]
		for _, ip := range ips {
			addrs = append(addrs, net.JoinHostPort(ip.Unmap().String(), port))
		}
	}
	t := time.Now()
	var nc net.Conn
	for _, a := range addrs {
		if nc, err = dialTCP(ctx, "tcp", a); err == nil {
			break
		}
	}
	dt.Connect = int64(time.Since(t))
	return nc, err
}

// proxyAddr is the proxy's host:port (80 by default).
func proxyAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// maxConnectHead bounds a proxy's answer to CONNECT.
const maxConnectHead = 16 << 10

// connect asks the proxy on nc for a tunnel to d.Addr and reads its
// answer: a 2xx opens the tunnel; anything else is an error quoting the
// proxy's status line. The answer must end at its head: the target speaks
// only after the TLS client's hello.
func (d *Dialer) connect(ctx context.Context, nc net.Conn) error {
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
		defer nc.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req := "CONNECT " + d.Addr + " HTTP/1.1\r\nHost: " + d.Addr + "\r\n"
	if a := d.ProxyAuth(); a != "" {
		req += "Proxy-Authorization: " + a + "\r\n"
	}
	req += "\r\n"
	if _, err := nc.Write([]byte(req)); err != nil {
		return err
	}
	buf := make([]byte, 0, 1024)
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= maxConnectHead {
				return fmt.Errorf("proxy: an answer to CONNECT of over %d bytes", maxConnectHead)
			}
			buf = append(buf, make([]byte, len(buf))...)[:len(buf)]
		}
		n, err := nc.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if i := bytes.Index(buf, []byte("\r\n\r\n")); i >= 0 {
			if i+4 != len(buf) {
				return errors.New("proxy: bytes after its answer to CONNECT")
			}
			return connectStatus(buf[:i], d)
		}
		if err != nil {
			return fmt.Errorf("proxy: no answer to CONNECT: %v", err)
		}
	}
}

// connectStatus checks the status line of a CONNECT answer.
func connectStatus(head []byte, d *Dialer) error {
	line, _, _ := bytes.Cut(head, []byte("\r\n"))
	f := strings.Fields(string(line))
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/1.") {
		return fmt.Errorf("proxy: not an HTTP answer to CONNECT: %q", clip(line))
	}
	code, err := strconv.Atoi(f[1])
	if err != nil {
		return fmt.Errorf("proxy: not an HTTP answer to CONNECT: %q", clip(line))
	}
	if code < 200 || code > 299 {
		return fmt.Errorf("proxy %s refused CONNECT %s: %q", d.Proxy.Redacted(), d.Addr, clip(line))
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 120 {
		b = b[:120]
	}
	return string(b)
}
