package replaycmd

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	rtmetrics "runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"

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
// the rounds of each p99 (ms), and the median of their differences; and,
// since on a shared machine other tenants' noise swamps a p99, the garbage
// collection in the sending process from its first send to its last answer
// (cycles and GC CPU ms, from runtime/metrics sampled every 5 ms: the mock
// runs in this process too, the same in both runs), which does not depend
// on the neighbours. It asserts nothing (timing belongs to benchmarks).
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
		io.WriteString(w, page) // no copy: the allocations measured are the client's
	}))
	defer exp.Close()
	dir := b.TempDir()
	type result struct{ p99, gcCycles, gcCPUms float64 }
	once := func(scrape bool, i int) result {
		out := filepath.Join(dir, fmt.Sprintf("run-%v-%d", scrape, i))
		args := []string{"-q", "--url", url, "--schedule", "rate", "--rate", "500", "--request-count", fmt.Sprint(requests), "-o", out}
		if scrape {
			args = append(args, "--server-metrics", exp.URL+"/metrics", "--server-metrics-interval", interval)
		} else {
			args = append(args, "--no-server-metrics")
		}
		gc := sampleGC()
		msg, code := run(b, append(args, store)...)
		samples := gc()
		if code != 0 {
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
		cycles, cpu := gcBetween(samples, sum.StartNS, sum.EndNS)
		return result{r.P[8], cycles, cpu * 1e3}
	}
	var res [2][]result // without, with
	for i := 0; b.Loop(); i++ {
		// Alternate which goes first, so that neither always follows the
		// other's garbage.
		var a, s result
		if i%2 == 0 {
			a, s = once(false, i), once(true, i)
		} else {
			s, a = once(true, i), once(false, i)
		}
		res[0], res[1] = append(res[0], a), append(res[1], s)
		b.Logf("round %d: p99 send lateness %.3f ms without, %.3f ms with scraping; sender GC %.0f vs %.0f cycles, %.1f vs %.1f ms CPU",
			i, a.p99, s.p99, a.gcCycles, s.gcCycles, a.gcCPUms, s.gcCPUms)
	}
	med := func(k int, f func(result) float64) float64 {
		var v []float64
		for _, r := range res[k] {
			v = append(v, f(r))
		}
		return median(v)
	}
	p99 := func(r result) float64 { return r.p99 }
	b.ReportMetric(med(0, p99), "p99-lateness-ms-without")
	b.ReportMetric(med(1, p99), "p99-lateness-ms-with-scraping")
	var diff []float64
	for i := range res[0] {
		diff = append(diff, res[1][i].p99-res[0][i].p99)
	}
	b.ReportMetric(median(diff), "p99-lateness-ms-added")
	b.ReportMetric(med(0, func(r result) float64 { return r.gcCycles }), "sender-gc-cycles-without")
	b.ReportMetric(med(1, func(r result) float64 { return r.gcCycles }), "sender-gc-cycles-with")
	b.ReportMetric(med(0, func(r result) float64 { return r.gcCPUms }), "sender-gc-cpu-ms-without")
	b.ReportMetric(med(1, func(r result) float64 { return r.gcCPUms }), "sender-gc-cpu-ms-with")
}

// gcSample is the process's garbage collection so far at a time.
type gcSample struct {
	t            int64 // Unix ns
	cycles, cpuS float64
}

// sampleGC samples runtime/metrics every 5 ms until the returned function
// is called, which returns the samples.
func sampleGC() func() []gcSample {
	stop, done := make(chan struct{}), make(chan []gcSample)
	go func() {
		ms := []rtmetrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}}
		var out []gcSample
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			rtmetrics.Read(ms)
			out = append(out, gcSample{time.Now().UnixNano(), float64(ms[0].Value.Uint64()), ms[1].Value.Float64()})
			select {
			case <-stop:
				done <- out
				return
			case <-tk.C:
			}
		}
	}()
	return func() []gcSample { close(stop); return <-done }
}

// gcBetween is the GC cycles and CPU seconds between the last sample at or
// before start and the first at or after end.
func gcBetween(s []gcSample, start, end int64) (cycles, cpu float64) {
	i, j := 0, len(s)-1
	for k, x := range s {
		if x.t <= start {
			i = k
		}
	}
	for k := len(s) - 1; k >= 0; k-- {
		if s[k].t >= end {
			j = k
		}
	}
	if j < i {
		return 0, 0
	}
	return s[j].cycles - s[i].cycles, s[j].cpuS - s[i].cpuS
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
