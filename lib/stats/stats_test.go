package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) != math.IsNaN(want) {
		t.Errorf("%s: got %.10g, want %.10g (±%g)", what, got, want, tol)
	}
}

func seq(lo, hi float64) []float64 {
	var out []float64
	for v := lo; v <= hi; v++ {
		out = append(out, v)
	}
	return out
}

// TestMannWhitneyExact: values of the exact null distribution that a
// table (or a count of arrangements) gives.
func TestMannWhitneyExact(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		u, p float64
	}{
		// All 5 below all 5: one arrangement in C(10,5) = 252, two-sided.
		{"separated 5+5", seq(1, 5), seq(6, 10), 0, 2.0 / 252},
		{"separated 5+5, reversed", seq(6, 10), seq(1, 5), 25, 2.0 / 252},
		// m = n = 3: the counts of U = 0..9 are 1 1 2 3 3 3 3 2 1 1 (of
		// 20); U = 3: P(U <= 3) = 7/20.
		{"interleaved 3+3", []float64{1, 3, 5}, []float64{2, 4, 6}, 3, 0.7},
		{"separated 3+3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1},
		// Middle of the distribution: capped at 1.
		{"center 2+2", []float64{1, 4}, []float64{2, 3}, 2, 1},
	} {
		r := MannWhitney(tc.x, tc.y)
		if r.Method != MethodExact {
			t.Errorf("%s: method %s, want exact", tc.name, r.Method)
		}
		near(t, tc.name+" U", r.U, tc.u, 0)
		near(t, tc.name+" p", r.P, tc.p, 1e-12)
	}
}

// TestUDist: the exact distribution sums to 1 and is symmetric.
func TestUDist(t *testing.T) {
	for _, mn := range [][2]int{{1, 1}, {3, 7}, {50, 50}, {12, 40}} {
		d := uDist(mn[0], mn[1])
		if len(d) != mn[0]*mn[1]+1 {
			t.Fatalf("%v: %d values", mn, len(d))
		}
		s := 0.0
		for i, p := range d {
			s += p
			near(t, "symmetry", p, d[len(d)-1-i], 1e-15)
		}
		near(t, "total", s, 1, 1e-12)
	}
	// 50+50: the extreme tail is one arrangement of C(100,50).
	lc := func(n, k float64) float64 {
		a, _ := math.Lgamma(n + 1)
		b, _ := math.Lgamma(k + 1)
		c, _ := math.Lgamma(n - k + 1)
		return a - b - c
	}
	d := uDist(50, 50)
	near(t, "P(U=0), 50+50", math.Log(d[0]), -lc(100, 50), 1e-9)
}

// TestMannWhitneyTies works the normal approximation by hand:
//
//	x = 1 2 2 3 4, y = 2 3 5 6 7 8
//	pooled ranks: 1→1, 2 2 2→3, 3 3→5.5, 4→7, 5→8, 6→9, 7→10, 8→11
//	R_x = 1+3+3+5.5+7 = 19.5, U = 19.5 - 15 = 4.5, mean 15
//	ties: (27-3)+(8-2) = 30; var = 30/12·(12 - 30/110) = 29.318181...
//	z = (10.5 - 0.5)/√29.318181 = 1.846849..., p = erfc(z/√2) ≈ 0.0648
func TestMannWhitneyTies(t *testing.T) {
	r := MannWhitney([]float64{1, 2, 2, 3, 4}, []float64{2, 3, 5, 6, 7, 8})
	if r.Method != MethodNormal || !r.Ties {
		t.Fatalf("method %s ties %v, want normal with ties", r.Method, r.Ties)
	}
	near(t, "U", r.U, 4.5, 1e-12)
	z := 10 / math.Sqrt(2.5*(12-30.0/110))
	near(t, "z by hand", z, 1.846849, 1e-6)
	near(t, "p", r.P, math.Erfc(z/math.Sqrt2), 1e-12)
	near(t, "p (normal table: Φ(1.8468) = 0.96762)", r.P, 0.06476, 2e-4)
}

