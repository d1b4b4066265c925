package mock

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The mock's /metrics: what a vLLM engine exports, under vLLM's names
// (vllm/v1/metrics/loggers.py), so that a client that scrapes a server
// (aiperf-replay, the Python aiperf, a dashboard) can be tested against the
// mock. Every series carries vLLM's labels model_name and engine ("0").
// Counters are exposed with the _total suffix in their samples and in
// their HELP and TYPE lines, as prometheus_client writes the text format
// 0.0.4 (only OpenMetrics names the family without it; a 0.0.4 parser
// takes a sample name as its family's); histograms use vLLM's bucket
// bounds.
//
//	vllm:num_requests_running        gauge: completions being answered
//	vllm:num_requests_waiting        gauge: completions queued (0 unless
//	                                 --slots queues them; with --slots,
//	                                 running counts the slots' holders)
//	vllm:kv_cache_usage_perc         gauge: the simulated prefix cache's
//	                                 fill, 0 to 1 (0 without one)
//	vllm:prefix_cache_queries_total  counter: prompt tokens looked up
//	vllm:prefix_cache_hits_total     counter: of them, tokens served from
//	                                 the cache (both only with a cache)
//	vllm:prompt_tokens_total         counter: prompt tokens of answered
//	                                 completions
//	vllm:generation_tokens_total     counter: tokens sent
//	vllm:request_success_total       counter, by finished_reason
//	vllm:time_to_first_token_seconds histogram: arrival to first token
//	vllm:inter_token_latency_seconds histogram: gaps between tokens

// ttftBuckets and itlBuckets are vLLM's (vllm/v1/metrics/buckets.py).
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets  = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
)

// engineMetrics holds the server's engine-side counters. It is safe for
// concurrent use.
type engineMetrics struct {
	running, waiting               atomic.Int64
	promptTokens, generationTokens atomic.Int64
	queries, hits                  atomic.Int64
	stop, length                   atomic.Int64
	ttft, itl                      *histogram
}

func newEngineMetrics() *engineMetrics {
	return &engineMetrics{ttft: newHistogram(ttftBuckets), itl: newHistogram(itlBuckets)}
}

// histogram is a Prometheus histogram: per-bucket counts (not cumulative;
// summed when written), the count and the sum.
type histogram struct {
	bounds []float64
	mu     sync.Mutex
	counts []uint64 // len(bounds)+1: the last is +Inf
	sum    float64
	n      uint64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// observe adds one value (in seconds).
func (h *histogram) observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.n++
	h.mu.Unlock()
}

// observeN adds value v n times.
func (h *histogram) observeN(v float64, n int) {
	if n <= 0 {
		return
	}
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.mu.Lock()
	h.counts[i] += uint64(n)
	h.sum += v * float64(n)
	h.n += uint64(n)
	h.mu.Unlock()
}

// noteToken records that token i of reply p went out at t: the first one's
// time to first token, every later one's gap to the one before.
func (s *Server) noteToken(p *replyPlan, i int, t time.Time) {
	if i == 0 {
		s.metrics.ttft.observe(t.Sub(p.arrived).Seconds())
	} else {
		s.metrics.itl.observe(t.Sub(p.lastToken).Seconds())
	}
	p.lastToken = t
}

// noteWhole records the engine-side times of a reply sent whole: the first
// token was due at first, the last at last, the gaps evenly between.
func (s *Server) noteWhole(p *replyPlan, first, last time.Time) {
	if p.tokens == 0 {
		return
	}
	s.metrics.ttft.observe(max(first.Sub(p.arrived), 0).Seconds())
	if p.tokens > 1 {
		s.metrics.itl.observeN(last.Sub(first).Seconds()/float64(p.tokens-1), p.tokens-1)
	}
}

// noteDone counts a reply whose last token went out.
func (s *Server) noteDone(p *replyPlan) {
	s.metrics.promptTokens.Add(p.prompt)
	s.metrics.generationTokens.Add(int64(p.tokens))
	if p.finish == "length" {
		s.metrics.length.Add(1)
	} else {
		s.metrics.stop.Add(1)
	}
}

// serveMetrics writes the metrics in the Prometheus text format (0.0.4).
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, http.MethodGet)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(s.appendMetrics(nil))
}

// appendMetrics appends the exposition of every metric to b.
func (s *Server) appendMetrics(b []byte) []byte {
	m := s.metrics
	labels := `model_name="` + labelEscaper.Replace(s.cfg.Model) + `",engine="0"`
	scalar := func(name, typ, help string, v float64) {
		b = appendHeader(b, name, typ, help)
		b = appendSample(b, name, labels, v)
	}
	running, waiting := float64(m.running.Load()), float64(m.waiting.Load())
	if s.slots != nil {
		// With --slots the engine's own split: decoding in a slot, queued.
		r, w := s.slots.load()
		running, waiting = float64(r), float64(w)
	}
	scalar("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", running)
	scalar("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", waiting)
	scalar("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", s.prefix.usage())
	counter := func(name, help string, v int64) {
		b = appendHeader(b, name+"_total", "counter", help)
		b = appendSample(b, name+"_total", labels, float64(v))
	}
	counter("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.", m.queries.Load())
	counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", m.hits.Load())
	counter("vllm:prompt_tokens", "Number of prefill tokens processed.", m.promptTokens.Load())
	counter("vllm:generation_tokens", "Number of generation tokens processed.", m.generationTokens.Load())
	b = appendHeader(b, "vllm:request_success_total", "counter", "Count of successfully processed requests.")
	b = appendSample(b, "vllm:request_success_total", labels+`,finished_reason="stop"`, float64(m.stop.Load()))
	b = appendSample(b, "vllm:request_success_total", labels+`,finished_reason="length"`, float64(m.length.Load()))
	b = m.ttft.append(b, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", labels)
	b = m.itl.append(b, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", labels)
	return b
}

// append writes the histogram's buckets (cumulative), sum and count.
func (h *histogram) append(b []byte, name, help, labels string) []byte {
	h.mu.Lock()
	counts := append([]uint64(nil), h.counts...)
	sum, n := h.sum, h.n
	h.mu.Unlock()
	b = appendHeader(b, name, "histogram", help)
	var cum uint64
	for i, c := range counts {
		cum += c
		le := "+Inf"
		if i < len(h.bounds) {
			le = strconv.FormatFloat(h.bounds[i], 'g', -1, 64)
		}
		b = appendSample(b, name+"_bucket", labels+`,le="`+le+`"`, float64(cum))
	}
	b = appendSample(b, name+"_sum", labels, sum)
	return appendSample(b, name+"_count", labels, float64(n))
}

// labelEscaper escapes a label value as the text format wants.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func appendHeader(b []byte, name, typ, help string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, help...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	return append(b, '\n')
}

func appendSample(b []byte, name, labels string, v float64) []byte {
	b = append(b, name...)
	b = append(b, '{')
	b = append(b, labels...)
	b = append(b, "} "...)
	switch {
	case math.IsInf(v, 1):
		b = append(b, "+Inf"...)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		b = strconv.AppendFloat(b, v, 'f', 1, 64) // 3.0, as prometheus_client writes
	default:
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return append(b, '\n')
}
