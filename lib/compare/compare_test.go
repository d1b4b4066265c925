package compare

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var ms = []Metric{
	{Tag: "time_to_first_token", Unit: "ms", PerRequest: true},
	{Tag: "request_throughput", Unit: "requests/sec"},
}

// ttft draws n lognormal TTFTs around median ms.
func ttft(rng *rand.Rand, n int, median float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = median * math.Exp(0.2*rng.NormFloat64())
	}
	return out
}

func side(rng *rand.Rand, n int, median float64, throughputs ...float64) Side {
	s := Side{Values: map[string][]float64{"time_to_first_token": ttft(rng, n, median)}}
	for _, tp := range throughputs {
		s.Runs = append(s.Runs, map[string]float64{"request_throughput": tp})
	}
	return s
}

func TestShiftSignificant(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	tab := Compare(ms, side(rng, 400, 20, 50, 51, 49.5), side(rng, 400, 30, 34, 33.5, 34.2), Options{})
	p50 := tab.Find("time_to_first_token", StatP50)
	if p50 == nil || !p50.Significant || p50.Test != TestUNormal || math.Abs(*p50.DeltaPct-50) > 5 {
		t.Fatalf("p50 row %+v: want significant, about +50%%", p50)
	}
	if p99 := tab.Find("time_to_first_token", StatP99); !p99.Significant || p99.Test != TestQuant {
		t.Errorf("p99 row %+v: want significant by the quantile test (400 a side)", p99)
	}
	tp := tab.Find("request_throughput", StatMean)
	if !tp.Significant || tp.Test != TestWelch || *tp.DeltaPct > -30 {
		t.Errorf("throughput row %+v: want a significant fall of about a third", tp)
	}
	if !strings.HasPrefix(tp.Delta(), "-3") {
		t.Errorf("delta shown %q", tp.Delta())
	}
}

// TestSameNotSignificant: samples of one distribution give "~" for the
// p50 in at least 19 of 20 seeded repetitions.
func TestSameNotSignificant(t *testing.T) {
	tilde := 0
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 2))
		tab := Compare(ms, side(rng, 60, 20, 50), side(rng, 60, 20, 50.5), Options{})
		if tab.Find("time_to_first_token", StatP50).Delta() == "~" {
			tilde++
		}
	}
	if tilde < 19 {
		t.Errorf("%d of 20 repetitions show ~, want >= 19", tilde)
	}
}

func TestNoTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	tab := Compare(ms, side(rng, 10, 20, 50), side(rng, 10, 20, 40), Options{})
	r := tab.Find("request_throughput", StatMean)
	if r.P != nil || r.NoTest != "1 trial" || r.Delta() != "?" || r.Note() != "(no test: 1 trial, n=1+1, change -20.00%)" {
		t.Errorf("one trial a side: %+v %q %q", r, r.Delta(), r.Note())
	}
	tab = Compare(ms, side(rng, 10, 20, 50, 50), side(rng, 10, 20, 40, 40), Options{})
	// constant trials that differ: t is infinite, the change certain
	if r := tab.Find("request_throughput", StatMean); r.P == nil || *r.P != 0 || !r.Significant || r.Delta() != "-20.00%" {
		t.Errorf("constant trials: %+v", r)
	}
	// A metric one side lacks is named, not compared.
	old := side(rng, 10, 20, 50)
	tab = Compare(ms, old, Side{Runs: old.Runs}, Options{})
	if tab.Find("time_to_first_token", StatP50) != nil || len(tab.Missing) != 1 || tab.Missing[0] != "time_to_first_token: no values in new" {
		t.Errorf("missing: %+v", tab.Missing)
	}
}

func TestAlpha(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6}
	y := []float64{3.5, 4.5, 5.5, 6.5, 7.5, 8.5}
	s := func(v []float64) Side { return Side{Values: map[string][]float64{"time_to_first_token": v}} }
	loose := Compare(ms[:1], s(x), s(y), Options{Alpha: 0.2}).Find("time_to_first_token", StatP50)
	strict := Compare(ms[:1], s(x), s(y), Options{}).Find("time_to_first_token", StatP50)
	if *loose.P != *strict.P || *loose.P < 0.05 || *loose.P > 0.2 {
		t.Fatalf("p = %v; the example wants 0.05 < p < 0.2", *loose.P)
	}
	if !loose.Significant || strict.Significant {
		t.Errorf("alpha 0.2: %v, alpha 0.05: %v", loose.Significant, strict.Significant)
	}
}

