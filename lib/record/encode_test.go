package record

import (
	"bytes"
	"strings"
	"testing"
)

// TestEncodeBigBody: a body past bigBody is written straight to the writer,
// in three writes, and the line is the same as Append's.
func TestEncodeBigBody(t *testing.T) {
	for _, n := range []int{10, bigBody - 3, bigBody, 3 * bigBody} {
		lit := []byte(`"` + strings.Repeat("x", n) + `"`)
		rec := &Record{Line: 7, SessionID: "s", Session: 1, Turn: 2, HasMaxTokens: true, MaxTokens: 9,
			Kind: KindPrompt, Raw: lit, Extra: []byte(`{"a":1}`)}
		var out bytes.Buffer
		enc := NewEncoder(&out)
		if err := enc.Encode(rec); err != nil {
			t.Fatal(err)
		}
		if err := enc.End(); err != nil {
			t.Fatal(err)
		}
		want := string(Append(nil, rec)) + "{\"v\":1,\"end\":true,\"records\":1}\n"
		if out.String() != want {
			t.Errorf("body of %d bytes: the line differs from Append's", n)
		}
		if n >= bigBody && len(enc.buf) > 1024 {
			t.Errorf("body of %d bytes: the encoder's buffer grew to %d bytes", n, cap(enc.buf))
		}
	}
}
