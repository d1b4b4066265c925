package rundir

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/metrics"
)

// writeResults writes a run directory dir/name whose results are one
// request a latency (ms), sent 1 s apart.
func writeResults(t *testing.T, dir, name string, latenciesMS ...int64) string {
	t.Helper()
	const ms = int64(1_000_000)
	var b strings.Builder
	for i, l := range latenciesMS {
		sent := 1_750_000_000_000_000_000 + int64(i+1)*1000*ms
		b.WriteString(`{"v":1,"record":` + strconv.Itoa(i) + `,"session":"s` + strconv.Itoa(i) + `","turn":0,"phase":"profiling","status":200,"sent_unix_ns":` +
			strconv.FormatInt(sent, 10) + `,"end_unix_ns":` + strconv.FormatInt(sent+l*ms, 10) + `,"chunk_offsets_ns":[` + strconv.FormatInt(l*ms, 10) + "]}\n")
	}
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ResultsPath(d), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return ResultsPath(d)
}

// TestSummarizeTrials: each trial's avg latency is one value; the mean,
// spread and interval are over those; a figure no trial has is left out.
func TestSummarizeTrials(t *testing.T) {
	dir := t.TempDir()
	files := []string{writeResults(t, dir, "trial-1", 10, 30), writeResults(t, dir, "trial-2", 30, 50)}
	ts, err := SummarizeTrials(files, metrics.Options{}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Trials != 2 || strings.Join(ts.Dirs, ",") != "trial-1,trial-2" {
		t.Fatalf("got %d trials in %v", ts.Trials, ts.Dirs)
	}
	var lat *TrialFigure
	for i, f := range ts.Figures {
		if f.Metric == "goodput" || f.Metric == "time_to_first_token" {
			t.Errorf("%s: no trial has it, want it left out", f.Metric)
		}
		if f.Metric == "request_latency" && f.Stat == "avg" {
			lat = &ts.Figures[i]
		}
	}
	if lat == nil {
		t.Fatalf("no request_latency avg in %+v", ts.Figures)
	}
	// Trials' averages 20 and 40 ms: mean 30, sd 14.14, t(0.975, 1) 12.71.
	if lat.Unit != "ms" || lat.Mean != 30 || lat.Min != 20 || lat.Max != 40 || lat.Std == nil || *lat.Std < 14.14 || *lat.Std > 14.15 {
		t.Errorf("got %+v, want mean 30 ms of 20 and 40, sd 14.14", *lat)
	}
	if lat.CILow == nil || *lat.CILow > -97 || *lat.CIHigh < 157 {
		t.Errorf("CI [%v, %v], want about [-97.1, 157.1]", lat.CILow, lat.CIHigh)
	}
}

// TestTrialWithoutSuccess: a trial in which every request failed has a
// throughput of 0 and no latencies; the latency figures are over the other
// trials and name it, in trials.json and under the table (before, they
// were left out without a word: a review finding).
func TestTrialWithoutSuccess(t *testing.T) {
	dir := t.TempDir()
	failed := filepath.Join(dir, "trial-2")
	if err := os.MkdirAll(failed, 0o777); err != nil {
		t.Fatal(err)
	}
	line := `{"v":1,"record":0,"session":"s0","turn":0,"phase":"profiling","sent_unix_ns":1750000001000000000,"end_unix_ns":1750000001003000000,"error":{"code":500,"type":"HTTPError","message":"no"},"status":500}` + "\n"
	if err := os.WriteFile(ResultsPath(failed), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{writeResults(t, dir, "trial-1", 10, 30), ResultsPath(failed), writeResults(t, dir, "trial-3", 30, 50)}
	ts, err := SummarizeTrials(files, metrics.Options{}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	var lat, tput *TrialFigure
	for i, f := range ts.Figures {
		switch {
		case f.Metric == "request_latency" && f.Stat == "avg":
			lat = &ts.Figures[i]
		case f.Metric == "request_throughput":
			tput = &ts.Figures[i]
		}
	}
	if lat == nil || lat.Mean != 30 || len(lat.Values) != 2 || strings.Join(lat.MissingIn, ",") != "trial-2" {
		t.Fatalf("request_latency avg: %+v, want 30 over trial-1 and trial-3, missing in trial-2", lat)
	}
	if tput == nil || len(tput.Values) != 3 || tput.Values[1] != 0 || len(tput.MissingIn) != 0 {
		t.Errorf("request_throughput: %+v, want 3 values, trial-2's 0", tput)
	}
	var b strings.Builder
	if err := WriteTrialsTable(&b, ts); err != nil {
		t.Fatal(err)
	}
	// the page's columns: a value a trial, trial-2's missing
	if v := lat.ByTrial(ts.Dirs); len(v) != 3 || v[0] != 20 || !math.IsNaN(v[1]) || v[2] != 40 {
		t.Errorf("request_latency avg by trial: %v, want [20 NaN 40]", v)
	}
	if !strings.Contains(b.String(), "note: request_latency p50, request_latency p99, request_latency avg: over 2 of 3 trials (trial-2 had no value: no request succeeded there, or none had the metric)\n") {
		t.Errorf("table:\n%s\nwant a note naming trial-2", b.String())
	}
}

// TestWriteTrialsTable: columns aligned (the metric's left, the rest
// right); a figure of one trial has no spread.
func TestWriteTrialsTable(t *testing.T) {
	sd, lo, hi, cv := 1.5, 10.25, 13.75, 0.125
	ts := &TrialsSummary{Trials: 2, ConfidenceLevel: 0.9, Figures: []TrialFigure{
		{Metric: "request_latency", Stat: "p99", Unit: "ms", Mean: 12, Std: &sd, CILow: &lo, CIHigh: &hi, CV: &cv},
		{Metric: "goodput", Stat: "avg", Unit: "requests/sec", Mean: 3},
	}}
	var b strings.Builder
	if err := WriteTrialsTable(&b, ts); err != nil {
		t.Fatal(err)
	}
	want := "Across 2 trials:\n" +
		"metric                  stat   mean   std          90% CI     cv\n" +
		"request_latency (ms)     p99  12.00  1.50  [10.25, 13.75]  12.5%\n" +
		"goodput (requests/sec)   avg   3.00     -     - (1 trial)      -\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	path, err := WriteTrials(t.TempDir(), ts)
	if err != nil || filepath.Base(path) != TrialsFile {
		t.Fatalf("WriteTrials: %q, %v", path, err)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), `"confidence_level": 0.9`) {
		t.Errorf("trials.json: %s, %v", b, err)
	}
}

// TestIsTrialsDir: report reads a folder across its trials when it holds
// a trials.json or trial-K folders and no results of its own; a run
// folder, a file and a folder of neither are not.
func TestIsTrialsDir(t *testing.T) {
	dir := t.TempDir()
	writeResults(t, dir, "trials/trial-1", 10)
	writeResults(t, dir, "run", 10)
	listed := filepath.Join(dir, "listed")
	if err := os.MkdirAll(listed, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(listed, TrialsFile), []byte(`{"trials":0,"trial_dirs":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"trials": true, "listed": true, "run": false, "run/results.jsonl": false, "trials/trial-1": false, ".": false, "none": false} {
		if got := IsTrialsDir(filepath.Join(dir, name)); got != want {
			t.Errorf("IsTrialsDir(%s) = %v, want %v", name, got, want)
		}
	}
}
