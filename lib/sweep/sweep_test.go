package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fake is a server whose good fraction is a known function of the load:
// every request meets the SLOs up to threshold, none above it (on the
// concurrency axis, and on the rate axis for search steps). The client can
// offer at most clientMax on the search axis. It counts the steps it ran.
type fake struct {
	syncRate, maxRate float64 // sessions/s the probes achieve
	threshold         float64
	clientMax         float64 // 0: no limit
	serverMax         float64 // 0: no limit; above it a rate step completes serverMax sessions/s of those sent
	syncFails         bool
	runs              int
}

func (f *fake) Run(_ context.Context, p Probe) (Step, error) {
	f.runs++
	st := Step{Requests: 100, Throughput: 1}
	good := p.Load <= f.threshold
	switch p.Kind {
	case KindSynchronous:
		st.SessionRate = f.syncRate
		good = !f.syncFails
	case KindThroughput:
		st.SessionRate = f.maxRate
	}
	if p.Kind == KindSearch && f.clientMax > 0 && p.Load > f.clientMax {
		st.Unoffered = fmt.Sprintf("send lateness p99 above the limit at %g", p.Load)
		good = true // the SLOs held, but the load was not what was asked
	}
	if p.Kind == KindSearch && p.By == ByRate {
		st.SessionRate, st.SendRate = p.Load, p.Load
		if f.serverMax > 0 && p.Load > f.serverMax {
			st.SessionRate = f.serverMax
		}
	}
	if good {
		st.Good, st.GoodFraction = 100, 1
	}
	return st, nil
}

func search(by string) *Search {
	return &Search{By: by, MinGood: 0.95, Tolerance: 0.05, MaxSteps: 30, MaxConcurrency: 512}
}

