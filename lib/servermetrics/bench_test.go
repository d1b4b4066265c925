package servermetrics

import (
	"fmt"
	"strings"
	"testing"
)

// bigPage returns a vLLM-like page of about size bytes: per "engine" label
// a set of gauges, counters and a 20-bucket TTFT histogram.
func bigPage(size int) string {
	var b strings.Builder
	for e := 0; b.Len() < size; e++ {
		ls := fmt.Sprintf(`engine="%d",model_name="Qwen/Qwen3-0.6B"`, e)
		fmt.Fprintf(&b, "# HELP vllm:num_requests_running_%d Running.\n# TYPE vllm:num_requests_running_%d gauge\nvllm:num_requests_running_%d{%s} %d\n", e, e, e, ls, e%7)
		fmt.Fprintf(&b, "# HELP vllm:prompt_tokens_%d_total Prompt tokens.\n# TYPE vllm:prompt_tokens_%d_total counter\nvllm:prompt_tokens_%d_total{%s} %d\n", e, e, e, ls, e*1000)
		fmt.Fprintf(&b, "# HELP vllm:time_to_first_token_seconds_%d TTFT.\n# TYPE vllm:time_to_first_token_seconds_%d histogram\n", e, e)
		for i := range 20 {
			fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_%d_bucket{%s,le=\"%g\"} %d\n", e, ls, 0.001*float64(int(1)<<i), i*10)
		}
		fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_%d_bucket{%s,le=\"+Inf\"} 200\n", e, ls)
		fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_%d_sum{%s} 12.5\nvllm:time_to_first_token_seconds_%d_count{%s} 200\n", e, ls, e, ls)
	}
	return b.String()
}

// BenchmarkParse10MB parses a 10 MB page (the limit of one scrape is 16
// MiB); b.SetBytes makes the output a parse speed in MB/s.
func BenchmarkParse10MB(b *testing.B) {
	page := []byte(bigPage(10 << 20))
	b.SetBytes(int64(len(page)))
	lim := Limits{MaxLine: DefaultLimits.MaxLine}
	for b.Loop() {
		p, err := Parse(page, "text/plain; version=0.0.4", lim)
		if err != nil || len(p.Families) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkStore10MB adds a parsed 10 MB page to a target's storage (the
// scrape's work after the parse).
func BenchmarkStore10MB(b *testing.B) {
	p, err := Parse([]byte(bigPage(10<<20)), "text/plain", Limits{})
	if err != nil {
		b.Fatal(err)
	}
	s := newSeries()
	for i := 0; b.Loop(); i++ {
		s.add(int64(i), 0, p, 0)
	}
}
