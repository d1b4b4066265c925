package plot

import (
	"math"
	"strconv"
	"strings"
)

// ticks are evenly spaced values first, first+step, ..., last.
type ticks struct {
	first, last, step float64
}

// niceTicks returns about n ticks covering [lo, hi] with a step of 1, 2 or
// 5 times a power of ten (Heckbert, "Nice numbers for graph labels",
// Graphics Gems, 1990: the range and the step are both rounded to nice
// numbers, first and last are the ticks at or just outside lo and hi).
func niceTicks(lo, hi float64, n int) ticks {
	span := nice(hi-lo, false)
	step := nice(span/float64(max(n-1, 1)), true)
	if !(step > 0) || !finite(step) {
		return ticks{lo, lo, 0}
	}
	return ticks{first: math.Floor(lo/step) * step, last: math.Ceil(hi/step) * step, step: step}
}

// nice rounds x to 1, 2, 5 or 10 times a power of ten: to the nearest
// when round, else to the one at or above.
func nice(x float64, round bool) float64 {
	if !(x > 0) || !finite(x) {
		return 0
	}
	e := math.Floor(math.Log10(x))
	f := x / math.Pow(10, e)
	var nf float64
	switch {
	case round && f < 1.5, !round && f <= 1:
		nf = 1
	case round && f < 3, !round && f <= 2:
		nf = 2
	case round && f < 7, !round && f <= 5:
		nf = 5
	default:
		nf = 10
	}
	return nf * math.Pow(10, e)
}

// within returns the ticks that lie in [lo, hi].
func (t ticks) within(lo, hi float64) ticks {
	if t.step == 0 {
		return ticks{lo, lo, 0}
	}
	eps := t.step * 1e-9
	first := math.Ceil((lo-eps)/t.step) * t.step
	last := math.Floor((hi+eps)/t.step) * t.step
	if !(first <= last) || !finite(first) || !finite(last) {
		// a range too narrow for its step's arithmetic: its two ends
		if d := hi - lo; d > 0 && finite(d) {
			return ticks{first: lo, last: hi, step: d}
		}
		return ticks{lo, lo, 0}
	}
	return ticks{first: first, last: last, step: t.step}
}

// values lists the ticks (at most 50: a step too small for its range,
// which the layout never asks for, gives fewer rather than millions).
func (t ticks) values() []float64 {
	if t.step == 0 {
		return []float64{t.first}
	}
	var out []float64
	n := int(math.Round((t.last-t.first)/t.step)) + 1
	for i := 0; i < n && i < 50; i++ {
		v := t.first + float64(i)*t.step
		if math.Abs(v) < t.step*1e-9 {
			v = 0
		}
		out = append(out, v)
	}
	return out
}

// label formats a tick with as many decimals as the step needs, and
// thousands (k) or millions (M) for large values: 0.25, 12, 1,500, 20k,
// 1.5M.
func (t ticks) label(v float64) string {
	if v == 0 {
		return "0"
	}
	step := t.step
	if step == 0 {
		step = math.Abs(v)
	}
	suffix := ""
	div := 1.0
	switch m := math.Max(math.Abs(t.first), math.Abs(t.last)); {
	case m >= 1e7:
		suffix, div = "M", 1e6
	case m >= 1e4:
		suffix, div = "k", 1e3
	}
	v /= div
	step /= div
	dec := 0
	if step > 0 && step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
		// 0.25 needs two decimals where the step 0.05 rounds to one.
		for dec < 12 && math.Abs(step*math.Pow(10, float64(dec))-math.Round(step*math.Pow(10, float64(dec)))) > 1e-6 {
			dec++
		}
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if s == "-0" || strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	return group(s) + suffix
}

// group puts thousands separators into the integer part of a formatted
// number.
func group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}