// TestConvergesRate: on the rate axis the search ends with a bracket
// within the tolerance around the threshold, in the number of steps
// bisection in log space promises.
func TestConvergesRate(t *testing.T) {
	for _, th := range []float64{5.5, 7, 13.3, 40, 61.2, 99} {
		f := &fake{syncRate: 5, maxRate: 100, threshold: th}
		s := search(ByRate)
		steps, ans, err := s.Run(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		if !ans.Found || !ans.Converged || ans.Limit != "slo" && !(ans.Limit == "throughput" && ans.Hi == 100) {
			t.Fatalf("threshold %v: answer %+v, want found, converged, limited by the SLO (or the throughput bound)", th, ans)
		}
		if !(ans.Lo <= th && th < ans.Hi) || ans.Hi > ans.Lo*1.05 {
			t.Errorf("threshold %v: bracket [%v, %v] does not hold it within 5%%", th, ans.Lo, ans.Hi)
		}
		if ans.Load != ans.Lo {
			t.Errorf("threshold %v: answer %v, want the bracket's low end %v", th, ans.Load, ans.Lo)
		}
		// ⌈log2(ln 20 / ln 1.05)⌉ = 6 search steps after the two probes.
		if want := 2 + int(math.Ceil(math.Log2(math.Log(100.0/5)/math.Log(1.05)))); len(steps) > want {
			t.Errorf("threshold %v: %d steps, want at most %d", th, len(steps), want)
		}
		if f.runs != len(steps) || ans.Steps != len(steps) {
			t.Errorf("threshold %v: %d runs, %d steps, answer says %d", th, f.runs, len(steps), ans.Steps)
		}
		for _, st := range steps {
			if st.Kind == KindSearch && (st.Verdict == Pass) != (st.Load <= th) {
				t.Errorf("threshold %v: step %d at %v judged %s", th, st.N, st.Load, st.Verdict)
			}
		}
	}
}

// TestThresholdAtTheEnds: a threshold at or above the throughput probe's
// rate gives the throughput bound. Below every search step, the
// synchronous probe's rate is tried as arrivals: the answer when it holds
// (with a note); when it does not, the search goes below it (halving until
// a rate passes, down to a 64th); none when no step is left to try it
// (a review found the closed loop's rate given as the answer of a server
// that, at that rate of arrivals, answered 27 % of requests in time).
func TestThresholdAtTheEnds(t *testing.T) {
	_, ans, err := search(ByRate).Run(context.Background(), &fake{syncRate: 5, maxRate: 100, threshold: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Limit != "throughput" || ans.Hi != 100 || ans.Lo < 95 {
		t.Errorf("threshold past the throughput: %+v, want limited by the throughput 100, answer within 5%%", ans)
	}
	_, ans, err = search(ByRate).Run(context.Background(), &fake{syncRate: 5, maxRate: 100, threshold: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !ans.Found || !(ans.Lo <= 4 && 4 < ans.Hi) || !ans.Converged || !strings.Contains(ans.Note, "the synchronous probe's 5 sessions/s, sent as arrivals, missed them (0.0% good): the answer is below it") {
		t.Errorf("threshold below the synchronous rate: %+v, want the search below 5 to bracket 4", ans)
	}
	_, ans, err = search(ByRate).Run(context.Background(), &fake{syncRate: 5, maxRate: 100, threshold: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Found || ans.Hi >= 5.0/32 || !strings.Contains(ans.Note, "no rate met the SLOs: the synchronous probe's 5 sessions/s, sent as arrivals, missed them") {
		t.Errorf("threshold far below the synchronous rate: %+v, want none, tried down to 5/64", ans)
	}
	for _, max := range []float64{100, 5} { // 5: a server with no parallelism
		steps, ans, err := search(ByRate).Run(context.Background(), &fake{syncRate: 5, maxRate: max, threshold: 5})
		if err != nil {
			t.Fatal(err)
		}
		last := steps[len(steps)-1]
		if !ans.Found || ans.Load != 5 || ans.Note == "" || last.Kind != KindSearch || last.Load != 5 || last.Verdict != Pass {
			t.Errorf("max %v, threshold at the synchronous rate: %+v, last step %+v; want 5, tried as arrivals", max, ans, last)
		}
	}
	s := search(ByRate)
	s.MaxSteps = 3
	_, ans, err = s.Run(context.Background(), &fake{syncRate: 5, maxRate: 100, threshold: 4})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Found || !strings.Contains(ans.Note, "--max-steps 3 left none") {
		t.Errorf("no step left to try the synchronous rate: %+v, want none", ans)
	}
}

// TestConvergesConcurrency: on the concurrency axis the answer is the
// threshold itself (the bracket closes to neighbouring integers).
func TestConvergesConcurrency(t *testing.T) {
	for _, th := range []float64{1, 2, 3, 17, 100, 511} {
		f := &fake{threshold: th}
		steps, ans, err := search(ByConcurrency).Run(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		if ans.Load != th && !(ans.Hi <= ans.Lo*1.05 && ans.Lo <= th && th < ans.Hi) {
			t.Errorf("threshold %v: answer %v, bracket [%v, %v]", th, ans.Load, ans.Lo, ans.Hi)
		}
		if len(steps) > 2+9 {
			t.Errorf("threshold %v: %d steps", th, len(steps))
		}
		seen := map[float64]bool{}
		for _, st := range steps[1:] {
			if seen[st.Load] || st.Load != math.Round(st.Load) {
				t.Errorf("threshold %v: load %v tested twice or not an integer", th, st.Load)
			}
			seen[st.Load] = true
		}
	}
	// The SLOs hold at the ceiling: the throughput probe is the answer.
	_, ans, err := search(ByConcurrency).Run(context.Background(), &fake{threshold: 600})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Load != 512 || ans.Limit != "ceiling" || ans.Steps != 2 {
		t.Errorf("SLOs that hold at the ceiling: %+v", ans)
	}
}

// TestNotOfferedNeverPasses: a step the client could not offer is a
// failure whatever its good fraction, and the answer says the client
// bounds it.
func TestNotOfferedNeverPasses(t *testing.T) {
	f := &fake{syncRate: 5, maxRate: 100, threshold: 80, clientMax: 40}
	steps, ans, err := search(ByRate).Run(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var unoffered int
	for _, st := range steps {
		if st.Unoffered != "" {
			unoffered++
			if st.Verdict != NotOffered {
				t.Errorf("step %d at %v was not offered and was judged %s", st.N, st.Load, st.Verdict)
			}
		}
	}
	if unoffered == 0 {
		t.Fatal("no step above the client's limit was tried")
	}
	if ans.Load > 40 || ans.Limit != "client" {
		t.Errorf("answer %v limited by %q, want at most the client's 40, limited by the client", ans.Load, ans.Limit)
	}
}

func TestSynchronousFails(t *testing.T) {
	f := &fake{syncRate: 5, maxRate: 100, threshold: 50, syncFails: true}
	steps, ans, err := search(ByRate).Run(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Found || ans.Limit != "none" || len(steps) != 1 {
		t.Errorf("a failed synchronous probe: %+v after %d steps, want not found after 1", ans, len(steps))
	}
}

// TestResume: given the steps of an earlier search, a search reuses them
// (running none again) and continues where it stopped; steps that no
// longer match what it asks for are run again.
func TestResume(t *testing.T) {
	f := &fake{syncRate: 5, maxRate: 100, threshold: 37}
	all, ans, err := search(ByRate).Run(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{len(all), 3, 1, 0} {
		f2 := &fake{syncRate: 5, maxRate: 100, threshold: 37}
		s := search(ByRate)
		s.Prior = slices.Clone(all[:k])
		var reused []int
		s.OnStep = func(st Step, r bool) error {
			if r {
				reused = append(reused, st.N)
			}
			return nil
		}
		steps, ans2, err := s.Run(context.Background(), f2)
		if err != nil {
			t.Fatal(err)
		}
		if f2.runs != len(all)-k || len(reused) != k {
			t.Errorf("resuming after %d of %d steps: ran %d, reused %v", k, len(all), f2.runs, reused)
		}
		if !reflect.DeepEqual(steps, all) || ans2 != ans {
			t.Errorf("resuming after %d steps: other steps or answer (%+v, want %+v)", k, ans2, ans)
		}
	}
	// A prior step for another load is not reused, nor anything after it.
	f3 := &fake{syncRate: 5, maxRate: 100, threshold: 37}
	s := search(ByRate)
	s.Prior = slices.Clone(all)
	s.Prior[2].Load *= 1.5
	if _, _, err := s.Run(context.Background(), f3); err != nil {
		t.Fatal(err)
	}
	if f3.runs != len(all)-2 {
		t.Errorf("a prior that diverges at step 3: ran %d steps, want %d", f3.runs, len(all)-2)
	}
}

func TestRunnerError(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	_, _, err := search(ByRate).Run(context.Background(), RunnerFunc(func(_ context.Context, p Probe) (Step, error) {
		n++
		if p.Kind == KindThroughput {
			return Step{}, boom
		}
		return Step{Requests: 1, Good: 1, GoodFraction: 1, SessionRate: 1}, nil
	}))
	if !errors.Is(err, boom) || n != 2 {
		t.Errorf("a runner's error: got %v after %d steps", err, n)
	}
}

func TestCheck(t *testing.T) {
	for _, s := range []Search{
		{By: "load", MinGood: 0.95, Tolerance: 0.05, MaxSteps: 10, MaxConcurrency: 8},
		{By: ByRate, MinGood: 0, Tolerance: 0.05, MaxSteps: 10, MaxConcurrency: 8},
		{By: ByRate, MinGood: 0.95, Tolerance: 0, MaxSteps: 10, MaxConcurrency: 8},
		{By: ByRate, MinGood: 0.95, Tolerance: 0.05, MaxSteps: 2, MaxConcurrency: 8},
		{By: ByRate, MinGood: 0.95, Tolerance: 0.05, MaxSteps: 10, MaxConcurrency: 0},
	} {
		if err := s.Check(); err == nil {
			t.Errorf("%+v: accepted", s)
		}
	}
}

func TestState(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sweep.json")
	if s, err := LoadState(path); s != nil || err != nil {
		t.Fatalf("a missing state: %v, %v", s, err)
	}
	steps, ans, err := search(ByRate).Run(context.Background(), &fake{syncRate: 5, maxRate: 100, threshold: 37})
	if err != nil {
		t.Fatal(err)
	}
	s := &State{Settings: map[string]string{"url": "u", "goodput": "x:1"}, Steps: steps, Answer: &ans}
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	ans.Lo, ans.Hi = 0, 0 // not in the JSON: the bracket is
	if !reflect.DeepEqual(got.Steps, steps) || got.Answer.Bracket != ans.Bracket || got.Answer.Load != ans.Load {
		t.Errorf("state did not round-trip")
	}
	if d := DiffSettings(s.Settings, map[string]string{"url": "v", "goodput": "x:1", "seed": "1"}); !reflect.DeepEqual(d, []string{"seed", "url"}) {
		t.Errorf("DiffSettings: %v", d)
	}
}

// TestMinGoodBoundary: a step exactly at --min-good passes, whatever the
// percentage's floating-point rounding (99.9/100 > 999/1000), and one
// request fewer fails.
func TestMinGoodBoundary(t *testing.T) {
	for _, pct := range []float64{99.9, 99.4, 98.9, 97.9, 95.2, 95, 99, 100, 50.1} {
		s := Search{MinGood: pct / 100}
		good := int64(math.Round(pct * 10))
		if v := s.verdict(&Step{Requests: 1000, Good: good, GoodFraction: float64(good) / 1000}); v != Pass {
			t.Errorf("%v%%: %d of 1000 good: %s, want pass", pct, good, v)
		}
		if v := s.verdict(&Step{Requests: 1000, Good: good - 1, GoodFraction: float64(good-1) / 1000}); v != Fail {
			t.Errorf("%v%%: %d of 1000 good: %s, want fail", pct, good-1, v)
		}
	}
}

// TestStepDisplay: the good percentage is rounded down (379 of 399 is
// 94.9 %, which a fail at 95 % agrees with), and a step in which every
// request failed has no latency (NaN, printed "-"), not 0 ms.
func TestStepDisplay(t *testing.T) {
	if p := (Step{Requests: 399, Good: 379}).GoodPct(); p != 94.9 {
		t.Errorf("379 of 399: %v%%, want 94.9", p)
	}
	if p := (Step{Requests: 1000, Good: 999}).GoodPct(); p != 99.9 {
		t.Errorf("999 of 1000: %v%%, want 99.9", p)
	}
	dead := Step{N: 1, Kind: KindSynchronous, By: ByConcurrency, Load: 1, Requests: 20, Errors: 20, Verdict: Fail}
	ttft, _, lat := dead.Latencies()
	if !math.IsNaN(ttft.P50) || !math.IsNaN(lat.P99) {
		t.Errorf("all failed: ttft %v latency %v, want NaN", ttft, lat)
	}
	if line := StepLine(dead, false); !strings.Contains(line, "0.0% good") {
		t.Errorf("step line %q", line)
	}
}

// TestAnswerSustained: a rate step whose requests met the SLOs while the
// server completed less than it was sent (a queue building, which a short
// step does not live to see) is a fail, "not sustained", so the answer is
// a load the server sustained: offered and completed within Sustain (10 %)
// (fresh-user finding on ollama: "2.54 sessions/s, limited by throughput"
// where the server completed 2.17).
func TestAnswerSustained(t *testing.T) {
	f := &fake{syncRate: 1, maxRate: 4, threshold: 100, serverMax: 2.17}
	steps, ans, err := search(ByRate).Run(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if !ans.Found || ans.Load > 2.17/(1-DefaultSustain) || ans.Limit != "throughput" {
		t.Fatalf("answer %+v, want at most %.3f sessions/s (sustained), limited by throughput", ans, 2.17/(1-DefaultSustain))
	}
	unsustained := 0
	for _, st := range steps {
		if st.Unsustained != "" {
			unsustained++
			if st.Verdict != Fail || !strings.Contains(st.Unsustained, "completed 2.17 sessions/s of the") {
				t.Errorf("step %d: verdict %s, %q", st.N, st.Verdict, st.Unsustained)
			}
		}
		if st.Verdict == Pass && st.Kind == KindSearch && st.SessionRate < st.SendRate*(1-DefaultSustain) {
			t.Errorf("step %d passed at %v sessions/s completed of %v sent", st.N, st.SessionRate, st.SendRate)
		}
	}
	if unsustained == 0 {
		t.Error("no step was judged not sustained")
	}
}

// TestClientBusy: a search step the client cannot offer at a small
// fraction of the throughput probe's rate ends the search at once, saying
// the client machine is busy, instead of bisecting down through steps that
// all fail on the client's lateness (fresh-user finding: 14 minutes at
// load 9 for an answer of 1.19 sessions/s where the server sustained 16).
// A client limit near the top is an ordinary answer.
func TestClientBusy(t *testing.T) {
	for _, by := range []string{ByRate, ByConcurrency} {
		f := &fake{syncRate: 1, maxRate: 100, threshold: 90, clientMax: 2}
		s := search(by)
		s.MaxConcurrency = 100
		steps, ans, err := s.Run(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		if ans.Found || !ans.ClientBusy || ans.Limit != "client" || !strings.HasPrefix(ans.Note, "the client machine is busy: step 3 at ") || len(steps) != 3 {
			t.Errorf("%s: answer %+v after %d steps, want the client machine busy at step 3", by, ans, len(steps))
		}
	}
	f := &fake{syncRate: 1, maxRate: 100, threshold: 90, clientMax: 60}
	_, ans, err := search(ByRate).Run(context.Background(), f)
	if err != nil || !ans.Found || ans.ClientBusy || ans.Limit != "client" {
		t.Errorf("client limit at 60 %%: answer %+v, %v", ans, err)
	}
}
