package replay

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	const key = "sk/abc+def\"0123456789"
	rd := newRedactor(key, []Header{{"X-Api-Key", "hdr-secret-1"}, {"Authorization", "Basic dXNlcjpwdw=="}, {"Accept", "application/json"}})
	for in, want := range map[string]string{
		"invalid key " + key:                              "invalid key [redacted]",
		"Authorization: Bearer " + key + " refused":       "Authorization: Bearer [redacted] refused",
		`{"h":"Bearer sk\/abc+def\"0123456789"}`:          `{"h":"Bearer [redacted]"}`,
		`sk/abc+def\"0123456789`:                          `[redacted]`,
		"q=sk%2Fabc%2Bdef%220123456789":                   "q=[redacted]",
		"x-api-key hdr-secret-1, auth Basic dXNlcjpwdw==": "x-api-key [redacted], auth [redacted]",
		"bad credentials dXNlcjpwdw==":                    "bad credentials [redacted]",
		"accepts application/json":                        "accepts application/json", // not a credential header
		"the key you sent, sk/abc+d...":                   "the key you sent, [redacted]...",
		"ends with sk/...":                                "ends with sk/...", // 3 bytes: too short to tell
		"nothing here":                                    "nothing here",
	} {
		if got := rd.redact(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	if newRedactor("", []Header{{"Accept", "x"}}) != nil {
		t.Error("a redactor without credentials")
	}
}

// TestRedactEncoded: the key echoed \u-escaped (wholly, in part, in
// either case, with \/) or in base64 (of the key, of "Bearer KEY", or
// inside the base64 of a longer text at any alignment) is redacted too.
func TestRedactEncoded(t *testing.T) {
	const key = "sk-proj/0123456789"
	rd := newRedactor(key, nil)
	uesc := func(s string, upper bool) string {
		var b strings.Builder
		for _, r := range s {
			f := `\u%04x`
			if upper {
				f = `\u%04X`
			}
			fmt.Fprintf(&b, f, r)
		}
		return b.String()
	}
	b64 := func(e *base64.Encoding, s string) string { return e.EncodeToString([]byte(s)) }
	cases := map[string]string{
		`{"detail":"` + uesc(key, false) + `"}`:                      `{"detail":"[redacted]"}`,
		`{"detail":"` + uesc(key, true) + `"}`:                       `{"detail":"[redacted]"}`,
		`key \u0073k-proj\/0123\u00345678\u0039.`:                    `key [redacted].`,
		"auth " + b64(base64.StdEncoding, key) + " refused":          "auth [redacted] refused",
		"auth " + b64(base64.RawURLEncoding, key) + " refused":       "auth [redacted] refused",
		"auth " + b64(base64.StdEncoding, "Bearer "+key) + " bad":    "auth [redacted] bad",
		"auth " + b64(base64.RawStdEncoding, "Bearer "+key) + " bad": "auth [redacted] bad",
		`\u0073k is not the key`:                                     `\u0073k is not the key`,
	}
	for k := range 3 {
		// the key inside a longer text encoded whole, k bytes into a group
		cases[b64(base64.StdEncoding, strings.Repeat("h", k)+"Authorization: Bearer "+key+"\r\n")] = ""
	}
	for in, want := range cases {
		got := rd.redact(in)
		if want == "" { // only the key's bits may go: nothing of it readable
			if !strings.Contains(got, redacted) || len(got) > len(in) {
				t.Errorf("%q: got %q, want the key's characters redacted", in, got)
			}
			continue
		}
		if got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	if got := rd.redact("not base64 at all: c2stcHJv"); got != "not base64 at all: c2stcHJv" {
		t.Errorf("a start of the key's base64 too short to tell: got %q", got)
	}
}

// TestAPIKeyEchoed: a server whose errors echo the Authorization header (a
// 401 body, a message clipped in the middle of the key, an error event in
// a stream, a malformed chunk) never gets the key into the records.
func TestAPIKeyEchoed(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		auth := r.Header.Get("Authorization")
		switch r.Header.Get("X-Request-ID")[len(r.Header.Get("X-Request-ID"))-1] {
		case '0':
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"invalid header %q","type":"auth %s"}}`, auth, auth)
		case '1':
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, "%s%s", strings.Repeat("x", 200-len("Authorization: Bearer sk-l")), "Authorization: "+auth)
		case '2':
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: error\ndata: {\"message\":\"seen %s\"}\n\n", auth)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"echo\": %q\n\n", auth)
		}
	}))
	st := singleTurns(t, 4, 0, func(i int) []byte { return chatBody("q", 2, true) })
	var buf bytes.Buffer
	_, err := Run(context.Background(), st, Options{URL: url, APIKey: key, Concurrency: 1, Results: &buf})
	if err != nil {
		t.Fatal(err)
	}
	recs := decodeAll(t, bytes.NewReader(buf.Bytes()))
	for _, r := range recs {
		if r.Err == nil {
			t.Errorf("record %d: no error", r.Record)
		}
	}
	if bytes.Contains(buf.Bytes(), []byte(key)) || bytes.Contains(buf.Bytes(), []byte(key[:minPartial])) {
		t.Errorf("the key is in the records:\n%s", buf.Bytes())
	}
	if !bytes.Contains(buf.Bytes(), []byte("Bearer [redacted]")) {
		t.Errorf("no redaction marker in the records:\n%s", buf.Bytes())
	}
}
