package cache

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// FuzzParseManifest: arbitrary bytes never panic, and whatever parses
// encodes to a canonical form that parses back to the same manifest.
func FuzzParseManifest(f *testing.F) {
	b, _ := goodManifest().Encode()
	f.Add(b)
	f.Add([]byte(`{"v":1,"key":"x","files":[{"name":"a","size":1,"digest_kind":"sha256","digest":"` + string(make([]byte, 0)) + `"}]}`))
	f.Add([]byte(`{"v":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b)
		if err != nil {
			return
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatalf("a parsed manifest does not encode: %v", err)
		}
		m2, err := ParseManifest(enc)
		if err != nil {
			t.Fatalf("the encoding of a parsed manifest does not parse: %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the manifest:\n%+v\n%+v", m, m2)
		}
	})
}

// FuzzImport feeds import arbitrary tar streams (compressed here, so that
// the fuzzer works on the archive rather than on zstd framing) and raw
// bytes: it must never panic, and whatever it publishes must verify.
func FuzzImport(f *testing.F) {
	f.Add(seedStream(f), true)
	f.Add([]byte("not a stream"), false)
	// One root for every input (making one costs fsyncs); each published
	// entry is removed again.
	c, err := Open(filepath.Join(f.TempDir(), "c"), Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	f.Fuzz(func(t *testing.T, b []byte, wrap bool) {
		in := b
		if wrap {
			var zb bytes.Buffer
			zw, _ := zstd.NewWriter(&zb)
			zw.Write(b)
			zw.Close()
			in = zb.Bytes()
		}
		e, _, err := c.Import(t.Context(), bytes.NewReader(in), ImportOptions{MaxSize: 1 << 24})
		if err != nil {
			if n, _ := c.tmp.names(); len(n) != 0 {
				t.Fatalf("a refused import left %v in tmp/", n)
			}
			return
		}
		if _, err := c.Verify(e.Key); err != nil {
			t.Fatalf("imported entry does not verify: %v", err)
		}
		if err := c.Remove(e.Key); err != nil {
			t.Fatal(err)
		}
	})
}

// seedStream is the uncompressed tar of a small valid export.
func seedStream(f *testing.F) []byte {
	dir := f.TempDir()
	c, err := Open(filepath.Join(dir, "c"), Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	writeStore(f, filepath.Join(dir, "s.aipk"), 3, 20, 1)
	writeFile(f, filepath.Join(dir, "inputs.json"), "{}")
	k := MustParseKey("fuzz")
	if _, _, err := c.Populate(k, []string{filepath.Join(dir, "s.aipk"), filepath.Join(dir, "inputs.json")}, PopulateOptions{}); err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.Export(f.Context(), k, &buf); err != nil {
		f.Fatal(err)
	}
	zr, _ := zstd.NewReader(&buf)
	defer zr.Close()
	var raw bytes.Buffer
	raw.ReadFrom(zr)
	return raw.Bytes()
}
