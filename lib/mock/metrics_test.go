package mock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sample is one parsed line of the text exposition format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseExposition parses the Prometheus text format as far as the mock
// writes it (a test helper, strict: every line is a comment or a sample
// with labels), and checks that every sample's family has a TYPE line.
func parseExposition(t *testing.T, r io.Reader) (map[string]string, []sample) {
	t.Helper()
	types := map[string]string{}
	var out []sample
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			types[name] = typ
			continue
		}
		if strings.HasPrefix(line, "# HELP ") {
			continue
		}
		name, rest, ok := strings.Cut(line, "{")
		labels, value, ok2 := strings.Cut(rest, "} ")
		if !ok || !ok2 {
			t.Fatalf("line %d: not a sample with labels: %q", n, line)
		}
		s := sample{name: name, labels: map[string]string{}}
		for _, kv := range strings.Split(labels, ",") {
			k, v, ok := strings.Cut(kv, "=")
			uq, err := strconv.Unquote(v)
			if !ok || err != nil {
				t.Fatalf("line %d: bad label %q", n, kv)
			}
			s.labels[k] = uq
		}
		v, err := strconv.ParseFloat(strings.Replace(value, "+Inf", "Inf", 1), 64)
		if err != nil {
			t.Fatalf("line %d: bad value %q", n, value)
		}
		s.value = v
		family := name
		for _, suf := range []string{"_total", "_bucket", "_sum", "_count"} {
			if f, ok := strings.CutSuffix(name, suf); ok && types[f] != "" {
				family = f
			}
		}
		if types[family] == "" {
			t.Fatalf("line %d: sample %s has no TYPE line", n, name)
		}
		out = append(out, s)
	}
	return types, out
}

// value returns the value of the sample name whose labels include want.
func value(t *testing.T, ss []sample, name string, want ...string) float64 {
	t.Helper()
	for _, s := range ss {
		ok := s.name == name
		for i := 0; ok && i+1 < len(want); i += 2 {
			ok = s.labels[want[i]] == want[i+1]
		}
		if ok {
			return s.value
		}
	}
	t.Fatalf("no sample %s %v", name, want)
	return 0
}

func scrape(t *testing.T, url string) (map[string]string, []sample) {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("Content-Type %q", ct)
	}
	return parseExposition(t, resp.Body)
}

