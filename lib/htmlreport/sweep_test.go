package htmlreport

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/sweep"
)

// rateSweep is a hand-made sweep on the rate axis: the two probes at a
// concurrency (drawn at their achieved session rate), search steps that
// pass, fail and could not be offered, and an answer as sweep.json holds
// it (its bracket, not Lo and Hi).
func rateSweep() *sweep.State {
	step := func(n int, kind, by string, load, rate, good float64, ttft float64, verdict, unoffered string) sweep.Step {
		return sweep.Step{N: n, Kind: kind, By: by, Load: load, Dir: "step-0" + string(rune('0'+n)),
			Requests: 200, Good: int64(200 * good), GoodFraction: good, Throughput: rate * 1.05, SessionRate: rate,
			TTFT: sweep.Pctl{P50: ttft, P99: 3 * ttft}, ITL: sweep.Pctl{P50: 4, P99: 9}, Latency: sweep.Pctl{P50: ttft + 40, P99: 3*ttft + 80},
			LatenessP99: 0.4, ElapsedSec: 5, Verdict: verdict, Unoffered: unoffered}
	}
	return &sweep.State{
		V: sweep.StateVersion,
		Settings: map[string]string{"by": "rate", "goodput": "time_to_first_token:150", "min_good": "95", "max_lateness": "20ms",
			"url": "http://127.0.0.1:9/", "store_sha256": "0123456789abcdef0123"},
		Steps: []sweep.Step{
			step(1, sweep.KindSynchronous, sweep.ByConcurrency, 1, 2, 1, 20, sweep.Pass, ""),
			step(2, sweep.KindThroughput, sweep.ByConcurrency, 64, 40, 0.1, 900, sweep.Pass, ""),
			step(3, sweep.KindSearch, sweep.ByRate, 8.944, 8.9, 1, 25, sweep.Pass, ""),
			step(4, sweep.KindSearch, sweep.ByRate, 18.91, 18.5, 0.98, 45, sweep.Pass, ""),
			step(5, sweep.KindSearch, sweep.ByRate, 27.5, 26, 0.6, 300, sweep.Fail, ""),
			step(6, sweep.KindSearch, sweep.ByRate, 22.8, 20, 0.9, 160, sweep.NotOffered, "send lateness p99 31.00 ms above --max-lateness 20ms"),
			step(7, sweep.KindSearch, sweep.ByRate, 20.77, 20.5, 0.96, 60, sweep.Pass, ""),
		},
		Answer:     &sweep.Answer{Found: true, By: sweep.ByRate, Load: 20.77, Bracket: [2]float64{20.77, 22.8}, Converged: true, Limit: "client", Steps: 7},
		ElapsedSec: 35,
	}
}

func sweepPage(t *testing.T, st *sweep.State) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSweep(&b, SweepPage{Source: "out/sweep.json", State: st}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sweepCharts are the sweep page's charts.
const sweepCharts = 5

// chartSeries returns, per chart of the page, its title and the names of
// its series elements.
func chartSeries(t *testing.T, page []byte) (titles []string, names [][]string) {
	t.Helper()
	for _, svg := range svgRE.FindAll(page, -1) {
		var root node
		if err := xml.Unmarshal(svg, &root); err != nil {
			t.Fatal(err)
		}
		titles = append(titles, root.class("title")[0].Text)
		var ns []string
		for _, s := range root.class("series") {
			ns = append(ns, s.attr("data-name"))
		}
		names = append(names, ns)
	}
	return titles, names
}

// TestSweepGolden: the page of a hand-made rate sweep is
// testdata/sweep.html (-update rewrites it); each chart parses, has both
// axes and one series element per series: the lines, the reference lines
// (y = x, --min-good, the TTFT SLO), a marker series per verdict and the
// answer.
func TestSweepGolden(t *testing.T) {
	got := sweepPage(t, rateSweep())
	golden := filepath.Join("testdata", "sweep.html")
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
	checkPage(t, got, sweepCharts)
	verdicts := []string{"pass", "fail", "not offered", "answer 20.8"}
	wantSeries := map[string][]string{
		"Achieved throughput and goodput": append([]string{"achieved", "goodput", "y = x"}, verdicts...),
		"Good requests":                   append([]string{"good", "--min-good 95 %"}, verdicts...),
		"TTFT p50 and p99":                append([]string{"p50", "p99", "SLO 150 ms"}, verdicts...),
		"ITL p50 and p99":                 append([]string{"p50", "p99"}, verdicts...),
		"Request latency p50 and p99":     append([]string{"p50", "p99"}, verdicts...),
	}
	titles, names := chartSeries(t, got)
	for i, title := range titles {
		if !slices.Equal(names[i], wantSeries[title]) {
			t.Errorf("chart %q: series %q, want %q", title, names[i], wantSeries[title])
		}
	}
	// every step is a row of the table, the not-offered one with its reason
	for _, s := range rateSweep().Steps {
		if !bytes.Contains(got, []byte("<code>"+s.Dir+"</code>")) {
			t.Errorf("the table has no row for %s", s.Dir)
		}
	}
	for _, s := range []string{"send lateness p99 31.00 ms above --max-lateness 20ms", "bracket [20.8, 22.8]", "Limited by <code>client</code>"} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("the page does not say %q", s)
		}
	}
}

