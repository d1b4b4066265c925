package metrics

import (
	"bytes"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// The http_req_* metrics follow aiperf's definitions: its request starts
// before the connection is taken or dialled (sending, duration and total
// hold the overhead), waiting ends at the first body delivery, the bytes
// are the bodies'; the http_wire_* metrics are the connection's view.
// Records without phases (written before them) have none; records without
// the body members have no http_req_* that needs them. The console table
// leaves them out and WriteTraceTiming prints them; every export carries
// them.
func TestHTTPTraceMetrics(t *testing.T) {
	rec := func(i int, h *result.HTTP) result.Record {
		return result.Record{Record: i, SentNS: int64(1000 * (i + 1)), FirstByteNS: int64(1000*(i+1) + 5), FirstTokenNS: int64(1000*(i+1) + 10),
			EndNS: int64(1000*(i+1) + 100), ChunkOffsetsNS: []int64{10, 100}, Status: 200, Streamed: true, InputTokens: 10,
			OutputTokens: 2, OutputSource: result.SourceUsage, HTTP: h}
	}
	fresh := &result.HTTP{BlockedNS: 7, DNSNS: 3, ConnectingNS: 300, TLSNS: 200, SendingNS: 2, WaitingNS: 3, ReceivingNS: 95,
		DataSent: 2048, DataReceived: 1024, ChunksSent: 1, ChunksReceived: 4,
		BodySent: 1900, BodyReceived: 800, BodyChunksReceived: 3, BodyWaitingNS: 8, BodyReceivingNS: 90}
	reused := &result.HTTP{Reused: true, BlockedNS: 1, SendingNS: 4, WaitingNS: 1, ReceivingNS: 95, DataSent: 1024, DataReceived: 512, ChunksSent: 1, ChunksReceived: 2,
		BodySent: 900, BodyReceived: 400, BodyChunksReceived: 1, BodyWaitingNS: 5}
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
		{"http_req_connection_overhead", 2, 311e-6, 310e-6, "ms"},
		{"http_req_sending", 2, 317e-6, 312e-6, "ms"},  // 310+2, 1+4: the dial is in it
		{"http_req_waiting", 2, 13e-6, 8e-6, "ms"},     // to the first body delivery
		{"http_req_receiving", 2, 90e-6, 90e-6, "ms"},  // first to last body delivery
		{"http_req_duration", 2, 420e-6, 410e-6, "ms"}, // 312+8+90, 5+5+0
		{"http_req_total", 2, 731e-6, 720e-6, "ms"},    // overhead + duration
		{"http_req_connection_reused", 2, 1, 1, "ratio"},
		{"http_req_data_sent", 2, 2800.0 / 1024, 1900.0 / 1024, "KB"},
		{"http_req_data_received", 2, 1200.0 / 1024, 800.0 / 1024, "KB"},
		{"http_req_chunks_sent", 2, 2, 1, "count"},
		{"http_req_chunks_received", 2, 4, 3, "count"},
		{"http_wire_sending", 2, 6e-6, 4e-6, "ms"},
		{"http_wire_waiting", 2, 4e-6, 3e-6, "ms"},
		{"http_wire_receiving", 2, 190e-6, 95e-6, "ms"},
		{"http_wire_duration", 2, 200e-6, 100e-6, "ms"},
		{"http_wire_data_sent", 2, 3, 2, "KB"},
		{"http_wire_data_received", 2, 1.5, 1, "KB"},
		{"http_wire_reads", 2, 6, 4, "count"},
		// aiperf's request starts before the dial: 10+310, 10+1, 10.
		{"time_to_first_token", 3, 341e-6, 320e-6, "ms"},
		{"request_latency", 3, 611e-6, 410e-6, "ms"},
	} {
		r := s.Get(c.tag)
		if r == nil || r.Count != c.count || r.Unit != c.unit || !close9(r.Sum, c.sum) || !close9(r.Max, c.max) {
			t.Errorf("%s: %+v, want %d values, sum %v, max %v %s", c.tag, r, c.count, c.sum, c.max, c.unit)
		}
	}
	// The benchmark starts at the first request's start, before its dial.
	if r := s.Get("benchmark_duration"); r == nil || !close9(r.Avg, (3100-(1000-310))*1e-9) {
		t.Errorf("benchmark_duration %+v, want %v s", r, (3100-(1000-310))*1e-9)
	}

	// profile_export.jsonl: the request starts before its dial, and the
	// wire metrics stay in results.jsonl.
	var per bytes.Buffer
	if _, err := WriteRecords(&per, &sliceSource{recs: recs[:1]}, Options{Streaming: true}); err != nil {
		t.Fatal(err)
	}
	if out := per.String(); !strings.Contains(out, `"request_start_ns":690,`) || strings.Contains(out, "http_wire") ||
		!strings.Contains(out, `"http_req_waiting":`) {
		t.Errorf("profile_export.jsonl line: %s", out)
	}

	// Records written before the body members: the phases of the
	// connection stand, the body's are absent.
	early := *fresh
	early.BodySent, early.BodyReceived, early.BodyChunksReceived, early.BodyWaitingNS, early.BodyReceivingNS = 0, 0, 0, 0, 0
	so, err := Summarize(FromRecords([]result.Record{rec(0, &early)}), Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"http_req_waiting", "http_req_receiving", "http_req_duration", "http_req_total", "http_req_data_sent", "http_req_chunks_received"} {
		if so.Get(tag) != nil {
			t.Errorf("a record without body members has %s", tag)
		}
	}
	for _, tag := range []string{"http_req_sending", "http_req_connecting", "http_wire_waiting", "http_wire_data_received"} {
		if so.Get(tag) == nil {
			t.Errorf("a record without body members lacks %s", tag)
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
