package cachekey

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/digest"
)

var salt = Salt{Records: 1, Store: 1, Algorithms: map[string]int{"synthesis": 2, "corpus": 1, "body": 3}}

func explain(t *testing.T, b *Builder) string {
	t.Helper()
	s, err := b.Explain()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestExplainGolden pins the description format: a change to it must be
// deliberate (and bump Domain).
func TestExplainGolden(t *testing.T) {
	b := New(salt)
	b.Field("pack.model", "m")
	b.Field("tokenize.seed", "0")
	b.List("pack.extra", []string{"a=1", `b="x"`})
	b.Input(digest.Digest{Kind: digest.File, Sum: digest.Sum(sha256.Sum256([]byte("trace")))})
	b.Tokenizer(Tokenizer{Name: "gpt2", Revision: "", Files: map[string]digest.Sum{"tokenizer.json": {}}})
	sumTrace := digest.Sum(sha256.Sum256([]byte("trace"))).String()
	want := `aiperf-cachekey v1
input=["file:sha256:` + sumTrace + `"]
pack.extra=["a=1","b=\"x\""]
pack.model="m"
salt.algorithm.body=3
salt.algorithm.corpus=1
salt.algorithm.synthesis=2
salt.records=1
salt.store=1
tokenize.seed="0"
tokenizer.files=["tokenizer.json=sha256:0000000000000000000000000000000000000000000000000000000000000000"]
tokenizer.name="gpt2"
tokenizer.revision=""
`
	got := explain(t, b)
	if got != want {
		t.Errorf("Explain:\n%s\nwant:\n%s", got, want)
	}
	k, err := b.Key()
	if err != nil {
		t.Fatal(err)
	}
	if want := Key(sha256.Sum256([]byte(got))); k != want {
		t.Errorf("Key %v is not the SHA-256 of the explanation (%v)", k, want)
	}
}

func TestParse(t *testing.T) {
	var k Key
	for i := range k {
		k[i] = byte(i * 7)
	}
	s := k.String()
	if !strings.HasPrefix(s, "sha256:") || len(s) != 71 {
		t.Fatalf("String: %q", s)
	}
	if got, err := Parse(s); err != nil || got != k {
		t.Errorf("Parse(String): %v %v", got, err)
	}
	for _, bad := range []string{"", "sha256:", s[7:], strings.ToUpper(s), "SHA256:" + s[7:], s + "0", s[:70], " " + s, s + "\n", "sha512:" + s[7:], strings.Replace(s, "0", "g", 1)} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
	j, err := json.Marshal(struct{ K Key }{k})
	if err != nil || string(j) != `{"K":"`+s+`"}` {
		t.Errorf("JSON: %s %v", j, err)
	}
	var back struct{ K Key }
	if err := json.Unmarshal(j, &back); err != nil || back.K != k {
		t.Errorf("JSON round trip: %v %v", back.K, err)
	}
}

// TestCollisions: descriptions that a naive "name=value" per line encoding
// would confuse stay apart.
func TestCollisions(t *testing.T) {
	type set func(b *Builder)
	pairs := []struct {
		name string
		a, b set
	}{
		{"newline-in-value", func(b *Builder) { b.Field("a", "x\nb=y") }, func(b *Builder) { b.Field("a", "x"); b.Field("b", "y") }},
		{"equals-in-value", func(b *Builder) { b.Field("a", "b=c") }, func(b *Builder) { b.Field("a", "b"); b.Field("c", "") }},
		{"quote-in-value", func(b *Builder) { b.Field("a", `x","y`) }, func(b *Builder) { b.List("a", []string{"x", "y"}) }},
		{"list-vs-string", func(b *Builder) { b.List("a", []string{"x"}) }, func(b *Builder) { b.Field("a", `["x"]`) }},
		{"empty-list-vs-empty", func(b *Builder) { b.List("a", nil) }, func(b *Builder) { b.Field("a", "") }},
		{"empty-vs-absent", func(b *Builder) { b.Field("a", "") }, func(b *Builder) {}},
		{"list-split", func(b *Builder) { b.List("a", []string{"x,y"}) }, func(b *Builder) { b.List("a", []string{"x", "y"}) }},
		{"list-order", func(b *Builder) { b.List("a", []string{"x", "y"}) }, func(b *Builder) { b.List("a", []string{"y", "x"}) }},
		{"input-order", func(b *Builder) {
			b.Input(digest.Digest{Kind: digest.File, Sum: digest.Sum{1}})
			b.Input(digest.Digest{Kind: digest.File, Sum: digest.Sum{2}})
		}, func(b *Builder) {
			b.Input(digest.Digest{Kind: digest.File, Sum: digest.Sum{2}})
			b.Input(digest.Digest{Kind: digest.File, Sum: digest.Sum{1}})
		}},
		{"input-kind", func(b *Builder) { b.Input(digest.Digest{Kind: digest.File, Sum: digest.Sum{1}}) }, func(b *Builder) { b.Input(digest.Digest{Kind: digest.Dir, Sum: digest.Sum{1}}) }},
		{"backslash", func(b *Builder) { b.Field("a", `\n`) }, func(b *Builder) { b.Field("a", "\n") }},
		{"invalid-utf8", func(b *Builder) { b.Field("a", "\xff") }, func(b *Builder) { b.Field("a", `\xff`) }},
		{"tokenizer-file-name", func(b *Builder) {
			b.Tokenizer(Tokenizer{Name: "t", Files: map[string]digest.Sum{"a=sha256:" + digest.Sum{}.String(): {}}})
		}, func(b *Builder) {
			b.Tokenizer(Tokenizer{Name: "t", Files: map[string]digest.Sum{"a": {}}})
		}},
		{"name-vs-revision", func(b *Builder) { b.Tokenizer(Tokenizer{Name: "a", Revision: "b"}) }, func(b *Builder) { b.Tokenizer(Tokenizer{Name: "ab"}) }},
		{"absent-vs-empty", func(b *Builder) {}, func(b *Builder) { b.Field("x", "") }},
	}
	for _, p := range pairs {
		ba, bb := New(salt), New(salt)
		p.a(ba)
		p.b(bb)
		ea, eb := explain(t, ba), explain(t, bb)
		ka, _ := ba.Key()
		kb, _ := bb.Key()
		if ea == eb || ka == kb {
			t.Errorf("%s: same description:\n%s", p.name, ea)
		}
	}
	if a, b := New(salt), New(Salt{Records: 1, Store: 2, Algorithms: salt.Algorithms}); explain(t, a) == explain(t, b) {
		t.Error("store version not in the description")
	}
	if a, b := New(salt), New(Salt{Records: 1, Store: 1, Algorithms: map[string]int{"synthesis": 3, "corpus": 1, "body": 3}}); explain(t, a) == explain(t, b) {
		t.Error("algorithm version not in the description")
	}
}

// decode reads a description back into its fields: that it can be done
// without ambiguity is what makes the encoding injective.
func decode(t *testing.T, text string) map[string]any {
	t.Helper()
	lines := strings.Split(text, "\n")
	if lines[0] != Domain || lines[len(lines)-1] != "" {
		t.Fatalf("framing: %q", text)
	}
	out := make(map[string]any)
	prev := ""
	for _, l := range lines[1 : len(lines)-1] {
		name, v, ok := strings.Cut(l, "=")
		if !ok || name <= prev {
			t.Fatalf("line %q: not name=value in name order", l)
		}
		prev = name
		switch {
		case strings.HasPrefix(v, `"`):
			s, err := strconv.Unquote(v)
			if err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			out[name] = s
		case strings.HasPrefix(v, "["):
			var list []string
			rest := v[1:]
			for rest != "]" {
				q, err := strconv.QuotedPrefix(rest)
				if err != nil {
					t.Fatalf("line %q: %v", l, err)
				}
				s, _ := strconv.Unquote(q)
				list = append(list, s)
				rest = strings.TrimPrefix(rest[len(q):], ",")
			}
			out[name] = list
		default:
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			out[name] = n
		}
	}
	return out
}

// TestInjective builds random descriptions from hostile strings and reads
// each back exactly.
func TestInjective(t *testing.T) {
	alphabet := []string{"", "=", "\n", "\r", `"`, `\`, ",", "[", "]", "a", "é", "\x00", "\xff", " ", "\t", "sha256:"}
	r := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		var sb strings.Builder
		for range r.IntN(6) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return sb.String()
	}
	names := []string{"a", "a.b", "a-b", "a_b", "b", "pack.model", "z9"}
	for range 2000 {
		rec, sto := r.IntN(3), r.IntN(3)
		b := New(Salt{Records: rec, Store: sto})
		want := map[string]any{"salt.records": rec, "salt.store": sto}
		for _, n := range names {
			switch r.IntN(3) {
			case 0:
				v := str()
				b.Field(n, v)
				want[n] = v
			case 1:
				var l []string
				for range r.IntN(3) {
					l = append(l, str())
				}
				b.List(n, l)
				want[n] = l
			}
		}
		got := decode(t, explain(t, b))
		if len(got) != len(want) {
			t.Fatalf("fields: got %v, want %v", got, want)
		}
		for n, v := range want {
			if g, ok := got[n]; !ok || !equal(g, v) {
				t.Fatalf("field %s: got %#v, want %#v", n, g, v)
			}
		}
	}
}

func equal(a, b any) bool {
	la, aok := a.([]string)
	lb, bok := b.([]string)
	if aok || bok {
		if !aok || !bok || len(la) != len(lb) {
			return false
		}
		for i := range la {
			if la[i] != lb[i] {
				return false
			}
		}
		return true
	}
	return a == b
}

func TestMisuse(t *testing.T) {
	for _, tc := range []struct {
		name string
		use  func(b *Builder)
	}{
		{"twice", func(b *Builder) { b.Field("a", "1"); b.Field("a", "1") }},
		{"list-and-field", func(b *Builder) { b.Field("a", "1"); b.List("a", nil) }},
		{"empty-name", func(b *Builder) { b.Field("", "1") }},
		{"upper", func(b *Builder) { b.Field("Model", "1") }},
		{"equals", func(b *Builder) { b.Field("a=b", "1") }},
		{"newline", func(b *Builder) { b.Field("a\nb", "1") }},
		{"dot-first", func(b *Builder) { b.Field(".a", "1") }},
		{"reserved-input", func(b *Builder) { b.Field("input", "x") }},
		{"reserved-salt", func(b *Builder) { b.Field("salt.store", "2") }},
		{"reserved-tokenizer", func(b *Builder) { b.Field("tokenizer.name", "x") }},
		{"tokenizer-twice", func(b *Builder) { b.Tokenizer(Tokenizer{}); b.Tokenizer(Tokenizer{}) }},
	} {
		b := New(salt)
		tc.use(b)
		if _, err := b.Key(); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
		if _, err := b.Explain(); err == nil {
			t.Errorf("%s: Explain: no error", tc.name)
		}
	}
	if _, err := New(Salt{Algorithms: map[string]int{"Bad Name": 1}}).Key(); err == nil {
		t.Error("bad algorithm name accepted")
	}
}

func TestTokenizerFiles(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "tokenizer.json")
	c := filepath.Join(dir, "tokenizer_config.json")
	os.WriteFile(a, []byte("{}"), 0o644)
	os.WriteFile(c, []byte(`{"bos_token":null}`), 0o644)
	var h digest.Hasher
	tk, err := TokenizerFiles(context.Background(), &h, "org/name", "abc", a, c)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Files["tokenizer.json"] != digest.Sum(sha256.Sum256([]byte("{}"))) || len(tk.Files) != 2 {
		t.Errorf("files %v", tk.Files)
	}
	if _, err := TokenizerFiles(context.Background(), &h, "n", "", a, a); err == nil {
		t.Error("two files with one name accepted")
	}
	if _, err := TokenizerFiles(context.Background(), &h, "n", "", filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := TokenizerFiles(context.Background(), &h, "n", "", dir); err == nil {
		t.Error("a directory accepted as a tokenizer file")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("sha256:" + strings.Repeat("ab", 32))
	f.Add("sha256:" + strings.Repeat("AB", 32))
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := Parse(s)
		if err != nil {
			return
		}
		if k.String() != s {
			t.Fatalf("Parse(%q).String() = %q", s, k.String())
		}
	})
}
