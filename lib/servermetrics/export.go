package servermetrics

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// Export file names, the Python aiperf's.
const (
	JSONFile  = "server_metrics_export.json"
	CSVFile   = "server_metrics_export.csv"
	JSONLFile = "server_metrics_export.jsonl"
)

// Meta identifies the run in the exports.
type Meta struct {
	Version     string // e.g. "aiperf-replay v1.2"
	BenchmarkID string
}

// num is a float that marshals NaN and ±Inf as null.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// The JSON shapes follow aiperf's server_metrics_export.json
// (src/aiperf/server_metrics/json_exporter.py and
// docs/server-metrics/server-metrics-json-schema.md): metrics keyed by name,
// one series per endpoint and label set, stats nested per type. Ours adds
// "window" (the profiling window and the scrapes bracketing it per
// endpoint) and "engine_summary"; it has no timeslices.
type jsonExport struct {
	SchemaVersion string                 `json:"schema_version"`
	AiperfVersion string                 `json:"aiperf_version"`
	BenchmarkID   string                 `json:"benchmark_id,omitempty"`
	Summary       jsonSummary            `json:"summary"`
	Window        jsonWindow             `json:"window"`
	Engines       []jsonEngine           `json:"engine_summary,omitempty"`
	Metrics       map[string]*jsonMetric `json:"metrics"`
}

type jsonSummary struct {
	Configured   []string                    `json:"endpoints_configured"`
	Successful   []string                    `json:"endpoints_successful"`
	StartTime    string                      `json:"start_time,omitempty"`
	EndTime      string                      `json:"end_time,omitempty"`
	EndpointInfo map[string]jsonEndpointInfo `json:"endpoint_info,omitempty"`
}

type jsonEndpointInfo struct {
	TotalFetches  int   `json:"total_fetches"`
	FailedFetches int   `json:"failed_fetches"`
	SkippedTicks  int   `json:"skipped_ticks,omitempty"`
	Throttled     int   `json:"throttled_ticks,omitempty"`
	FirstFetchNS  int64 `json:"first_fetch_ns"`
	LastFetchNS   int64 `json:"last_fetch_ns"`
	AvgLatencyMS  num   `json:"avg_fetch_latency_ms"`
	// aiperf's unique-update statistics (ServerMetricsEndpointInfo, all
	// but the median required): scrapes whose values changed.
	Updates         int            `json:"unique_updates"`
	FirstUpdateNS   int64          `json:"first_update_ns"`
	LastUpdateNS    int64          `json:"last_update_ns"`
	DurationSeconds num            `json:"duration_seconds"`
	AvgUpdateMS     num            `json:"avg_update_interval_ms"`
	MedianUpdateMS  *num           `json:"median_update_interval_ms,omitempty"`
	Errors          map[string]int `json:"errors,omitempty"`
	DroppedSeries   int            `json:"dropped_series,omitempty"`
	Thinned         int            `json:"thinned,omitempty"`
}

// updates fills the unique-update statistics as aiperf computes them:
// the span from the first to the last, over the gaps between them (0
// below two), and the median gap when there is one.
func (info *jsonEndpointInfo) updates(t *TargetReport) {
	info.Updates, info.FirstUpdateNS, info.LastUpdateNS = t.Updates, t.FirstUpdate, t.LastUpdate
	if t.Updates > 0 {
		info.DurationSeconds = num(float64(t.LastUpdate-t.FirstUpdate) / 1e9)
	}
	if t.Updates > 1 {
		info.AvgUpdateMS = num(float64(info.DurationSeconds) * 1e3 / float64(t.Updates-1))
	}
	if !math.IsNaN(t.MedianUpdateMS) {
		m := num(t.MedianUpdateMS)
		info.MedianUpdateMS = &m
	}
}

type jsonWindow struct {
	StartNS   int64             `json:"start_ns"`
	EndNS     int64             `json:"end_ns"`
	Endpoints []jsonWindowPoint `json:"endpoints,omitempty"`
}

type jsonWindowPoint struct {
	URL      string `json:"endpoint_url"`
	FromNS   int64  `json:"reference_scrape_ns"`
	ToNS     int64  `json:"final_scrape_ns"`
	InWindow int    `json:"scrapes_in_window"`
}

