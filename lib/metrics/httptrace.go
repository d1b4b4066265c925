package metrics

import (
	"io"
	"slices"
	"strings"

	"github.com/aiperf/toolkit/lib/result"
)

// setHTTP computes the HTTP trace metrics of a valid request from its
// record's phases (lib/result/http.go).
//
// The http_req_* metrics are the Python aiperf's, by its definitions
// (src/aiperf/metrics/types/http_trace_metrics.py over the aiohttp trace
// of src/aiperf/transports/aiohttp_trace.py): its request starts before
// the connection is taken or dialled (aiohttp's on_request_start), and its
// response chunks are body deliveries (a body that is no event stream is
// delivered whole, once read). So, with overhead = blocked + dns_lookup +
// connecting:
//
//   - blocked, dns_lookup, connecting: the connection's phases (connecting
//     holds the TLS handshake; dns_lookup and connecting are 0 on a reused
//     connection); tls_handshaking, k6's, is the handshake alone;
//   - sending = overhead + the write, up to the request's last byte: the
//     dial is inside it, as in aiperf;
//   - waiting = from the last byte written to the first body delivery (for
//     an answer that is not streamed: to the whole body), not to the head;
//   - receiving = first to last body delivery (0 for one);
//   - duration = sending + waiting + receiving, the request's start to its
//     last body byte; total = overhead + duration (aiperf's sum of its six
//     phases, which counts the overhead twice); connection_overhead =
//     overhead;
//   - data_sent = the request body's bytes, chunks_sent 1 (aiohttp writes
//     a body in one chunk); data_received = the body's bytes de-chunked
//     and decoded, chunks_received its deliveries; connection_reused 1 or 0.
//
// The http_wire_* metrics are ours, the connection's view from the moment
// the request had its connection: wire_sending = the write alone,
// wire_waiting = the last byte written to the response's first byte (the
// head: how soon the server answered at all), wire_receiving = first to
// last byte, wire_duration = the three, wire_data_sent/received = the
// bytes written and read (heads and chunk framing included), wire_reads =
// the reads that returned bytes.
//
// A record without an http object (written before it existed) has none; one
// without the body members (written before them) has no http_req_* metric
// that needs them (waiting, receiving, duration, total, data and chunks).
func (x *values) setHTTP(h *result.HTTP) {
	if h == nil {
		return
	}
	f := func(i id, v int64) { x.set(i, float64(v)) }
	f(mHTTPBlocked, h.BlockedNS)
	reused := int64(0)
	if h.Reused {
		reused = 1
	}
	f(mHTTPConnReused, reused)
	f(mHTTPDNS, h.DNSNS)
	f(mHTTPConnecting, h.ConnectingNS)
	f(mHTTPTLS, h.TLSNS)
	overhead := h.BlockedNS + h.DNSNS + h.ConnectingNS
	f(mHTTPConnOverhead, overhead)
	sending := overhead + h.SendingNS
	f(mHTTPSending, sending)

	f(mWireSending, h.SendingNS)
	f(mWireWaiting, h.WaitingNS)
	f(mWireReceiving, h.ReceivingNS)
	f(mWireDuration, h.SendingNS+h.WaitingNS+h.ReceivingNS)
	f(mWireDataSent, h.DataSent)
	f(mWireDataReceived, h.DataReceived)
	f(mWireReads, h.ChunksReceived)

	if h.BodyChunksReceived == 0 {
		return // written before the body members
	}
	f(mHTTPWaiting, h.BodyWaitingNS)
	f(mHTTPReceiving, h.BodyReceivingNS)
	duration := sending + h.BodyWaitingNS + h.BodyReceivingNS
	f(mHTTPDuration, duration)
	f(mHTTPTotal, overhead+duration)
	f(mHTTPDataSent, h.BodySent)
	chunks := int64(0)
	if h.BodySent > 0 {
		chunks = 1
	}
	f(mHTTPChunksSent, chunks)
	f(mHTTPDataReceived, h.BodyReceived)
	f(mHTTPChunksReceived, h.BodyChunksReceived)
}

// WriteTraceTiming writes the http_req_* metrics as a console table of
// their own, in aiperf's display order (aiperf prints it with
// --show-trace-timing). It writes nothing when the records had no HTTP
// phases.
func WriteTraceTiming(w io.Writer, s *Summary) error {
	cols, rows := traceTable(s)
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\n")
	writeTable(&b, "aiperf-replay | HTTP Trace Timing", cols, nil, rows)
	_, err := io.WriteString(w, b.String())
	return err
}

func traceTable(s *Summary) (cols []string, rows [][]string) {
	var list []*Result
	for i := range s.Metrics {
		r := &s.Metrics[i]
		if defs[byTag[r.Tag]].has(flagHTTPTrace) {
			list = append(list, r)
		}
	}
	slices.SortStableFunc(list, func(a, b *Result) int { return defs[byTag[a.Tag]].order - defs[byTag[b.Tag]].order })
	for _, r := range list {
		row := []string{metricCell(r)}
		for _, st := range consoleStats {
			v, ok := statOf(r, st)
			if !ok {
				row = append(row, "N/A")
				continue
			}
			row = append(row, group(v))
		}
		rows = append(rows, row)
	}
	return append([]string{"Metric"}, consoleStats...), rows
}
