package replay

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/aiperf/toolkit/lib/store"
)

// TestMessagesHeaders: a messages store is sent with the API key as
// x-api-key and with anthropic-version, never as a bearer token; a
// --header anthropic-version wins over the default.
func TestMessagesHeaders(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		if r.URL.Path != "/v1/messages" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"type":"message","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":3,"output_tokens":1}}`)
	}))
	spec := &store.Spec{Meta: map[string]string{store.MetaEndpoint: "messages", store.MetaPath: "/v1/messages", store.MetaModel: "c"}, Sessions: []string{"a"}}
	spec.Records = []store.Record{{Entry: store.Entry{Line: 1, InputTokens: 3}, Payload: []byte(`{"messages":[{"role":"user","content":"q"}],"model":"c","max_tokens":1,"stream":false}`)}}
	st := openSpec(t, spec)
	for _, c := range []struct {
		headers []Header
		version string
	}{
		{nil, AnthropicVersion},
		{[]Header{{"anthropic-version", "2099-01-01"}}, "2099-01-01"},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		recs, _ := replayAll(t, context.Background(), st, Options{URL: url, APIKey: "sk-ant", Concurrency: 1, Headers: c.headers})
		if len(recs) != 1 || recs[0].Err != nil || recs[0].OutputTokens != 1 || recs[0].Usage == nil || recs[0].Usage.PromptTokens != 3 {
			t.Fatalf("records %+v", recs)
		}
		mu.Lock()
		h := seen[0]
		mu.Unlock()
		if h.Get("X-Api-Key") != "sk-ant" || h.Get("Authorization") != "" || h.Get("Anthropic-Version") != c.version || len(h.Values("Anthropic-Version")) != 1 {
			t.Errorf("headers %v", h)
		}
	}
}
