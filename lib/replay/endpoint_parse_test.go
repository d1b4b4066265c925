package replay

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// endpointChunks are answers of the endpoints beyond chat and completions,
// shaped as OpenAI, Anthropic and ollama send them; they seed the chunk
// fuzzers too (testdata/fuzz).
var endpointChunks = map[string][]string{
	"embeddings": {
		`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2]},{"object":"embedding","index":1,"embedding":[0.3,0.4]}],"model":"e","usage":{"prompt_tokens":5,"total_tokens":5}}`,
	},
	"responses stream": {
		`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[],"usage":null}}`,
		`{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"think"}`,
		`{"delta":"Hel","type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0}`,
		`{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"lo"}`,
		`{"type":"response.output_text.done","item_id":"msg_1","output_index":1,"content_index":0,"text":"Hello"}`,
		`{"type":"response.content_part.done","part":{"type":"output_text","text":"Hello"}}`,
		`{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hello"}]}],"usage":{"input_tokens":4,"input_tokens_details":{"cached_tokens":2},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":7}}}`,
	},
	"responses whole": {
		`{"id":"resp_1","object":"response","status":"completed","error":null,"reasoning":{"effort":null},"text":{"format":{"type":"text"}},"output":[{"type":"reasoning","summary":[{"type":"summary_text","text":"think"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[]}]}],"usage":{"input_tokens":4,"output_tokens":3,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":7}}`,
	},
	"messages stream": {
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"c","usage":{"input_tokens":4,"cache_read_input_tokens":2,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"think"}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hel"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"text":"lo","type":"text_delta"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":3}}`,
		`{"type":"message_stop"}`,
	},
	"generic": {
		`{"text":"Hel","usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7}}`,
		`{"model":"m","response":"lo","done":false,"content":"not this"}`,
		`{"result":"","output":"","content":[]}`,
		`{"type":"x","text":"typed events are not generic"}`,
	},
	"messages whole": {
		`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"think","signature":"s"},{"type":"text","text":"Hello"}],"model":"c","stop_reason":"max_tokens","usage":{"input_tokens":4,"cache_read_input_tokens":2,"output_tokens":3}}`,
	},
}

func TestEndpointChunks(t *testing.T) {
	hello := result.Usage{PromptTokens: 4, CompletionTokens: 3, TotalTokens: 7, ReasoningTokens: 1, CachedTokens: 2, HasCached: true}
	for name, want := range map[string]struct {
		content, reasoning string
		usage              result.Usage
	}{
		"embeddings":       {"", "", result.Usage{PromptTokens: 5, TotalTokens: 5}},
		"responses stream": {"Hello", "think", hello},
		"responses whole":  {"Hello", "think", result.Usage{PromptTokens: 4, CompletionTokens: 3, TotalTokens: 7, ReasoningTokens: 1}},
		"messages stream":  {"Hello", "think", result.Usage{PromptTokens: 4, CompletionTokens: 3, TotalTokens: 7, CachedTokens: 2, HasCached: true}},
		"messages whole":   {"Hello", "think", result.Usage{PromptTokens: 4, CompletionTokens: 3, TotalTokens: 7, CachedTokens: 2, HasCached: true}},
		"generic":          {"Hello", "", result.Usage{PromptTokens: 4, CompletionTokens: 3, TotalTokens: 7}},
	} {
		var rp reply
		got := false
		for i, c := range endpointChunks[name] {
			content, reasoning, err := rp.chunk([]byte(c))
			if err != nil {
				t.Fatalf("%s: chunk %d: %v", name, i, err)
			}
			got = got || content || reasoning
		}
		if !got {
			t.Errorf("%s: no content response", name)
		}
		if string(rp.content) != want.content || string(rp.reasoning) != want.reasoning || !rp.hasUsage || rp.usage != want.usage {
			t.Errorf("%s: content %q reasoning %q usage %+v (has %v); want %q %q %+v", name, rp.content, rp.reasoning, rp.usage, rp.hasUsage, want.content, want.reasoning, want.usage)
		}
	}
}

// TestEndpointChunkMalformed: a delta whose chunk turns out malformed
// leaves no text, whatever order its members came in.
func TestEndpointChunkMalformed(t *testing.T) {
	for _, c := range []string{
		`{"type":"response.output_text.delta","delta":"x","y":}`,
		`{"delta":"x","type":"response.output_text.delta"`,
		`{"delta":{"type":"text_delta","text":"x"},"index":}`,
	} {
		var rp reply
		if _, _, err := rp.chunk([]byte(c)); err == nil {
			t.Errorf("%s: no error", c)
		}
		if len(rp.content) != 0 && c != `{"delta":{"type":"text_delta","text":"x"},"index":}` {
			t.Errorf("%s: content %q", c, rp.content)
		}
	}
	var rp reply
	if c, r, err := rp.chunk([]byte(`{"type":"response.function_call_arguments.delta","delta":"{}"}`)); c || r || err != nil || len(rp.content) != 0 {
		t.Errorf("a tool-call delta read as text: %v %v %v %q", c, r, err, rp.content)
	}
}

var updateSeeds = flag.Bool("update-seeds", false, "write the endpoint chunks into the fuzz corpora")

// TestWriteEndpointSeeds keeps the fuzz corpora holding the endpoint
// chunks (run with -update-seeds to write them).
func TestWriteEndpointSeeds(t *testing.T) {
	for _, fz := range []string{"FuzzChunk", "FuzzChunkSinglePass"} {
		n := 0
		for name, cs := range endpointChunks {
			for i, c := range cs {
				path := filepath.Join("testdata", "fuzz", fz, fmt.Sprintf("endpoint-%s-%d", filepathSafe(name), i))
				want := "go test fuzz v1\n[]byte(" + strconv.Quote(c) + ")\n"
				got, err := os.ReadFile(path)
				if *updateSeeds {
					os.MkdirAll(filepath.Dir(path), 0o755)
					err = os.WriteFile(path, []byte(want), 0o644)
					got = []byte(want)
				}
				if err != nil || string(got) != want {
					t.Errorf("%s: missing or stale (go test -run TestWriteEndpointSeeds -update-seeds): %v", path, err)
				}
				n++
			}
		}
		if n == 0 {
			t.Fatal("no seeds")
		}
	}
}

func filepathSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == ' ' {
			b[i] = '-'
		}
	}
	return string(b)
}

// TestAnthropicErrorEvent: the error inside an Anthropic error event is
// the one reported.
func TestAnthropicErrorEvent(t *testing.T) {
	var rp reply
	rp.readError([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	if rp.srvErr == nil || rp.srvErr.Type != "overloaded_error" || rp.srvErr.Message != "Overloaded" {
		t.Fatalf("got %+v", rp.srvErr)
	}
}