func TestParseGate(t *testing.T) {
	for _, tc := range []struct {
		in     string
		metric string
		stat   string
		limit  float64
		err    string
	}{
		{"time_to_first_token.p99:+5%", "time_to_first_token", "p99", 5, ""},
		{"request_throughput:-3", "", "", 0, "want a signed percentage"}, // a bare number could be ms
		{"request_throughput:-3%", "request_throughput", "mean", -3, ""},
		{"inter_token_latency.avg:+0%", "inter_token_latency", "avg", 0, ""},
		{"time_to_first_token.p99:5%", "", "", 0, "signed percentage"},
		{"time_to_first_token.p98:+5%", "", "", 0, `statistic "p98"`},
		{"time_to_first_token", "", "", 0, "want METRIC"},
		{"ttft.p50:+x%", "", "", 0, "not a number"},
		{":+5%", "", "", 0, "want METRIC"},
		{".p50:+5%", "", "", 0, "want METRIC"},
	} {
		g, err := ParseGate(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || g.Metric != tc.metric || g.Stat != tc.stat || g.Limit != tc.limit {
			t.Errorf("%q: got %+v, %v", tc.in, g, err)
		}
	}
}

func TestJudge(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	tab := Compare(ms, side(rng, 300, 20, 50, 51, 50.5), side(rng, 300, 30, 40, 41, 40.4), Options{})
	gate := func(s string) Gate {
		g, err := ParseGate(s)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, tc := range []struct {
		gate string
		fail bool
	}{
		{"time_to_first_token.p50:+5%", true},
		{"time_to_first_token.p50:+80%", false}, // rose, but less than 80 %
		{"time_to_first_token.p50:-5%", false},  // a fall would fail; it rose
		{"request_throughput:-5%", true},        // fell by about 20 %
		{"request_throughput.mean:-25%", false}, // not that much
		{"request_throughput:+0%", false},       // no rise
	} {
		failed, err := tab.Judge([]Gate{gate(tc.gate)})
		if err != nil || (len(failed) > 0) != tc.fail {
			t.Errorf("%s: failed %q, err %v; want fail %v", tc.gate, failed, err, tc.fail)
		}
	}
	if _, err := tab.Judge([]Gate{gate("time_to_second_token.p99:+5%")}); err == nil {
		t.Error("a gate on an absent row: want an error")
	}
	// Not significant: never fails, whatever the delta.
	same := Compare(ms[:1], side(rand.New(rand.NewPCG(5, 5)), 30, 20), side(rand.New(rand.NewPCG(5, 5)), 30, 20), Options{})
	if failed, _ := same.Judge([]Gate{gate("time_to_first_token.avg:+0%")}); len(failed) != 0 {
		t.Errorf("identical sides failed %q", failed)
	}
}

// TestJudgeUnderpowered: a p99 of 200 requests a side cannot reach α
// (the reviewer's case: TTFT p99 21.7 against 300.5 ms, p=0.123 at best):
// its gate is an error, not a pass; the p50 of the same sides is judged,
// and at 400 a side the p99 is too.
func TestJudgeUnderpowered(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	old := side(rng, 200, 20)
	new := side(rng, 200, 20)
	for i := range 4 { // the slowest 2 %: a p99 fifteen times the old one
		new.Values["time_to_first_token"][i] = 300 + float64(i)
	}
	tab := Compare(ms[:1], old, new, Options{})
	p99 := tab.Find("time_to_first_token", StatP99)
	if p99 == nil || !p99.Underpowered || p99.MinP == nil || *p99.MinP < 0.05 || *p99.DeltaPct < 100 {
		t.Fatalf("p99 row %+v: want underpowered with a large rise", p99)
	}
	if !strings.Contains(p99.Note(), "too few to find a change") {
		t.Errorf("note %q does not say the test cannot reach alpha", p99.Note())
	}
	g, _ := ParseGate("time_to_first_token.p99:+5%")
	if failed, err := tab.Judge([]Gate{g}); err == nil || !strings.Contains(err.Error(), "cannot be judged at n=200+200") {
		t.Errorf("Judge = %q, %v; want the gate refused as unjudgeable", failed, err)
	}
	// a change not past the limit passes whatever the test's power: the
	// p99 did not fall; no request failed on either side
	for _, spec := range []string{"time_to_first_token.p99:-5%", "time_to_first_token.p99:+2000%", "error_rate.rate:+0%"} {
		g, _ := ParseGate(spec)
		old.Requests, new.Requests = 200, 200
		tab := Compare(ms[:1], old, new, Options{})
		if failed, err := tab.Judge([]Gate{g}); err != nil || len(failed) > 0 {
			t.Errorf("%s: failed %q, err %v; want a pass", spec, failed, err)
		}
	}
	// the error rate's power is that of its sizes, not of the failures
	// seen: 0 against 3 failures of 300 is judged (not significant: a
	// pass), and at 2 requests a side nothing could be
	old.Requests, new.Requests, new.Failed = 300, 300, 3
	ger, _ := ParseGate("error_rate.rate:+50%")
	if failed, err := Compare(ms[:1], old, new, Options{}).Judge([]Gate{ger}); err != nil || len(failed) > 0 {
		t.Errorf("0 against 3 failures of 300: failed %q, err %v; want a pass", failed, err)
	}
	old.Requests, new.Requests, new.Failed = 2, 2, 1
	if _, err := Compare(ms[:1], old, new, Options{}).Judge([]Gate{ger}); err == nil {
		t.Error("2 requests a side: want the error-rate gate refused")
	}
	old.Requests, new.Requests, new.Failed = 0, 0, 0
	g50, _ := ParseGate("time_to_first_token.p50:+5%")
	if _, err := tab.Judge([]Gate{g50}); err != nil {
		t.Errorf("the p50 gate: %v", err)
	}
	big := Compare(ms[:1], side(rng, 400, 20), side(rng, 400, 30), Options{})
	if r := big.Find("time_to_first_token", StatP99); r.Underpowered {
		t.Errorf("400 a side: p99 row %+v underpowered", r)
	}
}

func TestWriteTextGolden(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	ms := append(ms, Metric{Tag: "output_token_throughput", Unit: "tokens/sec"})
	old, new := side(rng, 40, 20, 50, 52, 49), side(rng, 40, 30, 34, 35, 33)
	old.Runs[0]["output_token_throughput"] = 800
	new.Runs[0]["output_token_throughput"] = 700
	tab := Compare(append(ms, Metric{Tag: "inter_token_latency", Unit: "ms", PerRequest: true}), old, new, Options{})
	var b bytes.Buffer
	if err := WriteText(&b, tab, "old", "new"); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "table.golden")
	if *update {
		os.MkdirAll("testdata", 0o777)
		os.WriteFile(golden, b.Bytes(), 0o666)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteJSON(&b, &Report{Table: tab}); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Alpha float64
		Rows  []map[string]any
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Alpha != 0.05 || len(back.Rows) != len(tab.Rows) {
		t.Fatalf("json: %v %+v\n%s", err, back, b.String())
	}
	if back.Rows[0]["metric"] != "time_to_first_token" || back.Rows[0]["test"] != TestUExact || back.Rows[4]["p"] != nil {
		t.Errorf("json rows: %v, %v", back.Rows[0], back.Rows[4])
	}
}

// TestAvgOwnTest: the bulk rose while two outliers lifted the old mean;
// the p50 rise is significant, and the avg, judged by its own test, is not
// called a significant fall.
func TestAvgOwnTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	x, y := ttft(rng, 40, 20), ttft(rng, 42, 30)
	x = append(x, 500, 520)
	s := func(v []float64) Side { return Side{Values: map[string][]float64{"time_to_first_token": v}} }
	tab := Compare(ms[:1], s(x), s(y), Options{})
	if r := tab.Find("time_to_first_token", StatP50); !r.Significant || *r.DeltaPct < 30 {
		t.Errorf("p50: %+v, want a significant rise", r)
	}
	if r := tab.Find("time_to_first_token", StatAvg); r.Significant || *r.DeltaPct > -20 || r.Test != TestWelch {
		t.Errorf("avg: %+v, want a fall of the mean that Welch's t does not call significant", r)
	}
}

// FuzzParseGate: any spec parses or is refused, never panics; a parsed
// gate has a known statistic and a finite limit.
func FuzzParseGate(f *testing.F) {
	for _, s := range []string{"time_to_first_token.p99:+5%", "request_throughput:-3", "a.b:c", ":", "x.p50:+1e308%", "x:-0%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGate(s)
		if err != nil {
			return
		}
		switch g.Stat {
		case StatP50, StatP99, StatAvg, StatMean:
		default:
			t.Fatalf("%q: stat %q", s, g.Stat)
		}
		if math.IsNaN(g.Limit) || math.IsInf(g.Limit, 0) || g.Metric == "" {
			t.Fatalf("%q: %+v", s, g)
		}
	})
}

