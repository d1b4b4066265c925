package metrics

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/result"
)

const sec = int64(time.Second)

// steadyReq is a successful streamed request from startS to endS (seconds
// after sliceT0) with tokens output tokens in as many chunks, evenly
// spaced up to its end.
func steadyReq(startS, endS float64, tokens int64) result.Record {
	sent := sliceT0 + int64(startS*float64(sec))
	end := sliceT0 + int64(endS*float64(sec))
	r := result.Record{Phase: result.PhaseProfiling, IntendedNS: sent, SentNS: sent, EndNS: end, Status: 200,
		Streamed: true, InputTokens: 10, OutputTokens: tokens, OutputSource: result.SourceUsage}
	for i := int64(1); i <= tokens; i++ {
		r.ChunkOffsetsNS = append(r.ChunkOffsetsNS, (end-sent)*i/tokens)
	}
	r.FirstTokenNS = sent + r.ChunkOffsetsNS[0]
	return r
}

// closedLoop is a closed-loop run of slots: slot k starts at k*rampS and
// sends back-to-back requests of lenS each until it stops at
// stopS[k] (the ramp-up, the plateau, the drain).
func closedLoop(rampS, lenS float64, stopS []float64) []result.Record {
	var recs []result.Record
	for k, stop := range stopS {
		for t := float64(k) * rampS; t+lenS <= stop+1e-9; t += lenS {
			recs = append(recs, steadyReq(t, t+lenS, 4))
		}
	}
	return recs
}

