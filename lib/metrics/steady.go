package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/result"
)

// Steady state: the plateau of a run, found as vllm-bench finds it
// (vllm-project/vllm-bench src/metrics/steady_state.rs, detect_window).
//
// The statistic is the number of requests in flight, event-exact: every
// successful profiling request is in flight from its start (StartNS,
// aiperf's request start) to its end (EndNS). Walking the starts and ends
// in time order (an end before a start at the same instant), the window
// opens at the first start that brings the count up to the threshold,
// ceil(Threshold x Target) and at least 1, and closes at the last end
// that brings it down below it: [open, close). A ramp-up before and a
// drain after fall outside; a dip inside does not cut it. No window when
// the count never reaches the threshold, or when no request starts or
// ends inside it. A window shorter than MinWindow carries a warning.
//
// Over the window: request throughput counts the successes that ended in
// it, output token throughput the tokens that arrived in it (a record's
// tokens spread evenly over its content chunks), both over its length;
// the latencies are Summarize's over the requests that started in it.

// DefaultSteadyThreshold is vllm-bench's --steady-state-threshold default.
const DefaultSteadyThreshold = 0.95

// SteadyOptions tune the detection.
type SteadyOptions struct {
	// Target is the run's target concurrency (a closed-loop run's
	// --concurrency); 0 takes the observed peak of requests in flight
	// (for schedules without one).
	Target int
	// Threshold is the fraction of Target at which the window opens, in
	// (0, 1]; 0 means DefaultSteadyThreshold.
	Threshold float64
	// MinWindow is the length below which the window carries a warning; 0
	// means max(10 s, a tenth of the run), as vllm-bench.
	MinWindow time.Duration
}

// SteadyWindow is the plateau found, or why none was.
type SteadyWindow struct {
	Found  bool
	Reason string // why no window was found ("" when Found)

	Target         int  // the target concurrency the threshold is a fraction of
	TargetFromPeak bool // Target is the observed peak (none was given)
	Threshold      float64
	ThresholdReqs  int // ceil(Threshold x Target), at least 1
	Peak           int // most requests in flight at once

	StartNS, EndNS int64 // the window, absolute [StartNS, EndNS)
	// OriginNS is the first successful request's start, from which the
	// offsets count; RunNS is that to the last end.
	OriginNS, RunNS int64

	Started   int64 // successful requests that started in the window
	Completed int64 // successful requests that ended in it
	Total     int64 // successful profiling requests
	Warning   string
}

// Duration is the window's length.
func (w *SteadyWindow) Duration() time.Duration { return time.Duration(w.EndNS - w.StartNS) }

// StartOffset and EndOffset are the window's bounds after the first
// successful request's start.
func (w *SteadyWindow) StartOffset() time.Duration { return time.Duration(w.StartNS - w.OriginNS) }
func (w *SteadyWindow) EndOffset() time.Duration   { return time.Duration(w.EndNS - w.OriginNS) }

// Steady is a run's steady state: the window and the metrics over it.
type Steady struct {
	Window SteadyWindow
	// Summary is Summarize's over the requests (of every outcome) that
	// started in the window; nil without a window. Its throughputs are
	// over those requests' own span; RequestThroughput and
	// OutputTokenThroughput are over the window.
	Summary               *Summary
	RequestThroughput     float64 // requests/sec
	OutputTokenThroughput float64 // tokens/sec
}

type span struct{ start, end int64 }

// DetectSteady finds the steady-state window of the records open yields.
func DetectSteady(open func() (Source, io.Closer, error), o SteadyOptions) (SteadyWindow, error) {
	var spans []span
	err := eachRecord(open, func(r *result.Record) {
		if !r.Warmup() && r.OK() && r.EndNS > 0 {
			spans = append(spans, span{r.StartNS(), r.EndNS})
		}
	})
	if err != nil {
		return SteadyWindow{}, err
	}
	w, err := detectSpans(spans, o)
	return w, err
}

