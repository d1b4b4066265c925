package replaycmd

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A server that answers with usage.prompt_tokens_details.cached_tokens and
// serves /metrics at its origin: the default target is found by the probe
// and scraped, and the client's hit rate comes from the answers.
func TestDefaultTargetAndCachedTokens(t *testing.T) {
	var scrapes atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"a b c d"},"finish_reason":"length"}],`+
			`"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":7}}}`)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		n := scrapes.Add(1) - 1
		fmt.Fprintf(w, "# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total %d\n", 10*n)
		fmt.Fprintf(w, "# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total %d\n", 7*n)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	stderr, code := run(t, "--url", srv.URL, "-o", out, storeOf(t, false, false, false))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"scraping [" + srv.URL + "/metrics]",
		"prefix-cache hit rate    70.0% (",
		"Client prefix-cache hit rate 70.0%: 14 prompt tokens cached in 2 answers reporting cached_tokens",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	recs, err := os.ReadFile(filepath.Join(out, recordsFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(recs), `"cached_tokens":7}`); n != 2 {
		t.Errorf("%d records carry cached_tokens 7, want 2:\n%s", n, recs)
	}
	exp, err := os.ReadFile(filepath.Join(out, exportJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(exp), `"prefix_cache_hit_rate"`) {
		t.Errorf("%s lacks prefix_cache_hit_rate", exportJSONFile)
	}
	if scrapes.Load() < 3 { // the probe, before the first send, after the last answer
		t.Errorf("%d scrapes, want at least 3", scrapes.Load())
	}
}
