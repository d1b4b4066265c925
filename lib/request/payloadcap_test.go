package request

import (
	"bytes"
	"testing"

	"github.com/aiperf/toolkit/lib/record"
)

// A payload row's output length is its body's cap, as the Python aiperf
// overrides a raw body's: every cap member present takes it; with none,
// max_output_tokens for a Responses-style body, max_tokens for others. The
// index's max_tokens is the body's.
func TestPayloadCap(t *testing.T) {
	f, err := NewFormatter(Options{Endpoint: Chat, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body string
		cap  uint32 // 0: the row has none
		want string
		max  uint32
	}{
		{`{"messages":[],"max_tokens":50}`, 10, `{"messages":[],"max_tokens":10}`, 10},
		{`{"max_tokens":50,"messages":[],"max_completion_tokens":7}`, 10, `{"max_tokens":10,"messages":[],"max_completion_tokens":10}`, 10},
		{`{"messages":[{"role":"user","content":"x"}]}`, 40, `{"messages":[{"role":"user","content":"x"}],"max_tokens":40}`, 40},
		{`{"input":"x" }`, 40, `{"input":"x" ,"max_output_tokens":40}`, 40},
		{`{ }`, 3, `{ "max_tokens":3}`, 3},
		{`{"messages":[],"max_tokens":10}`, 10, `{"messages":[],"max_tokens":10}`, 10}, // already: byte for byte
		{`{"messages":[],"max_tokens":50}`, 0, `{"messages":[],"max_tokens":50}`, 50},  // no cap: the body's
		{`{"messages":[]}`, 0, `{"messages":[]}`, 0},
	} {
		rec := &record.Record{Kind: record.KindPayload, Raw: []byte(tc.body), MaxTokens: tc.cap, HasMaxTokens: tc.cap > 0}
		b, err := f.Format(rec)
		if err != nil {
			t.Fatal(err)
		}
		got := bytes.Join(b.Parts, nil)
		if string(got) != tc.want || b.Len != len(got) || b.MaxTokens != tc.max || b.HasMaxTokens != (tc.max > 0) {
			t.Errorf("%s cap %d: got %s (len %d, max %d %v), want %s (max %d)", tc.body, tc.cap, got, b.Len, b.MaxTokens, b.HasMaxTokens, tc.want, tc.max)
		}
		if rec.Raw[0] != tc.body[0] || string(rec.Raw) != tc.body {
			t.Errorf("%s: the record's body was changed", tc.body)
		}
	}
}

// An embeddings body has no output to cap: the record's cap is not added.
func TestPayloadCapEmbeddings(t *testing.T) {
	f, err := NewFormatter(Options{Endpoint: Embeddings, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"input":["a"],"model":"m"}`
	b, err := f.Format(&record.Record{Kind: record.KindPayload, Raw: []byte(body), MaxTokens: 8, HasMaxTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(bytes.Join(b.Parts, nil)); got != body || b.HasMaxTokens {
		t.Errorf("got %s (cap %v), want %s without a cap", got, b.HasMaxTokens, body)
	}
}
