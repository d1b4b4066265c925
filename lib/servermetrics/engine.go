package servermetrics

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// An engine profile names, for one inference engine, the families that
// answer the summary's questions, each as a list of the names different
// versions use (the first present wins). Counters are listed with and
// without _total: the text format (prometheus_client) names the family
// with the suffix, OpenMetrics without. The names were read from the
// engines' own sources:
//
//   - vLLM: vllm/v1/metrics/loggers.py (PrometheusStatLogger).
//     kv_cache_usage_perc replaced gpu_cache_usage_perc;
//     inter_token_latency_seconds replaced time_per_output_token_seconds;
//     prefix_cache_{queries,hits} (tokens) replaced
//     gpu_prefix_cache_{queries,hits}.
//   - SGLang: python/sglang/srt/metrics/collector.py (TokenizerMetricsCollector,
//     SchedulerMetricsCollector). token_usage is the KV pool's used
//     fraction; num_retracted_requests_total counts retractions (its
//     preemption); cached_tokens_total counts prompt tokens served from the
//     radix cache, prompt_tokens_total all prompt tokens;
//     inter_token_latency_seconds replaced time_per_output_token_seconds.
//   - TensorRT-LLM: tensorrt_llm/metrics/collector.py (MetricsCollector),
//     prefix trtllm_ (trtllm: when Dynamo re-exports it).
//     prompt_cached_tokens_total / prompt_tokens_total are its reuse in
//     tokens; it has no preemption counter.
//   - Dynamo: lib/runtime/src/metrics/prometheus_names.rs (frontend_service,
//     prefixed dynamo_frontend_): input_sequence_tokens and cached_tokens are
//     per-request histograms whose _sum are the token totals; KV usage is the
//     worker's dynamo_component_kvstats_gpu_cache_usage_percent (a 0..1
//     ratio despite its name).
//
// Every KV-usage gauge named here is a 0..1 fraction; the summary shows it
// in percent.
type profile struct {
	engine                  string
	prefixes                []string
	running, waiting, kv    []string
	preemptions             []string
	prompt, generation      []string
	ttft, itl               []string
	cacheHits, cacheQueries []string
}

func withTotal(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, n+"_total", n)
	}
	return out
}

func trt(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, "trtllm_"+n, "trtllm:"+n)
	}
	return out
}

var profiles = []profile{
	{
		engine: "vllm", prefixes: []string{"vllm:"},
		running: []string{"vllm:num_requests_running"}, waiting: []string{"vllm:num_requests_waiting"},
		kv:          []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
		preemptions: withTotal("vllm:num_preemptions"),
		prompt:      withTotal("vllm:prompt_tokens"), generation: withTotal("vllm:generation_tokens"),
		ttft:         []string{"vllm:time_to_first_token_seconds"},
		itl:          []string{"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"},
		cacheHits:    withTotal("vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits"),
		cacheQueries: withTotal("vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries"),
	},
	{
		engine: "sglang", prefixes: []string{"sglang:"},
		running: []string{"sglang:num_running_reqs"}, waiting: []string{"sglang:num_queue_reqs"},
		kv:          []string{"sglang:token_usage"},
		preemptions: withTotal("sglang:num_retracted_requests"),
		prompt:      withTotal("sglang:prompt_tokens"), generation: withTotal("sglang:generation_tokens"),
		ttft:         []string{"sglang:time_to_first_token_seconds"},
		itl:          []string{"sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"},
		cacheHits:    withTotal("sglang:cached_tokens"),
		cacheQueries: withTotal("sglang:prompt_tokens"),
	},
	{
		engine: "tensorrt-llm", prefixes: []string{"trtllm_", "trtllm:"},
		running: trt("num_requests_running"), waiting: trt("num_requests_waiting"),
		kv:     trt("kv_cache_utilization"),
		prompt: trt("prompt_tokens_total", "prompt_tokens"), generation: trt("generation_tokens_total", "generation_tokens"),
		ttft:         trt("time_to_first_token_seconds"),
		itl:          trt("time_per_output_token_seconds"),
		cacheHits:    trt("prompt_cached_tokens_total", "prompt_cached_tokens"),
		cacheQueries: trt("prompt_tokens_total", "prompt_tokens"),
	},
	{
		engine: "dynamo", prefixes: []string{"dynamo_frontend_"},
		running: []string{"dynamo_frontend_inflight_requests"}, waiting: []string{"dynamo_frontend_queued_requests"},
		kv:           []string{"dynamo_component_kvstats_gpu_cache_usage_percent"},
		prompt:       []string{"dynamo_frontend_input_sequence_tokens"},
		generation:   append(withTotal("dynamo_frontend_output_tokens"), "dynamo_frontend_output_sequence_tokens"),
		ttft:         []string{"dynamo_frontend_time_to_first_token_seconds"},
		itl:          []string{"dynamo_frontend_inter_token_latency_seconds"},
		cacheHits:    []string{"dynamo_frontend_cached_tokens"},
		cacheQueries: []string{"dynamo_frontend_input_sequence_tokens"},
	},
}

