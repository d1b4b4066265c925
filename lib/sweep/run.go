package sweep

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aiperf/toolkit/lib/metrics"
)

// File is the name of a sweep's state file in its output folder.
const File = "sweep.json"

// StepRun is a step as it is to be run: the probe, its size and its run
// directory.
type StepRun struct {
	Probe
	Requests int64         // profiling requests (0 when Duration is set)
	Warmup   int64         // warmup requests before them
	Duration time.Duration // run for this long instead of a request count
	// Cap stops the step's sends this long after its start whatever its
	// size (Sweep.MaxStepTime; 0: none).
	Cap time.Duration
	Dir string // the step's run directory, FOLDER/step-NN
}

// Measured is what a step's run reports.
type Measured struct {
	Summary *metrics.Summary
	Elapsed time.Duration
	// CeilingWaits counts session starts that the concurrency ceiling
	// delayed, the longest by CeilingMaxWait.
	CeilingWaits   int64
	CeilingMaxWait time.Duration
	// Ends are the end times (ns) of the profiling requests that succeeded,
	// Sends the send times (ns) of every profiling request.
	Ends, Sends []int64
	// SessionsPerRequest is the sessions a request of the sessions the
	// step played, each counted whole (as the store holds it, however much
	// of it the step sent), or 0 when unknown. A step plays the store's
	// first sessions, whose mix of turns need not be the store's; and a
	// short closed-loop step cuts its sessions, so counting what it sent
	// (first turns over requests) would favour first turns.
	SessionsPerRequest float64
}

// StepFunc runs one step (aiperf-replay's runs the replay engine into
// s.Dir; tests use a function of the load).
type StepFunc func(ctx context.Context, s StepRun) (*Measured, error)

// Sweep is a search run into a folder: each step a run directory
// Dir/step-NN, and the state in Dir/sweep.json after every step, so that a
// rerun with the same settings resumes it.
type Sweep struct {
	Search
	Dir      string
	Settings map[string]string // what decides a step's measurement (see State)
	Requests int64             // profiling requests per step
	Warmup   int64             // warmup requests before a step's profiling ones
	Duration time.Duration     // run each step this long instead (0: by Requests)
	// MinDuration is the least a rate step sends for: it sends at least
	// its rate times MinDuration requests (or runs that long). Above the
	// server's capacity a queue grows with time, not with requests: a
	// short step ends before it has built and passes a rate the server
	// cannot sustain.
	MinDuration time.Duration
	// MaxStepTime caps a step's sending time (StepRun.Cap; 0: no cap): on
	// a slow server or a busy client a step of a request count can run for
	// minutes.
	MaxStepTime time.Duration
	// MaxLateness is the client's send lateness p99 above which a step
	// was not offered.
	MaxLateness time.Duration
	// SessionsPerRequest turns achieved requests/s into sessions/s for a
	// step that does not say (Measured.SessionsPerRequest 0): the whole
	// store's.
	SessionsPerRequest float64
	// SessionRequests, when set, is the number of requests the n sessions
	// the schedule starts after warmup requests hold: a rate step's size
	// for MinDuration. Without it the size is n / SessionsPerRequest.
	SessionRequests func(warmup, n int64) int64
	// OnStep, when set, is called with every step as it is decided
	// (reused ones included), before the state is saved.
	OnStep func(s Step, reused bool)

	prior *State
}

// SettingsError refuses to resume a sweep run with other settings.
type SettingsError struct {
	Path       string
	Names      []string // the settings that differ, sorted
	There, Now map[string]string
	Why        string // set when the sweep cannot resume whatever the settings
}

func (e *SettingsError) Error() string {
	var parts []string
	for _, k := range e.Names {
		parts = append(parts, fmt.Sprintf("%s (%q there, %q now)", k, e.There[k], e.Now[k]))
	}
	if e.Why != "" {
		return fmt.Sprintf("%s holds a sweep of version %s, not %s: %s; use another -o", e.Path, e.There["v"], e.Now["v"], e.Why)
	}
	return fmt.Sprintf("%s holds a sweep with other settings: %s; use another -o, or the same settings to resume it",
		e.Path, strings.Join(parts, ", "))
}

