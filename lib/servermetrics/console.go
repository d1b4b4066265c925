package servermetrics

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// ClientFigures are the client's own figures, set beside the server's.
type ClientFigures struct {
	// TTFT and ITL in ms; nil when the run has none (not streamed).
	TTFT, ITL *Latency
	// PromptTokens and GenerationTokens the client counted over the
	// profiling requests (0 = unknown).
	PromptTokens, GenerationTokens float64
	// CachedTokens is Σ usage.prompt_tokens_details.cached_tokens over the
	// CachedAnswers answers that reported it, and HitRate (0..1) that sum
	// over their Σ prompt_tokens (NaN: unknown).
	CachedTokens, HitRate float64
	CachedAnswers         int64
}

// Latency is a latency distribution's summary in ms.
type Latency struct{ Avg, P50, P90, P99 float64 }

// Warnings lists, per target, what went wrong while scraping: failed and
// skipped scrapes, dropped series, thinned storage, counter resets.
func Warnings(r *Report) []string {
	var out []string
	for _, t := range r.Targets {
		if t.Failures > 0 {
			kinds := make([]string, 0, len(t.Errors))
			for k := range t.Errors {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			more := ""
			if len(kinds) > 1 {
				more = fmt.Sprintf("; %d kinds of failure", len(kinds))
			}
			out = append(out, fmt.Sprintf("server metrics %s: %d of %d scrapes failed (gaps in its series; first: %s%s)",
				t.URL, t.Failures, t.Fetches, t.FirstError, more))
		}
		if t.Skipped > 0 {
			out = append(out, fmt.Sprintf("server metrics %s: %d scrapes skipped while a slow one was in flight", t.URL, t.Skipped))
		}
		if t.Throttled > 0 {
			out = append(out, fmt.Sprintf("server metrics %s: %d scrapes skipped to keep parsing within %.0f%% of a core (a page takes %.1f ms)",
				t.URL, t.Throttled, 100*maxDuty, t.WorkMS))
		}
		if t.Dropped > 0 {
			out = append(out, fmt.Sprintf("server metrics %s: %d series dropped past the limit of %d series a target", t.URL, t.Dropped, t.MaxSeries))
		}
		if t.Thinned > 0 {
			out = append(out, fmt.Sprintf("server metrics %s: every other scrape dropped %d times to stay within %d MiB", t.URL, t.Thinned, maxPoints*8>>20))
		}
		if w := r.Window; t.Scrapes > 0 && w.Start > 0 && w.End < 1<<62 {
			var miss []string
			if d := t.BracketFrom - w.Start; d > 0 {
				miss = append(miss, time.Duration(d).String()+" at its start")
			}
			if d := w.End - t.BracketTo; d > 0 {
				miss = append(miss, time.Duration(d).String()+" at its end")
			}
			if len(miss) > 0 {
				out = append(out, fmt.Sprintf("server metrics %s: no scrape brackets %s of the run's window: its counter deltas miss the traffic there",
					t.URL, strings.Join(miss, " and ")))
			}
		}
		resets := 0
		for _, f := range t.Families {
			for _, s := range f.Series {
				if s.Counter != nil {
					resets += s.Counter.Resets
				}
				if s.Hist != nil {
					resets += s.Hist.Resets
				}
			}
		}
		if resets > 0 {
			out = append(out, fmt.Sprintf("server metrics %s: counters went down %d times (a server restart?); each fall counted from zero", t.URL, resets))
		}
		if t.Engine != nil && t.Engine.HitRateNote != "" {
			out = append(out, fmt.Sprintf("server metrics %s: %s", t.URL, t.Engine.HitRateNote))
		}
	}
	return out
}

// WriteConsole prints the summary of each target of a known engine, with
// the client's figures beside the server's, and the client's cache figures.
func WriteConsole(w io.Writer, r *Report, c ClientFigures) error {
	var b strings.Builder
	for _, t := range r.Targets {
		if t.Scrapes == 0 {
			fmt.Fprintf(&b, "Server metrics %s: no successful scrape\n", t.URL)
			continue
		}
		e := t.Engine
		if e == nil {
			fmt.Fprintf(&b, "Server metrics %s: %d scrapes, engine not recognized (exports only)\n", t.URL, t.Scrapes)
			continue
		}
		fmt.Fprintf(&b, "Server metrics %s (%s): %d scrapes, %d failed; %s, deltas over %.3f s\n",
			t.URL, e.Engine, t.Fetches-t.Failures, t.Failures, windowText(r.Window), float64(t.BracketTo-t.BracketFrom)/1e9)
		line := func(name, format string, args ...any) {
			fmt.Fprintf(&b, "  %-24s "+format+"\n", append([]any{name}, args...)...)
		}
		gauge := func(name string, g *GaugeSummary, unit string) {
			switch {
			case g == nil && t.InWindow == 0:
				// the bracketing scrapes, before the first send and after
				// the last answer, would show an idle server
				line(name, "n/a (no scrape fell inside the run; a shorter --server-metrics-interval measures it)")
				return
			case g == nil:
				line(name, "n/a")
				return
			}
			line(name, "avg %s%s  max %s%s", fmtNum(g.Avg), unit, fmtNum(g.Max), unit)
		}
		gauge("requests running", e.Running, "")
		gauge("requests waiting", e.Waiting, "")
		gauge("KV-cache usage", e.KVUsage, "%")
		if e.Preemptions != nil {
			line("preemptions", "%s", fmtNum(e.Preemptions.Value))
		} else {
			line("preemptions", "n/a")
		}
		tokens := func(name string, d *Delta, client float64) {
			s := "server n/a"
			if d != nil {
				s = "server " + fmtNum(d.Value)
			}
			if client > 0 {
				s += "  client " + fmtNum(client)
			}
			line(name, "%s", s)
		}
		tokens("prompt tokens", e.PromptTokens, c.PromptTokens)
		tokens("generation tokens", e.GenerationTokens, c.GenerationTokens)
		hist := func(name string, h *HistSummary, cl *Latency) {
			s := "server n/a"
			if h != nil && h.Stats.HaveP {
				st := &h.Stats
				s = fmt.Sprintf("server avg %s p50 ~%s p90 ~%s p99 ~%s %s", fmtMS(st.Avg), fmtMS(st.P[4]), fmtMS(st.P[6]), fmtMS(st.P[8]), bucketNote(st))
			}
			if cl != nil {
				s += fmt.Sprintf("  client avg %s p50 %s p90 %s p99 %s", fmtNum(cl.Avg), fmtNum(cl.P50), fmtNum(cl.P90), fmtNum(cl.P99))
			}
			line(name, "%s", s)
		}
		hist("TTFT (ms)", e.TTFT, c.TTFT)
		hist("ITL (ms)", e.ITL, c.ITL)
		if !math.IsNaN(e.HitRate) {
			line("prefix-cache hit rate", "%.1f%% (%s of %s prompt tokens)", 100*e.HitRate, fmtNum(e.CacheHits.Value), fmtNum(e.CacheQuery.Value))
		} else {
			line("prefix-cache hit rate", "n/a")
		}
	}
	if c.CachedAnswers > 0 {
		rate := "n/a"
		if !math.IsNaN(c.HitRate) {
			rate = fmt.Sprintf("%.1f%%", 100*c.HitRate)
		}
		fmt.Fprintf(&b, "Client prefix-cache hit rate %s: %s prompt tokens cached in %d answers reporting cached_tokens\n",
			rate, fmtNum(c.CachedTokens), c.CachedAnswers)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// bucketNote says that a histogram's percentiles (p50, p90, p99) are
// estimates, interpolated inside the buckets they fall in, and names those
// buckets' bounds: the server's figures are not measurements as the
// client's are (its avg is: the histogram's sum over its count).
func bucketNote(st *HistStats) string {
	const est = "(~: estimated from the histogram's buckets: "
	if lo, hi, ok := st.OneBucket(); ok {
		return fmt.Sprintf(est+"p50 to p99 all in the %s ms bucket, which says only that they lie in it)", bucketText(lo, hi))
	}
	var parts []string
	for _, p := range []struct {
		name string
		q    float64
	}{{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}} {
		if lo, hi, ok := st.Bucket(p.q); ok {
			parts = append(parts, p.name+" in "+bucketText(lo, hi))
		}
	}
	return est + strings.Join(parts, ", ") + " ms)"
}

// bucketText prints a bucket's bounds in ms: "5.00-10.00", "2500.00-+Inf".
func bucketText(lo, hi float64) string {
	if math.IsInf(hi, 1) {
		return fmtMS(lo) + "-+Inf"
	}
	return fmtMS(lo) + "-" + fmtMS(hi)
}

// fmtNum prints a count as an integer and other values with 2 decimals.
func fmtNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.2f", f)
}

// fmtMS prints seconds as ms.
func fmtMS(sec float64) string { return fmt.Sprintf("%.2f", sec*1e3) }

// windowText says how long the profiling window was; a run that profiled
// nothing is summarized over all its scrapes, the open window (it read
// "window 9223372036.855 s").
func windowText(w Window) string {
	if w.Start == 0 && w.End == math.MaxInt64 {
		return "no profiling window (nothing was profiled: every scrape counts)"
	}
	return fmt.Sprintf("window %.3f s", float64(w.End-w.Start)/1e9)
}
