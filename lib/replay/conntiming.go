package replay

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/result"
)

// HTTP timing. The client owns its sockets, so every phase of a request is
// timed where it happens, with the monotonic clock the records' times come
// from, in the phases k6 and the Python aiperf name (aiperf's
// src/aiperf/metrics/types/http_trace_metrics.py, matched through its
// http_req_connecting, http_req_waiting, ... tags):
//
//	blocked     from asking the pool for a connection to the start of a dial
//	            (or to the send, for a connection from the pool)
//	dns_lookup  resolving the host name (0 for an address, or on a reused connection)
//	connecting  the TCP connect and, on https, the TLS handshake, as aiperf
//	            (aiohttp) counts it (0 on a reused connection)
//	tls         the TLS handshake alone: k6's http_req_tls_handshaking
//	sending     from the send (the record's sent time) to the request's last byte written
//	waiting     from there to the response's first byte (time to first byte)
//	receiving   from the first byte to the last byte of the response
//
// A connection taken from the pool is "reused" whether an earlier request
// used it or it was dialed ahead (the warm-up dials, or the spare dialed
// when the last idle one is taken): this request did not wait for its
// dial, as aiohttp reports a pooled connection.

// dialTimes are the phases of opening one connection, in ns.
type dialTimes struct {
	dns, connect, tls int64 // connect: TCP alone
}

// rsHTTP is a request's HTTP timing in progress.
type rsHTTP struct {
	h       result.HTTP
	sendEnd int64 // when the request's last byte was written; 0 until then
}

// open resolves, connects and, on https, shakes hands, timing each phase.
// The dial timeout bounds the whole.
func (p *pool) open(ctx context.Context) (net.Conn, dialTimes, error) {
	var dt dialTimes
	dctx, cancel := context.WithTimeout(ctx, p.dialer.Timeout)
	defer cancel()
	dialTCP := p.dialTCP
	if dialTCP == nil {
		dialTCP = p.dialer.DialContext
	}
	host, port, err := net.SplitHostPort(p.ep.addr)
	if err != nil {
		return nil, dt, err
	}
	addrs := []string{p.ep.addr}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err != nil {
		t := time.Now()
		ips, err := net.DefaultResolver.LookupNetIP(dctx, "ip", host)
		dt.dns = int64(time.Since(t))
		if err != nil {
			return nil, dt, err
		}
		addrs = addrs[:0]
		for _, ip := range ips {
			addrs = append(addrs, net.JoinHostPort(ip.Unmap().String(), port))
		}
	}
	t := time.Now()
	var nc net.Conn
	for _, a := range addrs {
		if nc, err = dialTCP(dctx, "tcp", a); err == nil {
			break
		}
	}
	dt.connect = int64(time.Since(t))
	if err != nil {
		if ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("dial %s: no connection within %v", p.ep.addr, p.dialer.Timeout)
		}
		return nil, dt, err
	}
	p.dials.Add(1)
	if p.ep.tls == nil {
		return nc, dt, nil
	}
	// The handshake is part of the dial, under the same timeout: a server
	// that accepts and never answers must not hang the run.
	t = time.Now()
	tc := tls.Client(underTLS(nc), p.ep.tls)
	err = tc.HandshakeContext(dctx)
	dt.tls = int64(time.Since(t))
	if err != nil {
		if ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("TLS handshake: no answer within %v", p.dialer.Timeout)
		}
		nc.Close()
		return nil, dt, err
	}
	return tc, dt, nil
}

// timeConn starts the request's HTTP timing: c came from the pool
// (reused) or was dialed for it; asked is when the request asked for a
// connection and sent when it was handed the connection.
func (rs *reqState) timeConn(c *conn, reused bool, asked, sent int64) {
	rs.http = rsHTTP{}
	h := &rs.http.h
	h.Reused = reused
	if !reused {
		h.DNSNS = c.dialed.dns
		h.ConnectingNS = c.dialed.connect + c.dialed.tls
		h.TLSNS = c.dialed.tls
	}
	h.BlockedNS = max(sent-asked-h.DNSNS-h.ConnectingNS, 0)
	rs.rec.HTTP = h
}

// timeSent notes the end of sending n bytes.
func (rs *reqState) timeSent(at int64, n int) {
	rs.http.sendEnd = at
	rs.http.h.SendingNS = max(at-rs.rec.SentNS, 0)
	rs.http.h.DataSent = int64(n)
	rs.http.h.ChunksSent = 1
}

// timeDone completes the HTTP timing once the exchange is over.
func (rs *reqState) timeDone() {
	R := &rs.rec
	if R.HTTP == nil {
		return
	}
	h := &rs.http.h
	if rs.http.sendEnd == 0 {
		return // not sent: the read buffer's counts are an earlier request's
	}
	h.DataReceived, h.ChunksReceived = rs.rr.nread, rs.rr.reads
	if R.FirstByteNS == 0 {
		return
	}
	h.WaitingNS = max(R.FirstByteNS-rs.http.sendEnd, 0)
	if R.EndNS > R.FirstByteNS {
		h.ReceivingNS = R.EndNS - R.FirstByteNS
	}
}
