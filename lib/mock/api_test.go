package mock

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// namedEvents reads an SSE body of named events ("event:" then "data:").
func namedEvents(t *testing.T, r io.Reader) (names []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "event: "):
			names = append(names, strings.TrimPrefix(line, "event: "))
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			if m["type"] != names[len(names)-1] {
				t.Fatalf("event %s has type %v", names[len(names)-1], m["type"])
			}
			data = append(data, m)
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	return names, data
}

func num(v any) int { f, _ := v.(float64); return int(f) }

func TestResponsesStream(t *testing.T) {
	url, _ := start(t, Config{ReasoningTokens: 2})
	resp := post(t, url, "/v1/responses", `{"input":[{"role":"user","content":"hello there","type":"message"}],"model":"m","stream":true,"max_output_tokens":5}`)
	names, data := namedEvents(t, resp.Body)
	var text, reasoning int
	for i, n := range names {
		switch n {
		case "response.output_text.delta":
			text++
		case "response.reasoning_text.delta":
			reasoning++
		}
		if i == 0 && n != "response.created" {
			t.Errorf("first event %s", n)
		}
	}
	last := data[len(data)-1]
	if text != 3 || reasoning != 2 || names[len(names)-1] != "response.incomplete" {
		t.Fatalf("events %v", names)
	}
	u := last["response"].(map[string]any)["usage"].(map[string]any)
	if num(u["output_tokens"]) != 5 || num(u["input_tokens"]) == 0 || num(u["output_tokens_details"].(map[string]any)["reasoning_tokens"]) != 2 {
		t.Errorf("usage %v", u)
	}
}

func TestMessagesStream(t *testing.T) {
	url, _ := start(t, Config{ReasoningTokens: 2})
	resp := post(t, url, "/v1/messages", `{"messages":[{"role":"user","content":"hello there"}],"model":"c","max_tokens":5,"stream":true}`)
	names, data := namedEvents(t, resp.Body)
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v", names)
	}
	if num(data[0]["message"].(map[string]any)["usage"].(map[string]any)["input_tokens"]) == 0 {
		t.Errorf("message_start %v", data[0])
	}
	md := data[len(data)-2]
	if num(md["usage"].(map[string]any)["output_tokens"]) != 5 || md["delta"].(map[string]any)["stop_reason"] != "max_tokens" {
		t.Errorf("message_delta %v", md)
	}
	if d := data[2]["delta"].(map[string]any); d["type"] != "thinking_delta" || d["thinking"] == "" {
		t.Errorf("first delta %v", d)
	}
}

func TestWholeReplies(t *testing.T) {
	url, _ := start(t, Config{})
	for _, c := range []struct{ path, body, usage string }{
		{"/v1/responses", `{"input":"hi","model":"m","max_output_tokens":4}`, "output_tokens"},
		{"/v1/messages", `{"messages":[{"role":"user","content":"hi"}],"model":"m","max_tokens":4}`, "output_tokens"},
		{"/v1/embeddings", `{"model":"e","input":["one","two words"]}`, "prompt_tokens"},
	} {
		resp := post(t, url, c.path, c.body)
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", c.path, resp.StatusCode, err)
		}
		u := m["usage"].(map[string]any)
		if c.path == "/v1/embeddings" {
			if d := m["data"].([]any); len(d) != 2 || len(d[1].(map[string]any)["embedding"].([]any)) != embeddingDims || num(u["prompt_tokens"]) < 3 {
				t.Errorf("%s: %v", c.path, m)
			}
			continue
		}
		if num(u[c.usage]) != 4 {
			t.Errorf("%s: %v", c.path, m)
		}
	}
	if resp := post(t, url, "/v1/embeddings", `{"model":"e"}`); resp.StatusCode != 400 {
		t.Errorf("embeddings without input: %d", resp.StatusCode)
	}
}
