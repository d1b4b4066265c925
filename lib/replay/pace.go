package replay

import (
	"math"
	"math/rand/v2"
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
		return satInt(mean)
	case ArrivalGamma:
		return satInt(gammaVariate(a.rng, a.shape) / a.shape * mean)
	default:
		return satInt(a.rng.ExpFloat64() * mean)
	}
}

// satAdd adds a gap to a time, saturating instead of overflowing.
func satAdd(t, gap int64) int64 {
	if gap > 0 && t > math.MaxInt64-gap {
		return math.MaxInt64
	}
	return t + gap
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