func TestMannWhitneyIdentical(t *testing.T) {
	x := []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}
	if r := MannWhitney(x, x); r.P != 1 {
		t.Errorf("identical samples: p = %v, want 1", r.P)
	}
	same := []float64{7, 7, 7, 7}
	if r := MannWhitney(same, same[:3]); r.P != 1 {
		t.Errorf("all values equal: p = %v, want 1", r.P)
	}
	if r := MannWhitney(nil, x); !math.IsNaN(r.P) {
		t.Errorf("empty sample: p = %v, want NaN", r.P)
	}
}

func TestMannWhitneyShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var x, y []float64
	for range 200 {
		v := rng.NormFloat64()
		x = append(x, v)
		y = append(y, rng.NormFloat64()+3)
	}
	r := MannWhitney(x, y)
	if r.Method != MethodNormal || r.P > 1e-20 {
		t.Errorf("shift of 3 sd, 200 a side: %s p = %g, want normal, < 1e-20", r.Method, r.P)
	}
	if r.U > 200*200/10 {
		t.Errorf("U = %v: x is the smaller sample, U should be near 0", r.U)
	}
}

// TestMannWhitneyExactVsNormal: at the largest exact size the two methods
// agree (the normal approximation is good there), so the switch does not
// jump.
func TestMannWhitneyExactVsNormal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for rep := range 8 {
		x := make([]float64, MaxExact)
		y := make([]float64, MaxExact)
		shift := float64(rep%5) * 0.2
		for i := range x {
			x[i] = rng.Float64()
			y[i] = rng.Float64() + shift
		}
		r := MannWhitney(x, y)
		if r.Method != MethodExact {
			t.Fatal("want exact")
		}
		mu, sd := float64(MaxExact*MaxExact)/2, math.Sqrt(float64(MaxExact*MaxExact)*(2*MaxExact+1)/12)
		z := (math.Abs(r.U-mu) - 0.5) / sd
		near(t, "exact vs normal", r.P, min(1, 2*NormalSF(max(z, 0))), 0.002)
	}
}

// TestMannWhitneyCalibrated: under the null hypothesis p < 0.05 happens
// about 5% of the time (1,000 seeded repetitions; the binomial sd is
// 0.7 points), for both methods.
func TestMannWhitneyCalibrated(t *testing.T) {
	reps := 1000
	if testing.Short() {
		reps = 500
	}
	for _, n := range []int{20, 120} {
		rng := rand.New(rand.NewPCG(uint64(n), 5))
		hits := 0
		for range reps {
			x := make([]float64, n)
			y := make([]float64, n)
			for i := range x {
				x[i] = rng.ExpFloat64()
				y[i] = rng.ExpFloat64()
			}
			if MannWhitney(x, y).P < 0.05 {
				hits++
			}
		}
		if rate := float64(hits) / float64(reps); rate < 0.03 || rate > 0.07 {
			t.Errorf("n=%d: false positive rate %.3f, want about 0.05", n, rate)
		}
	}
}

// TestSameDistributionNotSignificant: two samples of TTFT-like values
// (lognormal around 20 ms) from one distribution are not significant in
// at least 19 of 20 seeded repetitions; a +50% shift is significant in all.
func TestSameDistributionNotSignificant(t *testing.T) {
	draw := func(rng *rand.Rand, n int, scale float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = scale * 20 * math.Exp(0.25*rng.NormFloat64())
		}
		return out
	}
	same, shifted := 0, 0
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 99))
		if MannWhitney(draw(rng, 100, 1), draw(rng, 100, 1)).P >= 0.05 {
			same++
		}
		if MannWhitney(draw(rng, 100, 1), draw(rng, 100, 1.5)).P < 0.05 {
			shifted++
		}
	}
	if same < 19 {
		t.Errorf("same distribution: %d of 20 not significant, want >= 19", same)
	}
	if shifted != 20 {
		t.Errorf("+50%%: %d of 20 significant, want 20", shifted)
	}
}

