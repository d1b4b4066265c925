package stats

import "math"

// RegIncBeta is the regularized incomplete beta function I_x(a, b) for
// a, b > 0 and 0 <= x <= 1, from its continued fraction (evaluated with
// Lentz's method, on the side of x where it converges fast).
func RegIncBeta(x, a, b float64) float64 {
	switch {
	case math.IsNaN(x) || a <= 0 || b <= 0 || x < 0 || x > 1:
		return math.NaN()
	case x == 0:
		return 0
	case x == 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(a*math.Log(x) + b*math.Log1p(-x) - (la + lb - lab))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(x, a, b) / a
	}
	return 1 - front*betaCF(1-x, b, a)/b
}

// betaCF evaluates the continued fraction
//
//	1/(1+ d1/(1+ d2/(1+ ...)))
//	d_{2k+1} = -(a+k)(a+b+k) x / ((a+2k)(a+2k+1))
//	d_{2k}   =  k(b-k) x / ((a+2k-1)(a+2k))
//
// by the modified Lentz method.
func betaCF(x, a, b float64) float64 {
	const tiny = 1e-300
	const eps = 1e-15
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for k := 1; k <= 10000; k++ {
		fk := float64(k)
		// even step d_{2k}
		num := fk * (b - fk) * x / ((a + 2*fk - 1) * (a + 2*fk))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		// odd step d_{2k+1}
		num = -(a + fk) * (a + b + fk) * x / ((a + 2*fk) * (a + 2*fk + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// TCDF is P(T <= t) for Student's t distribution with df degrees of
// freedom (df > 0, not necessarily whole).
func TCDF(t, df float64) float64 {
	if math.IsNaN(t) || df <= 0 {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		if t > 0 {
			return 1
		}
		return 0
	}
	tail := 0.5 * RegIncBeta(df/(df+t*t), df/2, 0.5) // P(T > |t|)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// TQuantile is the t with TCDF(t, df) = p, for 0 < p < 1 (by bisection,
// to a relative precision near 1e-12).
func TQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || df <= 0 {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for TCDF(hi, df) < p {
		lo, hi = hi, hi*2
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if TCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-13*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// TResult is the outcome of Welch's t test.
type TResult struct {
	T  float64 // (mean(x) - mean(y)) / sqrt(var(x)/n_x + var(y)/n_y)
	DF float64 // the Welch–Satterthwaite degrees of freedom
	P  float64 // two-sided
}

// Welch runs Welch's two-sided t test of mean(x) = mean(y) without
// assuming equal variances. ok is false when either side has fewer than two
// values or both have no variance (then no t exists; equal means are not a
// difference, different ones are not a tested one).
func Welch(x, y []float64) (r TResult, ok bool) {
	if len(x) < 2 || len(y) < 2 {
		return r, false
	}
	n1, n2 := float64(len(x)), float64(len(y))
	s1, s2 := Variance(x)/n1, Variance(y)/n2
	if s1+s2 == 0 {
		return r, false
	}
	r.T = (Mean(x) - Mean(y)) / math.Sqrt(s1+s2)
	r.DF = (s1 + s2) * (s1 + s2) / (s1*s1/(n1-1) + s2*s2/(n2-1))
	// P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2), without 1 - (1 - tiny).
	r.P = RegIncBeta(r.DF/(r.DF+r.T*r.T), r.DF/2, 0.5)
	return r, true
}

// MeanCI returns the mean of xs and the bounds of its two-sided confidence
// interval at level (e.g. 0.95) from Student's t with n-1 degrees of
// freedom: mean ± t_{(1+level)/2, n-1} · s/√n. ok is false below two
// values or for a level outside (0, 1).
func MeanCI(xs []float64, level float64) (mean, lo, hi float64, ok bool) {
	mean = Mean(xs)
	if len(xs) < 2 || !(level > 0 && level < 1) {
		return mean, math.NaN(), math.NaN(), false
	}
	n := float64(len(xs))
	half := TQuantile((1+level)/2, n-1) * math.Sqrt(Variance(xs)/n)
	return mean, mean - half, mean + half, true
}