type jsonMetric struct {
	Type        string       `json:"type"`
	Description string       `json:"description"`
	Unit        string       `json:"unit,omitempty"`
	Series      []jsonSeries `json:"series"`
}

type jsonSeries struct {
	URL     string            `json:"endpoint_url"`
	Labels  map[string]string `json:"labels,omitempty"`
	Stats   statsMap          `json:"stats"`
	Buckets *orderedBuckets   `json:"buckets,omitempty"`
}

// orderedBuckets marshals bucket deltas in bound order.
type orderedBuckets struct {
	bounds, counts []float64
}

func (b *orderedBuckets) MarshalJSON() ([]byte, error) {
	out := []byte{'{'}
	for i, le := range b.bounds {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(out, formatFloat(le))
		out = append(out, ':')
		out = appendNumber(out, b.counts[i])
	}
	return append(out, '}'), nil
}

type jsonEngine struct {
	URL              string     `json:"endpoint_url"`
	Engine           string     `json:"engine"`
	Running          *jsonGauge `json:"requests_running,omitempty"`
	Waiting          *jsonGauge `json:"requests_waiting,omitempty"`
	KVUsage          *jsonGauge `json:"kv_cache_usage_percent,omitempty"`
	Preemptions      *jsonDelta `json:"preemptions,omitempty"`
	PromptTokens     *jsonDelta `json:"prompt_tokens,omitempty"`
	GenerationTokens *jsonDelta `json:"generation_tokens,omitempty"`
	TTFT             *jsonHist  `json:"time_to_first_token_seconds,omitempty"`
	ITL              *jsonHist  `json:"inter_token_latency_seconds,omitempty"`
	CacheHits        *jsonDelta `json:"prefix_cache_hits_tokens,omitempty"`
	CacheQueries     *jsonDelta `json:"prefix_cache_queries_tokens,omitempty"`
	HitRate          *num       `json:"prefix_cache_hit_rate,omitempty"`
}

type jsonGauge struct {
	Family string `json:"metric"`
	Avg    num    `json:"avg"`
	Max    num    `json:"max"`
}

type jsonDelta struct {
	Family string `json:"metric"`
	Total  num    `json:"total"`
}

type jsonHist struct {
	Family string `json:"metric"`
	Count  num    `json:"count"`
	Avg    num    `json:"avg"`
	P50    num    `json:"p50_estimate"`
	P90    num    `json:"p90_estimate"`
	P99    num    `json:"p99_estimate"`
}

// statsMap is a series' statistics. It marshals its keys in order and
// every value but a histogram's count (an integer in aiperf's model) as a
// float the way aiperf's JSON writes one (4672.0, not 4672), so a reader
// of aiperf's models reads it as aiperf's own file.
type statsMap map[string]num

func (m statsMap) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		v, _ := m[k].MarshalJSON()
		if k != "count" && !bytes.ContainsAny(v, ".eEn") {
			v = append(v, ".0"...)
		}
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

func gaugeStatsMap(g *GaugeStats) map[string]num {
	m := map[string]num{"avg": num(g.Avg), "min": num(g.Min), "max": num(g.Max), "std": num(g.Std)}
	for i, p := range Percentiles {
		m["p"+strconv.Itoa(int(p))] = num(g.P[i])
	}
	return m
}

func counterStatsMap(c *CounterStats) map[string]num {
	return map[string]num{"total": num(c.Total), "rate": num(c.Rate)}
}

func histStatsMap(h *HistStats) map[string]num {
	if h.Count == 0 {
		return map[string]num{"count": 0}
	}
	m := map[string]num{"count": num(h.Count), "sum": num(h.Sum), "avg": num(h.Avg),
		"count_rate": num(h.CountRate), "sum_rate": num(h.SumRate)}
	if h.HaveP {
		for i, p := range Percentiles {
			m["p"+strconv.Itoa(int(p))+"_estimate"] = num(h.P[i])
		}
	}
	return m
}

func labelMap(ls []Label) map[string]string {
	if len(ls) == 0 {
		return nil
	}
	m := make(map[string]string, len(ls))
	for _, l := range ls {
		m[l.Name] = l.Value
	}
	return m
}

func isoTime(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000Z")
}

