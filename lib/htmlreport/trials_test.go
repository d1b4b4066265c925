package htmlreport

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

// trialsPage writes the page of three trials of the tiny records (the
// second without its successes: no latency there), whose figures are
// hand-made: a throughput of every trial, a TTFT p50 missing in trial-2,
// a figure of one trial (no interval). calls counts the trials read.
func trialsPage(t *testing.T, calls *[]int) []byte {
	t.Helper()
	recs := readRecords(t, "testdata/tiny.jsonl")
	var failed []result.Record
	for _, r := range recs {
		if r.Err != nil {
			failed = append(failed, r)
		}
	}
	f := func(v float64) *float64 { return &v }
	p := TrialsPage{Source: "out", Level: 0.9, Names: []string{"trial-1", "trial-2", "trial-3"},
		Warnings: []string{"out: out/trial-4 is not among the trials out/trials.json lists: left out"},
		Figures: []TrialRow{
			{Metric: "request_throughput", Stat: "avg", Unit: "requests/sec", Mean: 20, Std: f(2), CILow: f(16.6), CIHigh: f(23.4), CV: f(0.1), Values: []float64{18, 20, 22}},
			{Metric: "time_to_first_token", Stat: "p50", Unit: "ms", Mean: 25, Std: f(5), CILow: f(2.7), CIHigh: f(47.3), CV: f(0.2), Values: []float64{20, math.NaN(), 30}},
			{Metric: "goodput", Stat: "avg", Unit: "requests/sec", Mean: 3, Values: []float64{math.NaN(), 3, math.NaN()}},
		},
		Trial: func(i int) (Page, *Collector, error) {
			*calls = append(*calls, i)
			rs := recs
			if i == 1 {
				rs = failed
			}
			o := metrics.Options{Streaming: true}
			col, err := NewCollector(o)
			if err != nil {
				return Page{}, nil, err
			}
			for k := range rs {
				col.Add(&rs[k])
			}
			s, err := metrics.Summarize(metrics.FromRecords(rs), o)
			var console strings.Builder
			metrics.WriteConsole(&console, s, "")
			return Page{Sources: []string{"out/trial-" + string(rune('1'+i)) + "/results.jsonl"}, Summary: s, Console: console.String()}, col, err
		}}
	var b bytes.Buffer
	if err := WriteTrials(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestTrialsGolden: the page of three trials is testdata/trials.html
// (-update rewrites it): the table across the trials at its top, after
// the warnings, a row a figure with its mean, interval and each trial's
// value ("-" where a trial has none, "- (1 trial)" for no interval); then
// each trial's section, in order, with its summary table and its charts
// collapsed; each trial read once, in order.
func TestTrialsGolden(t *testing.T) {
	var calls []int
	got := trialsPage(t, &calls)
	golden := filepath.Join("testdata", "trials.html")
	if *update {
		if err := os.WriteFile(golden, got, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the page differs from %s (go test -update rewrites it; review the diff)", golden)
	}
	checkPage(t, got, 3*charts)
	if len(calls) != 3 || calls[0] != 0 || calls[1] != 1 || calls[2] != 2 {
		t.Errorf("trials read %v, want [0 1 2]", calls)
	}
	at := func(s string) int {
		t.Helper()
		i := bytes.Index(got, []byte(s))
		if i < 0 {
			t.Errorf("the page lacks %q", s)
		}
		return i
	}
	warn := at("<li>out: out/trial-4 is not among the trials out/trials.json lists: left out</li>")
	table := at("<h2>Across 3 trials</h2>")
	at("<th>Metric</th><th>Stat</th><th>Mean</th><th>Std</th><th>90 % CI</th><th>CV</th><th>trial-1</th><th>trial-2</th><th>trial-3</th>")
	at("<tr><th>request_throughput (requests/sec)</th><td>avg</td><td class=\"mean\">20.0</td><td>2.00</td><td>[16.6, 23.4]</td><td>10.0 %</td><td>18.0</td><td>20.0</td><td>22.0</td></tr>")
	at("<tr><th>time_to_first_token (ms)</th><td>p50</td><td class=\"mean\">25.0</td><td>5.00</td><td>[2.70, 47.3]</td><td>20.0 %</td><td>20.0</td><td>-</td><td>30.0</td></tr>")
	at("<tr><th>goodput (requests/sec)</th><td>avg</td><td class=\"mean\">3.00</td><td>-</td><td>- (1 trial)</td><td>-</td><td>-</td><td>3.00</td><td>-</td></tr>")
	t1 := at("<section class=\"trial\" id=\"t-trial-1\">\n<h2>trial-1</h2>")
	t2 := at("<section class=\"trial\" id=\"t-trial-2\">\n<h2>trial-2</h2>")
	t3 := at("<section class=\"trial\" id=\"t-trial-3\">\n<h2>trial-3</h2>")
	if !(warn < table && table < t1 && t1 < t2 && t2 < t3) {
		t.Errorf("want the warnings (%d), the table (%d), then trial-1, -2, -3 (%d, %d, %d)", warn, table, t1, t2, t3)
	}
	at("<details class=\"charts\"><summary>trial-2's charts</summary>\n<h3>Latency over time</h3>")
	if n := bytes.Count(got, []byte("<h3>Distributions</h3>")); n != 3 {
		t.Errorf("%d trials' chart sections, want 3", n)
	}
	// trial-2 has no success: its section says so in its charts
	if !bytes.Contains(got[t2:t3], []byte("no successful request")) {
		t.Error("trial-2's charts do not say it has no successful request")
	}
}

// TestTrialsError: a trial that cannot be read fails the page.
func TestTrialsError(t *testing.T) {
	bad := errors.New("trial-2: damaged")
	p := TrialsPage{Names: []string{"trial-1", "trial-2"}, Trial: func(i int) (Page, *Collector, error) {
		if i == 1 {
			return Page{}, nil, bad
		}
		c, err := NewCollector(metrics.Options{})
		return Page{}, c, err
	}}
	if err := WriteTrials(&bytes.Buffer{}, p); !errors.Is(err, bad) {
		t.Fatalf("err %v, want %v", err, bad)
	}
}
