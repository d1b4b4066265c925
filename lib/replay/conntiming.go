package replay

import (
	"context"
	"net"

	"github.com/aiperf/toolkit/lib/replay/transport"
	"github.com/aiperf/toolkit/lib/result"
)

// HTTP timing. The client owns its sockets, so every phase of a request is
// timed where it happens, with the monotonic clock the records' times come
// from. The record keeps two views (lib/result/http.go):
//
// The connection's, in k6's phase names:
//
//	blocked     from asking the pool for a connection to the start of a dial
//	            (or to the send, for a connection from the pool)
//	dns_lookup  resolving the host name (0 for an address, or on a reused connection)
//	connecting  the TCP connect and, on https, the TLS handshake, as aiperf
//	            (aiohttp) counts it (0 on a reused connection)
//	tls         the TLS handshake alone: k6's http_req_tls_handshaking
//	sending     from the send (the record's sent time) to the request's last byte written
//	waiting     from there to the response's first byte (its head)
//	receiving   from the first byte to the last byte of the response
//	data_*      the bytes written and read: heads, chunk framing and bodies
//
// The bodies', as the Python aiperf's aiohttp trace sees them
// (src/aiperf/transports/aiohttp_trace.py: its response chunks are body
// deliveries, and an answer that is not an event stream is delivered
// whole, when aiohttp has read it all):
//
//	body_sent            the request body's bytes
//	body_waiting         from the last byte written to the first body delivery
//	body_receiving       from the first body delivery to the last
//	body_received        the body's bytes, de-chunked and decoded
//	body_chunks_received the deliveries: reads that brought body bytes
//
// A connection taken from the pool is "reused" whether an earlier request
// used it or it was dialed ahead (the warm-up dials, or the spare dialed
// when the last idle one is taken): this request did not wait for its
// dial, as aiohttp reports a pooled connection.

// dialTimes are the phases of opening one connection (lib/replay/transport):
// dns is the name dialed (the proxy's, through one), connect the TCP or
// unix connect plus a proxy's CONNECT exchange, tls the handshake with the
// target, so that a proxied connection is timed as a direct one is.
type dialTimes = transport.Times

// rsHTTP is a request's HTTP timing in progress.
type rsHTTP struct {
	h       result.HTTP
	sendEnd int64 // when the request's last byte was written; 0 until then
	// The response body's deliveries so far: the reads that brought body
	// bytes (a read's pieces share its time), the first's and the last's
	// times, and the bytes.
	bodyReads, bodyFirst, bodyLast, bodyBytes int64
}

// open opens a connection for the pool, timing each phase. The dial
// timeout bounds the whole.
func (p *pool) open(ctx context.Context) (net.Conn, dialTimes, error) {
	nc, dt, err := p.dialer.Dial(ctx)
	if err == nil {
		p.dials.Add(1)
	}
	return nc, dt, err
}

// timeConn starts the request's HTTP timing: c came from the pool
// (reused) or was dialed for it; asked is when the request asked for a
// connection and sent when it was handed the connection.
func (rs *reqState) timeConn(c *conn, reused bool, asked, sent int64) {
	rs.http = rsHTTP{}
	h := &rs.http.h
	h.Reused = reused
	if !reused {
		h.DNSNS = c.dialed.DNS
		h.ConnectingNS = c.dialed.Connect + c.dialed.TLS
		h.TLSNS = c.dialed.TLS
	}
	h.BlockedNS = max(sent-asked-h.DNSNS-h.ConnectingNS, 0)
	rs.rec.HTTP = h
}

// timeSent notes the end of sending a request of head and body bytes.
func (rs *reqState) timeSent(at int64, head, body int) {
	rs.http.sendEnd = at
	rs.http.h.SendingNS = max(at-rs.rec.SentNS, 0)
	rs.http.h.DataSent = int64(head + body)
	rs.http.h.ChunksSent = 1
	rs.http.h.BodySent = int64(body)
}

// timeBody notes n bytes of the response body, delivered by the read of
// time t.
func (rs *reqState) timeBody(n int, t int64) {
	b := &rs.http
	if n == 0 {
		return
	}
	b.bodyBytes += int64(n)
	if b.bodyReads == 0 {
		b.bodyFirst = t
	}
	if b.bodyReads == 0 || t != b.bodyLast {
		b.bodyReads++
		b.bodyLast = t
	}
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
	b := &rs.http
	h.BodyReceived = b.bodyBytes
	switch {
	case !R.Streamed:
		// Not an event stream: aiohttp hands the body over whole once it
		// is read (ClientResponse.read), one delivery at the end.
		h.BodyChunksReceived = 1
		h.BodyWaitingNS = max(R.EndNS-b.sendEnd, 0)
	case b.bodyReads > 0:
		h.BodyChunksReceived = b.bodyReads
		h.BodyWaitingNS = max(b.bodyFirst-b.sendEnd, 0)
		h.BodyReceivingNS = b.bodyLast - b.bodyFirst
	}
}
