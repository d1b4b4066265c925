package metrics

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// exact runs the multi-pass machinery of Summarize over values in memory.
func exact(t testing.TB, values []float64, budget int64) (stats, int) {
	t.Helper()
	d := &dist{}
	for _, v := range values {
		d.add1(v)
	}
	d.afterPass1()
	plan([]*dist{d}, budget)
	passes := 1
	for pass := 2; ; pass++ {
		for _, v := range values {
			d.addN(v, pass)
		}
		if !d.afterPass() {
			t.Fatal("afterPass: counts differ")
		}
		passes = pass
		if !plan([]*dist{d}, budget) {
			break
		}
		if pass > 10 {
			t.Fatal("more than 10 passes")
		}
	}
	return d.finish(), passes
}

// refPercentile is numpy.percentile(method="linear") written from its
// definition, independently of the package: sort, virtual index (n-1)*p/100,
// interpolate the two neighbours; numpy computes the interpolation from the
// upper neighbour when the fraction is at least one half.
func refPercentile(values []float64, p float64) float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	n := len(s)
	h := float64(n-1) * (p / 100)
	if h >= float64(n-1) {
		return s[n-1]
	}
	i := int(math.Floor(h))
	frac := h - float64(i)
	a, b := s[i], s[i+1]
	diff := b - a
	if frac >= 0.5 {
		return b - float64(diff*(1-frac))
	}
	return a + float64(diff*frac)
}

func refMeanStd(values []float64) (float64, float64) {
	var sum float64
	for _, v := range values {
		sum += v
	}
	mean := sum / float64(len(values))
	var sq float64
	for _, v := range values {
		sq += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sq / float64(len(values)))
}

func closeRel(a, b, rel float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

type numpySet struct {
	Name        string
	Values      []float64
	Min, Max    float64
	Mean, Std   float64
	Percentiles []float64
}

// TestNumpyParity checks against values numpy itself computed
// (testdata/numpy_percentiles.py): percentiles, min and max bit for bit,
// mean and std within a few ulps (numpy sums pairwise, this package with
// compensated summation).
func TestNumpyParity(t *testing.T) {
	b, err := os.ReadFile("testdata/numpy_percentiles.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Numpy string
		Sets  []numpySet
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Sets) < 10 {
		t.Fatalf("only %d data sets", len(f.Sets))
	}
	for _, set := range f.Sets {
		for _, budget := range []int64{1, 16, 1 << 20} {
			s, passes := exact(t, set.Values, budget)
			for i, p := range Percentiles {
				if s.p[i] != set.Percentiles[i] {
					t.Errorf("%s budget %d: p%g = %v, numpy %s says %v", set.Name, budget, p, s.p[i], f.Numpy, set.Percentiles[i])
				}
				if got := PercentileSorted(sorted(set.Values), p); got != set.Percentiles[i] {
					t.Errorf("%s: PercentileSorted p%g = %v, numpy says %v", set.Name, p, got, set.Percentiles[i])
				}
			}
			if s.min != set.Min || s.max != set.Max {
				t.Errorf("%s: min/max %v/%v, numpy %v/%v", set.Name, s.min, s.max, set.Min, set.Max)
			}
			if !closeRel(s.avg, set.Mean, 1e-14) || !closeRel(s.std, set.Std, 1e-12) {
				t.Errorf("%s: mean/std %v/%v, numpy %v/%v", set.Name, s.avg, s.std, set.Mean, set.Std)
			}
			if s.n != int64(len(set.Values)) {
				t.Errorf("%s: n %d", set.Name, s.n)
			}
			_ = passes
		}
	}
}

func sorted(v []float64) []float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// TestExactAgainstReference draws many distributions and sizes, with
// budgets from one value (every bucket refines, many passes) to plenty.
func TestExactAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func() float64{
		"uniform_int_ns": func() float64 { return float64(rng.Int64N(50_000_000)) },
		"lognormal":      func() float64 { return math.Exp(rng.NormFloat64()*0.7 + 17) },
		"few_values":     func() float64 { return float64([]int{1, 2, 2, 3, 900}[rng.IntN(5)]) },
		"signed":         func() float64 { return rng.NormFloat64() * 1e6 },
		"near_equal":     func() float64 { return 1 + float64(rng.IntN(4))*math.SmallestNonzeroFloat64 },
		"ulp_apart":      func() float64 { return math.Nextafter(1e9, math.Inf(1)) * float64(1+rng.IntN(2)) },
		"with_zeros":     func() float64 { return float64(rng.IntN(3)) * math.Copysign(0, -1+float64(rng.IntN(2))*2) },
	}
	sizes := []int{1, 2, 3, 7, 100, 101, 1000, 4099}
	budgets := []int64{1, 64, 1 << 20}
	if testing.Short() {
		sizes = sizes[:6]
	}
	for name, gen := range gens {
		for _, n := range sizes {
			values := make([]float64, n)
			for i := range values {
				values[i] = gen()
			}
			wantMean, wantStd := refMeanStd(values)
			for _, budget := range budgets {
				s, passes := exact(t, values, budget)
				for i, p := range Percentiles {
					if want := refPercentile(values, p); s.p[i] != want {
						t.Fatalf("%s n=%d budget=%d: p%g = %v, want %v (passes %d)", name, n, budget, p, s.p[i], want, passes)
					}
				}
				if !closeRel(s.avg, wantMean, 1e-12) && math.Abs(s.avg-wantMean) > 1e-300 {
					t.Errorf("%s n=%d: mean %v want %v", name, n, s.avg, wantMean)
				}
				if !closeRel(s.std, wantStd, 1e-9) && math.Abs(s.std-wantStd) > 1e-300 {
					t.Errorf("%s n=%d: std %v want %v", name, n, s.std, wantStd)
				}
			}
		}
	}
}

// TestPassesAndBudget: with a budget too small to hold a bucket, the
// summary takes more passes and stays exact; with a budget that holds the
// buckets it takes two.
func TestPassesAndBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := make([]float64, 200_000)
	for i := range values {
		values[i] = math.Exp(rng.NormFloat64()*0.2 + 17)
	}
	_, two := exact(t, values, 1<<20)
	if two != 2 {
		t.Errorf("default budget: %d passes, want 2", two)
	}
	s, many := exact(t, values, 8)
	if many <= 2 {
		t.Errorf("budget 8: %d passes, want more than 2", many)
	}
	for i, p := range Percentiles {
		if want := refPercentile(values, p); s.p[i] != want {
			t.Fatalf("budget 8: p%g = %v, want %v", p, s.p[i], want)
		}
	}
}

func TestKeyOrder(t *testing.T) {
	vals := []float64{math.Inf(-1), -1e300, -1, -math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64, 1, 1.5, 1e300, math.Inf(1)}
	for i := 1; i < len(vals); i++ {
		if key(vals[i-1]) >= key(vals[i]) {
			t.Errorf("key(%v) >= key(%v)", vals[i-1], vals[i])
		}
	}
	if key(math.Copysign(0, -1)) != key(0) {
		t.Error("-0 and 0 have different keys")
	}
}
