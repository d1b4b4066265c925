package cache

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func goodManifest() *Manifest {
	return &Manifest{
		V: ManifestVersion, Key: "sha256:" + strings.Repeat("ab", 32), CreatedUnixNS: 1764504000000000000, Tool: "aiperf-cache test",
		Files: []File{
			{Name: "store.aipk", Size: 1 << 31, DigestKind: DigestAipkTrailer, Digest: strings.Repeat("01", 32), StoreVersion: 1},
			{Name: "inputs.json", Size: 12, DigestKind: DigestSHA256, Digest: strings.Repeat("cd", 32)},
		},
		Explain: "aiperf-cachekey v1\ninput=...\n",
	}
}

func TestManifestRoundTrip(t *testing.T) {
	m := goodManifest()
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("got %+v, want %+v", got, m)
	}
	if got.Size() != 1<<31+12 {
		t.Errorf("Size() = %d", got.Size())
	}
	// Unknown fields are ignored (adding one does not bump "v").
	b2 := strings.Replace(string(b), `"v": 1,`, `"v": 1, "future": {"x": [1]},`, 1)
	if _, err := ParseManifest([]byte(b2)); err != nil {
		t.Errorf("a manifest with an unknown field: %v", err)
	}
}

func TestManifestRejects(t *testing.T) {
	cases := []struct {
		name string
		edit func(m *Manifest)
		text string // used instead of edit when set
		want string
	}{
		{name: "empty", text: "", want: "manifest"},
		{name: "not json", text: "v1 abc", want: "manifest"},
		{name: "no v", text: `{"key":"x"}`, want: `no "v"`},
		{name: "newer", text: `{"v":2,"key":"x"}`, want: "newer"},
		{name: "v0", text: `{"v":0}`, want: "unknown version"},
		{name: "trailing", text: "", want: "after"},
		{name: "bad key", edit: func(m *Manifest) { m.Key = "../x" }, want: "key"},
		{name: "no files", edit: func(m *Manifest) { m.Files = nil }, want: "0 files"},
		{name: "dup", edit: func(m *Manifest) { m.Files[1].Name = m.Files[0].Name }, want: "twice"},
		{name: "slash", edit: func(m *Manifest) { m.Files[0].Name = "a/b" }, want: "path element"},
		{name: "dotdot", edit: func(m *Manifest) { m.Files[0].Name = ".." }, want: "dot"},
		{name: "hidden", edit: func(m *Manifest) { m.Files[0].Name = ".x" }, want: "dot"},
		{name: "reserved", edit: func(m *Manifest) { m.Files[0].Name = manifestName }, want: "reserved"},
		{name: "control", edit: func(m *Manifest) { m.Files[0].Name = "a\nb" }, want: "control"},
		{name: "negative", edit: func(m *Manifest) { m.Files[0].Size = -1 }, want: "size"},
		{name: "overflow", edit: func(m *Manifest) { m.Files[0].Size = 1<<63 - 1; m.Files[1].Size = 1 << 62 }, want: "size"},
		{name: "digest", edit: func(m *Manifest) { m.Files[0].Digest = strings.Repeat("AB", 32) }, want: "digest"},
		{name: "kind", edit: func(m *Manifest) { m.Files[0].DigestKind = "md5" }, want: "digest_kind"},
		{name: "aipk without version", edit: func(m *Manifest) { m.Files[0].StoreVersion = 0 }, want: "store_format_version"},
		{name: "sha256 with version", edit: func(m *Manifest) { m.Files[1].StoreVersion = 1 }, want: "store_format_version"},
		{name: "explain", edit: func(m *Manifest) { m.Explain = strings.Repeat("x", maxExplain+1) }, want: "explain"},
		{name: "created", edit: func(m *Manifest) { m.CreatedUnixNS = -5 }, want: "negative"},
		{name: "input name", edit: func(m *Manifest) { m.Inputs = []string{"a\nb"} }, want: "inputs[0]"},
		{name: "empty input", edit: func(m *Manifest) { m.Inputs = []string{""} }, want: "inputs[0]"},
		{name: "model", edit: func(m *Manifest) { m.Files[0].Model = "a\tb" }, want: "model or endpoint"},
		{name: "endpoint", edit: func(m *Manifest) { m.Files[0].Endpoint = strings.Repeat("e", maxLabel+1) }, want: "model or endpoint"},
	}
	for _, tc := range cases {
		var b []byte
		switch {
		case tc.edit != nil:
			m := goodManifest()
			tc.edit(m)
			if _, err := m.Encode(); err == nil {
				t.Errorf("%s: Encode accepted it", tc.name)
			}
			b = []byte(marshalRaw(t, m)) // Encode refuses it: marshal by hand

		case tc.name == "trailing":
			b, _ = goodManifest().Encode()
			b = append(b, "{}"...)
		default:
			b = []byte(tc.text)
		}
		_, err := ParseManifest(b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ParseManifest error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := ParseManifest([]byte(`{"v":2}`)); !errors.Is(err, ErrManifestVersion) {
		t.Errorf("newer manifest: %v does not wrap ErrManifestVersion", err)
	}
	big := make([]byte, maxManifestSize+1)
	if _, err := ParseManifest(big); err == nil {
		t.Error("an oversized manifest parsed")
	}
}

// The fields added to version 1 (a store's model and endpoint, the key's
// inputs) round-trip, and a manifest written before them reads as it did.
func TestManifestLabels(t *testing.T) {
	m := goodManifest()
	m.Files[0].Model, m.Files[0].Endpoint, m.Inputs = "m", "chat", []string{"traces/mooncake.jsonl"}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseManifest(b)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("got %+v, %v; want %+v", got, err, m)
	}
	old := `{"v":1,"key":"sha256:` + strings.Repeat("ab", 32) + `","created_unix_ns":1,"tool":"aiperf-cache v0.3.0",` +
		`"files":[{"name":"store.aipk","size":5,"digest_kind":"aipk-trailer","digest":"` + strings.Repeat("01", 32) + `","store_format_version":1}]}`
	got, err = ParseManifest([]byte(old))
	if err != nil || got.Files[0].Model != "" || got.Inputs != nil {
		t.Fatalf("an older manifest: %+v, %v", got, err)
	}
}