// StatePath is Dir/sweep.json.
func (sw *Sweep) StatePath() string { return filepath.Join(sw.Dir, File) }

// Resume reads the state of an earlier run in Dir, if any, for Run to reuse
// its steps. It returns a *SettingsError when that run had other settings,
// and another error when the state cannot be read.
func (sw *Sweep) Resume() error {
	prior, err := LoadState(sw.StatePath())
	if err != nil || prior == nil {
		return err
	}
	if diff := DiffSettings(prior.Settings, sw.Settings); len(diff) > 0 {
		return &SettingsError{Path: sw.StatePath(), Names: diff, There: prior.Settings, Now: sw.Settings}
	}
	if prior.V < StateVersion {
		return &SettingsError{Path: sw.StatePath(), Names: []string{"v"}, There: map[string]string{"v": fmt.Sprint(prior.V)},
			Now: map[string]string{"v": fmt.Sprint(StateVersion)}, Why: "its steps were judged by an older aiperf-replay's rules"}
	}
	sw.prior = prior
	return nil
}

// Run runs the search, each step through f, saving the state after every
// step and once more with the answer. It returns the final state.
func (sw *Sweep) Run(ctx context.Context, f StepFunc) (*State, error) {
	state := &State{Settings: sw.Settings}
	s := sw.Search
	if sw.prior != nil {
		s.Prior = sw.prior.Steps
	}
	path := sw.StatePath()
	s.OnStep = func(stp Step, reused bool) error {
		state.Steps = append(state.Steps, stp)
		state.ElapsedSec += stp.ElapsedSec
		if sw.OnStep != nil {
			sw.OnStep(stp, reused)
		}
		return state.Save(path)
	}
	steps, ans, err := s.Run(ctx, RunnerFunc(func(ctx context.Context, p Probe) (Step, error) {
		return sw.step(ctx, p, f)
	}))
	if err != nil {
		return nil, err
	}
	state.Steps, state.Answer = steps, &ans
	if err := state.Save(path); err != nil {
		return nil, err
	}
	return state, nil
}

// step sizes probe p, runs it through f and reads its measurements.
func (sw *Sweep) step(ctx context.Context, p Probe, f StepFunc) (Step, error) {
	sr := sw.size(p)
	m, err := f(ctx, sr)
	if err != nil {
		return Step{}, err
	}
	perRequest := sw.SessionsPerRequest
	if m.SessionsPerRequest > 0 {
		perRequest = m.SessionsPerRequest
	}
	stp := stepOf(m.Summary, m.Elapsed, perRequest)
	if rate := steadyRate(m.Ends); rate > 0 {
		stp.SessionRate = rate * perRequest
	}
	if rate := steadyRate(m.Sends); rate > 0 {
		stp.SendRate = rate * perRequest
	}
	stp.Dir = filepath.Base(sr.Dir)
	stp.Unoffered, stp.Ceiling = sw.unoffered(p, m)
	return stp, nil
}

