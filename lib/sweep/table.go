package sweep

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// StepLine describes a step in one line (reused: taken from an earlier
// run of the sweep).
func StepLine(s Step, reused bool) string {
	how := ""
	if reused {
		how = " (reused)"
	}
	return fmt.Sprintf("step %d, %s at %s: %d requests, %.1f%% good, %.2f requests/s: %s%s",
		s.N, s.Kind, loadText(s.By, s.Load), s.Requests, s.GoodPct(), s.Throughput, verdictText(s), how)
}

func loadText(by string, load float64) string {
	if by == ByConcurrency {
		if n := int(load); n != 1 {
			return strconv.Itoa(n) + " sessions in flight"
		}
		return "1 session in flight"
	}
	return strconv.FormatFloat(load, 'g', 4, 64) + " sessions/s"
}

func verdictText(s Step) string {
	if s.Unoffered != "" {
		return "not offered (" + s.Unoffered + ")"
	}
	if s.Unsustained != "" {
		return s.Verdict + " (" + s.Unsustained + ")"
	}
	return s.Verdict
}

// Result is the state's answer for a table: a sweep that has not ended
// has none yet, and says so.
func (s *State) Result() Answer {
	if s.Answer == nil {
		return Answer{Steps: len(s.Steps), Note: "the sweep has not ended"}
	}
	ans := *s.Answer
	ans.Lo, ans.Hi = ans.Bracket[0], ans.Bracket[1]
	return ans
}

// WriteTable prints the steps and the answer (elapsed: the seconds of
// runs that made the steps).
func WriteTable(w io.Writer, steps []Step, ans Answer, elapsed float64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%4s  %-11s  %-11s  %8s  %9s  %9s  %6s  %17s  %8s  %11s  %s\n",
		"step", "kind", "by", "load", "req/s", "steady", "good", "ttft p50/p99 ms", "itl p99", "latency p99", "verdict")
	f := func(x float64) string {
		if math.IsNaN(x) {
			return "-"
		}
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	for _, s := range steps {
		ttft, itl, lat := s.Latencies()
		fmt.Fprintf(&b, "%4d  %-11s  %-11s  %8s  %9s  %9s  %5.1f%%  %17s  %8s  %11s  %s\n",
			s.N, s.Kind, s.By, strconv.FormatFloat(s.Load, 'g', 5, 64), f(s.Throughput), f(s.SessionRate), s.GoodPct(),
			f(ttft.P50)+" / "+f(ttft.P99), f(itl.P99), f(lat.P99), s.Verdict)
	}
	b.WriteString("(load: sessions/s for rate, sessions in flight for concurrency; req/s: achieved requests/s; steady: sessions/s\n" +
		" completed in the middle 80% of the step, the throughput probe's bounds the rate axis; times in ms)\n")
	if ans.Found {
		unit := "sessions/s"
		if ans.By == ByConcurrency {
			unit = "sessions in flight"
		}
		hi := "-"
		if ans.Hi > 0 {
			hi = strconv.FormatFloat(ans.Hi, 'g', 5, 64)
		}
		fmt.Fprintf(&b, "answer: %s %s (bracket [%s, %s], limited by %s, %s) after %d steps, %.1f s of runs\n",
			strconv.FormatFloat(ans.Load, 'g', 5, 64), unit, strconv.FormatFloat(ans.Lo, 'g', 5, 64), hi, ans.Limit,
			map[bool]string{true: "converged", false: "not converged"}[ans.Converged], ans.Steps, elapsed)
	} else {
		fmt.Fprintf(&b, "answer: none (%s) after %d steps\n", ans.Note, ans.Steps)
	}
	if ans.Found && ans.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", ans.Note)
	}
	if line := sustainedLine(steps, ans); line != "" {
		b.WriteString(line + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// GoodPct is the step's good fraction in percent, rounded down to a tenth
// so that a step below --min-good never prints as at it (379 of 399 is
// 94.9 %, not 95.0 %).
func (s Step) GoodPct() float64 {
	if s.Requests <= 0 {
		return 0
	}
	return math.Floor(float64(s.Good)*1000/float64(s.Requests)) / 10
}

// Answered reports whether some request of the step succeeded: without
// one its latency percentiles are not zero but unknown.
func (s Step) Answered() bool { return s.Requests > s.Errors }

// latency is p, or NaNs when no request of the step succeeded.
func (s Step) latency(p Pctl) Pctl {
	if !s.Answered() {
		return Pctl{P50: math.NaN(), P99: math.NaN()}
	}
	return p
}

// Latencies are the step's TTFT, ITL and latency percentiles, NaN when no
// request succeeded.
func (s Step) Latencies() (ttft, itl, latency Pctl) {
	return s.latency(s.TTFT), s.latency(s.ITL), s.latency(s.Latency)
}

// sustainedLine says whether the answer is a load the server sustained:
// at the answer's rate step, the sessions completed against those sent
// (a rate step short by more than the search's Sustain is a fail, so an
// answer within it); "" off the rate axis or without an answer.
func sustainedLine(steps []Step, ans Answer) string {
	if !ans.Found || ans.By != ByRate {
		return ""
	}
	for _, s := range steps {
		if s.Kind != KindSearch || s.By != ByRate || s.Verdict != Pass || !sameLoad(s.Load, ans.Load) {
			continue
		}
		if !(s.SendRate > 0) {
			return "sustained: not known (the answer's step has no send rate: a sweep.json from before it was kept)"
		}
		return fmt.Sprintf("sustained: at the answer the server completed %s sessions/s of the %s sent (%.1f%%; a step more than %.0f%% short is a fail)",
			fmtLoad(s.SessionRate), fmtLoad(s.SendRate), 100*s.SessionRate/s.SendRate, 100*DefaultSustain)
	}
	return ""
}