func detect(t *testing.T, recs []result.Record, o SteadyOptions) SteadyWindow {
	t.Helper()
	w, err := DetectSteady(FromRecords(recs), o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func nearD(a, b time.Duration) bool { return a-b < time.Microsecond && b-a < time.Microsecond }

// A trapezoid: 10 long requests start a second apart and last 30 s; the
// window opens at the 10th start (9 s) and closes at the first end (30 s).
func TestSteadyTrapezoid(t *testing.T) {
	var recs []result.Record
	for i := range 10 {
		recs = append(recs, steadyReq(float64(i), float64(i)+30, 3))
	}
	recs = append(recs, steadyReq(15, 20, 3)) // inside the plateau: the peak is 11
	w := detect(t, recs, SteadyOptions{Target: 10, Threshold: 1, MinWindow: time.Second})
	if !w.Found || w.ThresholdReqs != 10 || w.Peak != 11 || w.TargetFromPeak {
		t.Fatalf("window %+v", w)
	}
	if !nearD(w.StartOffset(), 9*time.Second) || !nearD(w.EndOffset(), 30*time.Second) {
		t.Errorf("window %v to %v, want 9s to 30s", w.StartOffset(), w.EndOffset())
	}
	// started in [9, 30): the 10th and the inner one; ended in it: the inner one
	if w.Started != 2 || w.Completed != 1 || w.Total != 11 || w.Warning != "" {
		t.Errorf("started %d completed %d total %d warning %q", w.Started, w.Completed, w.Total, w.Warning)
	}
}

// A closed loop of 4 slots ramping up 2 s apart and draining one after
// another: the plateau is from the 4th slot's start to the first stop.
// Back-to-back requests end and start at one instant (the end counts
// first: a dip to 3 each time, which must not cut the window), and the
// default threshold, ceil(0.95 x 4) = 4, needs every slot busy.
func TestSteadyRampPlateauDrain(t *testing.T) {
	recs := closedLoop(2, 1, []float64{40, 42, 44, 46})
	w := detect(t, recs, SteadyOptions{Target: 4})
	if !w.Found || w.ThresholdReqs != 4 || w.Peak != 4 {
		t.Fatalf("window %+v", w)
	}
	if !nearD(w.StartOffset(), 6*time.Second) || !nearD(w.EndOffset(), 40*time.Second) {
		t.Errorf("window %v to %v, want 6s to 40s", w.StartOffset(), w.EndOffset())
	}
	if !nearD(time.Duration(w.RunNS), 46*time.Second) || w.Warning != "" {
		t.Errorf("run %v, warning %q", time.Duration(w.RunNS), w.Warning)
	}
	// the same shape, in another order of the records: the same window
	rev := append([]result.Record(nil), recs...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if w2 := detect(t, rev, SteadyOptions{Target: 4}); w2 != w {
		t.Errorf("reversed records: %+v, want %+v", w2, w)
	}
	// a lower threshold opens earlier and closes later: ceil(0.5 x 4) = 2
	w = detect(t, recs, SteadyOptions{Target: 4, Threshold: 0.5})
	if !nearD(w.StartOffset(), 2*time.Second) || !nearD(w.EndOffset(), 44*time.Second) {
		t.Errorf("threshold 0.5: window %v to %v, want 2s to 44s", w.StartOffset(), w.EndOffset())
	}
}

// A run that never reaches its target has no plateau, and says why; so
// do a run without successes and one whose window holds no event.
func TestSteadyNone(t *testing.T) {
	var serial []result.Record
	for i := range 5 {
		serial = append(serial, steadyReq(float64(i*10), float64(i*10)+1, 2))
	}
	w := detect(t, serial, SteadyOptions{Target: 5})
	if w.Found || !strings.Contains(w.Reason, "never reached 5") || !strings.Contains(w.Reason, "peak was 1") {
		t.Errorf("serial: %+v", w)
	}
	failed := steadyReq(0, 1, 2)
	failed.Err = &result.Error{Code: 500, Message: "x"}
	warm := steadyReq(0, 1, 2)
	warm.Phase = result.PhaseWarmup
	w = detect(t, []result.Record{failed, warm}, SteadyOptions{Target: 1})
	if w.Found || w.Reason != "no successful profiling requests" || w.Total != 0 {
		t.Errorf("no successes: %+v", w)
	}
	st, err := SummarizeSteady(FromRecords(serial), Options{Streaming: true}, SteadyOptions{Target: 5})
	if err != nil || st.Summary != nil || st.Window.Found {
		t.Fatalf("SummarizeSteady without a window: %+v, %v", st, err)
	}
	var b bytes.Buffer
	if err := WriteSteadyConsole(&b, st, nil); err != nil || !strings.Contains(b.String(), "Steady state: none found") {
		t.Errorf("console %q, %v", b.String(), err)
	}
	js, err := st.JSON()
	if err != nil || !strings.Contains(string(js), `"found":false`) || !strings.Contains(string(js), `"reason":"requests in flight never reached 5`) {
		t.Errorf("JSON %s, %v", js, err)
	}
}

// Without a target the observed peak is the target; failures and warmup
// requests are not in flight; a short window warns.
func TestSteadyPeakTargetAndWarning(t *testing.T) {
	recs := closedLoop(2, 1, []float64{10, 11, 12}) // peak 3 from 4 s to 10 s
	failed := steadyReq(5, 5.5, 2)
	failed.Err = &result.Error{Code: 500, Message: "x"}
	warm := steadyReq(5, 5.5, 2)
	warm.Phase = result.PhaseWarmup
	recs = append(recs, failed, warm)
	w := detect(t, recs, SteadyOptions{})
	if !w.Found || !w.TargetFromPeak || w.Target != 3 || w.Peak != 3 || w.ThresholdReqs != 3 {
		t.Fatalf("window %+v", w)
	}
	if !nearD(w.StartOffset(), 4*time.Second) || !nearD(w.EndOffset(), 10*time.Second) {
		t.Errorf("window %v to %v, want 4s to 10s", w.StartOffset(), w.EndOffset())
	}
	// 6 s under the default max(10 s, a tenth of the run)
	if !strings.Contains(w.Warning, "6.0 s (50.0% of the run), under 10s") {
		t.Errorf("warning %q", w.Warning)
	}
	for _, th := range []float64{-0.1, 1.5} {
		if _, err := DetectSteady(FromRecords(recs), SteadyOptions{Threshold: th}); err == nil {
			t.Errorf("threshold %g accepted", th)
		}
	}
}

// Over the window: request throughput counts the ends in it, output
// token throughput the tokens that arrived in it, the latencies are
// those of the requests that started in it; the JSON holds them all and
// the console sets them beside the whole run's.
func TestSummarizeSteady(t *testing.T) {
	recs := closedLoop(2, 1, []float64{40, 42, 44, 46})
	slow := steadyReq(0, 3, 3) // a slow request in the ramp: outside the window
	recs = append(recs, slow)
	mo := Options{Streaming: true}
	st, err := SummarizeSteady(FromRecords(recs), mo, SteadyOptions{Target: 4})
	if err != nil {
		t.Fatal(err)
	}
	w := st.Window
	// the window is [6 s, 40 s) of the closed loop (the slow request
	// is over before it opens, and lifts no count to 4)
	if !w.Found || !nearD(w.StartOffset(), 6*time.Second) || !nearD(w.EndOffset(), 40*time.Second) {
		t.Fatalf("window %+v", w)
	}
	// 4 slots of 1 s requests: about 4 requests/s and 16 tokens/s; the
	// window is half open, so the ends at 40 s are not in it (135 ends
	// in 34 s, 543 tokens); the requests that started in it all last 1 s
	if w.Completed != 135 || st.RequestThroughput != 135.0/34 {
		t.Errorf("request throughput %v, want 135/34 (%d ended in the window)", st.RequestThroughput, w.Completed)
	}
	if d := st.OutputTokenThroughput - 543.0/34; d > 1e-9 || d < -1e-9 {
		t.Errorf("output token throughput %v, want 543/34", st.OutputTokenThroughput)
	}
	lat := st.Summary.Get("request_latency")
	if lat == nil || lat.Max != 1000 || st.Summary.Requests != w.Started {
		t.Errorf("window latency %+v, requests %d, started %d", lat, st.Summary.Requests, w.Started)
	}
	whole, err := Summarize(FromRecords(recs), mo)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Get("request_latency").Max != 3000 {
		t.Fatalf("whole run's max latency %v", whole.Get("request_latency").Max)
	}
	var b bytes.Buffer
	if err := WriteSteadyConsole(&b, st, whole); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Steady state: 6.000 s to 40.000 s after the first request's start (34.000 s of 46.000 s), requests in flight >= 4 (0.95 of target 4; peak 4)",
		"Steady State", "whole run", "steady state", "Request Throughput (requests/sec)", "3.97", "Time to First Token p99 (ms)", "Request Latency p99 (ms)"} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	js, err := st.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	if m["statistic"] != "requests_in_flight" || m["found"] != true || m["start_offset_s"] != 6.0 || m["end_offset_s"] != 40.0 ||
		m["target_source"] != "concurrency" {
		t.Errorf("JSON %s", js)
	}
	if lat := m["metrics"].(map[string]any)["request_latency"].(map[string]any); lat["max"] != 1000.0 || lat["unit"] != "ms" {
		t.Errorf("JSON metrics.request_latency %v", lat)
	}
	// the section goes into the summary file whole
	var f bytes.Buffer
	if err := WriteJSON(&f, whole, Run{Sections: []Section{{Name: "steady_state", Value: js}}}); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(f.Bytes()) || !strings.Contains(f.String(), "\n  \"steady_state\": {\n    ") {
		t.Errorf("summary file:\n%s", f.String())
	}
}
