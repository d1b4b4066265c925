package cache

import (
	"reflect"
	"testing"
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
