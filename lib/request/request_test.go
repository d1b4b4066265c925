package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/record"
)

func TestParseExtra(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ignore_eos=true", "ignore_eos:true"},
		{"n=3", "n:3"},
		{"user=alice", `user:"alice"`},
		{"s=", `s:""`},
		{`obj={"a":1}`, `obj:{"a":1}`},
		{`{"a":1, "b":"x"}`, `a:1;b:"x"`},
	} {
		fs, err := ParseExtra(c.in)
		if err != nil {
			t.Fatalf("ParseExtra(%q): %v", c.in, err)
		}
		var parts []string
		for _, f := range fs {
			parts = append(parts, f.Key+":"+string(f.Value))
		}
		if got := strings.Join(parts, ";"); got != c.want {
			t.Errorf("ParseExtra(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"novalue", "=x", `{"a":}`, `{"a":1} trailing`} {
		if _, err := ParseExtra(bad); err == nil {
			t.Errorf("ParseExtra(%q): no error", bad)
		}
	}
}

func TestMaxTokensOf(t *testing.T) {
	for _, c := range []struct {
		body string
		want uint32
		ok   bool
	}{
		{`{"max_tokens":5}`, 5, true},
		{`{"max_output_tokens":7,"max_completion_tokens":6}`, 6, true},
		{`{"max_tokens":0,"max_output_tokens":3}`, 3, true},
		{`{"max_tokens":"5"}`, 0, false},
		{`{}`, 0, false},
	} {
		got, ok := MaxTokensOf([]byte(c.body))
		if got != c.want || ok != c.ok {
			t.Errorf("MaxTokensOf(%s) = %d, %v; want %d, %v", c.body, got, ok, c.want, c.ok)
		}
	}
}

func TestCompletionsRejectsMessages(t *testing.T) {
	f, err := NewFormatter(Options{Endpoint: Completions, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Append(nil, &record.Record{Kind: record.KindMessages, Raw: []byte(`[{"role":"user"}]`)})
	if err == nil || !strings.Contains(err.Error(), "needs a prompt record") {
		t.Fatalf("got %v", err)
	}
}

func BenchmarkAppendChat(b *testing.B) {
	f, _ := NewFormatter(Options{Endpoint: Chat, Model: "m", Streaming: true})
	rec := &record.Record{Kind: record.KindPrompt, Raw: []byte(`"` + strings.Repeat("word ", 1000) + `"`), HasMaxTokens: true, MaxTokens: 10}
	var buf []byte
	for b.Loop() {
		buf, _ = f.Append(buf[:0], rec)
	}
}

func TestReservedExtras(t *testing.T) {
	for _, key := range []string{"model", "stream"} {
		o := Options{Endpoint: Chat, Model: "m", Extra: []Field{{Key: key, Value: []byte(`"x"`)}}}
		if err := o.Validate(); !errors.Is(err, ErrReserved) {
			t.Errorf("extra %s: Validate gave %v, want ErrReserved", key, err)
		}
		f, err := NewFormatter(Options{Endpoint: Chat, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Format(&record.Record{Kind: record.KindPrompt, Raw: []byte(`"p"`), Extra: []byte(`{"seed":1,"` + key + `":true}`)})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "extra" || !errors.Is(err, ErrReserved) {
			t.Errorf("record extra %s: got %v, want a FieldError on extra wrapping ErrReserved", key, err)
		}
	}
	if err := (&Options{Endpoint: Chat, Extra: []Field{{Key: "temperature", Value: []byte("1")}}}).Validate(); err != nil {
		t.Errorf("an ordinary extra: %v", err)
	}
}

// TestFormatParts: the parts concatenate to the body Append gives, and a
// large prompt is a part of its own that aliases the record (not copied).
func TestFormatParts(t *testing.T) {
	big := []byte(`"` + strings.Repeat("word ", 1000) + `"`)
	for _, c := range []struct {
		o    Options
		want string // RAW stands for the prompt
	}{
		{Options{Endpoint: Chat, Model: "m", Streaming: true, IncludeUsage: true, Extra: []Field{{Key: "ignore_eos", Value: []byte("true")}}},
			`{"messages":[{"role":"user","content":RAW}],"model":"m","stream":true,"max_completion_tokens":9,"ignore_eos":true,"seed":3,"stream_options":{"include_usage":true}}`},
		{Options{Endpoint: Completions, Model: "m"}, `{"prompt":RAW,"model":"m","stream":false,"max_tokens":9,"seed":3}`},
	} {
		o := c.o
		f, err := NewFormatter(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range [][]byte{[]byte(`"short"`), big} {
			rec := &record.Record{Kind: record.KindPrompt, Raw: raw, HasMaxTokens: true, MaxTokens: 9, Extra: []byte(`{"seed":3}`)}
			b, err := f.Format(rec)
			if err != nil {
				t.Fatal(err)
			}
			var joined []byte
			aliased := false
			for _, p := range b.Parts {
				joined = append(joined, p...)
				aliased = aliased || (len(p) > 0 && &p[0] == &raw[0])
			}
			if len(joined) != b.Len {
				t.Errorf("Len %d, parts hold %d bytes", b.Len, len(joined))
			}
			want := []byte(strings.Replace(c.want, "RAW", string(raw), 1))
			if !bytes.Equal(joined, want) || !json.Valid(joined) {
				t.Errorf("parts give %s, want %s", joined, want)
			}
			if len(raw) > inlineMax && !aliased {
				t.Errorf("a %d-byte prompt was copied into the body", len(raw))
			}
			if !b.HasMaxTokens || b.MaxTokens != 9 {
				t.Errorf("max tokens %d %v, want 9", b.MaxTokens, b.HasMaxTokens)
			}
		}
	}
}

// TestFormatMaxTokensFollowsBody: when an extra sets a max-token member,
// the body's limit (by MaxTokensOf's rule) is what the index gets.
func TestFormatMaxTokensFollowsBody(t *testing.T) {
	for _, c := range []struct {
		extra []Field
		rec   string // record extra
		max   uint32
		has   bool
	}{
		{nil, "", 500, true},
		{[]Field{{Key: "max_tokens", Value: []byte("7")}}, "", 7, true},
		{nil, `{"max_output_tokens":11}`, 500, true}, // max_completion_tokens ranks above
		{[]Field{{Key: "max_completion_tokens", Value: []byte("0")}}, "", 0, false},
	} {
		f, err := NewFormatter(Options{Endpoint: Chat, Model: "m", Extra: c.extra})
		if err != nil {
			t.Fatal(err)
		}
		rec := &record.Record{Kind: record.KindPrompt, Raw: []byte(`"p"`), HasMaxTokens: true, MaxTokens: 500}
		if c.rec != "" {
			rec.Extra = []byte(c.rec)
		}
		b, err := f.Format(rec)
		if err != nil {
			t.Fatal(err)
		}
		if b.MaxTokens != c.max || b.HasMaxTokens != c.has {
			t.Errorf("extra %v / %s: max tokens %d %v, want %d %v", c.extra, c.rec, b.MaxTokens, b.HasMaxTokens, c.max, c.has)
		}
	}
}

func TestDescribeUsage(t *testing.T) {
	desc := func(o Options) string { return strings.Join(o.Describe(), "\n") }
	def := Options{Endpoint: Chat, Model: "m", Streaming: true}
	explicit := def
	explicit.IncludeUsage = true
	if desc(def) != desc(explicit) {
		t.Errorf("--streaming and --streaming --include-usage format the same bodies but describe apart:\n%s\n%s", desc(def), desc(explicit))
	}
	off := def
	off.NoIncludeUsage = true
	chunk := def
	chunk.PerChunkUsage = true
	seen := map[string]bool{}
	for _, o := range []Options{def, off, chunk, {Endpoint: Chat, Model: "m"}} {
		if seen[desc(o)] && o.Streaming {
			t.Errorf("two settings with different bodies describe alike: %s", desc(o))
		}
		seen[desc(o)] = true
	}
	if !strings.Contains(desc(def), "include_usage=true") || !strings.Contains(desc(off), "include_usage=false") {
		t.Errorf("include_usage not described by its effect: %s / %s", desc(def), desc(off))
	}
}

func TestStreamOptionsMerge(t *testing.T) {
	rec := &record.Record{Kind: record.KindPrompt, Raw: []byte(`"p"`)}
	for _, c := range []struct {
		chunk bool
		extra string
		want  string
	}{
		{false, ``, `{"include_usage":true}`},
		{true, ``, `{"include_usage":true,"continuous_usage_stats":true}`},
		{false, `{}`, `{"include_usage":true}`},
		{false, `{ }`, `{ "include_usage":true}`},
		{false, `{"a":1 }`, `{"a":1 ,"include_usage":true}`},
		{true, `{"continuous_usage_stats":false}`, `{"continuous_usage_stats":false,"include_usage":true}`},
		{false, `"x"`, `{"include_usage":true}`},
		{false, `[1]`, `{"include_usage":true}`},
	} {
		o := Options{Endpoint: Completions, Model: "m", Streaming: true, PerChunkUsage: c.chunk}
		if c.extra != "" {
			o.Extra = []Field{{Key: "stream_options", Value: []byte(c.extra)}}
		}
		f, err := NewFormatter(o)
		if err != nil {
			t.Fatal(err)
		}
		body, err := f.Append(nil, rec)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"prompt":"p","model":"m","stream":true,"stream_options":` + c.want + `}`
		if string(body) != want || !json.Valid(body) {
			t.Errorf("extra %s, per-chunk %v:\n got %s\nwant %s", c.extra, c.chunk, body, want)
		}
	}
}

// An output length of 0 (BurstGPT rows of failed requests have one) gives
// completions no cap member, as aiperf's completions endpoint sends a falsy
// max_tokens not at all; chat sends it, as aiperf's chat does.
func TestZeroMaxTokens(t *testing.T) {
	for _, tc := range []struct {
		ep   string
		want string
		has  bool
	}{
		{Completions, `{"prompt":"hi","model":"m","stream":false}`, false},
		{Chat, `{"messages":[{"role":"user","content":"hi"}],"model":"m","stream":false,"max_completion_tokens":0}`, true},
	} {
		f, err := NewFormatter(Options{Endpoint: tc.ep, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		rec := &record.Record{Kind: record.KindPrompt, Raw: []byte(`"hi"`), HasMaxTokens: true}
		b, err := f.Format(rec)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		for _, p := range b.Parts {
			got = append(got, p...)
		}
		if string(got) != tc.want || b.HasMaxTokens != tc.has || b.MaxTokens != 0 {
			t.Errorf("%s: %s (cap %d %v), want %s (%v)", tc.ep, got, b.MaxTokens, b.HasMaxTokens, tc.want, tc.has)
		}
	}
}