// TestMetrics sends known requests and reads /metrics back: token
// counters, prefix-cache counters, histogram counts and vLLM's names.
func TestMetrics(t *testing.T) {
	url, _ := start(t, Config{Fast: true, Model: `m"x`, PrefixCacheBlocks: 1000, BlockBytes: 4})
	types, ss := scrape(t, url)
	for name, typ := range map[string]string{
		"vllm:num_requests_running": "gauge", "vllm:num_requests_waiting": "gauge", "vllm:kv_cache_usage_perc": "gauge",
		"vllm:prefix_cache_queries_total": "counter", "vllm:prefix_cache_hits_total": "counter",
		"vllm:prompt_tokens_total": "counter", "vllm:generation_tokens_total": "counter", "vllm:request_success_total": "counter",
		"vllm:time_to_first_token_seconds": "histogram", "vllm:inter_token_latency_seconds": "histogram",
	} {
		if types[name] != typ {
			t.Errorf("TYPE of %s: got %q, want %q", name, types[name], typ)
		}
	}
	if got := value(t, ss, "vllm:prompt_tokens_total", "model_name", `m"x`, "engine", "0"); got != 0 {
		t.Errorf("prompt tokens before any request: got %v", got)
	}

	// The same 32-byte prompt twice (8 tokens at 4 bytes a token without a
	// tokenizer), the second time streamed: the cache holds all 8 of its
	// 4-byte blocks, so all 8 tokens are cached.
	prompt := strings.Repeat("abcd", 8)
	var cached []int64
	for _, stream := range []bool{false, true} {
		body := `{"prompt":"` + prompt + `","max_tokens":5,"stream":` + strconv.FormatBool(stream) + `,"stream_options":{"include_usage":true}}`
		resp := post(t, url, "/v1/completions", body)
		b, _ := io.ReadAll(resp.Body)
		text := string(b)
		if stream {
			i := strings.LastIndex(text, `data: {`)
			text = strings.TrimSpace(strings.TrimSuffix(text[i+6:], "data: [DONE]\n\n"))
		}
		var r struct {
			Usage struct {
				PromptTokens        int64 `json:"prompt_tokens"`
				PromptTokensDetails struct {
					CachedTokens int64 `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			t.Fatalf("usage of %q: %v", text, err)
		}
		if r.Usage.PromptTokens != 8 {
			t.Fatalf("prompt_tokens: got %d, want 8", r.Usage.PromptTokens)
		}
		cached = append(cached, r.Usage.PromptTokensDetails.CachedTokens)
	}
	if cached[0] != 0 || cached[1] != 8 {
		t.Errorf("cached_tokens: got %v, want [0 8]", cached)
	}
	_, ss = scrape(t, url)
	lbl := []string{"model_name", `m"x`}
	for _, c := range []struct {
		name string
		want float64
	}{
		{"vllm:prompt_tokens_total", 16},
		{"vllm:generation_tokens_total", 10},
		{"vllm:prefix_cache_queries_total", 16},
		{"vllm:prefix_cache_hits_total", 8},
		{"vllm:kv_cache_usage_perc", 8.0 / 1000},
		{"vllm:num_requests_running", 0},
		{"vllm:time_to_first_token_seconds_count", 2},
		{"vllm:inter_token_latency_seconds_count", 8}, // 4 gaps per 5-token reply
	} {
		if got := value(t, ss, c.name, lbl...); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if got := value(t, ss, "vllm:request_success_total", "finished_reason", "length"); got != 2 {
		t.Errorf("request_success length: got %v, want 2", got)
	}
	// Buckets are cumulative and end with +Inf = count.
	if got := value(t, ss, "vllm:inter_token_latency_seconds_bucket", "le", "+Inf"); got != 8 {
		t.Errorf("ITL +Inf bucket: got %v, want 8", got)
	}
	prev := -1.0
	for _, s := range ss {
		if s.name == "vllm:time_to_first_token_seconds_bucket" {
			if s.value < prev {
				t.Errorf("TTFT bucket le=%s: %v below the previous %v", s.labels["le"], s.value, prev)
			}
			prev = s.value
		}
	}
}

func TestHistogramBuckets(t *testing.T) {
	h := newHistogram([]float64{0.1, 1})
	for _, v := range []float64{0.05, 0.1, 0.5, 2} {
		h.observe(v)
	}
	h.observeN(1, 3)
	b := string(h.append(nil, "x", "help", `a="b"`))
	for _, want := range []string{
		`x_bucket{a="b",le="0.1"} 2.0`, `x_bucket{a="b",le="1"} 6.0`, `x_bucket{a="b",le="+Inf"} 7.0`,
		`x_count{a="b"} 7.0`,
	} {
		if !strings.Contains(b, want+"\n") {
			t.Errorf("missing %q in\n%s", want, b)
		}
	}
	if math.Abs(h.sum-5.65) > 1e-9 || !strings.Contains(b, `x_sum{a="b"} 5.65`) {
		t.Errorf("sum: got %v, want 5.65, in\n%s", h.sum, b)
	}
}

// With --slots, /metrics reports the slots' split: the holders running,
// the queue waiting (as vLLM's scheduler gauges do).
func TestMetricsSlots(t *testing.T) {
	srv, err := New(Config{Fast: true, Slots: 2, TokenRate: 100})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for range 5 { // two admitted, three queued
		srv.slots.enter(now)
	}
	_, ss := parseExposition(t, bytes.NewReader(srv.appendMetrics(nil)))
	if r, w := value(t, ss, "vllm:num_requests_running"), value(t, ss, "vllm:num_requests_waiting"); r != 2 || w != 3 {
		t.Errorf("running %v, waiting %v; want 2 and 3", r, w)
	}
	srv.slots.release(now)
	_, ss = parseExposition(t, bytes.NewReader(srv.appendMetrics(nil)))
	if r, w := value(t, ss, "vllm:num_requests_running"), value(t, ss, "vllm:num_requests_waiting"); r != 2 || w != 2 {
		t.Errorf("after a release: running %v, waiting %v; want 2 and 2", r, w)
	}
}