// detectSpans is the detection over the requests' spans.
func detectSpans(spans []span, o SteadyOptions) (SteadyWindow, error) {
	th := o.Threshold
	if th == 0 {
		th = DefaultSteadyThreshold
	}
	if !(th > 0 && th <= 1) {
		return SteadyWindow{}, fmt.Errorf("metrics: steady-state threshold %g: want a fraction in (0, 1]", th)
	}
	if o.Target < 0 {
		return SteadyWindow{}, fmt.Errorf("metrics: steady-state target %d: want at least 1 (0 for the observed peak)", o.Target)
	}
	w := SteadyWindow{Threshold: th, Target: o.Target, Total: int64(len(spans))}
	if len(spans) == 0 {
		w.Reason = "no successful profiling requests"
		return w, nil
	}
	starts := make([]int64, len(spans))
	ends := make([]int64, len(spans))
	for i, s := range spans {
		starts[i], ends[i] = s.start, s.end
	}
	slices.Sort(starts)
	slices.Sort(ends)
	w.OriginNS = starts[0]
	w.RunNS = ends[len(ends)-1] - starts[0]
	w.Peak = peakInFlight(starts, ends)
	if w.Target == 0 {
		w.Target, w.TargetFromPeak = w.Peak, true
	}
	w.ThresholdReqs = max(1, int(math.Ceil(th*float64(w.Target)-1e-9)))

	up, down, ok := crossings(starts, ends, w.ThresholdReqs)
	if !ok {
		w.Reason = fmt.Sprintf("requests in flight never reached %d (%g of %d; the peak was %d)", w.ThresholdReqs, th, w.Target, w.Peak)
		return w, nil
	}
	w.StartNS, w.EndNS = up, down
	for _, s := range spans {
		if s.start >= up && s.start < down {
			w.Started++
		}
		if s.end >= up && s.end < down {
			w.Completed++
		}
	}
	if w.Started == 0 && w.Completed == 0 {
		w.Reason = "no request started or ended in the window"
		return w, nil
	}
	w.Found = true
	minWin := o.MinWindow
	if minWin == 0 {
		minWin = max(10*time.Second, time.Duration(w.RunNS/10))
	}
	if d := w.Duration(); d < minWin {
		w.Warning = fmt.Sprintf("the steady-state window is %.1f s (%.1f%% of the run), under %v: it may not be representative",
			d.Seconds(), 100*float64(d)/float64(max(w.RunNS, 1)), minWin)
	}
	return w, nil
}

// walk merges the sorted starts and ends in time order, an end before a
// start at the same instant, calling f with each event's time, whether it
// is a start, and the count in flight before and after it.
func walk(starts, ends []int64, f func(t int64, start bool, before, after int)) {
	i, j, n := 0, 0, 0
	for i < len(starts) || j < len(ends) {
		if j < len(ends) && (i == len(starts) || ends[j] <= starts[i]) {
			f(ends[j], false, n, max(n-1, 0))
			n = max(n-1, 0)
			j++
			continue
		}
		f(starts[i], true, n, n+1)
		n++
		i++
	}
}

func peakInFlight(starts, ends []int64) int {
	peak := 0
	walk(starts, ends, func(_ int64, _ bool, _, after int) { peak = max(peak, after) })
	return peak
}

// crossings returns the first up-crossing of k (a start that brings the
// count to k) and the last down-crossing after it (an end that brings it
// below k).
func crossings(starts, ends []int64, k int) (up, down int64, ok bool) {
	upSet, downSet := false, false
	walk(starts, ends, func(t int64, start bool, before, after int) {
		switch {
		case start && !upSet && before < k && after >= k:
			up, upSet = t, true
		case !start && upSet && before >= k && after < k:
			down, downSet = t, true
		}
	})
	if !upSet {
		return 0, 0, false
	}
	if !downSet { // the ends always drain the count; kept for safety
		down = ends[len(ends)-1]
	}
	return up, down, true
}