// TestRegIncBeta against closed forms: I_x(1,1) = x, I_x(a,1) = x^a,
// I_x(1,b) = 1-(1-x)^b, I_.5(a,a) = .5, and for whole a, b the binomial
// sum I_x(a,b) = Σ_{j=a}^{a+b-1} C(a+b-1,j) x^j (1-x)^(a+b-1-j).
func TestRegIncBeta(t *testing.T) {
	for _, x := range []float64{0, 1e-9, 0.01, 0.2, 0.5, 0.77, 0.999, 1} {
		near(t, "I(1,1)", RegIncBeta(x, 1, 1), x, 1e-14)
		near(t, "I(3.5,1)", RegIncBeta(x, 3.5, 1), math.Pow(x, 3.5), 1e-14)
		near(t, "I(1,7)", RegIncBeta(x, 1, 7), 1-math.Pow(1-x, 7), 1e-14)
		for _, ab := range [][2]int{{2, 3}, {5, 5}, {1, 12}, {30, 4}, {60, 70}} {
			a, b := ab[0], ab[1]
			want := 0.0
			n := a + b - 1
			for j := a; j <= n; j++ {
				lc, _ := math.Lgamma(float64(n + 1))
				l1, _ := math.Lgamma(float64(j + 1))
				l2, _ := math.Lgamma(float64(n - j + 1))
				term := math.Exp(lc - l1 - l2)
				want += term * math.Pow(x, float64(j)) * math.Pow(1-x, float64(n-j))
			}
			near(t, "I binomial", RegIncBeta(x, float64(a), float64(b)), want, 1e-12)
		}
	}
	for _, a := range []float64{0.5, 3, 41.5} {
		near(t, "I.5(a,a)", RegIncBeta(0.5, a, a), 0.5, 1e-13)
	}
	if !math.IsNaN(RegIncBeta(1.5, 1, 1)) || !math.IsNaN(RegIncBeta(0.5, 0, 1)) {
		t.Error("out of domain: want NaN")
	}
}

// TestTCDF against closed forms (df 1: Cauchy, df 2), against Simpson's
// rule on the density for a fractional df, and against the critical
// values every t table prints.
func TestTCDF(t *testing.T) {
	for _, v := range []float64{-30, -2.5, -0.3, 0, 0.7, 1.96, 12.706, 100} {
		near(t, "df1", TCDF(v, 1), 0.5+math.Atan(v)/math.Pi, 1e-13)
		near(t, "df2", TCDF(v, 2), 0.5+v/(2*math.Sqrt(2+v*v)), 1e-13)
	}
	// Simpson on f(t) = Γ((ν+1)/2)/(√(νπ)Γ(ν/2)) (1+t²/ν)^-(ν+1)/2.
	nu := 5.882353
	lg1, _ := math.Lgamma((nu + 1) / 2)
	lg2, _ := math.Lgamma(nu / 2)
	c := math.Exp(lg1-lg2) / math.Sqrt(nu*math.Pi)
	f := func(x float64) float64 { return c * math.Pow(1+x*x/nu, -(nu+1)/2) }
	for _, up := range []float64{0.5, 1.897367, 4} {
		const steps = 2000
		h := up / steps
		s := f(0) + f(up)
		for i := 1; i < steps; i++ {
			w := 2.0
			if i%2 == 1 {
				w = 4
			}
			s += w * f(float64(i)*h)
		}
		near(t, "Simpson", TCDF(up, nu), 0.5+s*h/3, 1e-10)
	}
	for _, tc := range []struct{ p, df, t float64 }{
		{0.975, 1, 12.706205}, {0.975, 4, 2.776445}, {0.975, 10, 2.228139}, {0.975, 30, 2.042272},
		{0.995, 5, 4.032143}, {0.95, 20, 1.724718}, {0.975, 1e7, 1.959964},
	} {
		near(t, "TQuantile", TQuantile(tc.p, tc.df), tc.t, 5e-6)
		near(t, "TCDF at the quantile", TCDF(tc.t, tc.df), tc.p, 1e-6)
		near(t, "lower quantile", TQuantile(1-tc.p, tc.df), -tc.t, 5e-6)
	}
}

