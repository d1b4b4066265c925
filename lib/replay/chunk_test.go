package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aiperf/toolkit/lib/mock"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/store"
)

func TestChunk(t *testing.T) {
	var rp reply
	for _, tc := range []struct {
		in             string
		content, think bool
	}{
		{`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, false, false},
		{`{"choices":[{"index":0,"delta":{"content":"He"}}]}`, true, false},
		{`{"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}`, false, true},
		{`{"choices":[{"index":0,"delta":{"reasoning":"\n"}}]}`, false, true},
		{`{"choices":[{"index":0,"delta":{"content":"llo \"x\""}}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`, true, false},
		{`{"choices":[{"index":0,"delta":{"content":null},"finish_reason":"length"}]}`, false, false},
		{`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"completion_tokens_details":{"reasoning_tokens":1}}}`, false, false},
	} {
		c, r, err := rp.chunk([]byte(tc.in))
		if err != nil || c != tc.content || r != tc.think {
			t.Errorf("%s: content %v reasoning %v err %v", tc.in, c, r, err)
		}
	}
	if got := string(rp.content); got != `Hello \"x\"` {
		t.Errorf("content %q", got)
	}
	if got := string(rp.reasoning); got != `hm\n` {
		t.Errorf("reasoning %q", got)
	}
	// The last usage wins over the zeros that came before.
	if !rp.hasUsage || rp.usage != (result.Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15, ReasoningTokens: 1}) {
		t.Errorf("usage %+v", rp.usage)
	}
	var cached reply
	cached.chunk([]byte(`{"choices":[],"usage":{"prompt_tokens":600,"completion_tokens":3,"total_tokens":603,"prompt_tokens_details":{"cached_tokens":512}}}`))
	if cached.usage != (result.Usage{PromptTokens: 600, CompletionTokens: 3, TotalTokens: 603, CachedTokens: 512, HasCached: true}) {
		t.Errorf("usage with prompt_tokens_details: %+v", cached.usage)
	}
	var nulls reply
	nulls.chunk([]byte(`{"choices":[],"usage":{"prompt_tokens":6,"completion_tokens":3,"total_tokens":9,"prompt_tokens_details":{"cached_tokens":null}}}`))
	if nulls.usage.HasCached {
		t.Errorf("cached_tokens null read as reported: %+v", nulls.usage)
	}
	for _, bad := range []string{`{"choices":[`, `[1]`, `{"a":1} x`, ``} {
		if _, _, err := rp.chunk([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var e reply
	e.chunk([]byte(`{"error":{"message":"overloaded","type":"server_error","code":503}}`))
	if e.srvErr == nil || *e.srvErr != (result.Error{Code: 503, Type: "server_error", Message: "overloaded"}) {
		t.Errorf("error %+v", e.srvErr)
	}
}

func TestErrorMessage(t *testing.T) {
	for in, want := range map[string]string{
		`{"error":{"message":"model not found","type":"x"}}`: "model not found",
		`{"detail":"Not Found"}`:                             "Not Found",
		`{"message":"busy"}`:                                 "busy",
		`upstream connect error`:                             "upstream connect error",
		strings.Repeat("x", 300):                             strings.Repeat("x", 200) + "...",
		"\xff\xfe":                                           "\ufffd",
		// a server's message is clipped (at a character boundary) before it
		// reaches a record
		`{"error":{"message":"` + strings.Repeat("x", 5000) + `"}}`: strings.Repeat("x", maxMessage) + "...",
		`{"error":"` + strings.Repeat("é", 600) + `"}`:              strings.Repeat("é", maxMessage/2) + "...",
	} {
		if got := errorMessage([]byte(in)); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// An ollama-shaped stream: every chunk carries a usage of zeros, chunks
// carry several tokens, and the real usage comes last in a chunk without
// choices, just before [DONE]. The record takes the last usage and counts
// from it, not from the chunks.
func TestOllamaShapedStream(t *testing.T) {
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		zero := `"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`
		for _, txt := range []string{" one two", " three", " four five six"} {
			fmt.Fprintf(w, "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"text\":%q,\"index\":0,\"finish_reason\":null}],%s}\n\n", txt, zero)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"text\":\"\",\"index\":0,\"finish_reason\":\"length\"}],"+zero+"}\n\n")
		fmt.Fprint(w, "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":6,\"total_tokens\":15}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	st := singleTurns(t, 3, 0, func(i int) []byte { return []byte(`{"prompt":"count","model":"m","stream":true,"max_tokens":6}`) })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Path: "/v1/completions"})
	for _, r := range recs {
		if r.Err != nil || r.OutputTokens != 6 || r.OutputSource != result.SourceUsage || r.Usage == nil || r.Usage.PromptTokens != 9 {
			t.Errorf("record %+v usage %+v", r, r.Usage)
		}
		if len(r.ChunkOffsetsNS) != 3 {
			t.Errorf("%d content chunks, want 3", len(r.ChunkOffsetsNS))
		}
	}
}

// A server error inside a 200 stream is the request's error.
func TestErrorEvent(t *testing.T) {
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"error\":{\"message\":\"out of memory\",\"type\":\"InternalServerError\"}}\n\n")
	}))
	st := singleTurns(t, 1, 0, func(i int) []byte { return chatBody("q", 4, true) })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url})
	if e := recs[0].Err; e == nil || e.Type != "InternalServerError" || e.Message != "out of memory" || e.Code != 200 {
		t.Errorf("error %+v", e)
	}
}

// History: each later turn goes out as its stored body with the earlier
// turns' messages and the server's actual replies spliced in front of its
// own messages; every other byte is the store's.
func TestHistorySplice(t *testing.T) {
	srv, _ := mock.New(mock.Config{Fast: true})
	var mu sync.Mutex
	var got [][]byte
	var replies []string // the content each answer streamed
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		tw := &teeWriter{ResponseWriter: w}
		srv.ServeHTTP(tw, r)
		mu.Lock()
		replies = append(replies, streamedContent(t, tw.buf.Bytes()))
		mu.Unlock()
	}))
	turns := []string{
		`{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"one"}],"model":"m","stream":true,"max_tokens":3}`,
		`{"messages":[{"role":"user","content":"two"}],"model":"m","stream":true,"max_tokens":2,"temperature":0}`,
		`{"model":"m","messages": [ {"role":"user","content":"three"} ] ,"stream":true,"max_tokens":1}`,
	}
	spec := &store.Spec{Sessions: []string{"c"}}
	for i, b := range turns {
		spec.Records = append(spec.Records, store.Record{Entry: store.Entry{Session: 0, Turn: uint32(i)}, Payload: []byte(b)})
	}
	st := openSpec(t, spec)
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url})
	if len(got) != 3 || len(recs) != 3 {
		t.Fatalf("%d bodies", len(got))
	}
	// The replies the mock sent, from its deterministic text: read them
	// back from the bodies to check the rest byte for byte.
	if string(got[0]) != turns[0] {
		t.Fatalf("turn 0 changed:\n%s", got[0])
	}
	hist := `{"role":"system","content":"be brief"},{"role":"user","content":"one"},{"role":"assistant","content":"`
	b1 := string(got[1])
	if !strings.HasPrefix(b1, `{"messages":[`+hist) {
		t.Fatalf("turn 1: %s", b1)
	}
	reply0 := b1[len(`{"messages":[`+hist):]
	reply0 = reply0[:strings.Index(reply0, `"}`)]
	if reply0 == "" || unquote(t, reply0) != replies[0] {
		t.Fatalf("turn 1 carries the reply %q; the server streamed %q", reply0, replies[0])
	}
	want1 := `{"messages":[` + hist + reply0 + `"},{"role":"user","content":"two"}],"model":"m","stream":true,"max_tokens":2,"temperature":0}`
	if b1 != want1 {
		t.Fatalf("turn 1:\ngot  %s\nwant %s", b1, want1)
	}
	b2 := string(got[2])
	prefix := `{"model":"m","messages": [` + hist + reply0 + `"},{"role":"user","content":"two"},{"role":"assistant","content":"`
	suffix := `"}, {"role":"user","content":"three"} ] ,"stream":true,"max_tokens":1}`
	if !strings.HasPrefix(b2, prefix) || !strings.HasSuffix(b2, suffix) || len(b2) < len(prefix)+len(suffix) {
		t.Fatalf("turn 2: %s", b2)
	}
	if reply1 := b2[len(prefix) : len(b2)-len(suffix)]; reply1 == "" || unquote(t, reply1) != replies[1] {
		t.Fatalf("turn 2 carries the reply %q; the server streamed %q", reply1, replies[1])
	}
}

