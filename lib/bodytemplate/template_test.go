package bodytemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/jsonx"
)

var full = &Values{
	Text: []byte(`"a <b> & 'c' \u00e9"`), Texts: []byte(`["s","a <b> & 'c' \u00e9"]`),
	Messages: []byte(`[{"role":"system","content":"s"},{"role":"user","content":"u"}]`),
	Model:    []byte(`"M1"`), MaxTokens: 12, HasMaxTokens: true, Stream: true,
}

// TestRender: each variable through each filter, as Jinja2 with aiperf's
// autoescape renders it, then compact.
func TestRender(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`{"p": {{ text|tojson }}}`, `{"p":"a <b> & 'c' \u00e9"}`},
		{`{"p": {{ prompt | tojson }}}`, `{"p":"a <b> & 'c' \u00e9"}`},
		{`{"t": {{ texts|tojson }}, "m": {{ messages|tojson }}}`, `{"t":["s","a <b> & 'c' \u00e9"],"m":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}`},
		{`{"model": "{{ model }}", "r": "{{ role }}"}`, `{"model":"M1","r":"user"}`},
		{`{"model": "{{ model|lower }}"}`, `{"model":"m1"}`},
		{`{"model": {{ model|lower|tojson }}}`, `{"model":"m1"}`},
		{`{"n": {{ max_tokens }}, "s": {{ stream|lower }}, "j": {{ stream|tojson }}}`, `{"n":12,"s":true,"j":true}`},
		{`{"s": "{{ stream }}"}`, `{"s":"True"}`},
		// autoescape: a bare string is HTML-escaped (markupsafe's five)
		{`{"e": "{{ text|lower }}"}`, `{"e":"a &lt;b&gt; &amp; &#39;c&#39; é"}`},
		// white-space control and comments
		{"{ {# a comment\n over lines #}\"k\":\n  {{- max_tokens -}}  \n}", `{"k":12}`},
		// a brace that opens no tag stays
		{`{"a": {"b": {{ max_tokens }}}}`, `{"a":{"b":12}}`},
	} {
		tm, err := Parse("t.json", []byte(c.src))
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		got, err := tm.Render(nil, full)
		if err != nil || string(got) != c.want {
			t.Errorf("Render(%q) = %q, %v; want %q", c.src, got, err, c.want)
		}
	}
}

