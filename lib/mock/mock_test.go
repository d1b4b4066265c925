package mock

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/tokenizer"
)

func start(t testing.TB, cfg Config) (string, *Server) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := s.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return "http://" + l.Addr().String(), s
}

func post(t *testing.T, url, path, body string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads an SSE body into its data payloads (one data line each).
func events(t *testing.T, r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not a data line: %q", line)
		}
		out = append(out, d)
	}
	return out, sc.Err()
}

type chunk struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			Reasoning *string `json:"reasoning_content"`
		} `json:"delta"`
		Message struct {
			Content   string `json:"content"`
			Reasoning string `json:"reasoning_content"`
		} `json:"message"`
		Text   *string `json:"text"`
		Finish *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		Prompt     int64 `json:"prompt_tokens"`
		Completion int64 `json:"completion_tokens"`
		Total      int64 `json:"total_tokens"`
		Details    *struct {
			Reasoning int64 `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
}

func TestChatStream(t *testing.T) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	url, srv := start(t, Config{Fast: true, Tokenizer: tok, ReasoningTokens: 2})
	const prompt = "The quick brown fox jumps over the lazy dog."
	for _, usage := range []bool{true, false} {
		body := `{"model":"qwen","messages":[{"role":"system","content":[{"type":"text","text":"Be brief."}]},{"role":"user","content":"` + prompt + `"}],"stream":true,"max_completion_tokens":7`
		if usage {
			body += `,"stream_options":{"include_usage":true}`
		}
		resp := post(t, url, "/v1/chat/completions", body+"}")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		evs, err := events(t, resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if evs[len(evs)-1] != "[DONE]" {
			t.Fatalf("last event %q", evs[len(evs)-1])
		}
		var content, reasoning, finish int
		var u *chunk
		for i, e := range evs[:len(evs)-1] {
			var c chunk
			if err := json.Unmarshal([]byte(e), &c); err != nil {
				t.Fatalf("event %d: %v: %s", i, err, e)
			}
			if c.Object != "chat.completion.chunk" || c.Model != "qwen" {
				t.Errorf("event %d: object %q model %q", i, c.Object, c.Model)
			}
			if c.Usage != nil {
				u = &c
				continue
			}
			d := c.Choices[0].Delta
			if (i == 0) != (d.Role == "assistant") {
				t.Errorf("event %d: role %q", i, d.Role)
			}
			switch {
			case d.Reasoning != nil:
				reasoning++
			case d.Content != nil:
				content++
			}
			if f := c.Choices[0].Finish; f != nil {
				finish++
				if *f != "length" {
					t.Errorf("finish %q", *f)
				}
			}
		}
		if content != 5 || reasoning != 2 || finish != 1 {
			t.Errorf("%d content, %d reasoning, %d finish chunks; want 5, 2, 1", content, reasoning, finish)
		}
		if (u != nil) != usage {
			t.Fatalf("usage chunk present %v, want %v", u != nil, usage)
		}
		if u != nil {
			want := int64(len(tok.Encode("Be brief.")) + len(tok.Encode(prompt)))
			if len(u.Choices) != 0 || u.Usage.Prompt != want || u.Usage.Completion != 7 || u.Usage.Total != want+7 || u.Usage.Details.Reasoning != 2 {
				t.Errorf("usage %+v, want %d prompt tokens", *u.Usage, want)
			}
		}
	}
	if st := srv.Stats(); st.Requests != 2 || st.Tokens != 14 {
		t.Errorf("stats %+v", st)
	}
}

func TestCompletionsAndWhole(t *testing.T) {
	url, _ := start(t, Config{Fast: true})
	resp := post(t, url, "/v1/completions", `{"model":"m","prompt":"hello there","stream":true,"max_tokens":3}`)
	evs, _ := events(t, resp.Body)
	var texts int
	for _, e := range evs[:len(evs)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(e), &c); err != nil || c.Object != "text_completion" {
			t.Fatalf("%v %s", err, e)
		}
		if c.Choices[0].Text != nil && *c.Choices[0].Text != "" {
			texts++
		}
	}
	if texts != 3 || evs[len(evs)-1] != "[DONE]" {
		t.Errorf("%d texts", texts)
	}

	// Not streamed, no max_tokens: the Python mock's length rule.
	resp = post(t, url, "/v1/chat/completions", `{"messages":[{"role":"user","content":"`+strings.Repeat("word ", 100)+`"}]}`)
	var c chunk
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	p := c.Usage.Prompt
	if p != 125 || c.Usage.Completion < p*8/10 || c.Usage.Completion > p*12/10 || *c.Choices[0].Finish != "stop" || c.Choices[0].Message.Content == "" {
		t.Errorf("prompt %d (500 bytes / 4), completion %d, finish %q", p, c.Usage.Completion, *c.Choices[0].Finish)
	}
}

func TestRoutes(t *testing.T) {
	url, _ := start(t, Config{Fast: true, Model: "served"})
	for _, tc := range []struct {
		method, path, body string
		status             int
		has                string
	}{
		{"GET", "/v1/models", "", 200, `"id":"served"`},
		{"GET", "/health", "", 200, `"ok"`},
		{"GET", "/v1/chat/completions", "", 405, "method"},
		{"POST", "/v1/nope", "{}", 404, "no route"},
		{"POST", "/v1/chat/completions", `{"messages":`, 400, "invalid_request_error"},
		{"POST", "/v1/chat/completions", `{"model":"m"}`, 400, "messages: required"},
		{"POST", "/v1/completions", `{"model":"m","prompt":1}`, 400, "prompt"},
		{"POST", "/v1/chat/completions", `{"messages":[],"max_tokens":0}`, 400, "max_tokens"},
		{"POST", "/v1/chat/completions", `{"messages":[]}`, 200, `"chat.completion"`},
	} {
		req, _ := http.NewRequest(tc.method, url+tc.path, strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.has) {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, resp.StatusCode, b)
		}
	}
}

func TestErrorRateSeeded(t *testing.T) {
	pattern := func() string {
		url, _ := start(t, Config{Fast: true, ErrorRate: 0.3, Seed: 42})
		var b strings.Builder
		for range 40 {
			resp := post(t, url, "/v1/chat/completions", `{"messages":[],"max_tokens":1}`)
			io.Copy(io.Discard, resp.Body)
			if resp.StatusCode == 500 {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	a, b := pattern(), pattern()
	if a != b {
		t.Errorf("same seed, different errors:\n%s\n%s", a, b)
	}
	if n := strings.Count(a, "x"); n < 4 || n > 24 {
		t.Errorf("%d of 40 errors at 30%%: %s", n, a)
	}
}

// noRedirect is a client that returns a redirect as it came.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestFaults(t *testing.T) {
	url, _ := start(t, Config{Fast: true, FaultDelay: 300 * time.Millisecond})
	const body = `{"messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":6}`
	for _, fault := range Faults {
		t.Run(fault, func(t *testing.T) {
			begin := time.Now()
			req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set(FaultHeader, fault)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var evs []string
			var rerr error
			if resp.StatusCode == 200 {
				evs, rerr = events(t, resp.Body)
			}
			switch fault {
			case Fault429, Fault503, Fault307:
				if want := map[string]int{Fault429: 429, Fault503: 503, Fault307: 307}[fault]; resp.StatusCode != want {
					t.Errorf("status %d", resp.StatusCode)
				}
			case FaultReset, FaultStall:
				if rerr == nil || len(evs) != 3 {
					t.Errorf("read %d events, error %v; want 3 then a cut", len(evs), rerr)
				}
				if fault == FaultStall && time.Since(begin) < 300*time.Millisecond {
					t.Errorf("stall ended after %v", time.Since(begin))
				}
			case FaultMalformed:
				bad := 0
				for _, e := range evs {
					if e != "[DONE]" && !json.Valid([]byte(e)) {
						bad++
					}
				}
				if bad != 1 || evs[len(evs)-1] != "[DONE]" {
					t.Errorf("%d malformed events of %d", bad, len(evs))
				}
			case FaultSlowHeaders:
				if time.Since(begin) < 300*time.Millisecond || rerr != nil || evs[len(evs)-1] != "[DONE]" {
					t.Errorf("after %v: %v", time.Since(begin), rerr)
				}
			}
		})
	}
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set(FaultHeader, "bogus")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 400 {
		t.Errorf("unknown fault: %v %v", resp, err)
	}
	if _, err := New(Config{Fault: "bogus"}); err == nil {
		t.Error("New accepted an unknown fault")
	}
	// The non-streamed reset: no response at all.
	req, _ = http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(`{"messages":[],"max_tokens":2}`))
	req.Header.Set(FaultHeader, FaultReset)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("reset answered %d", resp.StatusCode)
	}
}

// Tokens follow TTFT, then ITL, never early: token i goes out no sooner
// than TTFT + i×ITL after the request arrived (which is after the client
// began writing it). Load only delays; how close to the moment they go is
// BenchmarkTokenClock's to measure.
func TestTokenClock(t *testing.T) {
	url, _ := start(t, Config{TTFT: 15 * time.Millisecond, ITL: 4 * time.Millisecond})
	times := tokenTimes(t, url)
	if len(times) != 5 {
		t.Fatalf("%d tokens", len(times))
	}
	for i, at := range times {
		if want := 15*time.Millisecond + time.Duration(i)*4*time.Millisecond; at < want {
			t.Errorf("token %d at %v, before its moment %v", i, at, want)
		}
	}
}

// tokenTimes sends one streamed request of 5 tokens over a raw connection
// and returns when each content event arrived, from the start of the write.
func tokenTimes(t testing.TB, url string) []time.Duration {
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"messages":[],"stream":true,"max_tokens":5}`
	begin := time.Now()
	io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 44\r\n\r\n"+body)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	var times []time.Duration
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"content"`) {
			times = append(times, time.Since(begin))
		}
	}
	return times
}

// BenchmarkTokenClock reports how late the mock's tokens go out against
// TTFT + i×ITL (median and worst over the run's tokens, µs): the precision
// TestTokenClock does not assert. On a quiet machine both stay under 1 ms.
func BenchmarkTokenClock(b *testing.B) {
	url, _ := start(b, Config{TTFT: 15 * time.Millisecond, ITL: 4 * time.Millisecond})
	var late []time.Duration
	for b.Loop() {
		for i, at := range tokenTimes(b, url) {
			late = append(late, at-15*time.Millisecond-time.Duration(i)*4*time.Millisecond)
		}
	}
	slices.Sort(late)
	b.ReportMetric(float64(late[len(late)/2])/1e3, "p50-late-µs")
	b.ReportMetric(float64(late[len(late)-1])/1e3, "max-late-µs")
}

// Any n consecutive reply tokens re-encode to exactly n tokens with the
// builtin tokenizer, wrapping around included: a client counting a reply
// without usage finds what the mock sent.
func TestReplyTokensReencode(t *testing.T) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	txt := newText(tok)
	if len(txt.pieces) < 64 {
		t.Fatalf("%d pieces", len(txt.pieces))
	}
	for off := range uint64(len(txt.pieces)) {
		for _, n := range []int{1, 2, 7, 40} {
			var b []byte
			for i := range n {
				b = append(b, txt.piece(off, i)...)
			}
			var s string
			if err := json.Unmarshal([]byte(`"`+string(b)+`"`), &s); err != nil {
				t.Fatal(err)
			}
			if got := len(tok.Encode(s)); got != n {
				t.Fatalf("offset %d: %d pieces %q encode to %d tokens", off, n, s, got)
			}
		}
	}
}

// With StrictModel a request naming another model than the one served is
// answered 404, as vLLM answers it; the served one, and a request naming
// none, are served, and /v1/models lists the served one.
func TestStrictModel(t *testing.T) {
	url, _ := start(t, Config{Fast: true, Model: "served", StrictModel: true})
	resp := post(t, url, "/v1/chat/completions", `{"model":"other","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || !strings.Contains(string(b), "The model `other` does not exist.") {
		t.Errorf("other model: %d %s", resp.StatusCode, b)
	}
	for _, body := range []string{`{"model":"served","prompt":"hi","max_tokens":2}`, `{"prompt":"hi","max_tokens":2}`} {
		if resp := post(t, url, "/v1/completions", body); resp.StatusCode != 200 {
			t.Errorf("%s: %d", body, resp.StatusCode)
		}
	}
	// Without StrictModel any model is served.
	url, _ = start(t, Config{Fast: true, Model: "served"})
	if resp := post(t, url, "/v1/completions", `{"model":"other","prompt":"hi","max_tokens":2}`); resp.StatusCode != 200 {
		t.Errorf("not strict: %d", resp.StatusCode)
	}
}
