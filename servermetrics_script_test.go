package aiperf_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// startFakeExporter serves, on loopback, a vLLM-like /metrics page whose
// counters move by known amounts per scrape (n counts the scrapes served):
// prefix-cache queries 1000·n and hits 700·n tokens (a 70% hit rate
// whatever the window), prompt tokens 1000·n, generation tokens 50·n,
// requests running n mod 3. /garbage serves a page no parser accepts.
func startFakeExporter() (url string, stop func()) {
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1) - 1
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		ls := `engine="0",model_name="m"`
		fmt.Fprintf(w, "# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{%s} %d\n", ls, k%3)
		fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{%s} 0\n", ls)
		fmt.Fprintf(w, "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{%s} 0.5\n", ls)
		for _, c := range []struct {
			name string
			per  int64
		}{{"prefix_cache_queries", 1000}, {"prefix_cache_hits", 700}, {"prompt_tokens", 1000}, {"generation_tokens", 50}, {"num_preemptions", 0}} {
			fmt.Fprintf(w, "# TYPE vllm:%s_total counter\nvllm:%s_total{%s} %d\n", c.name, c.name, ls, c.per*k)
		}
		fmt.Fprintf(w, "# TYPE vllm:time_to_first_token_seconds histogram\n")
		fmt.Fprintf(w, "vllm:time_to_first_token_seconds_bucket{%s,le=\"0.01\"} %d\n", ls, 2*k)
		fmt.Fprintf(w, "vllm:time_to_first_token_seconds_bucket{%s,le=\"+Inf\"} %d\n", ls, 2*k)
		fmt.Fprintf(w, "vllm:time_to_first_token_seconds_sum{%s} %g\nvllm:time_to_first_token_seconds_count{%s} %d\n", ls, 0.004*float64(k), ls, 2*k)
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# TYPE g gauge\ng 1.2.3\n")
	})
	srv := httptest.NewServer(mux)
	return srv.URL, srv.Close
}
