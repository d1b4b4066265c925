// Package sweep searches for the highest offered load at which a server
// still meets its service level objectives: the capacity under an SLO.
//
// A Search runs steps through a Runner (tests use a function of the load).
// A Sweep runs a Search into a folder: it sizes each step, hands it to a
// StepFunc (aiperf-replay's runs the replay engine into the step's run
// directory), judges what came back, and keeps sweep.json. The search
// bounds the range with two probes, then bisects it:
//
//  1. a synchronous probe: one session at a time (concurrency 1). If even
//     that misses the SLOs, no load meets them and the search ends.
//  2. a throughput probe: MaxConcurrency sessions in flight, the most the
//     server completes. On the concurrency axis this is a load point like
//     any other (a pass there ends the search: the SLOs hold at the
//     ceiling); on the rate axis its achieved session rate is the upper
//     end of the range, since no arrival rate above what the server
//     completes flat out is sustainable, and the synchronous probe's
//     achieved rate is the lower end.
//  3. bisection in log space (the geometric mean of the bracket) until the
//     bracket [highest pass, lowest fail] is within Tolerance (hi/lo - 1),
//     or MaxSteps steps ran.
//
// Why bisection in log space: the tolerance is relative, and the range can
// span orders of magnitude (one session against hundreds), so halving
// log(hi/lo) meets it in a number of steps known in advance,
// ⌈log2(ln(hi/lo)/ln(1+Tolerance))⌉, whatever the shape of the curve. The
// good fraction is a cliff (about 1 below saturation, falling fast past
// it), so interpolating on it (regula falsi, vLLM's PCHIP on rate) gains
// little: its slope is near 0 on one side and near vertical on the other,
// one-sided updates stall, and the noise of a short step moves the
// interpolated point more than the bracket. Bisection needs only the
// verdict, which is what the user asked about.
//
// A step the client could not offer (it fell behind its schedule, or the
// concurrency ceiling held sends back) is marked and counted as a failure:
// the load it claims was not what the server saw, so it can never be the
// answer.
//
// The search is deterministic given the steps' verdicts, so a search
// given the steps of an earlier one (Search.Prior) asks for the same loads
// in the same order and reuses each finished step instead of running it
// again: a sweep interrupted after k steps resumes at step k+1.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Load axes.
const (
	ByRate        = "rate"        // sessions started per second (open loop)
	ByConcurrency = "concurrency" // sessions in flight (closed loop)
)

// Step kinds.
const (
	KindSynchronous = "synchronous"
	KindThroughput  = "throughput"
	KindSearch      = "search"
)

// Verdicts.
const (
	Pass       = "pass"
	Fail       = "fail"
	NotOffered = "not offered"
)

// Probe is a step the search asks for.
type Probe struct {
	N    int     // step number, from 1
	Kind string  // KindSynchronous, KindThroughput or KindSearch
	By   string  // the schedule of the step: ByConcurrency for the probes, the axis for a search step
	Load float64 // sessions/s (ByRate) or sessions in flight (ByConcurrency)
}

