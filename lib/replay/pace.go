package replay

import (
	"math"
	"math/rand/v2"
	"runtime"
	"time"
)

// Arrival processes for the rate schedule.
const (
	ArrivalPoisson  = "poisson"  // exponential gaps (memoryless)
	ArrivalConstant = "constant" // equal gaps of 1/rate
	ArrivalGamma    = "gamma"    // gamma gaps: shape = smoothness, mean 1/rate
)

// arrivals draws the gaps between session starts of a rate schedule. With
// gamma, smoothness 1 is Poisson, below 1 burstier, above 1 more regular
// (the vLLM "burstiness" parameter, aiperf's --arrival-smoothness).
type arrivals struct {
	kind   string
	rate   float64 // per second
	shape  float64
	rng    *rand.Rand
	normal func() float64
}

func newArrivals(kind string, rate, smoothness float64, seed uint64) *arrivals {
	r := rand.New(rand.NewPCG(seed, 0x61697065726672)) // "aiperfr"
	return &arrivals{kind: kind, rate: rate, shape: smoothness, rng: r, normal: r.NormFloat64}
}

// gap returns the next gap in nanoseconds.
func (a *arrivals) gap() int64 {
	mean := 1e9 / a.rate
	switch a.kind {
	case ArrivalConstant:
		return int64(math.Round(mean))
	case ArrivalGamma:
		return int64(math.Round(gammaVariate(a.rng, a.shape) / a.shape * mean))
	default:
		return int64(math.Round(a.rng.ExpFloat64() * mean))
	}
}

// gammaVariate draws from Gamma(shape, 1) by Marsaglia and Tsang's method
// (ACM TOMS 26(3), 2000), boosting shapes below 1 with U^(1/shape).
func gammaVariate(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := r.Float64()
		for u == 0 {
			u = r.Float64()
		}
		return gammaVariate(r, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// waiter sleeps until a moment with sub-millisecond precision. Go's timers
// on Linux wake through epoll_pwait, whose timeout is in whole
// milliseconds: a 50 µs sleep takes about 1.06 ms here, a 1 ms sleep about
// 1.1 ms. So the waiter sleeps on a timer until "slack" before the
// moment, then yields the processor in a loop (runtime.Gosched, which runs
// other goroutines meanwhile) until the moment has come. The slack follows
// the timer overshoot it measures: a decaying maximum of the recent
// overshoots plus a margin, clamped to [100 µs, 5 ms].
//
// A waiter is used by one goroutine at a time.
type waiter struct {
	now   func() int64
	timer *time.Timer
	est   float64 // decaying maximum of timer overshoot, ns
}

const (
	slackMargin = 100e3
	slackMin    = 100e3
	slackMax    = 5e6
)

func newWaiter(now func() int64) *waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &waiter{now: now, timer: t, est: 1.1e6}
}

func (w *waiter) slack() int64 {
	return int64(min(max(w.est+slackMargin, slackMin), slackMax))
}

// until waits until the unix-ns moment t. It returns early, with false,
// when wake or stop delivers; wake may be nil.
func (w *waiter) until(t int64, wake <-chan struct{}, stop <-chan struct{}) bool {
	for {
		now := w.now()
		rem := t - now
		if rem <= 0 {
			return true
		}
		if s := w.slack(); rem > s {
			target := now + rem - s
			w.timer.Reset(time.Duration(rem - s))
			select {
			case <-w.timer.C:
			case <-wake:
				w.stopTimer()
				return false
			case <-stop:
				w.stopTimer()
				return false
			}
			over := float64(w.now() - target)
			w.est = max(over, w.est*0.98)
			continue
		}
		select {
		case <-wake:
			return false
		case <-stop:
			return false
		default:
		}
		runtime.Gosched()
	}
}

func (w *waiter) stopTimer() {
	if !w.timer.Stop() {
		select {
		case <-w.timer.C:
		default:
		}
	}
}
