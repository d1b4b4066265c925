package replay

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// An answer outside 2xx is recorded as aiperf records it: the reason
// phrase as type and the body, as it came, as message.
func TestHTTPErrorRecord(t *testing.T) {
	for _, tc := range []struct {
		name, ctype, body string
		status            int
		typ               string
	}{
		{"json", "application/json", `{"error":{"message":"boom","type":"server_error","code":500}}`, 500, "Internal Server Error"},
		{"text", "text/plain", "upstream connect error\n", 500, "Internal Server Error"},
		{"empty", "", "", 502, "Bad Gateway"},
		{"nonstandard", "text/plain", "odd", 599, "HTTP 599"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				}
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			st := singleTurns(t, 2, 0, func(int) []byte { return chatBody("q", 4, false) })
			recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 1})
			if len(recs) != 2 {
				t.Fatalf("%d records, want 2", len(recs))
			}
			for _, r := range recs {
				if r.Err == nil {
					t.Fatalf("record %d: no error for status %d", r.Record, tc.status)
				}
				if r.Err.Code != tc.status || r.Err.Type != tc.typ || r.Err.Message != tc.body {
					t.Errorf("record %d: error %+v, want code %d type %q message %q", r.Record, *r.Err, tc.status, tc.typ, tc.body)
				}
			}
		})
	}
}

func TestHTTPErrorClipsBody(t *testing.T) {
	body := []byte(strings.Repeat("é", maxMessage) + "\xff")
	e := httpError(500, body)
	if !strings.HasSuffix(e.Message, "...") || len(e.Message) > maxMessage+3 {
		t.Errorf("message of %d bytes (suffix %q), want at most %d ending in ...", len(e.Message), e.Message[len(e.Message)-5:], maxMessage+3)
	}
	if e := httpError(500, []byte("a\xffb")); e.Message != "a\uFFFDb" {
		t.Errorf("invalid UTF-8: message %q, want %q", e.Message, "a\uFFFDb")
	}
}