// TestWelch works an example by hand: x = 1..5 (mean 3, var 2.5), y =
// 2,4,..,10 (mean 6, var 10): t = -3/√(0.5+2) = -1.897367, df = 2.5² /
// (0.5²/4 + 2²/4) = 5.882353.
func TestWelch(t *testing.T) {
	r, ok := Welch(seq(1, 5), []float64{2, 4, 6, 8, 10})
	if !ok {
		t.Fatal("not ok")
	}
	near(t, "t", r.T, -1.897367, 1e-6)
	near(t, "df", r.DF, 5.882353, 1e-6)
	near(t, "p", r.P, 2*TCDF(-1.897367, 5.882353), 1e-6)
	if r.P < 0.09 || r.P > 0.12 { // between the t table's 0.10 (1.943) and 0.05 levels at df 6
		t.Errorf("p = %v, want about 0.107", r.P)
	}
	if r, _ := Welch([]float64{10, 11, 12}, []float64{10, 11, 12}); r.P != 1 {
		t.Errorf("equal samples: p = %v, want 1", r.P)
	}
	if _, ok := Welch([]float64{1}, []float64{1, 2}); ok {
		t.Error("one value: want no test")
	}
	if _, ok := Welch([]float64{3, 3}, []float64{4, 4}); ok {
		t.Error("no variance: want no test")
	}
	r, _ = Welch([]float64{100, 101, 99, 100.5}, []float64{150, 151, 149, 150.2})
	if r.P > 1e-6 {
		t.Errorf("+50%%: p = %g, want tiny", r.P)
	}
}

func TestMeanCI(t *testing.T) {
	// 1..5: mean 3, s/√n = √2.5/√5 = 0.707107, t(0.975, 4) = 2.776445.
	m, lo, hi, ok := MeanCI(seq(1, 5), 0.95)
	if !ok {
		t.Fatal("not ok")
	}
	near(t, "mean", m, 3, 0)
	near(t, "lo", lo, 3-2.776445*0.7071068, 1e-5)
	near(t, "hi", hi, 3+2.776445*0.7071068, 1e-5)
	if _, _, _, ok := MeanCI([]float64{1}, 0.95); ok {
		t.Error("one value: want no interval")
	}
}

// TestFisherExact against the classic examples: the lady tasting tea
// (3 1 / 1 3: 17/35) and the dieting table of the Wikipedia article
// (1 9 / 11 3: 0.002759).
func TestFisherExact(t *testing.T) {
	near(t, "tea", FisherExact(3, 1, 1, 3), 17.0/35, 1e-12)
	near(t, "dieting", FisherExact(1, 9, 11, 3), 0.002759, 1e-6)
	near(t, "transposed", FisherExact(1, 11, 9, 3), 0.002759, 1e-6)
	near(t, "proportional", FisherExact(5, 95, 10, 190), 1, 1e-12)
	near(t, "empty row", FisherExact(0, 0, 3, 4), 1, 0)
}

func TestQuantileTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var x, y []float64
	for range 1000 {
		x = append(x, 20*math.Exp(0.2*rng.NormFloat64()))
		y = append(y, 30*math.Exp(0.2*rng.NormFloat64()))
	}
	if r := QuantileTest(x, y, 99); r.P > 1e-4 || r.AboveX >= r.AboveY {
		t.Errorf("+50%%, 1000 a side: %+v, want tiny p, y above", r)
	}
	if r := QuantileTest(x, x, 99); math.Abs(r.P-1) > 1e-9 {
		t.Errorf("identical: p = %v, want 1", r.P)
	}
	// 30 a side: only the largest value is above the pooled p99, so no
	// difference can be significant.
	if r := QuantileTest(x[:30], y[:30], 99); math.Abs(r.P-1) > 1e-9 || r.AboveX+r.AboveY != 1 {
		t.Errorf("30 a side: %+v, want p 1 with one value above", r)
	}
}

