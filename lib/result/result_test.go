package result

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func sample() []Record {
	return []Record{
		{Record: 0, Session: "s0", Turn: 0, RequestID: "r-0", Phase: PhaseProfiling,
			IntendedNS: 1_700_000_000_000_000_000, SentNS: 1_700_000_000_000_050_000,
			FirstByteNS: 1_700_000_000_010_000_000, FirstTokenNS: 1_700_000_000_020_000_000, FirstOutputNS: 1_700_000_000_020_000_000,
			EndNS: 1_700_000_000_090_000_000, ChunkOffsetsNS: []int64{19_950_000, 24_950_000, 89_950_000}, Status: 200,
			InputTokens: 512, MaxTokens: 3, OutputTokens: 3, OutputSource: SourceUsage,
			Usage: &Usage{PromptTokens: 510, CompletionTokens: 3, TotalTokens: 513}},
		// Client-side counts beside usage, a session number and a correlation id.
		{Record: 4, Session: "s4", Turn: 1, SessionNum: 7, CorrelationID: "c-4", SentNS: 10, EndNS: 40,
			ChunkOffsetsNS: []int64{5, 30}, Status: 200, OutputTokens: 9, ReasoningTokens: 2, OutputSource: SourceUsage,
			ClientCounted: true, ClientOutputTokens: 8, ClientReasoningTokens: 3,
			Usage: &Usage{PromptTokens: 4, CompletionTokens: 11, TotalTokens: 15, ReasoningTokens: 2}},
		// Client counted zero tokens: still present.
		{Record: 5, SentNS: 1, EndNS: 2, ChunkOffsetsNS: []int64{1}, OutputSource: SourceUsage, OutputTokens: 1, ClientCounted: true},
		{Record: 1, Session: "s\"1\n", Turn: 2, Phase: PhaseWarmup, IntendedNS: 5, CeilingWaitNS: 7, SentNS: 4, EndNS: 9, Status: 503,
			Err: &Error{Code: 503, Type: "HTTPError", Message: "service unavailable: ✓"}},
		{Record: 2, Session: "s2", SentNS: 10, EndNS: 20, Err: &Error{Code: 499, Type: "RequestCancellationError", Message: "cancelled after 1ms"}, Cancelled: true},
		// Reasoning first, then no output at all: first_output must stay 0.
		{Record: 3, SentNS: 10, FirstTokenNS: 12, FirstOutputNS: 0, EndNS: 30, ChunkOffsetsNS: []int64{2}, Status: 200,
			OutputTokens: 0, ReasoningTokens: 7, OutputSource: SourceClient,
			Usage: &Usage{PromptTokens: 1, CompletionTokens: 7, TotalTokens: 8, ReasoningTokens: 7}},
		// The server's prefix cache: cached_tokens, zero included.
		{Record: 6, SentNS: 1, EndNS: 2, Status: 200, Usage: &Usage{PromptTokens: 600, CompletionTokens: 1, TotalTokens: 601, CachedTokens: 512, HasCached: true}},
		{Record: 7, SentNS: 1, EndNS: 2, Status: 200, Usage: &Usage{PromptTokens: 600, CompletionTokens: 1, TotalTokens: 601, HasCached: true}},
	}
}

// Records stay readable both ways: a line without cached_tokens reads as
// "not reported" (not as zero), and an older reader ignores the key.
func TestCachedTokensField(t *testing.T) {
	var got Record
	d := NewDecoder(strings.NewReader(`{"v":1,"record":0,"sent_unix_ns":1,"end_unix_ns":2,"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`+"\n"), "old.jsonl")
	if err := d.Next(&got); err != nil {
		t.Fatal(err)
	}
	if got.Usage.HasCached || got.Usage.CachedTokens != 0 {
		t.Errorf("old line: %+v, want cached tokens not reported", got.Usage)
	}
	line := string(Append(nil, &Record{SentNS: 1, EndNS: 2, Usage: &Usage{PromptTokens: 5, HasCached: true}}))
	if !strings.Contains(line, `,"cached_tokens":0}`) {
		t.Errorf("reported zero not written: %s", line)
	}
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	recs := sample()
	for i := range recs {
		if err := e.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if e.Count() != int64(len(recs)) {
		t.Fatalf("Count = %d, want %d", e.Count(), len(recs))
	}
	d := NewDecoder(&buf, "records.jsonl")
	for i := range recs {
		var got Record
		if err := d.Next(&got); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, recs[i]) {
			t.Errorf("record %d:\ngot  %+v\nwant %+v", i, got, recs[i])
		}
	}
	var r Record
	if err := d.Next(&r); err != io.EOF {
		t.Fatalf("after the last record: %v, want io.EOF", err)
	}
}