// Pctl is a metric's median and 99th percentile, in ms.
type Pctl struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// Step is a measured step. The Runner fills in the measurements; the
// search adds the probe's fields and the verdict.
type Step struct {
	N    int     `json:"step"`
	Kind string  `json:"kind"`
	By   string  `json:"by"`
	Load float64 `json:"load"` // offered, in the axis unit of By
	Dir  string  `json:"dir,omitempty"`

	Requests     int64   `json:"requests"` // profiling requests with a record
	Errors       int64   `json:"errors"`
	Good         int64   `json:"good"`          // meeting every SLO
	GoodFraction float64 `json:"good_fraction"` // Good / Requests (failed requests are not good)
	// Throughput is the achieved requests per second (aiperf's
	// request_throughput: requests over the span from the first send to
	// the last end); SessionRate the sessions per second completed at
	// steady state (aiperf-replay: in the middle 80 % of the step's
	// completions, ramp-up and drain left out), the unit of the rate axis.
	Throughput  float64 `json:"throughput"`
	SessionRate float64 `json:"session_rate"`
	// SendRate is the sessions per second the client sent in the middle
	// 80 % of the step's sends (as SessionRate is of its completions): the
	// load the server was offered, measured on the same arrivals; 0 when
	// unknown (fewer than 10 sends, or a sweep.json from before it).
	SendRate    float64 `json:"send_rate,omitempty"`
	TTFT        Pctl    `json:"time_to_first_token_ms"`
	ITL         Pctl    `json:"inter_token_latency_ms"`
	Latency     Pctl    `json:"request_latency_ms"`
	LatenessP99 float64 `json:"send_lateness_p99_ms"` // the client's own lateness, ceiling waits left out
	ElapsedSec  float64 `json:"elapsed_s"`

	// Unoffered, when not "", says why the client could not offer the
	// load (the step is then never a pass).
	Unoffered string `json:"not_offered,omitempty"`
	// Unsustained, when not "", says that a rate step's server completed
	// less than it was sent, by more than the search's Sustain: a queue
	// was building, and a longer step would miss the SLOs. Such a step is
	// a fail, so an answer is a load that was sustained.
	Unsustained string `json:"not_sustained,omitempty"`
	// Ceiling: the only reason is the --max-concurrency ceiling. Requests
	// in flight are the rate times the latency, so a slow server fills
	// it: a step that missed the SLOs at the lower load it got is a fail.
	Ceiling bool   `json:"ceiling,omitempty"`
	Verdict string `json:"verdict"`
}

// Runner runs one step.
type Runner interface {
	Run(ctx context.Context, p Probe) (Step, error)
}

// RunnerFunc adapts a function to a Runner.
type RunnerFunc func(ctx context.Context, p Probe) (Step, error)

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, p Probe) (Step, error) { return f(ctx, p) }

// Answer is what a search found.
type Answer struct {
	// Found reports that some load met the SLOs; Load is the highest
	// such load tested (on the rate axis a rate step: the synchronous
	// probe's closed-loop rate counts only once tried as arrivals).
	Found bool    `json:"found"`
	By    string  `json:"by"`
	Load  float64 `json:"load"`
	// Lo and Hi bracket the capacity: Lo met the SLOs, Hi did not (Hi 0:
	// nothing above Lo failed, as when the SLOs hold at the ceiling).
	Lo, Hi float64 `json:"-"`
	// Bracket is [Lo, Hi] for the JSON.
	Bracket [2]float64 `json:"bracket"`
	// Converged reports that the bracket is within the tolerance (else
	// MaxSteps ended the search).
	Converged bool `json:"converged"`
	// Limit says what bounds the answer: "slo" (a step above it missed
	// the SLOs), "client" (a step above it could not be offered),
	// "throughput" (the throughput probe's rate, the most the server
	// completes), "ceiling" (the SLOs hold at MaxConcurrency; on the rate
	// axis, a step above it met them only with starts held back by it) or
	// "none" (no load met them).
	Limit string `json:"limited_by"`
	// ClientBusy reports that the search stopped early because the client
	// could not keep its schedule even at a small fraction (BusyFraction)
	// of the range's top: the machine running the client is busy, and
	// every step above would fail on its lateness, not on the server.
	ClientBusy bool   `json:"client_busy,omitempty"`
	Steps      int    `json:"steps"`
	Note       string `json:"note"`
}

// BusyFraction: a search step the client could not offer (its own send
// lateness, not the ceiling) at or below this fraction of the range's top
// (the throughput probe's rate, or --max-concurrency) ends the search: the
// client machine is busy (a sweep at load 9 on 2 cores ran 14 minutes to
// answer 1.19 sessions/s where a quiet machine answered 15.97).
const BusyFraction = 0.25

// DefaultSustain is Search.Sustain unless set: a rate step whose server
// completed less than 90 % of the sessions per second it was sent (both
// in the middle 80 % of the step) did not sustain that load.
const DefaultSustain = 0.10

