package rundir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/compare"
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
	g, err := ParseGates([]string{"time_to_first_token.p99:+5%", "request_throughput:-3%", "goodput.mean:-1%"})
	if err != nil || len(g) != 3 {
		t.Fatalf("got %v, %v", g, err)
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
