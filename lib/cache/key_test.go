package cache

import (
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/cachekey"
)

func TestParseKey(t *testing.T) {
	hex64 := strings.Repeat("0a", 32)
	good := []struct{ key, shard, name string }{
		{"sha256:" + hex64, "0a", hex64},
		{"sha256:ff" + hex64[2:], "ff", "ff" + hex64[2:]},
		{"mooncake-conv-v3", "6d", "n-mooncake-conv-v3"},
		{"0", "30", "n-0"},
		{"a.b_c-d", "61", "n-a.b_c-d"},
		{strings.Repeat("z", 128), "7a", "n-" + strings.Repeat("z", 128)},
	}
	for _, g := range good {
		k, err := ParseKey(g.key)
		if err != nil {
			t.Errorf("ParseKey(%q): %v", g.key, err)
			continue
		}
		if k.shard() != g.shard || k.name() != g.name || k.String() != g.key {
			t.Errorf("ParseKey(%q): shard %q name %q, want %q %q", g.key, k.shard(), k.name(), g.shard, g.name)
		}
		back, ok := keyFromName(k.name())
		if !ok || back != k {
			t.Errorf("keyFromName(%q) = %v %v, want %v", k.name(), back, ok, k)
		}
	}
	bad := []string{
		"", "sha256:", "sha256:" + hex64[:63], "sha256:" + hex64 + "0", "sha256:" + strings.ToUpper(hex64),
		"sha256:" + hex64[:62] + "g0", "sha512:" + hex64, "../etc", "..", ".", "a/b", "/abs", ".hidden",
		"-flag", "_x", "Upper", "sp ace", "nul\x00", "tab\t", "a\\b", "key:colon", strings.Repeat("z", 129),
		"sha256:../../../../etc/passwd/" + hex64[:35], "caf\u00e9",
	}
	for _, b := range bad {
		if k, err := ParseKey(b); err == nil {
			t.Errorf("ParseKey(%q) = %v, want an error", b, k)
		}
	}
}

func TestKeyFromNameRejectsStrays(t *testing.T) {
	for _, n := range []string{"", "n-", "n-UP", "0a", strings.Repeat("0a", 32) + "x", "n-../x", "tmp", "memo"} {
		if k, ok := keyFromName(n); ok {
			t.Errorf("keyFromName(%q) = %v, want no key", n, k)
		}
	}
}

// TestDigestKey: a digest key is a cachekey.Key, both ways; a named key has
// no digest.
func TestDigestKey(t *testing.T) {
	d := cachekey.KeyOf("a description")
	k := DigestKey(d)
	if p, err := ParseKey(d.String()); err != nil || p != k {
		t.Fatalf("ParseKey(%s) = %v, %v; want %v", d, p, err, k)
	}
	if back, ok := k.Digest(); !ok || back != d {
		t.Errorf("Digest() = %v, %v; want %v", back, ok, d)
	}
	if _, ok := MustParseKey("named-key").Digest(); ok {
		t.Error("a named key has a digest")
	}
	if _, ok := (Key{}).Digest(); ok {
		t.Error("the zero Key has a digest")
	}
}