// teeWriter keeps a copy of what a handler writes.
type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func unquote(t *testing.T, escaped string) string {
	var s string
	if err := json.Unmarshal([]byte(`"`+escaped+`"`), &s); err != nil {
		t.Fatalf("spliced reply %q: %v", escaped, err)
	}
	return s
}

// streamedContent joins the delta contents of an SSE body.
func streamedContent(t *testing.T, body []byte) string {
	var out []byte
	for _, line := range bytes.Split(body, []byte("\n")) {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok || string(data) == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content *string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &c); err != nil {
			t.Errorf("answer chunk %s: %v", data, err)
			continue
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				out = append(out, *ch.Delta.Content...)
			}
		}
	}
	return string(out)
}

// In auto mode, a session whose stored turns already carry the whole
// conversation is sent as stored; "off" never splices; "on" always does. A
// context mode in the store's flags decides auto for its session; a
// verbatim payload is sent as stored.
func TestHistoryModes(t *testing.T) {
	cumulative := []string{
		`{"messages":[{"role":"user","content":"one"}],"model":"m","stream":true,"max_tokens":2}`,
		`{"messages":[{"role":"user","content":"one"},{"role":"assistant","content":"from the trace"},{"role":"user","content":"two"}],"model":"m","stream":true,"max_tokens":2}`,
	}
	deltas := []string{
		`{"messages":[{"role":"user","content":"one"}],"model":"m","stream":true,"max_tokens":2}`,
		`{"messages":[{"role":"user","content":"two"}],"model":"m","stream":true,"max_tokens":2}`,
	}
	for _, tc := range []struct {
		name    string
		mode    string
		bodies  []string
		flags   uint32
		spliced bool
	}{
		{"auto, whole conversations", HistoryAuto, cumulative, 0, false},
		{"auto, deltas", HistoryAuto, deltas, 0, true},
		{"off", HistoryOff, deltas, 0, false},
		{"on", HistoryOn, cumulative, 0, true},
		{"auto, store says deltas", HistoryAuto, cumulative, store.FlagContextDeltas, true},
		{"auto, store says message array", HistoryAuto, deltas, store.FlagContextMessageArray, false},
		{"auto, verbatim payloads", HistoryAuto, deltas, store.FlagVerbatim, false},
		{"off beats the store", HistoryOff, deltas, store.FlagContextDeltas, false},
	} {
		srv, _ := mock.New(mock.Config{Fast: true})
		var mu sync.Mutex
		var got [][]byte
		url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, b)
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
			srv.ServeHTTP(w, r)
		}))
		spec := &store.Spec{Sessions: []string{"c"}}
		for i, b := range tc.bodies {
			spec.Records = append(spec.Records, store.Record{Entry: store.Entry{Session: 0, Turn: uint32(i), Flags: tc.flags}, Payload: []byte(b)})
		}
		replayAll(t, context.Background(), openSpec(t, spec), Options{URL: url, History: tc.mode})
		if len(got) != 2 || string(got[0]) != tc.bodies[0] {
			t.Fatalf("%s: bodies %q", tc.name, got)
		}
		spliced := string(got[1]) != tc.bodies[1]
		if spliced != tc.spliced {
			t.Errorf("%s: spliced %v, want %v: %s", tc.name, spliced, tc.spliced, got[1])
		}
		if spliced && !strings.Contains(string(got[1]), `{"role":"user","content":"one"},{"role":"assistant","content":"`) {
			t.Errorf("%s: spliced without the first turn and its reply: %s", tc.name, got[1])
		}
	}
}
