package rundir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/compare"
	"github.com/aiperf/toolkit/lib/metrics"
)

// TestExpand: a trials folder expands to its trial-K/records.jsonl in
// K's order (trial-10 after trial-9), other entries ignored; a run folder
// to its records; a folder with neither is refused.
func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"trial-10", "trial-2", "trial-9", "trial-1"} {
		os.MkdirAll(filepath.Join(dir, k), 0o777)
		os.WriteFile(filepath.Join(dir, k, ResultsFile), nil, 0o666)
	}
	os.MkdirAll(filepath.Join(dir, "trial-x"), 0o777)
	os.MkdirAll(filepath.Join(dir, "trial-0"), 0o777)
	os.WriteFile(filepath.Join(dir, "trial-3"), nil, 0o666) // a file, not a trial
	got, err := Expand(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, k := range []string{"trial-1", "trial-2", "trial-9", "trial-10"} {
		want = append(want, filepath.Join(dir, k, ResultsFile))
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	run := filepath.Join(dir, "trial-2")
	if got, _ := Expand(run); !slices.Equal(got, []string{filepath.Join(run, ResultsFile)}) {
		t.Errorf("run folder: got %v", got)
	}
	if _, err := Expand(filepath.Join(dir, "trial-x")); err == nil {
		t.Error("empty folder: want an error")
	}
	os.MkdirAll(filepath.Join(dir, "unfinished", "trial-1"), 0o777)
	if _, err := Expand(filepath.Join(dir, "unfinished")); err == nil {
		t.Error("a trial without records: want an error")
	}
}

func TestParseGates(t *testing.T) {
	for _, bad := range []string{"ttft.p99:+5%", "time_to_first_token:+5%", "request_throughput.p99:-5%", "request_latency.p50:5%"} {
		if _, err := ParseGates([]string{bad}); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	g, err := ParseGates([]string{"time_to_first_token.p99:+5%", "request_throughput:-3%", "goodput.mean:-1%", "error_rate:+0%", "error_rate.rate:+10%"})
	if err != nil || len(g) != 5 || g[3].Stat != compare.StatRate || g[4].Stat != compare.StatRate {
		t.Fatalf("got %v, %v", g, err)
	}
	if _, err := ParseGates([]string{"error_rate.p99:+5%"}); err == nil {
		t.Error("error_rate.p99: want an error")
	}
}

// TestLoadSideAndCompare: a trials folder is a side of two trials whose
// requests pool; stdin and a file given twice are refused; files without
// run info are named in a warning.
func TestLoadSideAndCompare(t *testing.T) {
	dir := t.TempDir()
	writeResults(t, filepath.Join(dir, "old"), "trial-1", 10, 20)
	writeResults(t, filepath.Join(dir, "old"), "trial-2", 30)
	newFile := writeResults(t, dir, "new", 40, 50)
	old, err := LoadSide("old", []string{filepath.Join(dir, "old")})
	if err != nil {
		t.Fatal(err)
	}
	if len(old.Trials) != 2 || len(old.Runs) != 2 || old.Info().Trials != 2 {
		t.Fatalf("old side: %+v", old)
	}
	if _, err := LoadSide("new", []string{"-"}); err == nil {
		t.Error("stdin: want an error")
	}
	if _, err := LoadSide("new", []string{newFile, filepath.Dir(newFile)}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a file twice: got %v", err)
	}
	side, err := LoadSide("new", []string{newFile})
	if err != nil {
		t.Fatal(err)
	}
	if w := CompareWarnings(old, side); len(w) != 3 || !strings.Contains(w[2], "new: "+newFile+" has no run info") {
		t.Errorf("warnings %q: want one a file without run info", w)
	}
	tab, err := Compare(old, side, nil, compare.Options{Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	a, err := old.Measure(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Values["request_latency"]; !slices.Equal(got, []float64{10, 20, 30}) || len(a.Runs) != 2 {
		t.Errorf("old side's latencies %v over %d trials, want [10 20 30] over 2", got, len(a.Runs))
	}
	var text strings.Builder
	if err := compare.WriteText(&text, tab, "old", "new"); err != nil || !strings.Contains(text.String(), "request_latency") {
		t.Errorf("table: %v\n%s", err, text.String())
	}
}

// A trial in which every request failed completed nothing: its throughputs
// count 0 in the side's mean (not left out, which would hide it), the side
// counts its failures for the error rate, and trials.json keeps the
// throughput figure with the 0.
func TestFailedTrial(t *testing.T) {
	dir := t.TempDir()
	writeResults(t, filepath.Join(dir, "new"), "trial-1", 10, 20)
	writeResults(t, filepath.Join(dir, "new"), "trial-2", 10, 20)
	failed := writeResults(t, filepath.Join(dir, "new"), "trial-3", 10, 20)
	b, err := os.ReadFile(failed)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.ReplaceAll(string(b), `"status":200,`, `"status":500,"error":{"code":500,"type":"Internal Server Error","message":"x"},`))
	if err := os.WriteFile(failed, b, 0o644); err != nil {
		t.Fatal(err)
	}
	side, err := LoadSide("new", []string{filepath.Join(dir, "new")})
	if err != nil {
		t.Fatal(err)
	}
	m, err := side.Measure(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Runs) != 3 || m.Runs[2]["request_throughput"] != 0 || m.Runs[0]["request_throughput"] <= 0 {
		t.Errorf("trials' throughputs %v, want the failed trial's 0", m.Runs)
	}
	if _, ok := m.Runs[2]["goodput"]; ok {
		t.Error("goodput without SLOs in a failed trial")
	}
	if m.Requests != 6 || m.Failed != 2 {
		t.Errorf("%d requests, %d failed; want 6 and 2", m.Requests, m.Failed)
	}
	ts, err := SummarizeTrials(side.Trials, metrics.Options{}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range ts.Figures {
		if f.Metric == "request_throughput" {
			found = len(f.Values) == 3 && f.Values[2] == 0
		}
	}
	if !found {
		t.Errorf("trials.json lost the failed trial's throughput: %+v", ts.Figures)
	}
}