// SummarizeSteady finds the steady-state window and summarizes the run
// over it.
func SummarizeSteady(open func() (Source, io.Closer, error), mo Options, so SteadyOptions) (*Steady, error) {
	w, err := DetectSteady(open, so)
	if err != nil || !w.Found {
		return &Steady{Window: w}, err
	}
	st := &Steady{Window: w}
	var tokens float64
	err = eachRecord(open, func(r *result.Record) {
		if r.Warmup() || !r.OK() {
			return
		}
		if r.EndNS >= w.StartNS && r.EndNS < w.EndNS {
			st.RequestThroughput++
		}
		tokens += tokensIn(r, w.StartNS, w.EndNS)
	})
	if err != nil {
		return nil, err
	}
	secs := w.Duration().Seconds()
	if secs > 0 {
		st.RequestThroughput /= secs
		st.OutputTokenThroughput = tokens / secs
	} else {
		st.RequestThroughput = 0
	}
	inWindow := func() (Source, io.Closer, error) {
		src, c, err := open()
		if err != nil {
			return nil, nil, err
		}
		return &windowSource{src: src, lo: w.StartNS, hi: w.EndNS}, c, nil
	}
	if st.Summary, err = Summarize(inWindow, mo); err != nil {
		return nil, err
	}
	return st, nil
}

// tokensIn is the part of r's output tokens that arrived in [lo, hi): its
// tokens spread evenly over its content chunks (a record without chunk
// times has them all at its end).
func tokensIn(r *result.Record, lo, hi int64) float64 {
	n := float64(r.OutputTokens + r.ReasoningTokens)
	if n <= 0 {
		return 0
	}
	if len(r.ChunkOffsetsNS) == 0 {
		if r.EndNS >= lo && r.EndNS < hi {
			return n
		}
		return 0
	}
	in := 0
	for _, off := range r.ChunkOffsetsNS {
		if t := r.SentNS + off; t >= lo && t < hi {
			in++
		}
	}
	return n * float64(in) / float64(len(r.ChunkOffsetsNS))
}

// windowSource yields the records of src that started in [lo, hi).
type windowSource struct {
	src    Source
	lo, hi int64
}

func (s *windowSource) Next(r *result.Record) error {
	for {
		if err := s.src.Next(r); err != nil {
			return err
		}
		if t := r.StartNS(); t >= s.lo && t < s.hi {
			return nil
		}
	}
}

// eachRecord calls f with every record open yields, in one pass.
func eachRecord(open func() (Source, io.Closer, error), f func(*result.Record)) error {
	src, c, err := open()
	if err != nil {
		return err
	}
	defer c.Close()
	var r result.Record
	for {
		err := src.Next(&r)
		if err == io.EOF {
			return c.Close()
		}
		if err != nil {
			return err
		}
		f(&r)
	}
}

// steadyFigures are the figures the console and the JSON set beside the
// whole run's: each a tag of the summary, or a throughput over the window.
var steadyFigures = []struct{ tag, stat string }{
	{"request_throughput", ""},
	{"output_token_throughput", ""},
	{"time_to_first_token", "avg"}, {"time_to_first_token", "p50"}, {"time_to_first_token", "p99"},
	{"inter_token_latency", "avg"}, {"inter_token_latency", "p50"}, {"inter_token_latency", "p99"},
	{"request_latency", "avg"}, {"request_latency", "p50"}, {"request_latency", "p99"},
}

// WriteSteadyConsole writes the window (its bounds after the first
// request's start, its requests) and, when one was found, a table of the
// key figures over the whole run and over the window.
func WriteSteadyConsole(w io.Writer, st *Steady, whole *Summary) error {
	var b strings.Builder
	win := &st.Window
	target := fmt.Sprintf("target %d", win.Target)
	if win.TargetFromPeak {
		target = fmt.Sprintf("target %d, the observed peak", win.Target)
	}
	b.WriteString("\n")
	if !win.Found {
		fmt.Fprintf(&b, "Steady state: none found (requests in flight >= %d: %g of %s): %s\n", win.ThresholdReqs, win.Threshold, target, win.Reason)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "Steady state: %.3f s to %.3f s after the first request's start (%.3f s of %.3f s), requests in flight >= %d (%g of %s; peak %d): %d of %d requests started in it, %d ended in it\n",
		win.StartOffset().Seconds(), win.EndOffset().Seconds(), win.Duration().Seconds(), time.Duration(win.RunNS).Seconds(),
		win.ThresholdReqs, win.Threshold, target, win.Peak, win.Started, win.Total, win.Completed)
	if win.Warning != "" {
		fmt.Fprintf(&b, "Steady state: warning: %s\n", win.Warning)
	}
	var rows [][]string
	for _, f := range steadyFigures {
		wv, wok := wholeFigure(whole, f.tag, f.stat)
		sv, sok := st.figure(f.tag, f.stat)
		if !wok && !sok {
			continue
		}
		name, unit := figureName(whole, st.Summary, f.tag, f.stat)
		rows = append(rows, []string{name + " (" + unit + ")", cell(wv, wok), cell(sv, sok)})
	}
	b.WriteString("\n")
	writeTable(&b, "Steady State", []string{"Metric", "whole run", "steady state"}, []bool{true, false, false}, rows)
	_, err := io.WriteString(w, b.String())
	return err
}