// WriteJSON writes server_metrics_export.json.
func WriteJSON(w io.Writer, r *Report, m Meta) error {
	x := jsonExport{
		SchemaVersion: "1.0", AiperfVersion: m.Version, BenchmarkID: m.BenchmarkID,
		Window:  jsonWindow{StartNS: r.Window.Start, EndNS: r.Window.End},
		Metrics: map[string]*jsonMetric{},
		Summary: jsonSummary{Configured: []string{}, Successful: []string{}, EndpointInfo: map[string]jsonEndpointInfo{}},
	}
	var first, last int64
	for _, t := range r.Targets {
		x.Summary.Configured = append(x.Summary.Configured, t.URL)
		if t.Scrapes > 0 {
			x.Summary.Successful = append(x.Summary.Successful, t.URL)
			x.Window.Endpoints = append(x.Window.Endpoints, jsonWindowPoint{t.URL, t.BracketFrom, t.BracketTo, t.InWindow})
		}
		if t.FirstFetch != 0 && (first == 0 || t.FirstFetch < first) {
			first = t.FirstFetch
		}
		last = max(last, t.LastFetch)
		info := jsonEndpointInfo{TotalFetches: t.Fetches, FailedFetches: t.Failures, SkippedTicks: t.Skipped, Throttled: t.Throttled,
			FirstFetchNS: t.FirstFetch, LastFetchNS: t.LastFetch, AvgLatencyMS: num(t.AvgLatencyMS),
			DroppedSeries: t.Dropped, Thinned: t.Thinned}
		info.updates(&t)
		if len(t.Errors) > 0 {
			info.Errors = t.Errors
		}
		x.Summary.EndpointInfo[t.URL] = info
		for _, f := range t.Families {
			jm := x.Metrics[f.Name]
			if jm == nil {
				jm = &jsonMetric{Type: f.Type, Description: f.Help, Unit: f.Unit, Series: []jsonSeries{}}
				x.Metrics[f.Name] = jm
			}
			for _, s := range f.Series {
				js := jsonSeries{URL: t.URL, Labels: labelMap(s.Labels)}
				switch {
				case s.Gauge != nil:
					js.Stats = gaugeStatsMap(s.Gauge)
				case s.Counter != nil:
					js.Stats = counterStatsMap(s.Counter)
				case s.Hist != nil:
					js.Stats = histStatsMap(s.Hist)
					js.Buckets = &orderedBuckets{s.Hist.Bounds, s.Hist.Cumulative}
				}
				jm.Series = append(jm.Series, js)
			}
		}
		if e := t.Engine; e != nil {
			x.Engines = append(x.Engines, engineJSON(t.URL, e))
		}
	}
	x.Summary.StartTime, x.Summary.EndTime = isoTime(first), isoTime(last)
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func engineJSON(u string, e *EngineSummary) jsonEngine {
	g := func(s *GaugeSummary) *jsonGauge {
		if s == nil {
			return nil
		}
		return &jsonGauge{s.Family, num(s.Avg), num(s.Max)}
	}
	d := func(s *Delta) *jsonDelta {
		if s == nil {
			return nil
		}
		return &jsonDelta{s.Family, num(s.Value)}
	}
	h := func(s *HistSummary) *jsonHist {
		if s == nil {
			return nil
		}
		st := &s.Stats
		jh := &jsonHist{Family: s.Family, Count: num(st.Count), Avg: num(math.NaN()), P50: num(math.NaN()), P90: num(math.NaN()), P99: num(math.NaN())}
		if st.Count > 0 {
			jh.Avg = num(st.Avg)
		}
		if st.HaveP {
			jh.P50, jh.P90, jh.P99 = num(st.P[4]), num(st.P[6]), num(st.P[8])
		}
		return jh
	}
	je := jsonEngine{URL: u, Engine: e.Engine, Running: g(e.Running), Waiting: g(e.Waiting), KVUsage: g(e.KVUsage),
		Preemptions: d(e.Preemptions), PromptTokens: d(e.PromptTokens), GenerationTokens: d(e.GenerationTokens),
		TTFT: h(e.TTFT), ITL: h(e.ITL), CacheHits: d(e.CacheHits), CacheQueries: d(e.CacheQuery)}
	if !math.IsNaN(e.HitRate) {
		hr := num(e.HitRate)
		je.HitRate = &hr
	}
	return je
}
