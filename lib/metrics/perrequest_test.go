package metrics

import (
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// TestRequestMetrics: the per-request values are the ones the summary is
// made of (one request: every statistic is its value).
func TestRequestMetrics(t *testing.T) {
	ok := result.Record{SentNS: 1e9, IntendedNS: 1e9 - 3e6, EndNS: 1e9 + 50e6, Status: 200,
		ChunkOffsetsNS: []int64{20e6, 30e6, 50e6}, OutputTokens: 5, OutputSource: result.SourceUsage, InputTokens: 7}
	failed := result.Record{SentNS: 2e9, IntendedNS: 2e9, EndNS: 2e9 + 1e6, Err: &result.Error{Code: 500, Type: "HTTPError", Message: "boom"}}
	empty := result.Record{SentNS: 3e9, IntendedNS: 3e9, EndNS: 3e9 + 1e6, Status: 200}
	o := Options{Streaming: true}
	m, err := NewRequestMetrics(o)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Summarize(FromRecords([]result.Record{ok}), o)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Eval(&ok) || m.Error() != nil {
		t.Fatal("a successful record evaluates as failed")
	}
	for _, tag := range []string{"time_to_first_token", "inter_token_latency", "request_latency", "send_lateness", "output_sequence_length"} {
		got, have := m.Value(tag)
		want := sum.Get(tag)
		if !have || want == nil || got != want.Avg {
			t.Errorf("%s: got %v (%v), want the summary's %v", tag, got, have, want)
		}
	}
	if _, have := m.Value("error_isl"); have {
		t.Error("error_isl has a value for a successful request")
	}
	if _, have := m.Value("no_such_metric"); have {
		t.Error("an unknown tag has a value")
	}
	if m.Eval(&failed) || m.Error() == nil || m.Error().Type != "HTTPError" {
		t.Errorf("failed record: error %v, want its HTTPError", m.Error())
	}
	if _, have := m.Value("request_latency"); have {
		t.Error("a failed request has a request_latency")
	}
	if v, have := m.Value("send_lateness"); !have || v != 0 {
		t.Errorf("a failed request's send_lateness: %v %v, want 0 true", v, have)
	}
	if m.Eval(&empty) || m.Error() == nil || m.Error().Type != invalidError.Type {
		t.Errorf("answer without content: error %v, want %s", m.Error(), invalidError.Type)
	}
}