func TestGoldenLine(t *testing.T) {
	r := sample()[0]
	want := `{"v":1,"record":0,"session":"s0","turn":0,"x_request_id":"r-0","phase":"profiling",` +
		`"intended_unix_ns":1700000000000000000,"sent_unix_ns":1700000000000050000,"first_byte_unix_ns":1700000000010000000,` +
		`"first_token_unix_ns":1700000000020000000,"end_unix_ns":1700000000090000000,"chunk_offsets_ns":[19950000,24950000,89950000],` +
		`"status":200,"input_tokens":512,"max_tokens":3,"output_tokens":3,"output_tokens_source":"usage",` +
		`"usage":{"prompt_tokens":510,"completion_tokens":3,"total_tokens":513}}` + "\n"
	if got := string(Append(nil, &r)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestGoldenLineAdditions(t *testing.T) {
	r := sample()[1]
	want := `{"v":1,"record":4,"session":"s4","turn":1,"session_num":7,"x_correlation_id":"c-4","intended_unix_ns":0,"sent_unix_ns":10,` +
		`"end_unix_ns":40,"chunk_offsets_ns":[5,30],"status":200,"output_tokens":9,"reasoning_tokens":2,"output_tokens_source":"usage",` +
		`"client_output_tokens":8,"client_reasoning_tokens":3,` +
		`"usage":{"prompt_tokens":4,"completion_tokens":11,"total_tokens":15,"reasoning_tokens":2}}` + "\n"
	if got := string(Append(nil, &r)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// A line written before these fields existed reads them as zero.
	var old Record
	if err := Parse([]byte(`{"v":1,"record":4,"sent_unix_ns":10}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.SessionNum != 0 || old.CorrelationID != "" || old.ClientCounted {
		t.Fatalf("old line: %+v", old)
	}
	// Either client key alone marks the record as client-counted.
	var one Record
	if err := Parse([]byte(`{"v":1,"client_reasoning_tokens":5}`), &one); err != nil {
		t.Fatal(err)
	}
	if !one.ClientCounted || one.ClientReasoningTokens != 5 || one.ClientOutputTokens != 0 {
		t.Fatalf("client_reasoning_tokens alone: %+v", one)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"record":1}`, `r.jsonl:2: v: missing`},
		{`{"v":2}`, `r.jsonl:2: v: unknown replay records version 2`},
		{`{"v":1,"sent_unix_ns":-5}`, `r.jsonl:2: sent_unix_ns: -5 out of range`},
		{`{"v":1,"turn":"x"}`, `r.jsonl:2: turn: not an integer`},
		{`{"v":1,"phase":"cooldown"}`, `r.jsonl:2: phase: want "warmup" or "profiling"`},
		{`{"v":1,"chunk_offsets_ns":[1,-2]}`, `r.jsonl:2: chunk_offsets_ns: -2 out of range`},
		{`{"v":1,"error":{"code":"x"}}`, `r.jsonl:2: error.code: not an integer`},
		{`{"v":1,"usage":{"prompt_tokens":1.5}}`, `r.jsonl:2: usage.prompt_tokens: not an integer`},
		{`{"v":1,"cancelled":1}`, `r.jsonl:2: cancelled: not a boolean`},
		{`{"v":1,"session_num":-1}`, `r.jsonl:2: session_num: -1 out of range`},
		{`{"v":1,"x_correlation_id":3}`, `r.jsonl:2: x_correlation_id: not a string`},
		{`{"v":1,"client_output_tokens":"8"}`, `r.jsonl:2: client_output_tokens: not an integer`},
		{`{"v":1} x`, `r.jsonl:2: malformed JSON: data after the object`},
		{`[1]`, `r.jsonl:2: not a JSON object`},
		{`{"v":1,`, `r.jsonl:2: malformed JSON`},
		// times that contradict each other: a garbled or hand-edited file
		{`{"v":1,"sent_unix_ns":100,"end_unix_ns":5}`, `r.jsonl:2: end_unix_ns: 5 is before sent_unix_ns 100`},
		{`{"v":1,"end_unix_ns":5,"sent_unix_ns":100}`, `r.jsonl:2: end_unix_ns: 5 is before sent_unix_ns 100`},
		{`{"v":1,"sent_unix_ns":100,"first_token_unix_ns":99,"end_unix_ns":200}`, `r.jsonl:2: first_token_unix_ns: 99 is before sent_unix_ns 100`},
		{`{"v":1,"sent_unix_ns":100,"first_byte_unix_ns":1,"end_unix_ns":200}`, `r.jsonl:2: first_byte_unix_ns: 1 is before sent_unix_ns 100`},
		{`{"v":1,"sent_unix_ns":100,"chunk_offsets_ns":[5,3],"end_unix_ns":200}`, `r.jsonl:2: chunk_offsets_ns: 3 after 5: not in arrival order`},
	} {
		d := NewDecoder(strings.NewReader("\n"+tc.in+"\n"), "r.jsonl")
		var r Record
		err := d.Next(&r)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want prefix %q", tc.in, err, tc.want)
		}
		var de *DecodeError
		if !errors.As(err, &de) || de.Line != 2 {
			t.Errorf("%s: error %v does not carry line 2", tc.in, err)
		}
	}
}

func TestUnknownFieldsIgnored(t *testing.T) {
	var r Record
	if err := Parse([]byte(`{"v":1,"record":3,"future":{"a":[1,2]},"status":200}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Record != 3 || r.Status != 200 {
		t.Fatalf("got %+v", r)
	}
}

func TestLongLine(t *testing.T) {
	big := `{"v":1,"session":"` + strings.Repeat("x", 1<<20) + `"}` + "\n"
	d := NewDecoder(strings.NewReader(big), "big")
	var r Record
	if err := d.Next(&r); err != nil || len(r.Session) != 1<<20 {
		t.Fatalf("1 MiB line: err %v, session %d bytes", err, len(r.Session))
	}
}

func TestLateness(t *testing.T) {
	r := Record{IntendedNS: 100, SentNS: 130}
	if r.LatenessNS() != 30 {
		t.Fatalf("lateness %d, want 30", r.LatenessNS())
	}
}

func FuzzDecode(f *testing.F) {
	for _, r := range sample() {
		f.Add(Append(nil, &r))
	}
	f.Add([]byte(`{"v":1,"error":null,"usage":null,"chunk_offsets_ns":[]}`))
	f.Add(Append(nil, &Record{Run: sampleRun(), Streamed: true}))
	f.Add(Append(nil, &Record{HTTP: sampleHTTP()}))
	f.Add(AppendEnd(Append(nil, &Record{Run: sampleRun(), SentNS: 5}), &End{RunID: "r", Results: 1, Interrupted: true}))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDecoder(bytes.NewReader(b), "f")
		for i := 0; i < 100; i++ {
			var r Record
			err := d.Next(&r)
			if err == io.EOF {
				return
			}
			if err != nil {
				var de *DecodeError
				if !errors.As(err, &de) || de.Line < 1 {
					t.Fatalf("error without a line: %v", err)
				}
				return
			}
			// A decoded record re-encodes to a line that decodes to the same record.
			line := Append(nil, &r)
			var again Record
			if err := Parse(bytes.TrimSpace(line), &again); err != nil {
				t.Fatalf("re-encoded line %s does not decode: %v", line, err)
			}
			if !reflect.DeepEqual(normal(again), normal(r)) {
				t.Fatalf("round trip changed the record:\n%+v\n%+v", r, again)
			}
		}
	})
}

// normal maps the encodings that mean the same thing to one form.
func normal(r Record) Record {
	if len(r.ChunkOffsetsNS) == 0 {
		r.ChunkOffsetsNS = nil
	}
	if r.OutputSource == "" {
		r.OutputTokens, r.ReasoningTokens = 0, 0
	}
	if !r.ClientCounted {
		r.ClientOutputTokens, r.ClientReasoningTokens = 0, 0
	}
	return r
}
