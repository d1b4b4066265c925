package servermetrics

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeVLLM serves a vLLM-like page whose counters move by known amounts per
// scrape: scrape n (from 0) shows
//
//	prefix_cache_queries_total = 1000·n, prefix_cache_hits_total = 700·n,
//	prompt_tokens_total = 1000·n, generation_tokens_total = 50·n,
//	num_requests_running = n mod 4, kv_cache_usage_perc = (n mod 5)/10,
//	TTFT histogram: per scrape 2 observations ≤ 0.1, 1 in (0.1, 0.5], 1 in (0.5, 1]; sum +1.2
type fakeVLLM struct{ n atomic.Int64 }

func (f *fakeVLLM) page(n int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\n")
	fmt.Fprintf(&b, "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} %d\n", n%4)
	fmt.Fprintf(&b, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 0\n")
	fmt.Fprintf(&b, "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} %g\n", float64(n%5)/10)
	for _, c := range []struct {
		name string
		per  int64
	}{{"prefix_cache_queries", 1000}, {"prefix_cache_hits", 700}, {"prompt_tokens", 1000}, {"generation_tokens", 50}, {"num_preemptions", 0}} {
		fmt.Fprintf(&b, "# HELP vllm:%s_total x\n# TYPE vllm:%s_total counter\nvllm:%s_total{engine=\"0\",model_name=\"m\"} %d\n", c.name, c.name, c.name, c.per*n)
	}
	fmt.Fprintf(&b, "# TYPE vllm:time_to_first_token_seconds histogram\n")
	for _, bk := range []struct {
		le  string
		per int64
	}{{"0.1", 2}, {"0.5", 3}, {"1.0", 4}, {"+Inf", 4}} {
		fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"%s\",model_name=\"m\"} %d\n", bk.le, bk.per*n)
	}
	fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_count{engine=\"0\",model_name=\"m\"} %d\n", 4*n)
	fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_sum{engine=\"0\",model_name=\"m\"} %g\n", 1.2*float64(n))
	return b.String()
}

func (f *fakeVLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.n.Add(1) - 1
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fmt.Fprint(w, f.page(n))
}

// setClock reads what the test set.
type setClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *setClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *setClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// manual starts a collector whose periodic scrapes never fire; the test
// scrapes with c.scrapeAll.
func manual(t *testing.T, o Options) *Collector {
	t.Helper()
	o.Interval = time.Hour
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	return Start(context.Background(), o)
}