// size decides what step p sends.
func (sw *Sweep) size(p Probe) StepRun {
	sr := StepRun{Probe: p, Requests: sw.Requests, Warmup: sw.Warmup, Duration: sw.Duration,
		Dir: filepath.Join(sw.Dir, fmt.Sprintf("step-%02d", p.N))}
	if p.Kind == KindSynchronous {
		// short: a fifth of a step, at least 20 requests (or a second),
		// so that one slow request does not fail it at 95 % good
		sr.Requests = max(sw.Requests/5, min(sw.Requests, 20))
		sr.Warmup = min(sw.Warmup, 2)
		if sw.Duration > 0 {
			sr.Duration = max(sw.Duration/5, min(sw.Duration, time.Second))
		}
	}
	switch {
	case p.Kind == KindThroughput && sw.By == ByRate:
		// Only its completion rate is used (steadyRate), which the
		// warmup's replies would not change.
		sr.Warmup = 0
	case p.By == ByConcurrency:
		// A closed loop's first C sends are all due at its start: a client
		// gets them out in a burst, late by the burst's length, which
		// says nothing about keeping C in flight afterwards. They go in
		// the warmup, which is not judged.
		sr.Warmup = max(sr.Warmup, int64(p.Load))
	}
	if p.Kind == KindSearch && p.By == ByRate && sw.MinDuration > 0 {
		if sr.Duration > 0 {
			sr.Duration = max(sr.Duration, sw.MinDuration)
		} else {
			sr.Requests = max(sr.Requests, sw.requestsFor(sr.Warmup, int64(math.Ceil(p.Load*sw.MinDuration.Seconds()))))
		}
	}
	if sr.Duration > 0 {
		sr.Requests = 0
	}
	if sw.MaxStepTime > 0 && (sr.Duration == 0 || sr.Duration > sw.MaxStepTime) {
		sr.Cap = sw.MaxStepTime
	}
	return sr
}

// requestsFor is the number of requests n sessions hold, after warmup
// requests.
func (sw *Sweep) requestsFor(warmup, n int64) int64 {
	if sw.SessionRequests != nil {
		return sw.SessionRequests(warmup, n)
	}
	perRequest := sw.SessionsPerRequest
	if !(perRequest > 0) {
		perRequest = 1
	}
	return int64(math.Ceil(float64(n) / perRequest))
}

// steadyRate is the completion rate in the middle of a step: the
// least-squares slope of the completions' count against their end times,
// over the completions from the first tenth's last one to the last
// tenth's first (widened to whole groups of equal times). The ramp-up (a
// closed loop's first replies all come one service time in) and the
// drain (the last ones trickle out) are left out, so a saturated server's
// rate reads as its capacity whatever the step's length. A slope, not
// count over span: replies that come in close groups (n slots finishing
// together, a fraction of a millisecond apart) put the span's two ends at
// different places in their groups, and count over span then gains up to
// a group (+3 % on 40 requests at 2 slots); the slope does not. 0 with
// fewer than 10 completions.
func steadyRate(ends []int64) float64 {
	n := len(ends)
	if n < 10 {
		return 0
	}
	slices.Sort(ends)
	lo, hi := n/10, n-1-n/10
	for lo > 0 && ends[lo-1] == ends[lo] {
		lo--
	}
	for hi < n-1 && ends[hi+1] == ends[hi] {
		hi++
	}
	if ends[hi] <= ends[lo] {
		return 0
	}
	// slope of i on t, in seconds, about the means (t relative to the
	// first for precision)
	k := float64(hi - lo + 1)
	var mt, mi float64
	for i := lo; i <= hi; i++ {
		mt += float64(ends[i]-ends[lo]) / 1e9
		mi += float64(i)
	}
	mt, mi = mt/k, mi/k
	var sti, stt float64
	for i := lo; i <= hi; i++ {
		dt := float64(ends[i]-ends[lo])/1e9 - mt
		sti += dt * (float64(i) - mi)
		stt += dt * dt
	}
	return sti / stt
}

// unoffered says why the client did not offer the step's load, or "": its
// own send lateness p99 (ceiling waits left out) above MaxLateness, or on
// the rate axis the MaxConcurrency ceiling delaying starts enough to move
// the send lateness p99 (waits included) past MaxLateness; ceiling is set
// when the ceiling is the only reason. A few starts delayed a little do not
// change the load the server saw. The rate axis's throughput probe is not
// judged: only its completion rate is used, and a closed loop that starts
// MaxConcurrency sessions at once is late in its first burst on any client.
func (sw *Sweep) unoffered(p Probe, m *Measured) (why string, ceiling bool) {
	if p.Kind == KindThroughput && sw.By == ByRate {
		return "", false
	}
	var reasons []string
	l := m.Summary.Lateness
	if p.By == ByRate && m.CeilingWaits > 0 && l.SendP99NS > float64(sw.MaxLateness) {
		reasons = append(reasons, fmt.Sprintf("the --max-concurrency ceiling (%d) delayed %d session starts, the longest by %v, send lateness p99 %.2f ms with the waits",
			sw.MaxConcurrency, m.CeilingWaits, m.CeilingMaxWait.Round(time.Microsecond), l.SendP99NS/1e6))
		ceiling = true
	}
	if l.Count > 0 && l.P99NS > float64(sw.MaxLateness) {
		reasons = append(reasons, fmt.Sprintf("send lateness p99 %.2f ms above --max-lateness %v", l.P99NS/1e6, sw.MaxLateness))
		ceiling = false
	}
	return strings.Join(reasons, "; "), ceiling
}

