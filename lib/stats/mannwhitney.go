package stats

import (
	"math"
	"slices"
	"sync"
)

// How MannWhitney computed its p-value.
const (
	MethodExact  = "exact"  // the exact null distribution of U
	MethodNormal = "normal" // the normal approximation, with tie and continuity corrections
)

// MannWhitney uses the exact distribution of U, when there are no ties,
// for samples whose sizes multiply to at most MaxExact² (50 against 50, 6
// against 400, 1 against 2,500): the distribution then costs at most about
// 1.6 million additions and 2 MB. Past that the normal
// approximation is used. Where the exact p-value lies between 0.005 and
// 0.1, the approximation is off by 0.0005 at 50 against 51 and by at most
// 0.003 for sizes just past the bound (6 against 417), more only when one
// side has 1 to 3 values (3 against 840: 0.007). A bound on each side
// alone would not do: at 1 against 60 the approximation is off by 0.11.
const MaxExact = 50

// exactSize reports whether samples of m and n values take the exact
// distribution (without ties).
func exactSize(m, n int) bool { return m*n <= MaxExact*MaxExact }

// UResult is the outcome of a Mann–Whitney U test.
type UResult struct {
	// U is x's statistic: the pairs (x_i, y_j) with x_i > y_j, plus half of
	// those with x_i = y_j (U_x + U_y = len(x)·len(y)).
	U float64
	// P is the two-sided p-value for the null hypothesis that x and y come
	// from one distribution (P(X > Y) = P(Y > X)).
	P float64
	// Method is MethodExact or MethodNormal.
	Method string
	// Ties reports tied values across or within the samples.
	Ties bool
	// MinP is the smallest P the test can give for samples of these sizes
	// (and, by the normal approximation, these pooled values with their
	// ties): that of the most extreme split, x taking the smallest or the
	// largest of the values. When MinP >= α no difference, however large,
	// is significant.
	MinP float64
}

// MannWhitney runs the two-sided Mann–Whitney U (Wilcoxon rank-sum) test of
// x against y. With no ties and at most MaxExact values a side the p-value
// comes from the exact distribution of U (twice the smaller tail, at most
// 1); otherwise from the normal approximation with the variance corrected
// for ties and a continuity correction of 0.5 (scipy.stats.mannwhitneyu's
// "asymptotic" method). Identical samples give P = 1. Either sample empty
// gives P = NaN.
func MannWhitney(x, y []float64) UResult {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return UResult{P: math.NaN(), Method: MethodNormal}
	}
	type obs struct {
		v   float64
		inX bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(a, b obs) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	// Midranks (1-based) and the tie term sum(t^3 - t); lo and hi are the
	// rank sums of the n1 smallest and the n1 largest positions: x's at
	// the two most extreme splits of these values, ties as they are.
	var r1, tie, lo, hi float64
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			if all[k].inX {
				r1 += rank
			}
			if k < n1 {
				lo += rank
			}
			if k >= len(all)-n1 {
				hi += rank
			}
		}
		if t := float64(j - i); t > 1 {
			tie += t*t*t - t
		}
		i = j
	}
	fn1, fn2 := float64(n1), float64(n2)
	res := UResult{U: r1 - fn1*(fn1+1)/2, Ties: tie > 0}
	if !res.Ties && exactSize(n1, n2) {
		res.Method = MethodExact
		res.P = exactUP(n1, n2, int(math.Round(res.U)))
		res.MinP = exactUP(n1, n2, 0)
		return res
	}
	res.Method = MethodNormal
	n := fn1 + fn2
	mu := fn1 * fn2 / 2
	v := fn1 * fn2 / 12 * ((n + 1) - tie/(n*(n-1)))
	if v <= 0 { // every value equal
		res.P, res.MinP = 1, 1
		return res
	}
	p := func(u float64) float64 {
		z := (math.Abs(u-mu) - 0.5) / math.Sqrt(v)
		return min(1, 2*NormalSF(max(z, 0)))
	}
	base := fn1 * (fn1 + 1) / 2
	res.P, res.MinP = p(res.U), min(p(lo-base), p(hi-base))
	return res
}

// exactUP is the two-sided exact p-value of U = u for samples of m and n
// values without ties: twice the smaller of P(U <= u) and P(U >= u), at
// most 1.
func exactUP(m, n, u int) float64 {
	d := cachedUDist(m, n)
	lo, hi := 0.0, 0.0
	for k, p := range d {
		if k <= u {
			lo += p
		}
		if k >= u {
			hi += p
		}
	}
	return min(1, 2*min(lo, hi))
}

// uDists keeps the distributions computed (a comparison asks for one size
// once per metric); at most maxUDists of them, about 20 KB each.
var uDists struct {
	sync.Mutex
	m map[[2]int][]float64
}

const maxUDists = 64

func cachedUDist(m, n int) []float64 {
	if m > n {
		m, n = n, m // U's distribution is the same for (m, n) and (n, m)
	}
	k := [2]int{m, n}
	uDists.Lock()
	defer uDists.Unlock()
	if d, ok := uDists.m[k]; ok {
		return d
	}
	if uDists.m == nil || len(uDists.m) >= maxUDists {
		uDists.m = map[[2]int][]float64{}
	}
	d := uDist(m, n)
	uDists.m[k] = d
	return d
}

// uDist is the null distribution of U for samples of m and n values: d[u]
// = P(U = u), from the recursion on the largest of the m+n values (an x
// with probability m/(m+n), then above all n y's):
//
//	P_{m,n}(u) = m/(m+n) P_{m-1,n}(u-n) + n/(m+n) P_{m,n-1}(u).
//
// Every term is a positive probability, so the tails keep full relative
// precision (a count of arrangements would not fit in a float64 exactly).
func uDist(m, n int) []float64 {
	if m > n {
		m, n = n, m // the same distribution; the rows kept are the smaller side's
	}
	// prev[mm] is P_{mm,nn-1}, cur[mm] P_{mm,nn}: about m²n values held.
	prev := make([][]float64, m+1)
	for mm := range prev {
		prev[mm] = []float64{1} // P_{mm,0}
	}
	for nn := 1; nn <= n; nn++ {
		cur := make([][]float64, m+1)
		cur[0] = []float64{1}
		for mm := 1; mm <= m; mm++ {
			c := make([]float64, mm*nn+1)
			fa := float64(mm) / float64(mm+nn)
			for u, p := range cur[mm-1] {
				c[u+nn] += fa * p
			}
			fb := float64(nn) / float64(mm+nn)
			for u, p := range prev[mm] {
				c[u] += fb * p
			}
			cur[mm] = c
		}
		prev = cur
	}
	return prev[m]
}