func cell(v float64, ok bool) string {
	if !ok {
		return "N/A"
	}
	return group(v)
}

// figure is one of steadyFigures over the window.
func (st *Steady) figure(tag, stat string) (float64, bool) {
	switch tag {
	case "request_throughput":
		return st.RequestThroughput, st.Window.Found
	case "output_token_throughput":
		if st.Summary == nil || st.Summary.Get(tag) == nil {
			return 0, false // no token counts (the whole run has none either)
		}
		return st.OutputTokenThroughput, true
	}
	return wholeFigure(st.Summary, tag, stat)
}

func wholeFigure(s *Summary, tag, stat string) (float64, bool) {
	if s == nil {
		return 0, false
	}
	r := s.Get(tag)
	if r == nil {
		return 0, false
	}
	if stat == "" {
		return r.Avg, true
	}
	return statOf(r, stat)
}

func figureName(whole, win *Summary, tag, stat string) (name, unit string) {
	r := whole.Get(tag)
	if r == nil && win != nil {
		r = win.Get(tag)
	}
	name, unit = tag, ""
	if r != nil {
		name, unit = r.Header, r.Unit
	}
	if stat != "" {
		name += " " + stat
	}
	return name, unit
}

// JSON is the "steady_state" member of profile_export_aiperf.json (ours;
// aiperf's JsonExportData allows extra members): the method, the window
// (or why none was found), the throughputs over it, and under "metrics"
// each metric over the requests that started in it, as the top level
// writes them.
func (st *Steady) JSON() (json.RawMessage, error) {
	win := &st.Window
	m := map[string]any{
		"statistic":          "requests_in_flight",
		"method":             "vllm-bench steady_state.rs: first start reaching threshold_requests to the last end falling below it",
		"found":              win.Found,
		"target_concurrency": win.Target,
		"target_source":      "concurrency",
		"threshold":          win.Threshold,
		"threshold_requests": win.ThresholdReqs,
		"observed_peak":      win.Peak,
		"requests_total":     win.Total,
	}
	if win.TargetFromPeak {
		m["target_source"] = "observed_peak"
	}
	if !win.Found {
		m["reason"] = win.Reason
		return json.Marshal(m)
	}
	m["start_offset_s"] = win.StartOffset().Seconds()
	m["end_offset_s"] = win.EndOffset().Seconds()
	m["duration_s"] = win.Duration().Seconds()
	m["requests_started_in_window"] = win.Started
	m["requests_completed_in_window"] = win.Completed
	if win.Warning != "" {
		m["warning"] = win.Warning
	}
	m["request_throughput"] = map[string]any{"unit": "requests/sec", "avg": st.RequestThroughput}
	if _, ok := st.figure("output_token_throughput", ""); ok {
		m["output_token_throughput"] = map[string]any{"unit": "tokens/sec", "avg": st.OutputTokenThroughput}
	}
	b := []byte{'{'}
	for i := range st.Summary.Metrics {
		if i > 0 {
			b = append(b, ',')
		}
		r := &st.Summary.Metrics[i]
		b = appendString(b, r.Tag)
		b = append(b, ':')
		b = appendMetricJSONAt(b, r, "")
	}
	m["metrics"] = json.RawMessage(append(b, '}'))
	return json.Marshal(m)
}