// Search is a capacity search.
type Search struct {
	By             string  // ByRate or ByConcurrency
	MinGood        float64 // fraction of requests that must meet every SLO, in (0, 1]
	Tolerance      float64 // relative width of the final bracket, > 0
	MaxSteps       int     // steps in all, the probes included (at least 3)
	MaxConcurrency int     // the throughput probe's concurrency, and the rate steps' ceiling
	// Sustain is how far short of the sessions sent a rate step's
	// completions may fall (a fraction; 0 takes DefaultSustain): a step
	// past it is a fail ("not sustained").
	Sustain float64
	// Prior are the steps of an earlier run of this search, reused in
	// order while they match what the search asks for.
	Prior []Step
	// OnStep, when set, is called with every step as it is decided
	// (reused ones included), e.g. to save the state and print a line.
	OnStep func(s Step, reused bool) error
}

// Check refuses settings the search cannot run with.
func (s *Search) Check() error {
	switch {
	case s.By != ByRate && s.By != ByConcurrency:
		return fmt.Errorf("by %q: want rate or concurrency", s.By)
	case !(s.MinGood > 0 && s.MinGood <= 1):
		return errors.New("min-good: want a percentage above 0 and at most 100")
	case !(s.Sustain >= 0 && s.Sustain < 1):
		return errors.New("sustain: want a fraction from 0 to below 1")
	case !(s.Tolerance > 0) || math.IsInf(s.Tolerance, 0):
		return errors.New("tolerance: want a percentage above 0")
	case s.MaxSteps < 3:
		return errors.New("max-steps: want at least 3 (two probes and one search step)")
	case s.MaxConcurrency < 1:
		return errors.New("max-concurrency: want at least 1")
	}
	return nil
}

