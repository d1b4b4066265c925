package metrics

import (
	"io"
	"slices"
	"strings"

	"github.com/aiperf/toolkit/lib/result"
)

// setHTTP computes the http_req_* metrics of a valid request from its
// record's phases, as aiperf defines them from its aiohttp trace
// (src/aiperf/metrics/types/http_trace_metrics.py):
//
//   - blocked, dns_lookup, connecting, sending, waiting, receiving are the
//     phases (connecting holds the TLS handshake; dns_lookup and
//     connecting are 0 on a reused connection); tls_handshaking, k6's, is
//     the handshake alone;
//   - duration = sending + waiting + receiving (the exchange, without the
//     connection's setup), total = blocked + dns_lookup + connecting +
//     sending + waiting + receiving, connection_overhead = blocked +
//     dns_lookup + connecting;
//   - connection_reused is 1 or 0; data_sent and data_received the bytes
//     written and read (head and body); chunks_sent and chunks_received
//     the writes and the reads.
//
// A record without an http object (written before it existed) has none.
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
	f(mHTTPSending, h.SendingNS)
	f(mHTTPWaiting, h.WaitingNS)
	f(mHTTPReceiving, h.ReceivingNS)
	f(mHTTPDuration, h.SendingNS+h.WaitingNS+h.ReceivingNS)
	f(mHTTPDataSent, h.DataSent)
	f(mHTTPDataReceived, h.DataReceived)
	f(mHTTPChunksSent, h.ChunksSent)
	f(mHTTPChunksReceived, h.ChunksReceived)
	overhead := h.BlockedNS + h.DNSNS + h.ConnectingNS
	f(mHTTPConnOverhead, overhead)
	f(mHTTPTotal, overhead+h.SendingNS+h.WaitingNS+h.ReceivingNS)
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
