package metrics

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden (then review the diff)")

// goldenRecords is a small run with something of everything: warmup,
// successes with usage, an HTTP error, a cancellation, a response without
// content, reasoning, an output length mismatch, a usage discrepancy, and a
// client that falls behind.
func goldenRecords() []result.Record {
	rng := rand.New(rand.NewPCG(11, 12))
	t0 := int64(1_750_000_000_000_000_000)
	var recs []result.Record
	for i := 0; i < 40; i++ {
		r := synthOne(rng, i, t0)
		r.RequestID = "req-" + string(rune('a'+i%26)) + string(rune('0'+i/26))
		r.CorrelationID = "corr-" + string(rune('a'+i%26))
		r.Session = "session-" + string(rune('a'+i%26))
		r.SessionNum = i
		if i >= 15 && r.FirstTokenNS > 0 { // the client falls behind: 20 ms later every request
			late := int64(i-14) * 20 * ms
			r.SentNS += late
			r.FirstByteNS += late
			r.FirstTokenNS += late
			r.FirstOutputNS += late
			r.EndNS += late
		}
		recs = append(recs, r)
	}
	// A successful status without content.
	recs[5] = result.Record{Record: 5, SessionNum: 5, Phase: result.PhaseProfiling, IntendedNS: t0 + 50*ms, SentNS: t0 + 50*ms, EndNS: t0 + 60*ms, Status: 200, InputTokens: 77}
	// Reasoning first, a usage discrepancy (server says 300 prompt tokens).
	r := &recs[6]
	r.ReasoningTokens, r.OutputTokens = 10, r.OutputTokens-10
	r.FirstOutputNS = r.SentNS + r.ChunkOffsetsNS[10]
	r.Usage = &result.Usage{PromptTokens: 300, CompletionTokens: r.OutputTokens + 10, TotalTokens: 300 + r.OutputTokens + 10, ReasoningTokens: 10}
	r.InputTokens = 200
	return recs
}

func goldenSummary(t *testing.T) (*Summary, Options) {
	g, err := ParseGoodput("time_to_first_token:30 inter_token_latency:3")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Streaming: true, Goodput: g}
	s, err := Summarize(FromRecords(goldenRecords()), o)
	if err != nil {
		t.Fatal(err)
	}
	return s, o
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, firstDiff(got, want))
	}
}

func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return "line " + itoa(i+1) + ":\n got  " + x + "\n want " + y
		}
	}
	return ""
}

func itoa(i int) string { return string(appendInt(nil, int64(i))) }

func TestGoldenJSON(t *testing.T) {
	s, _ := goldenSummary(t)
	var buf bytes.Buffer
	run := Run{BenchmarkID: "b-1", Version: "aiperf-toolkit test", WasCancelled: false, Location: time.UTC,
		InputConfig: json.RawMessage(`{"endpoint":{"url":"http://127.0.0.1:1","streaming":true},"loadgen":{"request_count":40},"extra":[]}`)}
	if err := WriteJSON(&buf, s, run); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "profile_export_aiperf.json", buf.Bytes())

	// The shape: valid JSON, aiperf's top-level keys, a metric object.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &top); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	for _, k := range []string{"schema_version", "benchmark_id", "request_throughput", "request_latency", "time_to_first_token",
		"input_config", "was_cancelled", "error_summary", "start_time", "end_time", "goodput", "send_lateness"} {
		if _, ok := top[k]; !ok {
			t.Errorf("key %s missing", k)
		}
	}
	var ttft map[string]any
	json.Unmarshal(top["time_to_first_token"], &ttft)
	for _, k := range []string{"unit", "avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std", "count", "sum"} {
		if _, ok := ttft[k]; !ok {
			t.Errorf("time_to_first_token.%s missing", k)
		}
	}
	if len(ttft) != 16 || ttft["unit"] != "ms" {
		t.Errorf("time_to_first_token: %v", ttft)
	}
	// schema 1.1: a record metric's count and sum (display units), none
	// for an aggregate or derived one
	if r := s.Get("time_to_first_token"); ttft["count"] != float64(r.Count) || math.Abs(ttft["sum"].(float64)-ttft["avg"].(float64)*float64(r.Count)) > 1e-9*ttft["sum"].(float64) {
		t.Errorf("time_to_first_token count %v sum %v, want %d and avg x count", ttft["count"], ttft["sum"], r.Count)
	}
	var thr map[string]any
	json.Unmarshal(top["request_throughput"], &thr)
	if _, ok := thr["count"]; ok || thr["sum"] != nil {
		t.Errorf("request_throughput (derived) has count or sum: %v", thr)
	}
	var errs []struct {
		ErrorDetails struct {
			Code    *int
			Type    string
			Message string
		} `json:"error_details"`
		Count int
	}
	if err := json.Unmarshal(top["error_summary"], &errs); err != nil || len(errs) != len(s.Errors) {
		t.Errorf("error_summary %s: %v", top["error_summary"], err)
	}
	if err := WriteJSON(&buf, s, Run{InputConfig: json.RawMessage(`[1]`)}); err == nil {
		t.Error("a non-object input config was accepted")
	}
}

