package cachekey

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/digest"
)

func fullDescription(t *testing.T) string {
	t.Helper()
	b := New(salt)
	b.Field("pack.model", "m\n\"q\"")
	b.List("pack.extra", []string{"a=1", `b="x"`})
	b.List("pack.none", []string{})
	b.Input(digest.Digest{Kind: digest.File, Sum: digest.Sum(sha256.Sum256([]byte("trace")))})
	b.Tokenizer(Tokenizer{Name: "gpt2", Files: map[string]digest.Sum{"tokenizer.json": {}}})
	return explain(t, b)
}

// TestParseDescription: what Explain writes parses back to the same text,
// and its settings are everything but input.
func TestParseDescription(t *testing.T) {
	text := fullDescription(t)
	d, err := ParseDescription(text)
	if err != nil {
		t.Fatal(err)
	}
	if d.String() != text {
		t.Errorf("String:\n%s\nwant:\n%s", d.String(), text)
	}
	if v, ok := d.Value("pack.model"); !ok || v != "m\n\"q\"" {
		t.Errorf("Value(pack.model) = %q, %v", v, ok)
	}
	if _, ok := d.Value("pack.extra"); ok {
		t.Error("Value of a list field: ok")
	}
	s := d.Settings()
	if _, ok := s["input"]; ok || len(s) != len(d)-1 {
		t.Errorf("Settings kept input or lost another field: %v", s)
	}
}

// TestParseDescriptionRefuses: a text that is not in the canonical form
// is refused, so a description has one spelling.
func TestParseDescriptionRefuses(t *testing.T) {
	for _, c := range []struct{ name, text string }{
		{"no domain", "pack.model=\"m\"\n"},
		{"other domain", "aiperf-cachekey v2\n"},
		{"no newline", Domain + "\npack.model=\"m\""},
		{"no equals", Domain + "\npack.model\n"},
		{"bad name", Domain + "\nPack.model=\"m\"\n"},
		{"order", Domain + "\npack.z=\"a\"\npack.a=\"b\"\n"},
		{"twice", Domain + "\npack.a=\"a\"\npack.a=\"a\"\n"},
		{"unquoted", Domain + "\npack.a=m\n"},
		{"not canonical quote", Domain + "\npack.a=\"\\x41\"\n"},
		{"raw string", Domain + "\npack.a=`a`\n"},
		{"trailing", Domain + "\npack.a=\"a\"x\n"},
		{"bad list", Domain + "\npack.a=[\"a\",]\n"},
		{"list spaces", Domain + "\npack.a=[\"a\", \"b\"]\n"},
		{"list open", Domain + "\npack.a=[\"a\"\n"},
		{"salt quoted", Domain + "\nsalt.store=\"1\"\n"},
		{"salt padded", Domain + "\nsalt.store=01\n"},
	} {
		if _, err := ParseDescription(c.text); err == nil {
			t.Errorf("%s: %q accepted", c.name, c.text)
		}
	}
	if _, err := ParseDescription(Domain + "\n"); err != nil {
		t.Errorf("the empty description: %v", err)
	}
}

// TestDiffSettings names each differing field with both values, a field
// one side lacks as absent, and leaves input alone.
func TestDiffSettings(t *testing.T) {
	key := Description{"input": `["file:sha256:00"]`, "pack.model": `"m"`, "tokenize.seed": `"0"`, "salt.store": "1"}
	st := Description{"pack.model": `"WRONG"`, "salt.store": "1", "pack.new": `"x"`}
	got := strings.Join(DiffSettings(key, st), "\n")
	want := `pack.model: "m" in the key, "WRONG" in the store
pack.new: absent in the key, "x" in the store
tokenize.seed: "0" in the key, absent in the store`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if d := DiffSettings(key, key.Settings()); len(d) != 0 {
		t.Errorf("the key against its own settings: %q", d)
	}
}

// FuzzParseDescription: never panics, and whatever parses is canonical.
func FuzzParseDescription(f *testing.F) {
	f.Add(Domain + "\npack.a=\"x\"\nsalt.store=1\n")
	f.Add(Domain + "\npack.l=[\"a\",\"b\\n\"]\n")
	f.Add("x")
	f.Fuzz(func(t *testing.T, text string) {
		d, err := ParseDescription(text)
		if err != nil {
			return
		}
		if d.String() != text {
			t.Errorf("%q parses, but String gives %q", text, d.String())
		}
	})
}

// TestDiffSettingsGroup: a group one side lacks altogether is one line.
func TestDiffSettingsGroup(t *testing.T) {
	key := Description{"pack.model": `"m"`, "tokenize.seed": `"0"`, "tokenize.type": `"t"`, "tokenizer.name": `"n"`}
	st := Description{"pack.model": `"m2"`}
	got := strings.Join(DiffSettings(key, st), "\n")
	want := `pack.model: "m" in the key, "m2" in the store
tokenize.* (2 fields): absent in the store
tokenizer.name: "n" in the key, absent in the store`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