func TestPercentile(t *testing.T) {
	s := []float64{1, 2, 3, 4, 10}
	near(t, "p50", Percentile(s, 50), 3, 0)
	near(t, "p99", Percentile(s, 99), 4+0.96*6, 1e-12)
	near(t, "p0", Percentile(s, 0), 1, 0)
	near(t, "p100", Percentile(s, 100), 10, 0)
}

// FuzzMannWhitney: any two samples give a U within [0, n1·n2] and a
// p-value within [0, 1]; swapping the samples gives the other U and the
// same p.
func FuzzMannWhitney(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7}, 3)
	f.Add([]byte{9, 9, 9, 9}, 2)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		if len(b) < 2 || len(b) > 400 {
			return
		}
		cut = 1 + (cut%(len(b)-1)+len(b)-1)%(len(b)-1)
		var x, y []float64
		for i, v := range b {
			if i < cut {
				x = append(x, float64(v))
			} else {
				y = append(y, float64(v))
			}
		}
		r, s := MannWhitney(x, y), MannWhitney(y, x)
		n := float64(len(x) * len(y))
		if r.U < 0 || r.U > n || r.P < 0 || r.P > 1 || math.IsNaN(r.P) {
			t.Fatalf("%v %v: %+v", x, y, r)
		}
		if math.Abs(r.U+s.U-n) > 1e-9 || math.Abs(r.P-s.P) > 1e-9 {
			t.Fatalf("%v %v: %+v, swapped %+v", x, y, r, s)
		}
	})
}

// TestMinP: the smallest p-value each test can reach at its sizes, against
// closed forms (Fisher's on the extreme table; 2/C(m+n, m) for the exact U).
func TestMinP(t *testing.T) {
	seq := func(n int, from float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = from + float64(i)
		}
		return v
	}
	// the p99 quantile test on distinct values: Fisher's exact test of
	// [[k, n-k], [0, n]] with k the values above the pooled p99, which is
	// 2·C(n, k)/C(2n, k) (k = 2, 4, 5, 6)
	for _, c := range []struct {
		n    int
		want float64
	}{{100, 0.497487437}, {200, 0.123122668}, {250, 0.061251275}, {300, 0.030471376}} {
		q := QuantileTest(seq(c.n, 0), seq(c.n, 0.5), 99)
		if math.Abs(q.MinP-c.want) > 1e-8 || q.P < q.MinP {
			t.Errorf("quantile test, %d a side: MinP %.4f (P %.4f), want %.4f", c.n, q.MinP, q.P, c.want)
		}
	}
	// with ties, the most extreme split of the values as they are: {1,1,2}
	// against {2,2,2} is it already (U=0 cannot be reached: review finding)
	if u := MannWhitney([]float64{1, 1, 2}, []float64{2, 2, 2}); u.MinP != u.P || u.P < 0.05 {
		t.Errorf("ties: MinP %v, P %v; want equal, above 0.05", u.MinP, u.P)
	}
	if u := MannWhitney([]float64{1, 1, 1}, []float64{2, 2, 2}); u.MinP != u.P {
		t.Errorf("ties, apart: MinP %v, P %v; want equal", u.MinP, u.P)
	}
	if got := FisherMinP(10, 10, 0); got != 1 {
		t.Errorf("FisherMinP without a failure = %v, want 1", got)
	}
	for _, c := range []struct {
		m, n int
		want float64
	}{{3, 3, 0.1}, {1, 60, 2.0 / 61}, {5, 5, 2.0 / 252}, {1, 2500, 2.0 / 2501}} {
		u := MannWhitney(seq(c.m, 0), seq(c.n, 0.5))
		if u.Method != MethodExact || math.Abs(u.MinP-c.want) > 1e-12 {
			t.Errorf("U %d against %d: MinP %v by %s, want %v exact", c.m, c.n, u.MinP, u.Method, c.want)
		}
	}
}