// Run runs the search and returns every step (reused ones included) and
// the answer.
func (s *Search) Run(ctx context.Context, r Runner) ([]Step, Answer, error) {
	if err := s.Check(); err != nil {
		return nil, Answer{}, err
	}
	var steps []Step
	step := func(kind, by string, load float64) (Step, error) {
		p := Probe{N: len(steps) + 1, Kind: kind, By: by, Load: load}
		var st Step
		reused := false
		if i := p.N - 1; i < len(s.Prior) && s.Prior[i].Kind == kind && s.Prior[i].By == by && sameLoad(s.Prior[i].Load, load) {
			st, reused = s.Prior[i], true
		} else {
			s.Prior = nil // diverged (or past the end): nothing later is reusable
			var err error
			st, err = r.Run(ctx, p)
			if err != nil {
				return st, err
			}
		}
		st.N, st.Kind, st.By, st.Load = p.N, kind, by, load
		st.Verdict = s.verdict(&st)
		steps = append(steps, st)
		if s.OnStep != nil {
			if err := s.OnStep(st, reused); err != nil {
				return st, err
			}
		}
		return st, nil
	}
	ans := Answer{By: s.By}
	finish := func() ([]Step, Answer, error) {
		ans.Steps = len(steps)
		ans.Bracket = [2]float64{ans.Lo, ans.Hi}
		return steps, ans, nil
	}

	sync, err := step(KindSynchronous, ByConcurrency, 1)
	if err != nil {
		return steps, ans, err
	}
	if sync.Verdict != Pass {
		ans.Limit = "none"
		ans.Note = "even one session at a time misses the SLOs (" + sync.Verdict + ")"
		if sync.Unoffered != "" {
			ans.Note = "the synchronous probe could not be offered: " + sync.Unoffered
		}
		if s.By == ByConcurrency {
			ans.Hi = 1
		} else {
			ans.Hi = sync.SessionRate
		}
		return finish()
	}
	thr, err := step(KindThroughput, ByConcurrency, float64(s.MaxConcurrency))
	if err != nil {
		return steps, ans, err
	}

	var lo, hi float64 // lo passed; hi failed (or is the throughput bound)
	hiLimit := ""
	switch s.By {
	case ByConcurrency:
		lo, hi = 1, float64(s.MaxConcurrency)
		if thr.Verdict == Pass {
			ans.Found, ans.Load, ans.Lo, ans.Limit = true, hi, hi, "ceiling"
			ans.Converged = true
			ans.Note = fmt.Sprintf("the SLOs hold at the ceiling of %d sessions in flight (--max-concurrency)", s.MaxConcurrency)
			return finish()
		}
		hiLimit = limitOf(thr)
	case ByRate:
		lo, hi = sync.SessionRate, thr.SessionRate
		hiLimit = "throughput"
		if !(lo > 0) {
			ans.Limit, ans.Note = "none", "the synchronous probe completed no session"
			return finish()
		}
	}
	top := hi       // the range's top, for BusyFraction
	passed := false // a search step passed
	// bisect narrows [lo, hi] until within the tolerance or out of steps;
	// lo 0 means no pass yet: halve hi until one passes (down to floor).
	bisect := func(floor float64) error {
		for len(steps) < s.MaxSteps && !(lo > 0 && s.narrow(lo, hi)) {
			load := hi / 2
			if lo > 0 {
				load = s.mid(lo, hi)
			} else if load < floor {
				return nil
			}
			st, err := step(KindSearch, s.By, load)
			if err != nil {
				return err
			}
			if st.Verdict == NotOffered && !st.Ceiling && load <= BusyFraction*top {
				return errBusy{st}
			}
			if st.Verdict == Pass {
				lo, passed = load, true
			} else {
				hi, hiLimit = load, limitOf(st)
			}
		}
		return nil
	}
	if err := bisect(0); err != nil {
		return s.busy(steps, &ans, err, top, finish)
	}
	note := ""
	if s.By == ByRate && !passed {
		// The synchronous probe's rate came from a closed loop of one
		// session: as open-loop arrivals it queues whenever two arrive
		// close together, and on a server with no parallelism it is the
		// server's whole capacity, where a queue never stops growing. It is
		// an answer only once a rate step at it met the SLOs; when that one
		// fails, the search goes below it.
		sync := lo
		if len(steps) >= s.MaxSteps {
			ans.Hi, ans.Limit = lo, "none"
			ans.Note = fmt.Sprintf("no rate step met the SLOs, and --max-steps %d left none to try the synchronous probe's %s sessions/s as arrivals", s.MaxSteps, fmtLoad(lo))
			return finish()
		}
		st, err := step(KindSearch, ByRate, sync)
		if err != nil {
			return steps, ans, err
		}
		if st.Verdict == Pass {
			switch tried := len(steps) - 3; {
			case tried > 0:
				note = fmt.Sprintf("no rate above the synchronous probe's met the SLOs (%d tried); a rate step at it did", tried)
			case hi <= sync:
				note = "the throughput probe completed no more sessions per second than the synchronous probe; a rate step at the synchronous probe's rate met the SLOs"
			default:
				note = "a rate step at the synchronous probe's rate met the SLOs; the throughput probe's bound is within the tolerance above it"
			}
			hi = max(hi, sync)
		} else {
			lo, hi, hiLimit = 0, sync, limitOf(st)
			if err := bisect(sync / 64); err != nil {
				return s.busy(steps, &ans, err, top, finish)
			}
			if !passed {
				ans.Hi, ans.Limit = hi, hiLimit
				ans.Note = fmt.Sprintf("no rate met the SLOs: the synchronous probe's %s sessions/s, sent as arrivals, %s, and no rate tried below it down to %s did", fmtLoad(sync), missed(st), fmtLoad(hi))
				if len(steps) >= s.MaxSteps && hi/2 >= sync/64 {
					ans.Note += fmt.Sprintf(" before --max-steps %d ended the search (a larger one goes on below)", s.MaxSteps)
				}
				return finish()
			}
			note = fmt.Sprintf("the synchronous probe's %s sessions/s, sent as arrivals, %s: the answer is below it", fmtLoad(sync), missed(st))
		}
	}
	ans.Found, ans.Load, ans.Lo, ans.Hi, ans.Limit = true, lo, lo, hi, hiLimit
	ans.Converged = s.narrow(lo, hi)
	switch {
	case note != "" && !ans.Converged:
		ans.Note = note + fmt.Sprintf("; --max-steps %d ended the search before the bracket was within the tolerance", s.MaxSteps)
	case note != "":
		ans.Note = note
	case !ans.Converged:
		ans.Note = fmt.Sprintf("--max-steps %d ended the search before the bracket was within the tolerance", s.MaxSteps)
	}
	return finish()
}

// errBusy ends a search whose client could not offer a step at a small
// fraction of the range's top.
type errBusy struct{ st Step }

func (errBusy) Error() string { return "the client machine is busy" }