// TestSweepMarkers: each step is one marker per value drawn, in the
// colour of its verdict: the throughput chart draws two per step
// (achieved and goodput), the good fraction one.
func TestSweepMarkers(t *testing.T) {
	st := rateSweep()
	got := sweepPage(t, st)
	count := map[string]int{}
	for _, s := range st.Steps {
		count[s.Verdict]++
	}
	for i, svg := range svgRE.FindAll(got, -1)[:2] {
		var root node
		if err := xml.Unmarshal(svg, &root); err != nil {
			t.Fatal(err)
		}
		for _, s := range root.class("series") {
			name := s.attr("data-name")
			if _, ok := count[name]; !ok {
				continue
			}
			if want := count[name] * (2 - i); len(s.Nodes) != want {
				t.Errorf("chart %d: %d %s markers, want %d", i, len(s.Nodes), name, want)
			}
		}
	}
}

// TestSweepConcurrencyAndEmpty: a concurrency sweep has no y = x line; a
// sweep without steps or answer, and one that found no load, are whole
// pages that say so.
func TestSweepConcurrencyAndEmpty(t *testing.T) {
	st := rateSweep()
	st.Settings["by"] = sweep.ByConcurrency
	for i := range st.Steps {
		st.Steps[i].By = sweep.ByConcurrency
	}
	st.Answer.By = sweep.ByConcurrency
	got := sweepPage(t, st)
	checkPage(t, got, sweepCharts)
	_, names := chartSeries(t, got)
	if slices.Contains(names[0], "y = x") {
		t.Error("a concurrency sweep draws y = x")
	}
	if !bytes.Contains(got, []byte("20.8 sessions in flight")) {
		t.Error("the answer is not in sessions in flight")
	}

	got = sweepPage(t, nil)
	checkPage(t, got, sweepCharts)
	if n := bytes.Count(got, []byte(`class="empty"`)); n != sweepCharts {
		t.Errorf("%d charts say they are empty, want %d", n, sweepCharts)
	}
	if !bytes.Contains(got, []byte("no answer yet")) || !bytes.Contains(got, []byte("No step ran")) {
		t.Error("an empty sweep's page does not say so")
	}

	st = rateSweep()
	st.Steps = st.Steps[:1]
	st.Steps[0].Verdict = sweep.Fail
	st.Answer = &sweep.Answer{By: sweep.ByRate, Limit: "none", Hi: 2, Steps: 1, Note: "even one session at a time misses the SLOs (fail)"}
	got = sweepPage(t, st)
	checkPage(t, got, sweepCharts)
	if !strings.Contains(string(got), "No load meets the SLOs: even one session") {
		t.Error("a sweep without an answer does not say so")
	}
}

// FuzzWriteSweep: any sweep.json that lib/sweep reads (a hand-edited one:
// huge, negative or odd values, unknown verdicts and axes) makes a whole
// page whose charts parse and hold only finite coordinates.
func FuzzWriteSweep(f *testing.F) {
	good, err := json.Marshal(rateSweep())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"v":1,"settings":{"by":"x","min_good":"1e400","goodput":"time_to_first_token:-1 request_latency:1e308"},"steps":[{"step":1,"kind":"k","by":"rate","load":1e308,"session_rate":-5,"good_fraction":1e300,"verdict":"<b>"}],"answer":{"found":true,"load":1e-300}}`))
	f.Add([]byte(`{"v":1,"steps":[{"step":1,"by":"concurrency","load":3,"throughput":-1e308,"time_to_first_token_ms":{"p50":-1,"p99":1e308},"verdict":"pass"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := sweep.ParseState(b, "sweep.json")
		if err != nil {
			return
		}
		checkPage(t, sweepPage(t, st), sweepCharts)
	})
}

// TestSweepProbeOffScale: the throughput probe's latency (its TTFT p99 at
// 2,700 ms here, the other steps' at most 900 ms, the SLO 150 ms) is left
// out of the latency charts' y scale, so that the SLO line is not flattened
// onto the axis (fresh-user finding: a 7 s probe against a 200 ms SLO); the
// caption says so.
func TestSweepProbeOffScale(t *testing.T) {
	page := string(sweepPage(t, rateSweep()))
	charts := strings.Split(page, "<svg ")[1:]
	if len(charts) != sweepCharts {
		t.Fatalf("%d charts, want %d", len(charts), sweepCharts)
	}
	ttft := charts[2]
	if !strings.Contains(ttft, "<title>TTFT p50 and p99</title>") {
		t.Fatalf("the third chart is not TTFT's: %.200s", ttft)
	}
	ticks := regexp.MustCompile(`>([0-9][0-9,]*(?:\.[0-9]+)?)</text>`).FindAllStringSubmatch(ttft[:strings.Index(ttft, "</svg>")], -1)
	highest := 0.0
	for _, m := range ticks {
		x, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if err == nil {
			highest = max(highest, x)
		}
	}
	if highest == 0 || highest >= 1200 {
		t.Errorf("the TTFT chart's highest y label is %g, want the scale of the steps other than the probe (at most 900 ms)", highest)
	}
	if !strings.Contains(ttft, "The throughput probe&#39;s TTFT (2,700 ms at its p99) is left out of the scale") {
		t.Error("the TTFT caption does not say the probe is off the scale")
	}
}

// TestSweepServerURL: the page names the server as the sweep took its
// --url (lib/internal/baseurl): a URL without a scheme is http, and one
// that is not a server's names none.
func TestSweepServerURL(t *testing.T) {
	for url, want := range map[string]string{
		"127.0.0.1:9":                "Server <code>127.0.0.1:9</code> (http)",
		"https://u:p@h.example:8443": "Server <code>h.example:8443</code> (https)",
		"ftp://h":                    "",
	} {
		st := rateSweep()
		st.Settings["url"] = url
		got := string(sweepPage(t, st))
		if want == "" && strings.Contains(got, "Server <code>") || want != "" && !strings.Contains(got, want) {
			t.Errorf("url %q: want %q in the page", url, want)
		}
	}
}
