package ingest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/synth"
	"github.com/aiperf/toolkit/lib/tokenizer"
	"github.com/aiperf/toolkit/lib/trace"
)

func TestVerifierReportsMismatch(t *testing.T) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	v := newVerifier(tok)
	v.submit("t.jsonl", 7, jsonx.AppendString(nil, "hello world"), 2)
	v.submit("t.jsonl", 3, jsonx.AppendString(nil, "hello world"), 5)
	v.submit("t.jsonl", 9, jsonx.AppendString(nil, "hello world"), 4)
	n, err := v.wait()
	if n != 3 {
		t.Errorf("verified %d prompts, want 3", n)
	}
	if err == nil || !strings.Contains(err.Error(), "2 of 3 prompts have the wrong length; first: t.jsonl:3: input_length: the prompt re-encodes to 2 tokens, want 5") {
		t.Fatalf("got %v", err)
	}
}

func run(t *testing.T, in string, o Options) (string, Stats, error) {
	t.Helper()
	tr, err := trace.NewReader(strings.NewReader(in), "t.jsonl", trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Tokenizer == nil {
		o.Tokenizer = tokenizer.Builtin
	}
	var out bytes.Buffer
	st, err := Run(context.Background(), tr, &out, o)
	return out.String(), st, err
}

func TestRunShardsPartitionSessions(t *testing.T) {
	in := `{"timestamp": 0, "input_length": 20, "session_id": "a"}
{"timestamp": 1, "input_length": 20}
{"timestamp": 2, "input_length": 20, "session_id": "a"}
{"timestamp": 3, "input_length": 20}
`
	all, st, err := run(t, in, Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 4 || st.Sessions != 3 || st.Verified != 4 {
		t.Fatalf("stats %+v", st)
	}
	var lines []string
	for i := 0; i < 2; i++ {
		out, _, err := run(t, in, Options{ShardIndex: i, ShardCount: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.Contains(l, `"end":true`) {
				lines = append(lines, l)
			}
		}
	}
	for _, l := range lines {
		if !strings.Contains(all, l) {
			t.Errorf("shard line not in the unsharded output: %s", l)
		}
	}
	if len(lines) != 4 {
		t.Errorf("shards emitted %d records, want 4", len(lines))
	}
}

func TestTokenizerLoadedOnlyWhenNeeded(t *testing.T) {
	in := `{"model":"x","messages":[{"role":"user","content":"hi"}]}` + "\n"
	tr, err := trace.NewReader(strings.NewReader(in), "p.jsonl", trace.Options{Type: trace.TypeRawPayload})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), tr, &bytes.Buffer{}, Options{Tokenizer: func() (*tokenizer.Tokenizer, error) {
		t.Fatal("tokenizer loaded for a verbatim trace")
		return nil, nil
	}, Synth: synth.Options{}})
	if err != nil {
		t.Fatal(err)
	}
}