// stepOf reads a step's measurements from its summary.
func stepOf(sum *metrics.Summary, elapsed time.Duration, sessionsPerRequest float64) Step {
	n := sum.Requests + sum.ErrorRequests
	s := Step{Requests: n, Errors: sum.ErrorRequests, Good: sum.Good, ElapsedSec: elapsed.Seconds()}
	if sum.Goodput == nil {
		s.Good = 0
	}
	if n > 0 {
		s.GoodFraction = float64(s.Good) / float64(n)
	}
	if m := sum.Get("request_throughput"); m != nil {
		s.Throughput = m.Avg
	} else if span := sum.EndNS - sum.StartNS; span > 0 {
		s.Throughput = float64(sum.Requests) / (float64(span) / 1e9)
	}
	s.SessionRate = s.Throughput * sessionsPerRequest
	pct := func(tag string) Pctl {
		m := sum.Get(tag)
		if m == nil {
			return Pctl{}
		}
		p50, _ := m.Percentile(50)
		p99, _ := m.Percentile(99)
		return Pctl{P50: p50, P99: p99}
	}
	s.TTFT, s.ITL, s.Latency = pct("time_to_first_token"), pct("inter_token_latency"), pct("request_latency")
	s.LatenessP99 = sum.Lateness.P99NS / 1e6
	return s
}

// Estimate is how many steps the search has left after its two probes
// (sync and thr, as judged), and about how long they take: bisection
// halves log(hi/lo) until within the tolerance, so the count is known in
// advance (at most the steps --max-steps leaves); each step's time is its
// size at the bracket's geometric mean (a rate step's requests over its
// rate, at least MinDuration; a concurrency step's, from the probes'
// throughput), at most MaxStepTime.
func (sw *Sweep) Estimate(sync, thr Step) (steps int, d time.Duration) {
	lo, hi := 1.0, float64(sw.MaxConcurrency)
	if sw.By == ByRate {
		lo, hi = sync.SessionRate, thr.SessionRate
	}
	if sync.Verdict != Pass || !(lo > 0) || !(hi > lo) || sw.By == ByConcurrency && thr.Verdict == Pass {
		return 0, 0
	}
	steps = int(math.Ceil(math.Log2(math.Log(hi/lo) / math.Log1p(sw.Tolerance))))
	steps = min(max(steps, 1), sw.MaxSteps-2)
	mid := math.Sqrt(lo * hi)
	per := sw.Duration
	if per == 0 {
		reqs := float64(sw.Warmup + sw.Requests)
		switch {
		case sw.By == ByRate && sw.SessionsPerRequest > 0:
			per = time.Duration(reqs * sw.SessionsPerRequest / mid * float64(time.Second))
			per = max(per, sw.MinDuration)
		case thr.Throughput > 0 && sync.Throughput > 0:
			// closed loop: requests/s grow with the sessions in flight up
			// to the server's; take the geometric mean of the probes'
			per = time.Duration(reqs / math.Sqrt(sync.Throughput*thr.Throughput) * float64(time.Second))
		}
	}
	if sw.MaxStepTime > 0 {
		per = min(per, sw.MaxStepTime)
	}
	return steps, time.Duration(steps) * per
}
