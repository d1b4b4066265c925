package metrics

import (
	"bytes"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// The http_req_* metrics follow the record's phases; records without them
// (written before they existed) have none; the console table leaves them
// out and WriteTraceTiming prints them; every export carries them.
func TestHTTPTraceMetrics(t *testing.T) {
	rec := func(i int, h *result.HTTP) result.Record {
		return result.Record{Record: i, SentNS: int64(1000 * (i + 1)), FirstByteNS: int64(1000*(i+1) + 5), FirstTokenNS: int64(1000*(i+1) + 10),
			EndNS: int64(1000*(i+1) + 100), ChunkOffsetsNS: []int64{10, 100}, Status: 200, Streamed: true, InputTokens: 10,
			OutputTokens: 2, OutputSource: result.SourceUsage, HTTP: h}
	}
	fresh := &result.HTTP{BlockedNS: 7, DNSNS: 3, ConnectingNS: 300, TLSNS: 200, SendingNS: 2, WaitingNS: 3, ReceivingNS: 95,
		DataSent: 2048, DataReceived: 1024, ChunksSent: 1, ChunksReceived: 4}
	reused := &result.HTTP{Reused: true, BlockedNS: 1, SendingNS: 4, WaitingNS: 1, ReceivingNS: 95, DataSent: 1024, DataReceived: 512, ChunksSent: 1, ChunksReceived: 2}
	recs := []result.Record{rec(0, fresh), rec(1, reused), rec(2, nil)}
	s, err := Summarize(FromRecords(recs), Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tag      string
		count    int64
		sum, max float64
		unit     string
	}{
		{"http_req_blocked", 2, 8e-6, 7e-6, "ms"},
		{"http_req_connecting", 2, 300e-6, 300e-6, "ms"},
		{"http_req_tls_handshaking", 2, 200e-6, 200e-6, "ms"},
		{"http_req_dns_lookup", 2, 3e-6, 3e-6, "ms"},
		{"http_req_duration", 2, 200e-6, 100e-6, "ms"},
		{"http_req_connection_overhead", 2, 311e-6, 310e-6, "ms"},
		{"http_req_total", 2, 511e-6, 410e-6, "ms"},
		{"http_req_connection_reused", 2, 1, 1, "ratio"},
		{"http_req_data_sent", 2, 3, 2, "KB"},
		{"http_req_chunks_received", 2, 6, 4, "count"},
	} {
		r := s.Get(c.tag)
		if r == nil || r.Count != c.count || r.Unit != c.unit || !close9(r.Sum, c.sum) || !close9(r.Max, c.max) {
			t.Errorf("%s: %+v, want %d values, sum %v, max %v %s", c.tag, r, c.count, c.sum, c.max, c.unit)
		}
	}
	var con, trace, csv bytes.Buffer
	if err := WriteConsole(&con, s, ""); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(con.String(), "HTTP") {
		t.Errorf("the console table shows HTTP trace metrics:\n%s", con.String())
	}
	if err := WriteTraceTiming(&trace, s); err != nil {
		t.Fatal(err)
	}
	if out := trace.String(); !strings.Contains(out, "HTTP Trace Timing") || !strings.Contains(out, "HTTP Waiting (TTFB)") ||
		strings.Index(out, "HTTP Blocked") > strings.Index(out, "HTTP Total Time") {
		t.Errorf("trace timing table:\n%s", out)
	}
	if err := WriteCSV(&csv, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csv.String(), "HTTP Waiting (TTFB)") {
		t.Errorf("the CSV lacks http_req_waiting:\n%s", csv.String())
	}

	old, err := Summarize(FromRecords(recs[2:]), Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	trace.Reset()
	if old.Get("http_req_waiting") != nil || WriteTraceTiming(&trace, old) != nil || trace.Len() != 0 {
		t.Errorf("records without http phases report HTTP metrics: %q", trace.String())
	}
}

func close9(a, b float64) bool {
	d := a - b
	return d < 1e-9*max(1, b) && d > -1e-9*max(1, b)
}
