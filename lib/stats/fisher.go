package stats

import "math"

// FisherExact is the two-sided p-value of Fisher's exact test on the 2×2
// table
//
//	a b
//	c d
//
// the sum of the hypergeometric probabilities (margins fixed) of every
// table no more likely than the one observed (within a relative 1e-7, as
// R and scipy compare them).
func FisherExact(a, b, c, d int64) float64 {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return math.NaN()
	}
	r1, r2, c1 := a+b, c+d, a+c
	n := r1 + r2
	if r1 == 0 || r2 == 0 || c1 == 0 || c1 == n {
		return 1
	}
	lchoose := func(n, k int64) float64 {
		x, _ := math.Lgamma(float64(n + 1))
		y, _ := math.Lgamma(float64(k + 1))
		z, _ := math.Lgamma(float64(n - k + 1))
		return x - y - z
	}
	base := lchoose(n, c1)
	logp := func(k int64) float64 { return lchoose(r1, k) + lchoose(r2, c1-k) - base }
	obs := logp(a)
	limit := obs + math.Log1p(1e-7)
	p := 0.0
	for k := max(0, c1-r2); k <= min(r1, c1); k++ {
		if lp := logp(k); lp <= limit {
			p += math.Exp(lp)
		}
	}
	return min(1, p)
}

// FisherMinP is the smallest p-value FisherExact can give for a 2×2 table
// of row sums r1 and r2 and first column's sum c1: that of the more
// extreme of the two tables at the ends of the first cell's range.
func FisherMinP(r1, r2, c1 int64) float64 {
	if r1 < 0 || r2 < 0 || c1 < 0 || c1 > r1+r2 {
		return math.NaN()
	}
	lo, hi := max(0, c1-r2), min(r1, c1)
	at := func(a int64) float64 { return FisherExact(a, r1-a, c1-a, r2-c1+a) }
	return min(at(lo), at(hi))
}

// QResult is the outcome of QuantileTest.
type QResult struct {
	Cut          float64 // the pooled samples' quantile
	AboveX       int64   // values of x above Cut
	AboveY       int64   // values of y above Cut
	P            float64 // two-sided
	NX, NY       int64
	QuantilePerc float64 // the quantile tested, in percent
	// MinP is the smallest P the test can give with this cut: every value
	// above it on one side. With few values above the cut (a p99 of 200
	// requests a side: 4) it stays above any usual α.
	MinP float64
}

// QuantileTest tests whether x and y share their q-th percentile (0 < q <
// 100): Mood's median test carried to any quantile. The pooled samples'
// q-th percentile (linear interpolation) splits each sample into the values
// above it and the others, and Fisher's exact test judges the 2×2 table.
// It is distribution-free and exact given the cut; its power is that of the
// values beyond the cut, so a p99 needs a few hundred values a side before
// any difference can be significant. Either sample empty gives P = NaN.
func QuantileTest(x, y []float64, q float64) QResult {
	r := QResult{NX: int64(len(x)), NY: int64(len(y)), QuantilePerc: q}
	if len(x) == 0 || len(y) == 0 {
		r.P, r.MinP = math.NaN(), math.NaN()
		return r
	}
	pooled := sortedCopy(append(append(make([]float64, 0, len(x)+len(y)), x...), y...))
	r.Cut = Percentile(pooled, q)
	for _, v := range x {
		if v > r.Cut {
			r.AboveX++
		}
	}
	for _, v := range y {
		if v > r.Cut {
			r.AboveY++
		}
	}
	r.P = FisherExact(r.AboveX, r.NX-r.AboveX, r.AboveY, r.NY-r.AboveY)
	r.MinP = FisherMinP(r.NX, r.NY, r.AboveX+r.AboveY)
	return r
}