// EngineSummary answers the summary's questions for a known engine. A nil
// field is a figure this engine (or version) does not export.
type EngineSummary struct {
	Engine                string
	Running, Waiting      *GaugeSummary
	KVUsage               *GaugeSummary // in percent
	Preemptions           *Delta
	PromptTokens          *Delta
	GenerationTokens      *Delta
	TTFT, ITL             *HistSummary
	CacheHits, CacheQuery *Delta
	// HitRate is ΔCacheHits/ΔCacheQuery over the window (tokens); NaN when
	// either is missing or no query was counted.
	HitRate float64
	// HitRateNote says why there is no hit rate although both counters
	// moved (hits above queries), or "".
	HitRateNote string
}

// GaugeSummary is a gauge's average and maximum over the window's scrapes,
// its series added up per scrape (KV usage: averaged).
type GaugeSummary struct {
	Family   string
	Avg, Max float64
}

// Delta is a counter's increase over the window, its series added up (for a
// histogram family: the increase of its _sum).
type Delta struct {
	Family string
	Value  float64
}

// HistSummary is a latency histogram over the window, its series merged
// (those with the first series' buckets), in seconds.
type HistSummary struct {
	Family string
	Stats  HistStats
}

func engineSummary(fams []FamilyReport, a *aggregator) *EngineSummary {
	byName := map[string]*FamilyReport{}
	for i := range fams {
		byName[fams[i].Name] = &fams[i]
	}
	best, bestN := -1, 0
	for i, p := range profiles {
		n := 0
		for _, f := range fams {
			for _, pre := range p.prefixes {
				if strings.HasPrefix(f.Name, pre) {
					n++
				}
			}
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	if best < 0 {
		return nil
	}
	p := profiles[best]
	find := func(names []string) *FamilyReport {
		for _, n := range names {
			if f := byName[n]; f != nil {
				return f
			}
		}
		return nil
	}
	es := &EngineSummary{Engine: p.engine, HitRate: math.NaN()}
	es.Running = a.gaugeSum(find(p.running), false)
	es.Waiting = a.gaugeSum(find(p.waiting), false)
	if g := a.gaugeSum(find(p.kv), true); g != nil {
		g.Avg, g.Max = 100*g.Avg, 100*g.Max
		es.KVUsage = g
	}
	es.Preemptions = delta(find(p.preemptions))
	es.PromptTokens = delta(find(p.prompt))
	es.GenerationTokens = delta(find(p.generation))
	es.TTFT = mergeHist(find(p.ttft))
	es.ITL = mergeHist(find(p.itl))
	es.CacheHits = delta(find(p.cacheHits))
	es.CacheQuery = delta(find(p.cacheQueries))
	if es.CacheHits != nil && es.CacheQuery != nil && es.CacheQuery.Value > 0 {
		if es.CacheHits.Value <= es.CacheQuery.Value {
			es.HitRate = es.CacheHits.Value / es.CacheQuery.Value
		} else {
			es.HitRateNote = fmt.Sprintf("prefix-cache hits (%s) exceed the tokens queried (%s) over the window: the counters do not describe one cache (a series missing from some scrapes, a reset of one and not the other); no hit rate", fmtNum(es.CacheHits.Value), fmtNum(es.CacheQuery.Value))
		}
	}
	return es
}

// gaugeSum adds a gauge family's series per scrape inside the window (or
// averages them), and returns the average and maximum over those scrapes.
func (a *aggregator) gaugeSum(f *FamilyReport, mean bool) *GaugeSummary {
	if f == nil || (f.Type != TypeGauge && f.Type != TypeUnknown) {
		return nil
	}
	var cols []int
	for i, c := range a.s.cols {
		if c.family == f.Name && c.part == partValue {
			cols = append(cols, i)
		}
	}
	g := &GaugeSummary{Family: f.Name, Max: math.Inf(-1)}
	n := 0
	for _, k := range a.inside {
		var v float64
		m := 0
		for _, c := range cols {
			if x := a.s.value(k, c); !math.IsNaN(x) {
				v += x
				m++
			}
		}
		if m == 0 {
			continue
		}
		if mean {
			v /= float64(m)
		}
		g.Avg += v
		g.Max = max(g.Max, v)
		n++
	}
	if n == 0 {
		return nil
	}
	g.Avg /= float64(n)
	return g
}

func delta(f *FamilyReport) *Delta {
	if f == nil {
		return nil
	}
	d := &Delta{Family: f.Name}
	found := false
	for _, s := range f.Series {
		switch {
		case s.Counter != nil:
			d.Value += s.Counter.Total
			found = true
		case s.Hist != nil:
			d.Value += s.Hist.Sum
			found = true
		}
	}
	if !found {
		return nil
	}
	return d
}

func mergeHist(f *FamilyReport) *HistSummary {
	if f == nil || f.Type != TypeHistogram {
		return nil
	}
	var m *HistStats
	for _, s := range f.Series {
		h := s.Hist
		if h == nil {
			continue
		}
		if m == nil {
			m = &HistStats{Bounds: slices.Clone(h.Bounds), Cumulative: slices.Clone(h.Cumulative), seconds: h.seconds}
			m.Count, m.Sum = h.Count, h.Sum
			continue
		}
		if !slices.Equal(m.Bounds, h.Bounds) {
			continue
		}
		for i := range m.Cumulative {
			m.Cumulative[i] += h.Cumulative[i]
		}
		m.Count += h.Count
		m.Sum += h.Sum
	}
	if m == nil {
		return nil
	}
	m.finish()
	return &HistSummary{Family: f.Name, Stats: *m}
}
