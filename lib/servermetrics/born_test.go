package servermetrics

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) *Page {
	t.Helper()
	p, err := Parse([]byte(s), "text/plain; version=0.0.4", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// dynamoPage is a Dynamo frontend's page after n requests of in prompt
// tokens in all, cached of them from the cache: its per-model histograms
// exist only once a request came (n > 0).
func dynamoPage(in, cached, n float64) string {
	s := "# TYPE dynamo_frontend_inflight_requests gauge\ndynamo_frontend_inflight_requests 0\n"
	if n == 0 {
		return s
	}
	for _, h := range []struct {
		name string
		sum  float64
	}{{"dynamo_frontend_input_sequence_tokens", in}, {"dynamo_frontend_cached_tokens", cached}} {
		s += "# TYPE " + h.name + " histogram\n" +
			h.name + "_bucket{model=\"m\",le=\"+Inf\"} " + formatFloat(n) + "\n" +
			h.name + "_sum{model=\"m\"} " + formatFloat(h.sum) + "\n" +
			h.name + "_count{model=\"m\"} " + formatFloat(n) + "\n"
	}
	return s
}

func loadPages(t *testing.T, pages ...string) *Collector {
	t.Helper()
	var b []byte
	for i, s := range pages {
		b = AppendLine(b, "http://d/metrics", int64(100*(i+1)), 1, mustParse(t, s), nil)
	}
	c, _, err := LoadJSONL(bytes.NewReader(b), "x", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A series a server creates on its first event (Dynamo's per-model
// histograms on a fresh frontend) counts from 0, not from the first value
// seen: 3 requests of 1000 prompt tokens, 1200 of them cached, are 40 %.
func TestSeriesBornDuringTheRun(t *testing.T) {
	for name, pages := range map[string][]string{
		"scraped between":  {dynamoPage(0, 0, 0), dynamoPage(1000, 0, 1), dynamoPage(3000, 1200, 3)},
		"before and after": {dynamoPage(0, 0, 0), dynamoPage(3000, 1200, 3)},
	} {
		c := loadPages(t, pages...)
		e := c.Report(Window{Start: 110, End: int64(100*len(pages)) - 10}).Targets[0].Engine
		if e == nil || e.PromptTokens == nil || e.CacheHits == nil {
			t.Fatalf("%s: engine %+v", name, e)
		}
		if e.PromptTokens.Value != 3000 || e.CacheHits.Value != 1200 || math.Abs(e.HitRate-0.4) > 1e-12 {
			t.Errorf("%s: prompt %v, cached %v, rate %v; want 3000, 1200, 0.4", name, e.PromptTokens.Value, e.CacheHits.Value, e.HitRate)
		}
	}
}

// A histogram that went down (a restart) is warned as a counter is.
func TestHistogramResetWarned(t *testing.T) {
	c := loadPages(t, dynamoPage(5000, 2000, 5), dynamoPage(6000, 2500, 6), dynamoPage(1000, 400, 1), dynamoPage(2000, 800, 2))
	r := c.Report(Window{Start: 100, End: 400})
	if e := r.Targets[0].Engine; e.PromptTokens.Value != 3000 {
		t.Errorf("prompt tokens %v, want 1000 + 1000 after the restart + 1000", e.PromptTokens.Value)
	}
	if w := strings.Join(Warnings(r), "\n"); !strings.Contains(w, "went down") {
		t.Errorf("warnings %q: want the restart named", w)
	}
}

// A window the scrapes do not bracket (a shard that ended early, a final
// scrape that failed) is warned: the deltas miss the traffic there.
func TestWindowNotBracketedWarned(t *testing.T) {
	c := loadPages(t, dynamoPage(0, 0, 0), dynamoPage(1000, 0, 1), dynamoPage(3000, 1200, 3))
	for _, tc := range []struct {
		w    Window
		want string
	}{
		{Window{Start: 100, End: 300}, ""},
		{Window{Start: 50, End: 250}, "no scrape brackets 50ns at its start of the run's window"},
		{Window{Start: 150, End: 350}, "no scrape brackets 50ns at its end of the run's window"},
	} {
		w := strings.Join(Warnings(c.Report(tc.w)), "\n")
		if tc.want == "" && strings.Contains(w, "brackets") || tc.want != "" && !strings.Contains(w, tc.want) {
			t.Errorf("window %+v: warnings %q, want %q", tc.w, w, tc.want)
		}
	}
}

// A run shorter than the scrape interval has no scrape inside its window:
// its gauges are unknown and said so, not read off the bracketing scrapes
// (taken before the first send and after the last answer, where the server
// is idle: "requests running avg 0 max 0" for a run that kept 8 in
// flight). The counters' deltas still come from the bracket.
func TestNoScrapeInsideTheWindow(t *testing.T) {
	c := loadPages(t, dynamoPage(0, 0, 0), dynamoPage(3000, 1200, 3))
	r := c.Report(Window{Start: 110, End: 190})
	tr := r.Targets[0]
	if tr.InWindow != 0 || tr.Engine == nil || tr.Engine.Running != nil || tr.Engine.PromptTokens == nil || tr.Engine.PromptTokens.Value != 3000 {
		t.Errorf("in window %d, engine %+v: want no gauge and the bracket's 3000 prompt tokens", tr.InWindow, tr.Engine)
	}
	var b strings.Builder
	if err := WriteConsole(&b, r, ClientFigures{}); err != nil || !strings.Contains(b.String(), "requests running         n/a (no scrape fell inside the run;") {
		t.Errorf("console %q, %v: want the unknown gauges said", b.String(), err)
	}
	if r := c.Report(Window{Start: 90, End: 210}); r.Targets[0].InWindow != 2 || r.Targets[0].Engine.Running == nil {
		t.Errorf("a window holding both scrapes: %+v", r.Targets[0])
	}
}

// A restart shows in a histogram's count but not in a bucket that has
// grown past its old value since: the whole series counts from zero at
// that scrape. Counting each column on its own gave the count 1 and the
// buckets 5, 1, 1 (a bucket below the one under it, an average above the
// p99; review finding), for 101 observations.
func TestHistogramResetPartial(t *testing.T) {
	page := func(b01, b1, inf, sum float64) string {
		return "# TYPE x_seconds histogram\n" +
			"x_seconds_bucket{le=\"0.1\"} " + formatFloat(b01) + "\n" +
			"x_seconds_bucket{le=\"1\"} " + formatFloat(b1) + "\n" +
			"x_seconds_bucket{le=\"+Inf\"} " + formatFloat(inf) + "\n" +
			"x_seconds_sum " + formatFloat(sum) + "\n" +
			"x_seconds_count " + formatFloat(inf) + "\n"
	}
	c := loadPages(t, page(90, 95, 100, 5), page(5, 96, 101, 30), page(5, 96, 101, 30))
	r := c.Report(Window{Start: 110, End: 300})
	var h *HistStats
	for _, f := range r.Targets[0].Families {
		if f.Name == "x_seconds" {
			h = f.Series[0].Hist
		}
	}
	if h == nil || h.Count != 101 || h.Sum != 30 || h.Resets != 1 || len(h.Cumulative) != 3 ||
		h.Cumulative[0] != 5 || h.Cumulative[1] != 96 || h.Cumulative[2] != 101 {
		t.Fatalf("histogram %+v, want count 101, sum 30, buckets 5 96 101, one reset", h)
	}
}

// A counter left out of the scrape that opens the deltas (a router's page
// that missed a series once) starts from its last earlier value, not from
// zero as one born during the run: 100 hits, not 500,100 (review finding:
// a hit rate of 250,050 %).
func TestCounterAbsentFromOpeningScrape(t *testing.T) {
	page := func(hits float64) string {
		s := "# TYPE x_queries_total counter\nx_queries_total " + formatFloat(1000+2*hits) + "\n"
		if hits >= 0 {
			s += "# TYPE x_hits_total counter\nx_hits_total " + formatFloat(500000+hits) + "\n"
		}
		return s
	}
	r := loadTyped(t, page(0), page(-1), page(50), page(100)).Report(Window{Start: 210, End: 400})
	found := false
	for _, f := range r.Targets[0].Families {
		if f.Name == "x_hits_total" {
			found = true
			if cs := f.Series[0].Counter; cs == nil || cs.Total != 100 {
				t.Errorf("hits %+v, want a counter of 100", cs)
			}
		}
	}
	if !found {
		t.Error("no x_hits_total in the report")
	}
}

// loadTyped loads pages scraped 100 ns apart from lines that say the
// families' types, as the collector writes them.
func loadTyped(t *testing.T, pages ...string) *Collector {
	t.Helper()
	known := map[string]famInfo{}
	var b []byte
	for i, s := range pages {
		b = appendLine(b, "http://d/metrics", int64(100*(i+1)), 1, mustParse(t, s), nil, known, ticks{})
	}
	c, _, err := LoadJSONL(bytes.NewReader(b), "x", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Cache hits above the tokens queried cannot be one cache's: no hit rate,
// and a warning says why (before: "hit rate 250050.0%").
func TestHitRateAboveOne(t *testing.T) {
	page := func(hits, queries int) string {
		return fmt.Sprintf("# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total %d\n"+
			"# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total %d\n", hits, queries)
	}
	r := loadTyped(t, page(0, 0), page(300, 200)).Report(Window{Start: 110, End: 190})
	e := r.Targets[0].Engine
	if e == nil || !math.IsNaN(e.HitRate) {
		t.Fatalf("engine %+v: want no hit rate", e)
	}
	if w := strings.Join(Warnings(r), "\n"); !strings.Contains(w, "prefix-cache hits (300) exceed the tokens queried (200)") {
		t.Errorf("warnings %q", w)
	}
	var b strings.Builder
	WriteConsole(&b, r, ClientFigures{HitRate: math.NaN()})
	if strings.Contains(b.String(), "150.0%") {
		t.Errorf("console prints the rate:\n%s", b.String())
	}
}

// The series' edges (diff review findings): a column out of the page at
// the restart counts from zero when back (not a second restart); a bucket
// new to a series that was there starts at its first value (from zero it
// would count its whole past: cumulative 95 under a +Inf of 10).
func TestHistogramColumnEdges(t *testing.T) {
	hist := func(b01 string, inf, sum float64) string {
		s := "# TYPE x_seconds histogram\n"
		if b01 != "" {
			s += "x_seconds_bucket{le=\"0.1\"} " + b01 + "\n"
		}
		return s + "x_seconds_bucket{le=\"+Inf\"} " + formatFloat(inf) + "\n" +
			"x_seconds_sum " + formatFloat(sum) + "\nx_seconds_count " + formatFloat(inf) + "\n"
	}
	get := func(c *Collector, w Window) *HistStats {
		for _, f := range c.Report(w).Targets[0].Families {
			if f.Name == "x_seconds" {
				return f.Series[0].Hist
			}
		}
		return nil
	}
	h := get(loadTyped(t, hist("90", 100, 50), hist("", 5, 1), hist("6", 8, 2)), Window{Start: 110, End: 300})
	if h == nil || h.Count != 8 || h.Sum != 2 || h.Resets != 1 || h.Cumulative[0] != 6 {
		t.Errorf("missing at the restart: %+v, want count 8, sum 2, one reset, 6 under 0.1", h)
	}
	h = get(loadTyped(t, hist("", 100, 50), hist("95", 110, 60)), Window{Start: 110, End: 200})
	if h == nil || h.Count != 10 || h.Cumulative[0] != 0 || h.Cumulative[1] != 10 {
		t.Errorf("bucket new to the series: %+v, want 0 under 0.1 of 10", h)
	}
}

// OneBucket: p50 and p99 in one bucket say only that they lie between its
// bounds (the fresh-user trial read an ITL of avg 0.09, p50 5.00 ms).
func TestOneBucket(t *testing.T) {
	h := &HistStats{Bounds: []float64{0.01, 0.1, math.Inf(1)}, Cumulative: []float64{100, 100, 100}, Count: 100, Sum: 0.009}
	h.finish()
	if lo, hi, ok := h.OneBucket(); !ok || lo != 0 || hi != 0.01 {
		t.Errorf("all in the first bucket: %v %v %v", lo, hi, ok)
	}
	h = &HistStats{Bounds: []float64{0.01, 0.1, math.Inf(1)}, Cumulative: []float64{60, 100, 100}, Count: 100}
	if _, _, ok := h.OneBucket(); ok {
		t.Error("p50 and p99 in two buckets: want false")
	}
}

// A run that profiled nothing (interrupted before its first answer) is
// summarized over the open window, which the console names as such.
func TestConsoleOpenWindow(t *testing.T) {
	c := loadPages(t, dynamoPage(0, 0, 0), dynamoPage(3000, 1200, 3))
	var b strings.Builder
	if err := WriteConsole(&b, c.Report(Window{Start: 0, End: math.MaxInt64}), ClientFigures{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "; no profiling window (nothing was profiled: every scrape counts), deltas over") || strings.Contains(b.String(), "9223372036") {
		t.Errorf("console:\n%s", b.String())
	}
}
