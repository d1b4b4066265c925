package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/aiperf/toolkit/lib/record"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files")

// TestEndpointBodies formats one set of records for every endpoint beyond
// chat and completions and compares the bodies with
// testdata/endpoints.golden (go test -update rewrites it).
func TestEndpointBodies(t *testing.T) {
	prompt := &record.Record{Kind: record.KindPrompt, Raw: []byte(`"hi \"there\""`), HasMaxTokens: true, MaxTokens: 7}
	bare := &record.Record{Kind: record.KindPrompt, Raw: []byte(`"no limit"`)}
	msgs := &record.Record{Kind: record.KindMessages, Raw: []byte(`[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]}]`),
		Tools: []byte(`[{"type":"function"}]`), Extra: []byte(`{"temperature":0}`), HasMaxTokens: true, MaxTokens: 3}
	var out bytes.Buffer
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"embeddings", Options{Endpoint: Embeddings, Model: "e"}},
		{"embeddings extra", Options{Endpoint: Embeddings, Model: "e", Extra: []Field{{"encoding_format", []byte(`"float"`)}}}},
		{"responses", Options{Endpoint: Responses, Model: "m"}},
		{"responses streaming", Options{Endpoint: Responses, Model: "m", Streaming: true}},
		{"messages", Options{Endpoint: Messages, Model: "c"}},
		{"messages streaming extra", Options{Endpoint: Messages, Model: "c", Streaming: true, Extra: []Field{{"max_tokens", []byte(`9`)}}}},
	} {
		f, err := NewFormatter(c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, rec := range []*record.Record{prompt, bare, msgs} {
			b, err := f.Format(rec)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			body := bytes.Join(b.Parts, nil)
			if len(body) != b.Len || !json.Valid(body) {
				t.Fatalf("%s: invalid body %s", c.name, body)
			}
			out.WriteString(c.name + "\t")
			out.Write(body)
			if b.HasMaxTokens {
				out.WriteString("\tmax_tokens=" + itoa(b.MaxTokens))
			}
			out.WriteByte('\n')
		}
	}
	golden := filepath.Join("testdata", "endpoints.golden")
	if *updateGolden {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("bodies differ from %s (go test -update rewrites it):\n%s", golden, out.Bytes())
	}
}

func itoa(n uint32) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

func TestEndpointOptions(t *testing.T) {
	for _, o := range []Options{
		{Endpoint: Embeddings, Model: "e", Streaming: true},
		{Endpoint: Responses, Model: "m", Streaming: true, IncludeUsage: true},
		{Endpoint: Messages, Model: "m", Streaming: true, PerChunkUsage: true},
	} {
		if err := o.Validate(); !errors.Is(err, ErrUsage) {
			t.Errorf("%+v: got %v, want a usage error", o, err)
		}
	}
	if err := (&Options{Endpoint: "rerank"}).Validate(); !errors.Is(err, ErrEndpoint) {
		t.Errorf("unknown endpoint: %v", err)
	}
	f, _ := NewFormatter(Options{Endpoint: Embeddings, Model: "e"})
	if _, err := f.Format(&record.Record{Kind: record.KindMessages, Raw: []byte(`[{"role":"user","content":null}]`)}); err == nil {
		t.Error("a batch without text: no error")
	}
	for _, e := range Endpoints {
		if (&Options{Endpoint: e, Streaming: true}).Usage() != (e == Chat || e == Completions) {
			t.Errorf("%s: stream_options %v", e, !(e == Chat || e == Completions))
		}
	}
}

func TestRefines(t *testing.T) {
	for _, c := range []struct {
		endpoint, claimed string
		want              bool
	}{
		{Messages, Chat, true}, {Responses, "", true}, {Embeddings, "", true}, {Raw, Completions, true},
		{Chat, Chat, false}, {Messages, Completions, false}, {Responses, Chat, false}, {Chat, "", false},
	} {
		if got := Refines(c.endpoint, c.claimed); got != c.want {
			t.Errorf("Refines(%q, %q) = %v", c.endpoint, c.claimed, got)
		}
	}
	// Inspect names no endpoint for a responses body.
	if c := Inspect([]byte(`{"input":"x","model":"m"}`)); c.Endpoint != "" {
		t.Errorf("responses body claims %q", c.Endpoint)
	}
}