// A test that finds the sides differing counts only in the direction the
// row's statistic moved: here the new values are generally larger (U) while
// their p50 fell, and the p50 row is not significant.
func TestDirectionConflict(t *testing.T) {
	var x, y []float64
	for i := range 25 {
		x = append(x, 0.01*float64(i))
		y = append(y, 100+0.01*float64(i))
	}
	for i := range 26 {
		x = append(x, 10+0.01*float64(i))
		y = append(y, 9+0.01*float64(i))
	}
	s := func(v []float64) Side { return Side{Values: map[string][]float64{"time_to_first_token": v}} }
	tab := Compare(ms[:1], s(x), s(y), Options{})
	r := tab.Find("time_to_first_token", StatP50)
	if r.New >= r.Old || *r.P >= 0.05 {
		t.Fatalf("the example wants the p50 to fall with U significant: %+v p=%v", r, *r.P)
	}
	if r.Significant || r.Delta() != "~" || r.Conflict != "the test finds new's values larger; the p50 fell" {
		t.Errorf("p50: %+v %q", r, r.Delta())
	}
	if !strings.Contains(r.Note(), "not counted: the test finds new") {
		t.Errorf("note %q", r.Note())
	}
	failed, err := tab.Judge([]Gate{{Spec: "p50", Metric: "time_to_first_token", Stat: StatP50, Limit: -5}})
	if err != nil || len(failed) != 0 {
		t.Errorf("a -5%% gate on a conflicting p50: %v %v", failed, err)
	}
	if a := tab.Find("time_to_first_token", StatAvg); !a.Significant || *a.DeltaPct < 0 {
		t.Errorf("avg: %+v", a)
	}
}

