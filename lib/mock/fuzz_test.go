package mock

import (
	"testing"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// FuzzParseRequest: the request reader on arbitrary bodies never panics,
// and what it accepts is one JSON object whose input it can list.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":5,"stream_options":{"include_usage":true}}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]}]}`,
		`{"prompt":["a","b"],"max_completion_tokens":2}`,
		`{"prompt":"x","max_tokens":null}`,
		`{"messages":{}}`,
		` {"messages":[]} `,
		`{"input":[{"role":"user","content":"hi","type":"message"}],"model":"m","stream":true,"max_output_tokens":5}`,
		`{"model":"e","input":["one","two"]}`,
		`{"input":"x","max_output_tokens":0}`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, chat bool) {
		q, err := parseRequest(body, chat)
		if err != nil {
			return
		}
		if !jsonx.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		if q.maxTokens < 0 || q.maxTokens > 1<<24 {
			t.Fatalf("max tokens %d", q.maxTokens)
		}
		inputTexts(q.input, func(string) {})
		for _, api := range []string{apiResponses, apiMessages, apiEmbeddings} {
			if q, err := parseAPIRequest(body, api); err == nil {
				inputTexts(q.input, func(string) {})
			}
		}
	})
}
