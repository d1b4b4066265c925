package request

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/aiperf/toolkit/lib/bodytemplate"
	"github.com/aiperf/toolkit/lib/record"
)

func mustTemplate(t *testing.T, src string) *bodytemplate.Template {
	t.Helper()
	tm, err := bodytemplate.Parse("t.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestTemplateBodies renders one set of records through templates and
// compares the bodies with testdata/template.golden (go test -update
// rewrites it).
func TestTemplateBodies(t *testing.T) {
	prompt := &record.Record{Kind: record.KindPrompt, Raw: []byte(`"hi \"there\" <b>"`), HasMaxTokens: true, MaxTokens: 7}
	bare := &record.Record{Kind: record.KindPrompt, Raw: []byte(`"no limit"`)}
	msgs := &record.Record{Kind: record.KindMessages, Raw: []byte(`[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`),
		Extra: []byte(`{"temperature":0}`), HasMaxTokens: true, MaxTokens: 3}
	tools := &record.Record{Kind: record.KindMessages, Raw: []byte(`[{"role":"tool","tool_call_id":"1"}]`)}
	aiperfDoc := "{\n  \"model\": {{ model|tojson }},\n  \"prompt\": {{ text|tojson }},\n  \"max_new_tokens\": {{ max_tokens|tojson }},\n  \"stream\": {{ stream|lower }}\n}\n"
	var out bytes.Buffer
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"aiperf's example", Options{Model: "m", Streaming: true, Template: mustTemplate(t, aiperfDoc)}},
		{"nv-embedqa", Options{Template: mustTemplate(t, `{"text": {{ texts|tojson }}}`)}},
		{"chat body", Options{Model: "m", Template: mustTemplate(t, `{"messages": {{ messages|tojson }}, "model": "{{ model }}", "max_tokens": 5}`)}},
		{"extras", Options{Model: "m", Extra: []Field{{"max_tokens", []byte(`9`)}, {"top_p", []byte(`0.5`)}},
			Template: mustTemplate(t, `{"max_tokens": {{ max_tokens|tojson }}, "q": {{ prompt|lower|tojson }}}`)}},
	} {
		c.o.Endpoint = Template
		f, err := NewFormatter(c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, rec := range []*record.Record{prompt, bare, msgs, tools} {
			b, err := f.Format(rec)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			body := bytes.Join(b.Parts, nil)
			if len(body) != b.Len {
				t.Fatalf("%s: body of %d bytes, Len %d", c.name, len(body), b.Len)
			}
			out.WriteString(c.name + "\t")
			out.Write(body)
			if b.HasMaxTokens {
				out.WriteString("\tmax_tokens=" + itoa(b.MaxTokens))
			}
			out.WriteByte('\n')
		}
	}
	golden := filepath.Join("testdata", "template.golden")
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
		t.Errorf("bodies differ from %s (-update rewrites it):\n%s", golden, out.Bytes())
	}
}

// TestTemplateRefusals: the records and options a template cannot format.
func TestTemplateRefusals(t *testing.T) {
	tm := mustTemplate(t, `{"m": {{ model|tojson }}, "n": {{ max_tokens }}}`)
	if _, err := NewFormatter(Options{Endpoint: Template}); !errors.Is(err, ErrTemplate) {
		t.Errorf("template endpoint without a template: %v", err)
	}
	if _, err := NewFormatter(Options{Endpoint: Chat, Model: "m", Template: tm}); !errors.Is(err, ErrTemplate) {
		t.Errorf("a template for chat: %v", err)
	}
	if _, err := NewFormatter(Options{Endpoint: Template, Template: tm, Streaming: true, PerChunkUsage: true}); !errors.Is(err, ErrUsage) {
		t.Errorf("per-chunk usage: %v", err)
	}
	f, _ := NewFormatter(Options{Endpoint: Template, Template: tm})
	if _, err := f.Format(&record.Record{Kind: record.KindPrompt, Raw: []byte(`"x"`), HasMaxTokens: true, MaxTokens: 1}); !errors.Is(err, ErrNoModel) {
		t.Errorf("no model for a template that uses it: %v", err)
	}
	f, _ = NewFormatter(Options{Endpoint: Template, Template: tm, Model: "m"})
	for _, c := range []struct {
		rec   *record.Record
		field string
	}{
		{&record.Record{Kind: record.KindPayload, Raw: []byte(`{"a":1}`)}, "payload"},
		{&record.Record{Kind: record.KindPrompt, Raw: []byte(`"x"`), ContextMode: record.ContextDeltas}, "context_mode"},
		{&record.Record{Kind: record.KindPrompt, Raw: []byte(`"x"`)}, "prompt"}, // max_tokens None, bare
		{&record.Record{Kind: record.KindPrompt, Raw: []byte(`"x"`), HasMaxTokens: true, MaxTokens: 1, Extra: []byte(`{"model":"y"}`)}, "extra"},
	} {
		_, err := f.Format(c.rec)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s record: got %v, want an error of field %s", c.rec.Kind, err, c.field)
		}
	}
	// a template that does not use model needs none
	f, _ = NewFormatter(Options{Endpoint: Template, Template: mustTemplate(t, `{"t": {{ text|tojson }}}`)})
	if _, err := f.Format(&record.Record{Kind: record.KindPrompt, Raw: []byte(`"x"`)}); err != nil {
		t.Errorf("no model, none used: %v", err)
	}
}