func TestGoldenCSV(t *testing.T) {
	s, _ := goldenSummary(t)
	var buf bytes.Buffer
	if err := WriteCSV(&buf, s); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "profile_export_aiperf.csv", buf.Bytes())
	text := buf.String()
	for _, want := range []string{
		"Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\r\n",
		"\r\n\r\nMetric,Value\r\n",
		"\r\nTime to First Token (ms),",
		"\r\nRequest Count,",
		"\r\nRequest Throughput (requests/sec),",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("CSV lacks %q", want)
		}
	}
}

func TestGoldenRecords(t *testing.T) {
	_, o := goldenSummary(t)
	var buf bytes.Buffer
	rw, err := NewRecordWriter(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	recs := goldenRecords()
	for i := range recs {
		if err := rw.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.Flush(); err != nil {
		t.Fatal(err)
	}
	if rw.Count() != 37 {
		t.Errorf("wrote %d lines, want 37 (40 less 3 warmup)", rw.Count())
	}
	checkGolden(t, "profile_export.jsonl", buf.Bytes())
	var again bytes.Buffer
	src, _, _ := FromRecords(recs)()
	if n, err := WriteRecords(&again, src, o); err != nil || n != 37 || !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Errorf("WriteRecords: %d lines, %v, equal %v", n, err, bytes.Equal(again.Bytes(), buf.Bytes()))
	}
	for i, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		var rec struct {
			Metadata map[string]any            `json:"metadata"`
			Metrics  map[string]map[string]any `json:"metrics"`
			Error    *struct {
				Code    *int    `json:"code"`
				Type    *string `json:"type"`
				Message string  `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if len(rec.Metadata) != 13 || rec.Metadata["benchmark_phase"] != "profiling" {
			t.Errorf("line %d metadata: %v", i+1, rec.Metadata)
		}
		for tag, mv := range rec.Metrics {
			if _, ok := mv["value"]; !ok || mv["unit"] == nil || len(mv) != 2 {
				t.Errorf("line %d: metric %s = %v", i+1, tag, mv)
			}
		}
		if !strings.Contains(line, `"error":`) {
			t.Errorf("line %d: no error key", i+1)
		}
	}
}

func TestGoldenConsole(t *testing.T) {
	s, _ := goldenSummary(t)
	var buf bytes.Buffer
	if err := WriteConsole(&buf, s, ""); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "console.txt", buf.Bytes())
	text := buf.String()
	for _, want := range []string{DefaultTitle, "Time to First Token (ms)", "Error Summary", "Client Fell Behind the Schedule",
		"Token Count Discrepancy Warning", "Output Sequence Length Mismatch Warning"} {
		if !strings.Contains(text, want) {
			t.Errorf("console lacks %q", want)
		}
	}
	// aiperf's row order: TTFT before TTST before request latency before ITL.
	if a, b := strings.Index(text, "Time to First Token"), strings.Index(text, "Inter Token Latency"); a < 0 || b < a {
		t.Errorf("rows out of order")
	}
}

func TestGroup(t *testing.T) {
	for v, want := range map[float64]string{0: "0.00", 1234.567: "1,234.57", -1234567.891: "-1,234,567.89", 999.999: "1,000.00", 12: "12.00"} {
		if got := group(v); got != want {
			t.Errorf("group(%v) = %s, want %s", v, got, want)
		}
	}
}

// FuzzRecordLine feeds any record the result decoder accepts through the
// metrics: profile_export.jsonl lines stay valid JSON and Summarize, Live
// and the writers do not fail on it.
func FuzzRecordLine(f *testing.F) {
	for _, r := range goldenRecords()[3:12] {
		f.Add(result.Append(nil, &r))
	}
	f.Add([]byte(`{"v":1,"sent_unix_ns":5,"intended_unix_ns":9,"chunk_offsets_ns":[3,1,2],"output_tokens_source":"client","output_tokens":1,"max_tokens":1}`))
	f.Add([]byte(`{"v":1,"session":"\u0000\"","error":{"code":0,"type":"","message":"\ud800"},"usage":{"prompt_tokens":9223372036854775807}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var r result.Record
		if result.Parse(bytes.TrimSpace(line), &r) != nil {
			return
		}
		if r.Phase == result.PhaseWarmup {
			r.Phase = ""
		}
		for _, streaming := range []bool{false, true} {
			o := Options{Streaming: streaming}
			var buf bytes.Buffer
			rw, _ := NewRecordWriter(&buf, o)
			if err := rw.Write(&r); err != nil {
				t.Fatal(err)
			}
			rw.Flush()
			if !json.Valid(bytes.TrimSpace(buf.Bytes())) {
				t.Fatalf("invalid profile_export.jsonl line: %s", buf.Bytes())
			}
			s, err := Summarize(FromRecords([]result.Record{r, r}), o)
			if err != nil {
				t.Fatal(err)
			}
			buf.Reset()
			if err := WriteJSON(&buf, s, Run{Location: time.UTC}); err != nil || !json.Valid(buf.Bytes()) {
				t.Fatalf("summary JSON %v: %s", err, buf.Bytes())
			}
			if err := WriteCSV(io.Discard, s); err != nil {
				t.Fatal(err)
			}
			if err := WriteConsole(io.Discard, s, ""); err != nil {
				t.Fatal(err)
			}
			l, _ := NewLive(o)
			l.Add(&r)
			_ = l.Snapshot()
		}
	})
}

func TestRecordWriterAllocs(t *testing.T) {
	rw, _ := NewRecordWriter(io.Discard, Options{Streaming: true})
	recs := goldenRecords()
	r := recs[10]
	rw.Write(&r)
	if n := testing.AllocsPerRun(200, func() { rw.Write(&r) }); n != 0 {
		t.Errorf("Write allocates %v times per record", n)
	}
}

func BenchmarkRecordWriter(b *testing.B) {
	rw, _ := NewRecordWriter(io.Discard, Options{Streaming: true})
	recs := goldenRecords()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rw.Write(&recs[3+i%30])
	}
}

// run_info, when given, follows input_config, as JsonExportData declares it.
func TestJSONRunInfo(t *testing.T) {
	s, _ := goldenSummary(t)
	var buf bytes.Buffer
	run := Run{InputConfig: json.RawMessage(`{"endpoint":{"model_names":["m"]}}`), RunInfo: json.RawMessage(`{"benchmark_id":"b","random_seed":7}`)}
	if err := WriteJSON(&buf, s, run); err != nil {
		t.Fatal(err)
	}
	want := "  \"input_config\": {\n    \"endpoint\": {\n      \"model_names\": [\n        \"m\"\n      ]\n    }\n  },\n" +
		"  \"run_info\": {\n    \"benchmark_id\": \"b\",\n    \"random_seed\": 7\n  },\n  \"was_cancelled\": false,"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("no run_info after input_config:\n%s", buf.String())
	}
	if err := WriteJSON(&buf, s, Run{RunInfo: json.RawMessage(`[1]`)}); err == nil {
		t.Error("a run_info that is no object was written")
	}
}
