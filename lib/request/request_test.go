package request

import (
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
