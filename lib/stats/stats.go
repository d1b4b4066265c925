// Package stats holds the few statistical tests aiperf-replay's compare and
// trials need, written from their textbook definitions: the Mann–Whitney U
// test, Welch's t test, Fisher's exact test on a 2×2 table (and with it a
// test of a quantile), Student's t distribution and a t-based confidence
// interval of a mean. It imports only the standard library.
package stats

import (
	"math"
	"slices"
)

// Mean returns the arithmetic mean of xs (NaN when empty).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Variance returns the sample variance of xs (divisor n-1; NaN below two
// values).
func Variance(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	s := 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs)-1)
}

// NormalSF is the upper tail P(Z > z) of the standard normal distribution.
func NormalSF(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// Percentile returns the p-th percentile (0..100) of sorted values by
// linear interpolation between the closest ranks (numpy's default, the
// definition aiperf's percentiles use).
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := p / 100 * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	if lo < 0 {
		return sorted[0]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// sortedCopy returns xs sorted, leaving xs alone.
func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}