func TestFakeExporterDeltas(t *testing.T) {
	t.Parallel()
	fake := &fakeVLLM{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	// Scrape k is at 1000.5 + k s. The window is [1001.2, 1005.2]: the
	// bracket is scrape 0 (1000.5) .. scrape 5 (1005.5), the scrapes
	// inside are 1..4.
	at := func(k int) time.Time { return time.Unix(1000, 5e8).Add(time.Duration(k) * time.Second) }
	clk := &setClock{t: at(0)}
	var jsonl strings.Builder
	c := manual(t, Options{Targets: []string{srv.URL + "/metrics"}, Now: clk.now, JSONL: &jsonl})
	for k := 1; k <= 4; k++ {
		clk.set(at(k))
		c.scrapeAll(context.Background(), true)
	}
	clk.set(at(5))
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := Window{Start: time.Unix(1001, 2e8).UnixNano(), End: time.Unix(1005, 2e8).UnixNano()}
	// One more scrape at 1006.5 shows the bracket stops at the first
	// scrape after the end.
	clk.set(at(6))
	c.scrapeAll(context.Background(), true)
	r := c.Report(w)
	tr := r.Targets[0]
	if tr.Scrapes != 7 || tr.Failures != 0 {
		t.Fatalf("scrapes %d failures %d, want 7 and 0", tr.Scrapes, tr.Failures)
	}
	if got, want := tr.BracketFrom, time.Unix(1000, 5e8).UnixNano(); got != want {
		t.Errorf("bracket from %d, want %d", got, want)
	}
	if got, want := tr.BracketTo, time.Unix(1005, 5e8).UnixNano(); got != want {
		t.Errorf("bracket to %d, want %d", got, want)
	}
	if tr.InWindow != 4 {
		t.Errorf("scrapes in window %d, want 4", tr.InWindow)
	}
	e := tr.Engine
	if e == nil || e.Engine != "vllm" {
		t.Fatalf("engine %+v, want vllm", e)
	}
	// Five steps of the bracket: Δ = 5 × per-scrape increase; 5 s.
	check := func(name string, got, want float64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("prefix cache queries", e.CacheQuery.Value, 5000)
	check("prefix cache hits", e.CacheHits.Value, 3500)
	check("hit rate", e.HitRate, 0.7)
	check("prompt tokens", e.PromptTokens.Value, 5000)
	check("generation tokens", e.GenerationTokens.Value, 250)
	check("preemptions", e.Preemptions.Value, 0)
	// running = n mod 4 over scrapes 1..4: 1,2,3,0.
	check("running avg", e.Running.Avg, 1.5)
	check("running max", e.Running.Max, 3)
	// kv = (n mod 5)/10 over 1..4: .1,.2,.3,.4 → 25%, 40% max.
	if d := e.KVUsage.Avg - 25; d > 1e-9 || d < -1e-9 {
		t.Errorf("kv avg %v, want 25", e.KVUsage.Avg)
	}
	if d := e.KVUsage.Max - 40; d > 1e-9 || d < -1e-9 {
		t.Errorf("kv max %v, want 40", e.KVUsage.Max)
	}
	var rate *CounterStats
	for _, f := range tr.Families {
		if f.Name == "vllm:prompt_tokens_total" {
			rate = f.Series[0].Counter
		}
	}
	if rate == nil || rate.Total != 5000 || rate.Rate != 1000 {
		t.Errorf("prompt tokens counter %+v, want total 5000 rate 1000/s", rate)
	}
	// TTFT: Δ buckets cumulative 10, 15, 20, 20 (+Inf); by hand:
	// p50: rank 10 reaches bucket 0 (≤0.1): 0 + 0.1·10/10 = 0.1.
	// p90: rank 18 in (0.5, 1]: 0.5 + 0.5·(18-15)/5 = 0.8.
	// p99: rank 19.8: 0.5 + 0.5·(19.8-15)/5 = 0.98.
	h := e.TTFT.Stats
	check("ttft count", h.Count, 20)
	check("ttft sum", h.Sum, 6)
	check("ttft avg", h.Avg, 0.3)
	for _, c := range []struct {
		i    int
		want float64
	}{{4, 0.1}, {6, 0.8}, {8, 0.98}} {
		if d := h.P[c.i] - c.want; d > 1e-12 || d < -1e-12 {
			t.Errorf("ttft p%v = %v, want %v", Percentiles[c.i], h.P[c.i], c.want)
		}
	}
	if n := strings.Count(jsonl.String(), "\n"); n != 7 {
		t.Errorf("jsonl has %d lines, want 7 (one per scrape)", n)
	}
}

func TestQuantileByHand(t *testing.T) {
	t.Parallel()
	bounds := []float64{0.1, 0.5, 1, math.Inf(1)}
	cum := []float64{2, 6, 9, 10}
	for _, c := range []struct{ q, want float64 }{
		{0.5, 0.1 + 0.4*3.0/4},  // rank 5 in (0.1, 0.5]
		{0.9, 1},                // rank 9 reaches the top of (0.5, 1]
		{0.99, 1},               // rank 9.9 in +Inf: the highest finite bound
		{0.1, 0.1 * 1 / 2},      // rank 1 in the first bucket, lower bound 0
		{0.0, 0},                // rank 0
		{0.65, 0.5 + 0.5*0.5/3}, // rank 6.5 in (0.5, 1]
	} {
		if got := Quantile(c.q, bounds, cum); abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := Quantile(0.5, bounds, []float64{0, 0, 0, 0}); !math.IsNaN(got) {
		t.Errorf("empty histogram: %v, want NaN", got)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
