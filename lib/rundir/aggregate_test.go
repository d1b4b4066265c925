package rundir

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// aiperf's aggregate of its runs, in closed form: two trials' figures 10
// and 20 give mean 15, sample std 7.0711, se 5, t(0.975, 1) = 12.7062; a
// zero mean gives cv +Inf (null in the JSON, inf in the CSV); a trial
// that completed nothing is a failed run; fewer than two trials that
// count give no aggregate.
func TestSummarizeAggregate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		d := filepath.Join(dir, name)
		os.MkdirAll(d, 0o777)
		if err := os.WriteFile(filepath.Join(d, "profile_export_aiperf.json"), []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a1 := write("trial-1", `{"request_count":{"unit":"requests","avg":3},"request_latency":{"unit":"ms","avg":10,"p99":12,"count":3},"error_request_count":{"unit":"requests","avg":0},"input_config":{"endpoint":{}}}`)
	a2 := write("trial-2", `{"request_count":{"unit":"requests","avg":3},"request_latency":{"unit":"ms","avg":20,"p99":22},"error_request_count":{"unit":"requests","avg":0}}`)
	a3 := write("trial-3", `{"error_request_count":{"unit":"requests","avg":2}}`)
	a, err := SummarizeAggregate([]string{a1, a2, a3}, 0.95, 0, "v")
	if err != nil || a == nil {
		t.Fatalf("got %v, %v", a, err)
	}
	byName := map[string]AggregateMetric{}
	for _, m := range a.Metrics {
		byName[m.Name] = m
	}
	m := byName["request_latency_avg"]
	if m.Mean != 15 || math.Abs(m.Std-7.0710678) > 1e-6 || math.Abs(m.SE-5) > 1e-9 || math.Abs(m.TCritical-12.7062047) > 1e-6 || m.Unit != "ms" {
		t.Errorf("request_latency_avg = %+v", m)
	}
	if _, ok := byName["request_latency_count"]; ok {
		t.Errorf("count is not among aiperf's statistics")
	}
	if e := byName["error_request_count_avg"]; !math.IsInf(e.CV, 1) {
		t.Errorf("a zero mean's cv = %v, want +Inf", e.CV)
	}
	if len(a.Failed) != 1 || a.Failed[0] != (FailedTrial{"trial-3", "All 2 requests failed"}) || a.Runs != 3 || len(a.Labels) != 2 {
		t.Errorf("failed %v, runs %d, labels %v", a.Failed, a.Runs, a.Labels)
	}
	js, cs := string(a.json()), string(a.csv())
	for _, w := range []string{`"cv": null`, `"failed_runs": [` + "\n" + `      {` + "\n" + `        "label": "trial-3",`, `"cooldown_seconds": 0.0`} {
		if !strings.Contains(js, w) {
			t.Errorf("JSON lacks %s:\n%s", w, js)
		}
	}
	for _, w := range []string{"request_latency_avg,15.00,7.07,10.00,20.00,0.4714,5.0000,-48.53,78.53,12.7062,ms\r\n", "error_request_count_avg,0.00,0.00,0.00,0.00,inf,0.0000,0.00,0.00,12.7062,requests\r\n",
		"Run Labels,\"['trial-1', 'trial-2']\"\r\n"} {
		if !strings.Contains(cs, w) {
			t.Errorf("CSV lacks %q:\n%s", w, cs)
		}
	}
	if a, err := SummarizeAggregate([]string{a1, a3}, 0.95, 0, "v"); a != nil || err != nil {
		t.Errorf("one trial that counts: got %v, %v; want none", a, err)
	}
}
