package replaycmd

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/metrics"
)

// heavyPage is a vLLM-like /metrics page of about size bytes (many
// engines' worth of series), to make scraping as costly as it gets.
func heavyPage(size int) string {
	var b strings.Builder
	for e := 0; b.Len() < size; e++ {
		ls := fmt.Sprintf(`engine="%d",model_name="m"`, e)
		fmt.Fprintf(&b, "# TYPE vllm:num_requests_running_%d gauge\nvllm:num_requests_running_%d{%s} 1\n", e, e, ls)
		fmt.Fprintf(&b, "# TYPE vllm:ttft_%d histogram\n", e)
		for i := range 20 {
			fmt.Fprintf(&b, "vllm:ttft_%d_bucket{%s,le=\"%d\"} %d\n", e, ls, i, i)
		}
		fmt.Fprintf(&b, "vllm:ttft_%d_bucket{%s,le=\"+Inf\"} 20\nvllm:ttft_%d_sum{%s} 3\nvllm:ttft_%d_count{%s} 20\n", e, ls, e, ls, e, ls)
	}
	return b.String()
}

// BenchmarkScrapeLateness measures the send lateness p99 of a rate
// schedule (500 requests/s against a fast mock) without and with scraping
// (which a child process does: agent.go), a run of each in turn, so that
// both see the same machine: a vLLM-sized page (50 KB) at the default
// interval (1 s; a 5 s run), a 200 KB page every 100 ms, and a 4 MB page
// every 50 ms (a stress far past any engine's). It reports the median over
// the rounds of each p99 (ms), and the median of their differences; it
// asserts nothing (timing belongs to benchmarks).
//
//	go test -run '^$' -bench ScrapeLateness -benchtime 5x ./lib/cmd/replaycmd
func BenchmarkScrapeLateness(b *testing.B) {
	for _, c := range []struct {
		name     string
		size     int
		interval string
		requests int
	}{{"page=50KB/every=1s", 50 << 10, "1s", 2500}, {"page=200KB/every=100ms", 200 << 10, "100ms", 1000}, {"page=4MB/every=50ms", 4 << 20, "50ms", 1000}} {
		b.Run(c.name, func(b *testing.B) { benchLateness(b, c.size, c.interval, c.requests) })
	}
}

func benchLateness(b *testing.B, size int, interval string, requests int) {
	url := mockURL(b)
	store := storeOf(b, true, true, false)
	page := heavyPage(size)
	exp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, page)
	}))
	defer exp.Close()
	dir := b.TempDir()
	p99 := func(scrape bool, i int) float64 {
		out := filepath.Join(dir, fmt.Sprintf("run-%v-%d", scrape, i))
		args := []string{"-q", "--url", url, "--schedule", "rate", "--rate", "500", "--request-count", fmt.Sprint(requests), "-o", out}
		if scrape {
			args = append(args, "--server-metrics", exp.URL+"/metrics", "--server-metrics-interval", interval)
		} else {
			args = append(args, "--no-server-metrics")
		}
		if msg, code := run(b, append(args, store)...); code != 0 {
			b.Fatalf("replay exit %d: %s", code, msg)
		}
		sum, err := summarize([]string{filepath.Join(out, recordsFile)}, metrics.Options{Streaming: true})
		if err != nil {
			b.Fatal(err)
		}
		r := sum.Get("send_lateness")
		if r == nil {
			b.Fatal("no send_lateness")
		}
		return r.P[8]
	}
	var without, with, diff []float64
	for i := 0; b.Loop(); i++ {
		// Alternate which goes first, so that neither always follows the
		// other's garbage.
		var a, s float64
		if i%2 == 0 {
			a, s = p99(false, i), p99(true, i)
		} else {
			s, a = p99(true, i), p99(false, i)
		}
		without, with, diff = append(without, a), append(with, s), append(diff, s-a)
		b.Logf("round %d: p99 send lateness %.3f ms without, %.3f ms with scraping", i, a, s)
	}
	b.ReportMetric(median(without), "p99-lateness-ms-without")
	b.ReportMetric(median(with), "p99-lateness-ms-with-scraping")
	b.ReportMetric(median(diff), "p99-lateness-ms-added")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}
