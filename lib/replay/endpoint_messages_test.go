package replay

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
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

// TestAnswersWithoutContent: an answer without content (a Messages answer
// holding only a tool call, a Responses stream of only event types the
// client does not read) is the Python aiperf's invalid record, and is an
// error here too, counted by the run; a usage whose counts are no counts
// (negative, a string) fails its request naming the member, instead of
// reading as 0 tokens. A null count is none, as before.
func TestAnswersWithoutContent(t *testing.T) {
	const toolOnly = `{"type":"message","content":[{"type":"tool_use","id":"t1","name":"f","input":{"x":1}}],"usage":{"input_tokens":3,"output_tokens":9}}`
	unknownStream := "data: {\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{\\\"x\\\"\"}\n\n" +
		"data: {\"type\":\"response.audio.delta\",\"delta\":\"AAAA\"}\n\n" +
		"data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":7}}}\n\n"
	for _, c := range []struct {
		name, ctype, answer string
		wantType, wantMsg   string
	}{
		{"tool call only", "application/json", toolOnly, "InvalidInferenceResultError", "no responses with actual content"},
		{"unknown deltas only", "text/event-stream", unknownStream, "InvalidInferenceResultError", "no responses with actual content"},
		{"negative count", "application/json", `{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":-5}}`,
			"ResponseParseError", `usage member "completion_tokens" is not a token count: -5`},
		{"string count", "application/json", `{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":"3","completion_tokens":1}}`,
			"ResponseParseError", `usage member "prompt_tokens" is not a token count: "3"`},
		{"null count", "application/json", `{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":null}}`, "", ""},
	} {
		url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", c.ctype)
			io.WriteString(w, c.answer)
		}))
		st := singleTurns(t, 2, 0, func(int) []byte { return chatBody("q", 3, false) })
		recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Concurrency: 1})
		if len(recs) != 2 {
			t.Fatalf("%s: %d records", c.name, len(recs))
		}
		for _, r := range recs {
			if c.wantType == "" {
				if r.Err != nil || r.OutputTokens != 1 || r.Usage == nil || r.Usage.PromptTokens != 3 {
					t.Errorf("%s: %+v, %+v", c.name, r.Err, r.Usage)
				}
				continue
			}
			if r.Err == nil || r.Err.Type != c.wantType || !strings.Contains(r.Err.Message, c.wantMsg) {
				t.Errorf("%s: error %+v, want %s: %s", c.name, r.Err, c.wantType, c.wantMsg)
			}
			if c.wantType == "ResponseParseError" && (r.Usage != nil || r.OutputTokens != 0) {
				t.Errorf("%s: the usage that is no usage was kept: %+v, %d tokens", c.name, r.Usage, r.OutputTokens)
			}
		}
		if want := int64(2); c.wantType == "" {
			if stats.Errors != 0 {
				t.Errorf("%s: %d errors counted", c.name, stats.Errors)
			}
		} else if stats.Errors != want {
			t.Errorf("%s: the run counted %d errors of %d", c.name, stats.Errors, want)
		}
	}
}
