package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/result"
)

const sliceT0 = int64(1_700_000_000_000_000_000)

// sliceReq is a successful request sent at t0+startMS whose one chunk
// arrives latMS later.
func sliceReq(startMS, latMS int64) result.Record {
	sent := sliceT0 + startMS*ms
	return result.Record{Phase: result.PhaseProfiling, IntendedNS: sent, SentNS: sent, EndNS: sent + latMS*ms,
		Status: 200, ChunkOffsetsNS: []int64{latMS * ms}, InputTokens: 10}
}

// sliceRecords are requests at known starts, with 1 s windows:
//
//	window 0 [0, 1000) ms:    starts 0, 200, 999 (latencies 10, 20, 40 ms)
//	window 1 [1000, 2000) ms: starts 1000, 1500 (30, 50 ms) and a failure at 1200
//	window 2 [2000, 3000) ms: nothing
//	window 3 [3000, 4000) ms: a start at 3100 whose answer ends at 4500 (the run's end)
//	window 4 [4000, 4500) ms: a start at 4200 (100 ms): the last window, cut short
//
// plus a warmup request before all of them, which is in no window.
func sliceRecords() []result.Record {
	fail := sliceReq(1200, 5)
	fail.ChunkOffsetsNS, fail.Status = nil, 500
	fail.Err = &result.Error{Code: 500, Type: "HTTPError", Message: "boom"}
	warm := sliceReq(-500, 7)
	warm.Phase = result.PhaseWarmup
	// Out of start order, as shards and completion order leave them.
	return []result.Record{warm, sliceReq(200, 20), sliceReq(0, 10), sliceReq(1500, 50), sliceReq(4200, 100),
		fail, sliceReq(999, 40), sliceReq(3100, 1400), sliceReq(1000, 30)}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSlicesHandComputed(t *testing.T) {
	s, err := SummarizeSlices(FromRecords(sliceRecords()), Options{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if s.StartNS != sliceT0 || s.EndNS != sliceT0+4500*ms {
		t.Errorf("span %d..%d, want %d..%d", s.StartNS, s.EndNS, sliceT0, sliceT0+4500*ms)
	}
	type want struct {
		window        int
		startMS       int64
		endMS         int64
		complete      bool
		requests      int64
		errors        int64
		latencies     []float64 // request_latency values, ms
		p50, p99, avg float64
	}
	wants := []want{
		{0, 0, 1000, true, 3, 0, []float64{10, 20, 40}, 20, 20 + 20*0.98, 70.0 / 3},
		{1, 1000, 2000, true, 2, 1, []float64{30, 50}, 40, 30 + 20*0.99, 40},
		{3, 3000, 4000, true, 1, 0, []float64{1400}, 1400, 1400, 1400},
		{4, 4000, 4500, false, 1, 0, []float64{100}, 100, 100, 100},
	}
	if len(s.Slices) != len(wants) {
		t.Fatalf("got %d slices, want %d (the empty window 2 left out)", len(s.Slices), len(wants))
	}
	for i, w := range wants {
		sl := s.Slices[i]
		if sl.Index != i || sl.Window != w.window {
			t.Errorf("slice %d: index %d window %d, want index %d window %d", i, sl.Index, sl.Window, i, w.window)
		}
		if sl.StartNS != sliceT0+w.startMS*ms || sl.EndNS != sliceT0+w.endMS*ms || sl.Complete != w.complete {
			t.Errorf("slice %d: [%d, %d) complete %v, want [%d, %d) ms complete %v", i,
				(sl.StartNS-sliceT0)/ms, (sl.EndNS-sliceT0)/ms, sl.Complete, w.startMS, w.endMS, w.complete)
		}
		sum := sl.Summary
		if sum.Requests != w.requests || sum.ErrorRequests != w.errors || sum.Warmup != 0 {
			t.Errorf("slice %d: %d requests, %d failed, %d warmup; want %d, %d, 0", i, sum.Requests, sum.ErrorRequests, sum.Warmup, w.requests, w.errors)
		}
		lat := sum.Get("request_latency")
		if lat == nil {
			t.Fatalf("slice %d: no request_latency", i)
		}
		if lat.Count != int64(len(w.latencies)) || !near(lat.P[4], w.p50) || !near(lat.P[8], w.p99) || !near(lat.Avg, w.avg) {
			t.Errorf("slice %d: request_latency count %d p50 %v p99 %v avg %v, want %d %v %v %v", i,
				lat.Count, lat.P[4], lat.P[8], lat.Avg, len(w.latencies), w.p50, w.p99, w.avg)
		}
		if !near(lat.Min, w.latencies[0]) || !near(lat.Max, w.latencies[len(w.latencies)-1]) {
			t.Errorf("slice %d: min %v max %v, want %v %v", i, lat.Min, lat.Max, w.latencies[0], w.latencies[len(w.latencies)-1])
		}
		if rc := sum.Get("request_count"); rc == nil || rc.Avg != float64(w.requests) {
			t.Errorf("slice %d: request_count %v, want %d", i, rc, w.requests)
		}
	}
	// The window's throughput is over its requests' own span: window 0
	// runs from the send at 0 to the answer at 999+40 ms.
	if th := s.Slices[0].Summary.Get("request_throughput"); th == nil || !near(th.Avg, 3/1.039) {
		t.Errorf("slice 0: request_throughput %v, want %v", th, 3/1.039)
	}
	if e := s.Slices[1].Summary.Errors; len(e) != 1 || e[0].Code != 500 || e[0].Count != 1 {
		t.Errorf("slice 1: errors %+v", e)
	}

	pts := s.Percentiles("request_latency")
	if len(pts) != 4 || pts[1].StartNS != sliceT0+1000*ms || pts[1].Count != 2 || !near(pts[1].P50, 40) || !near(pts[1].P99, 49.8) {
		t.Errorf("Percentiles(request_latency) = %+v", pts)
	}
	if pts := s.Percentiles("request_count"); pts != nil {
		t.Errorf("Percentiles of a single value = %+v, want none", pts)
	}
}

// Each window's summary is exactly Summarize over the requests that
// started in it, whatever the budget (a small one forces more passes, with
// the budget shared among the windows).
func TestSlicesEqualSummaries(t *testing.T) {
	recs := goldenRecords()
	g, _ := ParseGoodput("time_to_first_token:30")
	for _, budget := range []int{0, 7} {
		o := Options{Streaming: true, Goodput: g, Budget: budget}
		d := 150 * time.Millisecond
		s, err := SummarizeSlices(FromRecords(recs), o, d)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Slices) < 3 {
			t.Fatalf("budget %d: %d slices, want several", budget, len(s.Slices))
		}
		var n int64
		for _, sl := range s.Slices {
			var in []result.Record
			for _, r := range recs {
				if !r.Warmup() && sliceStart(&r) >= sl.StartNS && (sliceStart(&r) < sl.StartNS+int64(d)) {
					in = append(in, r)
				}
			}
			want, err := Summarize(FromRecords(in), o)
			if err != nil {
				t.Fatal(err)
			}
			got := *sl.Summary
			got.Passes, want.Passes = 0, 0
			if !reflect.DeepEqual(&got, want) {
				t.Errorf("budget %d, window %d: the slice's summary differs from Summarize over its %d requests", budget, sl.Window, len(in))
			}
			n += got.Requests + got.ErrorRequests
		}
		whole, _ := Summarize(FromRecords(recs), o)
		if n != whole.Requests+whole.ErrorRequests {
			t.Errorf("budget %d: the slices hold %d requests, the run %d", budget, n, whole.Requests+whole.ErrorRequests)
		}
		if budget > 0 && s.Passes < 3 {
			t.Errorf("budget %d: %d passes; the small budget should take more", budget, s.Passes)
		}
	}
}

func TestSlicesRefusals(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := SummarizeSlices(FromRecords(sliceRecords()), Options{}, d); !errors.Is(err, ErrSliceDuration) {
			t.Errorf("duration %v: err %v, want ErrSliceDuration", d, err)
		}
	}
	// No profiling request: no window, and the files keep their shapes.
	warm := sliceReq(0, 1)
	warm.Phase = result.PhaseWarmup
	s, err := SummarizeSlices(FromRecords([]result.Record{warm}), Options{}, time.Second)
	if err != nil || len(s.Slices) != 0 {
		t.Fatalf("warmup only: %v, %v", s, err)
	}
	var j, c bytes.Buffer
	if err := WriteTimeslicesJSON(&j, s, Run{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteTimeslicesCSV(&c, s); err != nil {
		t.Fatal(err)
	}
	if j.String() != "{\n  \"timeslices\": []\n}" || c.String() != "Timeslice,Metric,Unit,Stat,Value\r\n" {
		t.Errorf("empty files: %q, %q", j.String(), c.String())
	}
	// Records that change between passes are refused, not misread.
	recs := sliceRecords()
	calls := 0
	open := func() (Source, io.Closer, error) {
		calls++
		if calls == 3 { // the second pass of the statistics
			recs[2].SentNS += 2500 * ms
		}
		return FromRecords(recs)()
	}
	if _, err := SummarizeSlices(open, Options{}, time.Second); !errors.Is(err, ErrRecordsChanged) {
		t.Errorf("records changed between passes: err %v", err)
	}
}

func goldenSlices(t *testing.T) *Slices {
	g, err := ParseGoodput("time_to_first_token:30 inter_token_latency:3")
	if err != nil {
		t.Fatal(err)
	}
	s, err := SummarizeSlices(FromRecords(goldenRecords()), Options{Streaming: true, Goodput: g}, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGoldenTimeslicesJSON(t *testing.T) {
	s := goldenSlices(t)
	var buf bytes.Buffer
	run := Run{InputConfig: json.RawMessage(`{"endpoint":{"url":"http://127.0.0.1:1","streaming":true},"slice_duration":0.3}`)}
	if err := WriteTimeslicesJSON(&buf, s, run); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "profile_export_aiperf_timeslices.json", buf.Bytes())

	var top struct {
		Timeslices  []map[string]json.RawMessage `json:"timeslices"`
		InputConfig map[string]any               `json:"input_config"`
	}
	if err := json.Unmarshal(buf.Bytes(), &top); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(top.Timeslices) != len(s.Slices) || top.InputConfig["slice_duration"] != 0.3 {
		t.Fatalf("%d timeslices, input_config %v", len(top.Timeslices), top.InputConfig)
	}
	for i, ts := range top.Timeslices {
		if string(ts["timeslice_index"]) != itoa(i) {
			t.Errorf("timeslices[%d].timeslice_index = %s", i, ts["timeslice_index"])
		}
		var ttft map[string]any
		if err := json.Unmarshal(ts["time_to_first_token"], &ttft); err != nil || ttft["unit"] != "ms" || len(ttft) != 16 {
			t.Errorf("timeslices[%d].time_to_first_token = %v (%v)", i, ttft, err)
		}
		if len(ts) != len(s.Slices[i].Summary.Metrics)+1 {
			t.Errorf("timeslices[%d]: %d keys, want timeslice_index and %d metrics", i, len(ts), len(s.Slices[i].Summary.Metrics))
		}
	}
}

func TestGoldenTimeslicesCSV(t *testing.T) {
	s := goldenSlices(t)
	var buf bytes.Buffer
	if err := WriteTimeslicesCSV(&buf, s); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "profile_export_aiperf_timeslices.csv", buf.Bytes())

	lines := strings.Split(strings.TrimSuffix(buf.String(), "\r\n"), "\r\n")
	if lines[0] != "Timeslice,Metric,Unit,Stat,Value" {
		t.Errorf("header %q", lines[0])
	}
	// Every row: 5 fields; a metric with statistics has 14 rows per slice.
	rows := map[string]int{}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 5 {
			t.Fatalf("row %q: %d fields", l, len(f))
		}
		rows[f[0]+"/"+f[1]]++
	}
	if rows["0/Time to First Token"] != 14 || rows["0/Request Count"] != 1 {
		t.Errorf("rows of slice 0: TTFT %d, request count %d; want 14, 1", rows["0/Time to First Token"], rows["0/Request Count"])
	}
}
