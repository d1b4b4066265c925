package replaycmd

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTrialFiles: a trials folder expands to its trial-K/records.jsonl in
// K's order (trial-10 after trial-9), other entries ignored; a run folder
// to its records; a folder with neither is refused.
func TestTrialFiles(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"trial-10", "trial-2", "trial-9", "trial-1"} {
		os.MkdirAll(filepath.Join(dir, k), 0o777)
		os.WriteFile(filepath.Join(dir, k, recordsFile), nil, 0o666)
	}
	os.MkdirAll(filepath.Join(dir, "trial-x"), 0o777)
	os.MkdirAll(filepath.Join(dir, "trial-0"), 0o777)
	os.WriteFile(filepath.Join(dir, "trial-3"), nil, 0o666) // a file, not a trial
	got, err := trialFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, k := range []string{"trial-1", "trial-2", "trial-9", "trial-10"} {
		want = append(want, filepath.Join(dir, k, recordsFile))
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	run := filepath.Join(dir, "trial-2")
	if got, _ := trialFiles(run); !slices.Equal(got, []string{filepath.Join(run, recordsFile)}) {
		t.Errorf("run folder: got %v", got)
	}
	if _, err := trialFiles(filepath.Join(dir, "trial-x")); err == nil {
		t.Error("empty folder: want an error")
	}
	os.MkdirAll(filepath.Join(dir, "unfinished", "trial-1"), 0o777)
	if _, err := trialFiles(filepath.Join(dir, "unfinished")); err == nil {
		t.Error("a trial without records: want an error")
	}
}

func TestParseGates(t *testing.T) {
	for _, bad := range []string{"ttft.p99:+5%", "time_to_first_token:+5%", "request_throughput.p99:-5%", "request_latency.p50:5%"} {
		if _, err := parseGates([]string{bad}); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	g, err := parseGates([]string{"time_to_first_token.p99:+5%", "request_throughput:-3%", "goodput.mean:-1%"})
	if err != nil || len(g) != 3 {
		t.Fatalf("got %v, %v", g, err)
	}
}
