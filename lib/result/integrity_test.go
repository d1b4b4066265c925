package result

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

const t0 = 1_750_000_000_000_000_000 // 2025-06-15

// run returns the lines of a run of id with n requests and its end line.
func run(id string, n int) [][]byte {
	var lines [][]byte
	for i := range n {
		r := Record{Record: i, RequestID: id + "-" + string(rune('0'+i)), SentNS: t0 + int64(i)*1e6, EndNS: t0 + int64(i)*1e6 + 5e5}
		if i == 0 {
			r.Run = &RunInfo{ID: id}
		}
		lines = append(lines, Append(nil, &r))
	}
	return append(lines, AppendEnd(nil, &End{RunID: id, Results: int64(n)}))
}

func join(parts ...[][]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, bytes.Join(p, nil)...)
	}
	return b
}

// TestRunIntegrity: a file that contradicts itself is refused with its
// line and member; the runs as replay writes them, one or several
// concatenated, read.
func TestRunIntegrity(t *testing.T) {
	a, b := run("aa", 3), run("bb", 2)
	for _, tc := range []struct {
		name string
		in   []byte
		want string // "" reads
	}{
		{"one run", join(a), ""},
		{"two runs concatenated", join(a, b), ""},
		{"a run without its end line", join(a[:3]), ""},
		{"a line twice", join(a[:2], a[1:]), `f:3: x_request_id: "aa-1" again (line 2 has it): a request's line given twice`},
		{"an id twice that the run did not make", join([][]byte{
			Append(nil, &Record{RequestID: "x", SentNS: t0}), Append(nil, &Record{RequestID: "x", SentNS: t0})}), `f:2: x_request_id: "x" again (line 1 has it)`},
		{"another run's line spliced in", join(a[:2], b[1:2], a[2:3]), `f:3: x_request_id: "bb-1" is not a request of run aa (line 1's): another run's line`},
		{"the end line's count disagrees", join(a[:2], a[3:]), "f:3: results: the end line counts 3 results, and 2 lines of its run come before it"},
		{"two end lines", join(a, a[3:]), "f:5: end: a second end line (the run's is line 4)"},
		{"a record after the end line", join(a, [][]byte{Append(nil, &Record{RequestID: "aa-9", SentNS: t0})}), "f:5: end: a record after the run's end line (line 4)"},
		{"another run's end line", join(a[:3], b[2:]), `f:4: run_id: "bb" is not the run of the lines before it (aa, line 1)`},
		{"the same run twice", join(a, a), "f:5: run.id: run aa again (it started at line 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decodeAll(t, tc.in)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("got %v, want it read", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestImpossibleLines: times that contradict each other and token counts
// whose sums would overflow are refused by the decoder, naming the line's
// member; times no run can have are refused by CheckWindow.
func TestImpossibleLines(t *testing.T) {
	for _, tc := range []struct{ name, line, want string }{
		{"first token after the end", `{"v":1,"sent_unix_ns":100,"first_token_unix_ns":300,"end_unix_ns":200}`,
			"f:1: first_token_unix_ns: 300 is after end_unix_ns 200: the answer came after it ended"},
		{"first byte after the end", `{"v":1,"sent_unix_ns":100,"first_byte_unix_ns":300,"end_unix_ns":200}`, "first_byte_unix_ns: 300 is after end_unix_ns 200"},
		{"a chunk after the end", `{"v":1,"sent_unix_ns":100,"chunk_offsets_ns":[5,101],"end_unix_ns":200}`, "chunk_offsets_ns: 101 is after the end (end_unix_ns - sent_unix_ns = 100)"},
		{"output tokens MaxInt64", `{"v":1,"sent_unix_ns":100,"output_tokens":9223372036854775807}`, "f:1: output_tokens: 9223372036854775807 out of range [0, 1099511627776]"},
		{"reasoning tokens past the bound", `{"v":1,"sent_unix_ns":100,"reasoning_tokens":1099511627777}`, "reasoning_tokens: 1099511627777 out of range"},
		{"usage past the bound", `{"v":1,"sent_unix_ns":100,"usage":{"completion_tokens":4611686018427387904}}`, "usage.completion_tokens: 4611686018427387904 out of range"},
		{"client count past the bound", `{"v":1,"sent_unix_ns":100,"client_output_tokens":1099511627777}`, "client_output_tokens: 1099511627777 out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := decodeAll(t, []byte(tc.line+"\n")); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	var r Record
	if err := Parse([]byte(`{"v":1,"sent_unix_ns":100,"output_tokens":1099511627776,"reasoning_tokens":1099511627776}`), &r); err != nil {
		t.Fatalf("MaxTokens itself: %v", err)
	}
	if r.OutputTokens+r.ReasoningTokens < 0 {
		t.Fatal("the sum of two counts overflows")
	}

	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	hi := now + int64(ClockSlack)
	for _, tc := range []struct {
		name string
		r    Record
		want string
	}{
		{"a send in 1970", Record{SentNS: 1000, EndNS: 2000}, "sent_unix_ns: 1000 is before 2000-01-01T00:00:00Z"},
		{"an end at MaxInt64", Record{SentNS: now, EndNS: math.MaxInt64}, "end_unix_ns: 9223372036854775807 is after 2026-12-02T00:00:00Z"},
		{"a send two days ahead", Record{SentNS: now + 2*24*int64(time.Hour)}, "sent_unix_ns: "},
		{"an intended time in 1999", Record{IntendedNS: MinTimeNS - 1, SentNS: now}, "intended_unix_ns: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.r.CheckWindow(MinTimeNS, hi); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	ok := Record{IntendedNS: now, SentNS: now, FirstTokenNS: now + 1, EndNS: hi}
	if err := ok.CheckWindow(MinTimeNS, hi); err != nil {
		t.Fatalf("times within the window: %v", err)
	}
}
