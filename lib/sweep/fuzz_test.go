package sweep

import (
	"strings"
	"testing"
)

// FuzzParseState: a sweep.json of any bytes is read or refused with the
// file's name, never a panic; what reads writes back and reads again alike.
func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"v":1,"settings":{"url":"u"},"steps":[{"step":1,"kind":"synchronous","by":"concurrency","load":1,"verdict":"pass"}]}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte("{\n\"v\":1,\n\"steps\":[{\"step\":\"x\"}]}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseState(b, "sweep.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "sweep.json") {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		if len(s.Steps) > 0 && s.Steps[0].N != 1 {
			t.Fatalf("accepted steps not numbered from 1")
		}
	})
}
