package metrics

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

func TestParseGoodput(t *testing.T) {
	g, err := ParseGoodput("  time_to_first_token:120 \t inter_token_latency:3.4 output_token_throughput_per_user:5e2 ")
	if err != nil {
		t.Fatal(err)
	}
	want := Goodput{{"time_to_first_token", 120}, {"inter_token_latency", 3.4}, {"output_token_throughput_per_user", 500}}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("got %v, want %v", g, want)
	}
	if s := g.String(); s != "time_to_first_token:120 inter_token_latency:3.4 output_token_throughput_per_user:500" {
		t.Errorf("String() = %q", s)
	}
	slos, err := g.resolve(true)
	if err != nil {
		t.Fatal(err)
	}
	// Display units to base units, directions from the metric.
	if slos[0].threshold != 120e6 || slos[0].floor || slos[1].threshold != 3.4e6 || !slos[2].floor || slos[2].threshold != 500 {
		t.Errorf("resolved %+v", slos)
	}
	for in, msg := range map[string]string{
		"":                         "empty string",
		"   ":                      "empty string",
		"time_to_first_token":      "not in 'key:value' format",
		":5":                       "empty key",
		"time_to_first_token:":     "empty value",
		"time_to_first_token:fast": "must be numeric",
		"time_to_first_token:NaN":  "must be numeric",
		"ttft:100":                 `unknown metric tag "ttft"`,
		"time_to_first_token:100 request_latency:5 time_to_first_token:200": `"time_to_first_token" is given twice (time_to_first_token:100 and time_to_first_token:200)`,
		"requested_osl:5":                 `unknown metric tag "requested_osl"`,
		"request_throughput:5":            "not a per-request metric",
		"inter_chunk_latency:5":           "not a per-request metric",
		"error_isl:5":                     "not a per-request metric",
		"request_latency:1 bad":           "not in 'key:value' format",
		"request_latency:1:2":             "must be numeric",
		"output_sequence_length:1e999999": "must be numeric",
	} {
		_, err := ParseGoodput(in)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseGoodput(%q) = %v, want an error with %q", in, err, msg)
		}
	}
	// Streaming metrics need a streaming run, as aiperf refuses them.
	g, _ = ParseGoodput("time_to_first_token:100 request_latency:300")
	if _, err := Summarize(FromRecords(nil), Options{Goodput: g}); err == nil || !strings.Contains(err.Error(), "time_to_first_token") {
		t.Errorf("TTFT SLO without streaming: %v", err)
	}
	if _, err := NewLive(Options{Goodput: g}); err == nil {
		t.Error("NewLive accepted a TTFT SLO without streaming")
	}
	if _, err := NewRecordWriter(io.Discard, Options{Goodput: g}); err == nil {
		t.Error("NewRecordWriter accepted a TTFT SLO without streaming")
	}
}

func FuzzParseGoodput(f *testing.F) {
	for _, s := range []string{"time_to_first_token:100 inter_token_latency:3.4", "request_latency:250", "output_token_throughput_per_user:600",
		"a:b", ":", "time_to_first_token:1e400", "time_to_first_token:-inf input_sequence_length:0x1p4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGoodput(s)
		if err != nil {
			return
		}
		if len(g) == 0 {
			t.Fatalf("%q parsed to no SLOs without an error", s)
		}
		// What String writes parses back to the same SLOs.
		again, err := ParseGoodput(g.String())
		if err != nil || !reflect.DeepEqual(again, g) {
			t.Fatalf("%q -> %q -> %v, %v", s, g.String(), again, err)
		}
		for _, slo := range g {
			if info, ok := Lookup(slo.Tag); !ok || !info.PerRequest {
				t.Fatalf("%q: accepted %q", s, slo.Tag)
			}
		}
	})
}