// The error rate is a row of its own (Fisher's exact test on failed and
// succeeded requests), so that a build that fails half its requests cannot
// look faster on the ones that succeeded.
func TestErrorRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	old, new := side(rng, 400, 100, 50), side(rng, 200, 60, 50)
	old.Requests, old.Failed = 400, 0
	new.Requests, new.Failed = 400, 200
	tab := Compare(ms, old, new, Options{})
	r := tab.Find(ErrorRate, StatRate)
	if r == nil || r.Old != 0 || r.New != 50 || !r.Significant || r.Test != TestFisher || r.NOld != 400 {
		t.Fatalf("error rate: %+v", r)
	}
	if r.Delta() != "from 0" {
		t.Errorf("delta %q", r.Delta())
	}
	if w := tab.FailureWarnings(); len(w) != 1 || w[0] != "new: 200 of 400 requests failed (50.0%): its latency rows count the 200 that succeeded" {
		t.Errorf("warnings %q", w)
	}
	failed, err := tab.Judge([]Gate{{Spec: "error_rate:+10%", Metric: ErrorRate, Stat: StatRate, Limit: 10}})
	if err != nil || len(failed) != 1 || !strings.Contains(failed[0], "changed from 0 to 50.00") {
		t.Errorf("a gate on the error rate from 0: %v %v", failed, err)
	}
	// equal rates: no significance
	new.Failed = 0
	if r := Compare(ms, old, new, Options{}).Find(ErrorRate, StatRate); r.Significant || *r.P != 1 {
		t.Errorf("equal rates: %+v", r)
	}
	// no requests counted on a side: no row
	if Compare(ms, old, Side{Values: new.Values, Runs: new.Runs}, Options{}).Find(ErrorRate, StatRate) != nil {
		t.Error("an error rate without requests")
	}
}