// TestRenderMissing: fields a record lacks render as Jinja renders None.
func TestRenderMissing(t *testing.T) {
	tm, err := Parse("t.json", []byte(`{"n": {{ max_tokens|tojson }}, "t": {{ text|tojson }}, "ts": {{ texts|tojson }}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tm.Render(nil, &Values{})
	if want := `{"n":null,"t":null,"ts":[]}`; err != nil || string(got) != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	tm, err = Parse("t.json", []byte("{\n\"n\": {{ max_tokens }}\n}"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tm.Render(nil, &Values{})
	if err == nil || err.Error() != `t.json:2: the rendered body is not a JSON object: at {{ max_tokens }}: invalid character 'N' looking for a value` {
		t.Errorf("None rendered bare: %v", err)
	}
}

// TestParseErrors: a bad template is refused with its line.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"{\n\"a\": {{ foo|tojson }}}", `t.json:2: unknown placeholder "foo" in {{ foo|tojson }} (want one of text, prompt, texts, messages, model, max_tokens, stream, role)`},
		{"{\n\n\"a\": {{ text|upper }}}", `t.json:3: unknown filter "upper" in {{ text|upper }} (want tojson or lower)`},
		{"{% if stream %}{}{% endif %}", `t.json:1: statement {% if stream %} is not supported: a body template holds {{ placeholders }} only`},
		{"{\"a\": {{ text", `t.json:1: {{ is not closed by }}`},
		{`{"a": {{ texts }}}`, `t.json:1: {{ texts }}: texts is a list; write {{ texts|tojson }}`},
		{`{"a": {{ turn.text }}}`, `t.json:1: unknown placeholder "turn.text" in {{ turn.text }} (want one of text, prompt, texts, messages, model, max_tokens, stream, role)`},
		{"{\n  \"a\": {{ text }}\n}", `t.json:2: the rendered body is not a JSON object: at {{ text }}: invalid character 'x' looking for a value`},
		{"{\n  \"a\": 1,\n}\n", `t.json:3: the rendered body is not a JSON object: expected object key`},
		{`[{{ text|tojson }}]`, `t.json:1: the rendered body is not a JSON object: a JSON value that is not an object`},
		{"{}\n{}", `t.json:2: the rendered body is not a JSON object: text after the object`},
		{"  \n", `t.json:0: the rendered body is not a JSON object: it is empty`},
	} {
		_, err := Parse("t.json", []byte(c.src))
		want := strings.Replace(c.want, "t.json:0:", "t.json:", 1)
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q): got %v, want %s", c.src, err, want)
		}
		var te *Error
		if err != nil && !errors.As(err, &te) {
			t.Errorf("Parse(%q): %T is not an *Error", c.src, err)
		}
	}
}

// TestParseText: a member given twice (at any depth), a NUL and a huge
// placeholder name are refused, the message a line long; a UTF-8 BOM is
// skipped (the digest still covers it).
func TestParseText(t *testing.T) {
	huge := strings.Repeat("x", 5<<20)
	for _, c := range []struct{ src, want string }{
		{"{\"n\": 1,\n \"n\": {{ max_tokens }}}", `t.json:2: the rendered body: member "n" given twice (the server would take one, silently)`},
		{"{\"a\": {\"b\": [{\"c\": 1, \"c\": 2}]}}", `t.json:1: the rendered body: member "c" given twice (the server would take one, silently)`},
		{"{\"m\": 1,\n\"{{ model }}\": 2}", `t.json:2: the rendered body: member "m" given twice (the server would take one, silently)`},
		{"{\n\"a\": \"x\x00\"}", `t.json:2: a NUL byte: a template is text`},
		{"{\"a\": {{ " + huge + " }}}", `t.json:1: unknown placeholder "` + huge[:maxQuoted] + `..." in {{ ` + huge[:maxQuoted] + `... }} (want one of text, prompt, texts, messages, model, max_tokens, stream, role)`},
		{"{% " + huge + " %}", `t.json:1: statement {% ` + huge[:maxQuoted-1] + `...%} is not supported: a body template holds {{ placeholders }} only`},
	} {
		_, err := Parse("t.json", []byte(c.src))
		if err == nil || err.Error() != c.want {
			got := fmt.Sprint(err)
			t.Errorf("Parse(%.80q): got %.300s, want %.300s", c.src, got, c.want)
		}
	}
	bom := "\xEF\xBB\xBF{\"p\": {{ prompt|tojson }}}"
	a, err := Parse("bom.json", []byte(bom))
	if err != nil {
		t.Fatalf("a BOM: %v", err)
	}
	b, _ := Parse("b.json", []byte(bom[3:]))
	got, err := a.Render(nil, full)
	if want, _ := b.Render(nil, full); err != nil || string(got) != string(want) || a.Digest == b.Digest {
		t.Errorf("a BOM: rendered %q, %v (want %q), digests equal %v", got, err, want, a.Digest == b.Digest)
	}
}

// TestUsesAndDigest: Uses names the variables used (prompt is text), and
// the digest is of the bytes.
func TestUsesAndDigest(t *testing.T) {
	a, err := Parse("a", []byte(`{"p": {{ prompt|tojson }}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Uses(Text) || a.Uses(MaxTokens) || a.Uses(Model) {
		t.Errorf("uses: text %v max_tokens %v model %v", a.Uses(Text), a.Uses(MaxTokens), a.Uses(Model))
	}
	b, _ := Parse("b", []byte(`{"p":  {{ prompt|tojson }}}`))
	c, _ := Parse("c", []byte(`{"p": {{ prompt|tojson }}}`))
	if a.Digest == b.Digest || a.Digest != c.Digest {
		t.Errorf("digests: a==b %v, a==c %v (want false, true)", a.Digest == b.Digest, a.Digest == c.Digest)
	}
}

// FuzzParse: any bytes either are refused with an *Error or parse into a
// template whose every rendering is one compact JSON object or an *Error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"p": {{ text|tojson }}, "n": {{ max_tokens }}, "s": {{ stream|lower }}}`,
		"{ {# c #}\"k\": {{- model|lower|tojson -}} }",
		`{"m": {{ messages|tojson }}, "t": {{ texts|tojson }}, "r": "{{ role }}"}`,
		"{% for x in texts %}", "{{", "{#", "{{ text|tojson }}", "{\"a\": \"{{ text }}\"}",
	} {
		f.Add([]byte(s), []byte(`"x \u00e9"`), uint32(3), true)
	}
	f.Fuzz(func(t *testing.T, src, text []byte, n uint32, has bool) {
		tm, err := Parse("f", src)
		var te *Error
		if err != nil {
			if !errors.As(err, &te) {
				t.Fatalf("error %T: %v", err, err)
			}
			return
		}
		if !jsonx.Valid(text) || len(text) == 0 || text[0] != '"' {
			text = []byte(`"x"`)
		}
		out, err := tm.Render(nil, &Values{Text: text, Model: text, MaxTokens: n, HasMaxTokens: has})
		if err != nil {
			if !errors.As(err, &te) {
				t.Fatalf("render error %T: %v", err, err)
			}
			return
		}
		var m map[string]any
		if json.Unmarshal(out, &m) != nil || !jsonx.IsCompact(out) {
			t.Fatalf("rendered %q: not one compact JSON object", out)
		}
	})
}
