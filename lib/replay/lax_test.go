package replay

import (
	"reflect"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/result"
)

// The strict reference for the lax chunk walker: the same reads over
// lib/jsonx, which validates every byte.

func (rp *reply) strictChunk(data []byte) (content, reasoning bool, err error) {
	i := jsonx.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false, false, errMalformed
	}
	var f textFlags
	var ev apiEvent
	end, err := jsonx.Fields(data, i, func(key, v []byte, _ int) error {
		switch string(key) {
		case `"type"`, `"delta"`, `"response"`, `"message"`, `"output"`, `"content"`, `"data"`, `"text"`, `"result"`:
			// The endpoint members are read as the lax walker reads them
			// (endpoint_parse.go, on a value jsonx checked); their
			// meaning is held by TestEndpointChunks.
			rp.eventMember(key, v, &ev, &f)
		case `"choices"`:
			if v[0] != '[' {
				return nil
			}
			_, err := jsonx.Elements(v, 0, func(_ int, ch []byte, _ int) error {
				if ch[0] != '{' {
					return nil
				}
				_, err := jsonx.Fields(ch, 0, func(k, v []byte, _ int) error {
					switch string(k) {
					case `"delta"`, `"message"`:
						if v[0] != '{' {
							return nil
						}
						c, r, err := rp.strictMessage(v)
						content, reasoning = content || c, reasoning || r
						return err
					case `"text"`:
						if appendText(&rp.content, v) {
							content = true
						}
					}
					return nil
				})
				return err
			})
			return err
		case `"usage"`:
			if v[0] == '{' {
				rp.strictUsage(v)
			}
		case `"error"`:
			rp.readError(v)
		}
		return nil
	})
	if err == nil && jsonx.SkipSpace(data, end) != len(data) {
		err = errMalformed
	}
	content, reasoning = content || f.content, reasoning || f.reasoning
	if err != nil {
		return content, reasoning, errMalformed
	}
	rp.apply(&ev, &f)
	return content || f.content, reasoning || f.reasoning, nil
}

// message reads a delta or message object.
func (rp *reply) strictMessage(v []byte) (content, reasoning bool, err error) {
	_, err = jsonx.Fields(v, 0, func(k, v []byte, _ int) error {
		switch string(k) {
		case `"content"`:
			content = appendText(&rp.content, v) || content
		case `"reasoning_content"`, `"reasoning"`:
			reasoning = appendText(&rp.reasoning, v) || reasoning
		}
		return nil
	})
	return content, reasoning, err
}

func (rp *reply) strictUsage(v []byte) {
	var u result.Usage
	var in, out, total bool
	jsonx.Fields(v, 0, func(k, v []byte, _ int) error {
		switch string(k) {
		case `"prompt_tokens"`, `"input_tokens"`:
			u.PromptTokens, in = rp.countOf(k, v), true
		case `"completion_tokens"`:
			u.CompletionTokens = rp.countOf(k, v)
		case `"output_tokens"`:
			u.CompletionTokens, out = rp.countOf(k, v), true
		case `"total_tokens"`:
			u.TotalTokens, total = rp.countOf(k, v), true
		case `"cache_read_input_tokens"`:
			if string(v) != "null" {
				u.CachedTokens, u.HasCached = rp.countOf(k, v), true
			}
		case `"completion_tokens_details"`, `"output_tokens_details"`:
			if v[0] == '{' {
				jsonx.Fields(v, 0, func(k, v []byte, _ int) error {
					if string(k) == `"reasoning_tokens"` {
						u.ReasoningTokens = rp.countOf(k, v)
					}
					return nil
				})
			}
		case `"prompt_tokens_details"`, `"input_tokens_details"`:
			if v[0] == '{' {
				jsonx.Fields(v, 0, func(k, v []byte, _ int) error {
					if string(k) == `"cached_tokens"` && string(v) != "null" {
						u.CachedTokens, u.HasCached = rp.countOf(k, v), true
					}
					return nil
				})
			}
		}
		return nil
	})
	if out && !in && rp.hasUsage {
		u.PromptTokens, u.CachedTokens, u.HasCached = rp.usage.PromptTokens, rp.usage.CachedTokens, rp.usage.HasCached
	}
	if out && !total {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	rp.usage, rp.hasUsage = u, true
}

// FuzzChunk: on any bytes the lax chunk reader never panics and never
// returns more text than the chunk holds; on valid JSON it reads exactly
// what the strict reader reads.
func FuzzChunk(f *testing.F) {
	for _, s := range []string{
		`{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"reasoning_content":"th\"ink"}}]}`,
		`{"choices":[{"text":" yes","index":0}],"usage":{"prompt_tokens":3,"completion_tokens":0,"total_tokens":3}}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"completion_tokens_details":{"reasoning_tokens":1}}}`,
		`{"error":{"message":"bad","type":"invalid_request_error","code":400}}`,
		`{"choices":[{"message":{"role":"assistant","content":"whole"}}]}`,
		`{"choices":[{"delta":{"content":null}}]}`,
		`{"choices":[{"delta":{"content":"a\\"}}], "x": [1, 2.5e3, true, false, null, {"y": "\u00e9"}]}`,
		`not json`,
		``,
		" \t",
		`{"error":{"message":"` + strings.Repeat("é", 600) + `","type":"` + strings.Repeat("t", 200) + `"}}`,
		`{"choices":[{"delta":{"content":"Bearer sk-x"}}],"error":"Authorization: Bearer sk-x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var lax, strict reply
		lc, lr, lerr := lax.chunk(data)
		if len(lax.content) > len(data) || len(lax.reasoning) > len(data) {
			t.Fatal("text longer than the chunk")
		}
		errorMessage(data)
		if !jsonx.Valid(data) {
			return
		}
		sc, sr, serr := strict.strictChunk(data)
		lax.shape = chunkShape{} // what the next chunk may skip; FuzzChunkShape checks it
		if (lerr == nil) != (serr == nil) || lc != sc || lr != sr || !reflect.DeepEqual(lax, strict) {
			t.Fatalf("%q:\nlax    %v %v %v %+v\nstrict %v %v %v %+v", data, lc, lr, lerr, lax, sc, sr, serr, strict)
		}
	})
}

var benchChunk = []byte(`{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1796111579,"model":"demo-model","choices":[{"index":0,"delta":{"content":" harbour"},"finish_reason":null}]}`)

func BenchmarkChunkLax(b *testing.B) {
	var rp reply
	b.SetBytes(int64(len(benchChunk)))
	defer cpuPerOp(b)()
	for b.Loop() {
		rp.content = rp.content[:0]
		rp.chunk(benchChunk)
	}
}

func BenchmarkChunkStrict(b *testing.B) {
	var rp reply
	b.SetBytes(int64(len(benchChunk)))
	for b.Loop() {
		rp.content = rp.content[:0]
		rp.strictChunk(benchChunk)
	}
}
