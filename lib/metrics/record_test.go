package metrics

import (
	"maps"
	"slices"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

const ms = 1_000_000 // ns

// evalMap returns a record's metric values (base units) by tag, with the
// aggregate counters as "#osl_mismatch", "#usage_discrepancy", "#good".
func evalMap(t *testing.T, r result.Record, o Options) (map[string]float64, *values) {
	t.Helper()
	ev, err := o.evaluator()
	if err != nil {
		t.Fatal(err)
	}
	var x values
	ev.eval(&r, &x)
	m := map[string]float64{}
	for i := id(0); i < numRecord; i++ {
		if x.ok(i) {
			m[defs[i].tag] = x.v[i]
		}
	}
	for j := 1; j < len(x.icl); j++ {
		m["icl"+string(rune('0'+j))] = float64(x.icl[j] - x.icl[j-1])
	}
	for name, c := range map[string]int8{"#osl_mismatch": x.oslMismatch, "#usage_discrepancy": x.usageDisc, "#good": x.good} {
		if c >= 0 {
			m[name] = float64(c)
		}
	}
	return m, &x
}

func TestRecordMetrics(t *testing.T) {
	const t0 = int64(1_700_000_000_000_000_000)
	stream := Options{Streaming: true}
	for _, tc := range []struct {
		name  string
		r     result.Record
		o     Options
		valid bool
		want  map[string]float64
	}{
		{
			name: "streamed, usage, four chunks",
			r: result.Record{IntendedNS: t0 - 100, SentNS: t0, FirstTokenNS: t0 + 20*ms, FirstOutputNS: t0 + 20*ms, EndNS: t0 + 41*ms,
				ChunkOffsetsNS: []int64{20 * ms, 25 * ms, 30 * ms, 40 * ms}, Status: 200,
				InputTokens: 98, MaxTokens: 5, OutputTokens: 5, OutputSource: result.SourceUsage,
				Usage: &result.Usage{PromptTokens: 100, CompletionTokens: 5, TotalTokens: 105}},
			o: stream, valid: true,
			want: map[string]float64{
				"time_to_first_token": 20 * ms, "time_to_second_token": 5 * ms, "request_latency": 40 * ms,
				"time_to_first_output_token": 20 * ms,
				"icl1":                       5 * ms, "icl2": 5 * ms, "icl3": 10 * ms,
				"inter_token_latency":              5 * ms, // (40 - 20) ms / (5 - 1)
				"output_token_throughput_per_user": 200,    // 1 / 5 ms
				"prefill_throughput_per_user":      5000,   // 100 tokens / 20 ms
				"input_sequence_length":            100,    // usage preferred over the store's 98
				"output_sequence_length":           5, "output_token_count": 5,
				"usage_prompt_tokens": 100, "usage_completion_tokens": 5, "usage_total_tokens": 105,
				"usage_prompt_tokens_diff_pct": 2.0 / 98 * 100,
				"requested_osl":                5, "osl_mismatch_diff_pct": 0, "#osl_mismatch": 0,
				"#usage_discrepancy": 0,
				"send_lateness":      100, "schedule_relative_latency": 41*ms + 100,
			},
		},
		{
			name: "one chunk: no TTST, ICL or ITL",
			r: result.Record{IntendedNS: t0, SentNS: t0, FirstTokenNS: t0 + 7*ms, FirstOutputNS: t0 + 7*ms, EndNS: t0 + 7*ms,
				ChunkOffsetsNS: []int64{7 * ms}, Status: 200, InputTokens: 10, OutputTokens: 1, OutputSource: result.SourceClient},
			o: stream, valid: true,
			want: map[string]float64{
				"time_to_first_token": 7 * ms, "request_latency": 7 * ms, "time_to_first_output_token": 7 * ms,
				"input_sequence_length": 10, "output_sequence_length": 1, "output_token_count": 1,
				"prefill_throughput_per_user": 10 / (7 * ms * 1e-9),
				"send_lateness":               0, "schedule_relative_latency": 7 * ms,
			},
		},
		{
			name: "no content and no error: aiperf's invalid result",
			r:    result.Record{IntendedNS: t0, SentNS: t0 + 3, EndNS: t0 + 9*ms, Status: 200, InputTokens: 33},
			o:    stream, valid: false,
			want: map[string]float64{"error_isl": 33, "send_lateness": 3},
		},
		{
			name: "non-streaming: no streaming metrics",
			r: result.Record{IntendedNS: t0, SentNS: t0, EndNS: t0 + 50*ms, ChunkOffsetsNS: []int64{50 * ms}, Status: 200,
				InputTokens: 12, MaxTokens: 100, OutputTokens: 90, OutputSource: result.SourceUsage,
				Usage: &result.Usage{PromptTokens: 12, CompletionTokens: 90, TotalTokens: 102}},
			o: Options{}, valid: true,
			want: map[string]float64{
				"request_latency": 50 * ms, "input_sequence_length": 12, "output_sequence_length": 90, "output_token_count": 90,
				"usage_prompt_tokens": 12, "usage_completion_tokens": 90, "usage_total_tokens": 102,
				"usage_prompt_tokens_diff_pct": 0, "#usage_discrepancy": 0,
				// 10 tokens short of 100 is more than min(5 % of 100, 50) = 5.
				"requested_osl": 100, "osl_mismatch_diff_pct": -10, "#osl_mismatch": 1,
				"send_lateness": 0, "schedule_relative_latency": 50 * ms,
			},
		},
		{
			name: "HTTP error",
			r: result.Record{IntendedNS: t0, SentNS: t0 + 1*ms, EndNS: t0 + 2*ms, Status: 500, InputTokens: 64,
				Err: &result.Error{Code: 500, Type: "HTTPError", Message: "boom"}},
			o: stream, valid: false,
			want: map[string]float64{"error_isl": 64, "send_lateness": 1 * ms},
		},
		{
			name: "cancelled after two chunks: an error record",
			r: result.Record{IntendedNS: t0, SentNS: t0, EndNS: t0 + 9*ms, ChunkOffsetsNS: []int64{3 * ms, 4 * ms}, Status: 200,
				InputTokens: 5, Cancelled: true, Err: &result.Error{Code: 499, Type: "RequestCancellationError", Message: "cancelled"}},
			o: stream, valid: false,
			want: map[string]float64{"error_isl": 5, "send_lateness": 0},
		},
		{
			name: "reasoning only: no output tokens, no TTFO",
			r: result.Record{IntendedNS: t0, SentNS: t0, FirstTokenNS: t0 + 2*ms, FirstOutputNS: 0, EndNS: t0 + 8*ms,
				ChunkOffsetsNS: []int64{2 * ms, 5 * ms, 8 * ms}, Status: 200, InputTokens: 20,
				OutputTokens: 0, ReasoningTokens: 7, OutputSource: result.SourceUsage,
				Usage: &result.Usage{PromptTokens: 20, CompletionTokens: 7, TotalTokens: 27, ReasoningTokens: 7}},
			o: stream, valid: true,
			want: map[string]float64{
				"time_to_first_token": 2 * ms, "time_to_second_token": 3 * ms, "request_latency": 8 * ms,
				"icl1": 3 * ms, "icl2": 3 * ms,
				"inter_token_latency":              1 * ms, // (8 - 2) ms / (7 - 1)
				"output_token_throughput_per_user": 1000,
				"prefill_throughput_per_user":      20 / (2 * ms * 1e-9),
				"input_sequence_length":            20, "output_sequence_length": 7, "reasoning_token_count": 7,
				"usage_prompt_tokens": 20, "usage_completion_tokens": 7, "usage_total_tokens": 27, "usage_reasoning_tokens": 7,
				"usage_prompt_tokens_diff_pct": 0, "#usage_discrepancy": 0,
				"send_lateness": 0, "schedule_relative_latency": 8 * ms,
			},
		},
		{
			name: "usage missing: ISL from the store, no usage metrics",
			r: result.Record{IntendedNS: t0, SentNS: t0 + 5, EndNS: t0 + 3*ms, ChunkOffsetsNS: []int64{1 * ms, 3 * ms}, Status: 200,
				InputTokens: 40, OutputTokens: 3, OutputSource: result.SourceClient, FirstOutputNS: t0 + 5 + 1*ms},
			o: stream, valid: true,
			want: map[string]float64{
				"time_to_first_token": 1 * ms, "time_to_second_token": 2 * ms, "request_latency": 3 * ms,
				"time_to_first_output_token": 1 * ms, "icl1": 2 * ms,
				"inter_token_latency": 1 * ms, "output_token_throughput_per_user": 1000,
				"prefill_throughput_per_user": 40 / (1 * ms * 1e-9),
				"input_sequence_length":       40, "output_sequence_length": 3, "output_token_count": 3,
				"send_lateness": 5, "schedule_relative_latency": 3 * ms, // end - intended
			},
		},
		{
			name: "client count beside usage: completion and reasoning discrepancy",
			r: result.Record{SentNS: t0, EndNS: t0 + 4*ms, ChunkOffsetsNS: []int64{4 * ms}, Status: 200,
				InputTokens: 50, MaxTokens: 2000, OutputTokens: 1958, ReasoningTokens: 2, OutputSource: result.SourceUsage,
				ClientCounted: true, ClientOutputTokens: 1957, ClientReasoningTokens: 3,
				Usage: &result.Usage{PromptTokens: 50, CompletionTokens: 1960, TotalTokens: 2010, ReasoningTokens: 2}},
			o: Options{}, valid: true,
			want: map[string]float64{
				"request_latency": 4 * ms, "input_sequence_length": 50, "output_sequence_length": 1960,
				"output_token_count": 1958, "reasoning_token_count": 2,
				"usage_prompt_tokens": 50, "usage_completion_tokens": 1960, "usage_total_tokens": 2010, "usage_reasoning_tokens": 2,
				"usage_prompt_tokens_diff_pct":     0,
				"usage_completion_tokens_diff_pct": 0,               // 1960 vs 1957 + 3
				"usage_reasoning_tokens_diff_pct":  1.0 / 3 * 100.0, // 2 vs 3
				"#usage_discrepancy":               1,
				// 40 short of 2000 is within min(5 % of 2000, 50) = 50.
				"requested_osl": 2000, "osl_mismatch_diff_pct": -2, "#osl_mismatch": 0,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, x := evalMap(t, tc.r, tc.o)
			if x.valid != tc.valid {
				t.Fatalf("valid = %v, want %v", x.valid, tc.valid)
			}
			for k, w := range tc.want {
				g, ok := got[k]
				if !ok {
					t.Errorf("%s missing (want %v)", k, w)
				} else if !closeRel(g, w, 1e-15) {
					t.Errorf("%s = %v, want %v", k, g, w)
				}
			}
			for _, k := range slices.Sorted(maps.Keys(got)) {
				if _, ok := tc.want[k]; !ok && k == "client_lateness" {
					// Internal; without a ceiling wait it is the send lateness.
					if got[k] != got["send_lateness"] {
						t.Errorf("client_lateness = %v, send_lateness %v", got[k], got["send_lateness"])
					}
					continue
				}
				if _, ok := tc.want[k]; !ok {
					t.Errorf("unexpected %s = %v", k, got[k])
				}
			}
		})
	}
}

func TestInvalidRecordError(t *testing.T) {
	_, x := evalMap(t, result.Record{SentNS: 1, EndNS: 2, Status: 200}, Options{})
	if x.valid || x.err == nil || x.err.Type != "InvalidInferenceResultError" || x.err.Code != 0 {
		t.Fatalf("got valid=%v err=%+v", x.valid, x.err)
	}
	e := &result.Error{Code: 503, Type: "HTTPError", Message: "x"}
	_, x = evalMap(t, result.Record{SentNS: 1, EndNS: 2, ChunkOffsetsNS: []int64{1}, Err: e}, Options{})
	if x.valid || x.err != e {
		t.Fatalf("an error record with content: valid=%v err=%+v", x.valid, x.err)
	}
}

func TestGoodRequest(t *testing.T) {
	g, err := ParseGoodput("time_to_first_token:100 inter_token_latency:3.4 output_token_throughput_per_user:250")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Streaming: true, Goodput: g}
	rec := func(ttft, last int64, osl int64) result.Record {
		return result.Record{SentNS: 10, EndNS: 10 + last, ChunkOffsetsNS: []int64{ttft, last}, OutputTokens: osl, OutputSource: result.SourceUsage}
	}
	for _, tc := range []struct {
		name string
		r    result.Record
		good float64
	}{
		// TTFT 100 ms exactly passes (<=); ITL = 300 ms / 101 = 2.97 ms; 336.7 tok/s >= 250.
		{"at the TTFT ceiling", rec(100*ms, 400*ms, 102), 1},
		{"TTFT over by 1 ns", rec(100*ms+1, 400*ms, 102), 0},
		// ITL = 3.4 ms exactly: 340 ms / 100; per-user 294 tok/s.
		{"at the ITL ceiling", rec(50*ms, 390*ms, 101), 1},
		{"throughput per user below its floor", rec(50*ms, 50*ms+4*ms*99, 100), 0}, // ITL 4 ms > 3.4 as well
		{"no ITL (one token): not good", rec(50*ms, 50*ms, 1), 0},
	} {
		got, _ := evalMap(t, tc.r, o)
		if got["#good"] != tc.good {
			t.Errorf("%s: good = %v, want %v (%v)", tc.name, got["#good"], tc.good, got)
		}
	}
	// Larger-is-better alone: throughput per user 200 >= 200 passes.
	g2, _ := ParseGoodput("output_token_throughput_per_user:200")
	got, _ := evalMap(t, rec(1*ms, 1*ms+5*ms, 2), Options{Streaming: true, Goodput: g2})
	if got["#good"] != 1 {
		t.Errorf("per-user floor: good = %v (%v)", got["#good"], got)
	}
}