// busy turns errBusy into the answer that says so; other errors pass.
func (s *Search) busy(steps []Step, ans *Answer, err error, top float64, finish func() ([]Step, Answer, error)) ([]Step, Answer, error) {
	var b errBusy
	if !errors.As(err, &b) {
		return steps, *ans, err
	}
	unit := "sessions/s"
	if s.By == ByConcurrency {
		unit = "sessions in flight"
	}
	ans.Found, ans.ClientBusy, ans.Limit, ans.Hi = false, true, "client", b.st.Load
	ans.Note = fmt.Sprintf("the client machine is busy: step %d at %s %s, %.0f%% of the range's top (%s), could not be offered (%s); "+
		"every step above would fail on the client, not the server. Rerun where the client has the cores to itself",
		b.st.N, fmtLoad(b.st.Load), unit, 100*b.st.Load/top, fmtLoad(top), b.st.Unoffered)
	return finish()
}

// fmtLoad prints a load as the table does.
func fmtLoad(x float64) string { return strconv.FormatFloat(x, 'g', 5, 64) }

// missed says how a step that did not pass failed.
func missed(st Step) string {
	if st.Verdict == NotOffered {
		return "could not be offered (" + st.Unoffered + ")"
	}
	if st.Unsustained != "" {
		return "was " + st.Unsustained
	}
	return fmt.Sprintf("missed them (%.1f%% good)", st.GoodPct())
}

func limitOf(st Step) string {
	switch {
	case st.Verdict == NotOffered && st.Ceiling:
		return "ceiling"
	case st.Verdict == NotOffered:
		return "client"
	case st.Unsustained != "":
		return "throughput"
	}
	return "slo"
}

// verdict judges a step.
func (s *Search) verdict(st *Step) string {
	// (in counts, with room for the percentage's rounding: 999 of 1000 at
	// 99.9 % passes although 99.9/100 > 0.999 in floating point)
	met := st.Requests > 0 && float64(st.Good) >= s.MinGood*float64(st.Requests)*(1-1e-12)
	st.Unsustained = s.unsustained(st)
	switch {
	case st.Unsustained != "" && st.Unoffered == "":
		return Fail
	case st.Unoffered != "" && (met || !st.Ceiling):
		return NotOffered
	case met:
		return Pass
	}
	return Fail
}

// unsustained says why a rate search step's server did not keep up with
// what it was sent, or "": its completion rate (SessionRate) more than
// Sustain short of its send rate (SendRate, measured alike on the same
// arrivals, so that a Poisson step's own randomness cancels out).
func (s *Search) unsustained(st *Step) string {
	tol := s.Sustain
	if tol == 0 {
		tol = DefaultSustain
	}
	if st.Kind != KindSearch || st.By != ByRate || !(st.SendRate > 0) || st.SessionRate >= st.SendRate*(1-tol) {
		return ""
	}
	return fmt.Sprintf("not sustained: the server completed %s sessions/s of the %s sent, %.0f%% short (more than %.0f%%: a queue was building)",
		fmtLoad(st.SessionRate), fmtLoad(st.SendRate), 100*(1-st.SessionRate/st.SendRate), 100*tol)
}

// narrow reports that the bracket is within the tolerance (for
// concurrency, also when no integer lies between).
func (s *Search) narrow(lo, hi float64) bool {
	if s.By == ByConcurrency && hi-lo <= 1 {
		return true
	}
	return hi <= lo*(1+s.Tolerance)
}

// mid is the next load to test: the geometric mean of the bracket
// (rounded, strictly inside it, for concurrency).
func (s *Search) mid(lo, hi float64) float64 {
	m := math.Sqrt(lo * hi)
	if s.By == ByConcurrency {
		m = math.Round(m)
		m = max(m, lo+1)
		m = min(m, hi-1)
		return m
	}
	// Three significant digits make steps readable and resumable; stay
	// strictly inside the bracket.
	r := roundSig(m, 4)
	if r > lo && r < hi {
		return r
	}
	return m
}

func roundSig(x float64, digits int) float64 {
	if x == 0 {
		return 0
	}
	e := math.Pow(10, float64(digits)-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*e) / e
}

// sameLoad compares loads as saved and read back (JSON keeps float64
// exactly; the tolerance covers a hand-edited file).
func sameLoad(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b))
}