func TestLookup(t *testing.T) {
	i, ok := Lookup("inter_token_latency")
	if !ok || i.Header != "Inter Token Latency" || i.Unit != "ms" || !i.PerRequest || !i.Streaming || i.LargerIsBetter {
		t.Errorf("inter_token_latency: %+v %v", i, ok)
	}
	if _, ok := Lookup("requested_osl"); ok {
		t.Error("an internal metric is visible")
	}
	seen := map[string]bool{}
	for _, m := range All() {
		if seen[m.Tag] || m.Tag == "" || m.Header == "" || m.Unit == "" {
			t.Errorf("registry entry %+v", m)
		}
		seen[m.Tag] = true
	}
	for _, tag := range []string{"time_to_first_token", "time_to_second_token", "time_to_first_output_token", "inter_token_latency",
		"inter_chunk_latency", "request_latency", "output_token_throughput_per_user", "prefill_throughput_per_user",
		"input_sequence_length", "output_sequence_length", "output_token_count", "reasoning_token_count",
		"usage_prompt_tokens", "usage_completion_tokens", "usage_total_tokens", "usage_reasoning_tokens",
		"usage_prompt_tokens_diff_pct", "usage_completion_tokens_diff_pct", "usage_reasoning_tokens_diff_pct",
		"osl_mismatch_diff_pct", "osl_mismatch_count", "usage_discrepancy_count", "itl_near_zero_count", "error_isl",
		"request_count", "error_request_count", "good_request_count", "benchmark_duration", "request_throughput",
		"output_token_throughput", "total_token_throughput", "goodput", "total_isl", "total_osl",
		"total_output_tokens", "total_reasoning_tokens", "total_error_isl",
		"send_lateness", "schedule_relative_latency"} {
		if !seen[tag] {
			t.Errorf("%s missing from the registry", tag)
		}
	}
}

func TestSummaryEdges(t *testing.T) {
	// No records: one pass, nothing to report.
	s, err := Summarize(FromRecords(nil), Options{Streaming: true})
	if err != nil || len(s.Metrics) != 0 || s.Passes != 1 || s.ErrorRate() != 0 {
		t.Fatalf("empty: %+v %v", s, err)
	}
	// Warmup only.
	w := synth(5, 3)
	for i := range w {
		w[i].Phase = result.PhaseWarmup
	}
	s, _ = Summarize(FromRecords(w), Options{Streaming: true})
	if s.Warmup != 5 || len(s.Metrics) != 0 || s.Requests != 0 {
		t.Fatalf("warmup only: %+v", s)
	}
	// Non-streaming: no streaming metrics at all.
	recs := synth(200, 4)
	s, _ = Summarize(FromRecords(recs), Options{})
	for _, tag := range []string{"time_to_first_token", "inter_token_latency", "inter_chunk_latency", "output_token_throughput_per_user"} {
		if s.Get(tag) != nil {
			t.Errorf("non-streaming summary has %s", tag)
		}
	}
	for _, tag := range []string{"request_latency", "request_throughput", "output_token_throughput", "benchmark_duration", "error_request_count"} {
		if s.Get(tag) == nil {
			t.Errorf("non-streaming summary lacks %s", tag)
		}
	}
	// Only failures: counts and error metrics, no throughput.
	var fails []result.Record
	for _, r := range recs {
		if r.Err != nil {
			fails = append(fails, r)
		}
	}
	s, _ = Summarize(FromRecords(fails), Options{Streaming: true})
	if s.Get("request_count") != nil || s.Get("request_throughput") != nil || s.Get("error_request_count").Avg != float64(len(fails)) ||
		s.ErrorRate() != 1 || s.Get("total_error_isl") == nil {
		t.Errorf("failures only: %+v", s.Metrics)
	}
}

// TestSummarizeErrors: a bad line names its file and line; records that
// change between passes are refused.
func TestSummarizeErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "a.jsonl")
	writeRecords(t, good, synth(10, 5))
	bad := filepath.Join(dir, "b.jsonl")
	os.WriteFile(bad, []byte(`{"v":1,"record":1,"sent_unix_ns":1}`+"\n"+`{"v":1,"sent_unix_ns":"x"}`+"\n"), 0o644)
	_, err := Summarize(OpenFiles(good, bad), Options{})
	var de *result.DecodeError
	if !errors.As(err, &de) || de.File != bad || de.Line != 2 || de.Field != "sent_unix_ns" {
		t.Fatalf("got %v", err)
	}
	if _, err := Summarize(OpenFiles(filepath.Join(dir, "missing.jsonl")), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	recs := synth(50, 6)
	calls := 0
	changing := func() (Source, io.Closer, error) {
		calls++
		if calls == 2 {
			return &sliceSource{recs: recs[:49]}, nopCloser{}, nil
		}
		return &sliceSource{recs: recs}, nopCloser{}, nil
	}
	if _, err := Summarize(changing, Options{Streaming: true}); !errors.Is(err, ErrRecordsChanged) {
		t.Fatalf("changing records: %v", err)
	}
}