// A gate the table cannot judge is an error, never a silent pass; a
// metric the new side lost fails its gate; a rise from 0 fails a + gate.
func TestJudgeCannotJudge(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	tab := Compare(ms, side(rng, 40, 20, 50), side(rng, 40, 30, 25), Options{})
	_, err := tab.Judge([]Gate{{Spec: "request_throughput:-5%", Metric: "request_throughput", Stat: StatMean, Limit: -5}})
	if err == nil || !strings.Contains(err.Error(), "cannot be judged: no test (1 trial, n=1+1)") {
		t.Errorf("a gate on a row without a test: %v", err)
	}
	old := side(rng, 40, 20, 50)
	tab = Compare(ms, old, Side{Runs: old.Runs}, Options{})
	failed, err := tab.Judge([]Gate{{Spec: "time_to_first_token.p99:+5%", Metric: "time_to_first_token", Stat: StatP99, Limit: 5}})
	if err != nil || len(failed) != 1 || !strings.Contains(failed[0], "no values in new") {
		t.Errorf("a metric lost on the new side: %v %v", failed, err)
	}
	tab = Compare(ms, Side{Runs: old.Runs}, old, Options{})
	if _, err := tab.Judge([]Gate{{Spec: "x", Metric: "time_to_first_token", Stat: StatP99, Limit: 5}}); err == nil || !strings.Contains(err.Error(), "(no values in old)") {
		t.Errorf("a metric absent from the old side: %v", err)
	}
	// from 0: the old p50 of TTST is 0 (two tokens in one read), the new 31
	zeros, rise := make([]float64, 60), make([]float64, 60)
	for i := range rise {
		rise[i] = 31 + rng.Float64()
	}
	s := func(v []float64) Side { return Side{Values: map[string][]float64{"time_to_first_token": v}} }
	tab = Compare(ms[:1], s(zeros), s(rise), Options{})
	failed, err = tab.Judge([]Gate{{Spec: "ttft.p50:+5%", Metric: "time_to_first_token", Stat: StatP50, Limit: 5}, {Spec: "ttft.p50:-5%", Metric: "time_to_first_token", Stat: StatP50, Limit: -5}})
	if err != nil || len(failed) != 1 || !strings.Contains(failed[0], "changed from 0 to") || !strings.Contains(failed[0], "past ttft.p50:+5%") {
		t.Errorf("from 0: %v %v", failed, err)
	}
}

// TestMinChange: two large sides 0.5 % apart (the A/A spread a quiet
// machine shows) differ significantly, and a CI gate would cry wolf; with
// the practical threshold every row reads "~", no gate fails, and the JSON
// says so (negligible, not significant). A change past the threshold is
// reported as before (fresh-user finding: 5-7 "significant" rows of
// 0.1-0.5 % in an A/A pair).
func TestMinChange(t *testing.T) {
	old := Side{Values: map[string][]float64{}, Requests: 20000}
	new := Side{Values: map[string][]float64{}, Requests: 20000}
	for i := range 20000 {
		v := 20 + float64(i%1000)/100
		old.Values["time_to_first_token"] = append(old.Values["time_to_first_token"], v)
		new.Values["time_to_first_token"] = append(new.Values["time_to_first_token"], v*1.005)
	}
	old.Runs = []map[string]float64{{"request_throughput": 100}}
	new.Runs = []map[string]float64{{"request_throughput": 100.4}}
	gates := []Gate{{Spec: "time_to_first_token.p50:+0%", Metric: "time_to_first_token", Stat: StatP50, Limit: 0}}
	raw := Compare(ms, old, new, Options{})
	if r := raw.Find("time_to_first_token", StatP50); !r.Significant || r.Delta() == "~" {
		t.Fatalf("without a threshold the 0.5 %% shift is not significant: %+v", r)
	}
	if failed, _ := raw.Judge(gates); len(failed) != 1 {
		t.Errorf("without a threshold the +0%% gate does not fail: %v", failed)
	}
	tab := Compare(ms, old, new, Options{MinChange: DefaultMinChange})
	for _, r := range tab.Rows {
		if r.Delta() != "~" || r.Significant || !r.Negligible {
			t.Errorf("%s.%s: delta %q significant %v negligible %v, want ~", r.Metric, r.Stat, r.Delta(), r.Significant, r.Negligible)
		}
	}
	if failed, err := tab.Judge(gates); len(failed) != 0 || err != nil {
		t.Errorf("a negligible change fails a gate: %v, %v", failed, err)
	}
	var b strings.Builder
	if err := WriteText(&b, tab, "old", "new"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "under --min-change") || !strings.Contains(b.String(), "at least 5% in size (--min-change)") {
		t.Errorf("the table does not say why:\n%s", b.String())
	}
	for i := range new.Values["time_to_first_token"] {
		new.Values["time_to_first_token"][i] *= 1.1
	}
	if r := Compare(ms, old, new, Options{MinChange: DefaultMinChange}).Find("time_to_first_token", StatP50); !r.Significant || r.Delta() == "~" {
		t.Errorf("a 10 %% shift reads %q", r.Delta())
	}
}
