package htmlreport

import (
	"math"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

func TestChooseWindows(t *testing.T) {
	for _, tc := range []struct {
		span time.Duration
		d    time.Duration
		n    int
	}{
		{0, time.Millisecond, 1},
		{30 * time.Millisecond, time.Millisecond, 30},
		{61 * time.Millisecond, 2 * time.Millisecond, 31},
		{16800 * time.Millisecond, 500 * time.Millisecond, 34},
		{1000 * time.Second, 20 * time.Second, 50},
		{1001 * time.Second, 20 * time.Second, 51},
		{24 * time.Hour, 2000 * time.Second, 44},
	} {
		w := chooseWindows(100, 100+int64(tc.span))
		if time.Duration(w.d) != tc.d || w.n != tc.n {
			t.Errorf("span %v: windows of %v × %d, want %v × %d", tc.span, time.Duration(w.d), w.n, tc.d, tc.n)
		}
		if w.n > maxWindows || int64(w.n)*w.d < int64(tc.span) {
			t.Errorf("span %v: %d windows of %v do not cover it within %d", tc.span, w.n, time.Duration(w.d), maxWindows)
		}
	}
}

func collect(t *testing.T, recs []result.Record) *Collector {
	t.Helper()
	c, err := NewCollector(metrics.Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		c.Add(&recs[i])
	}
	return c
}

// TestThroughputConserves: the tokens/s of the windows times their lengths
// add up to every output token.
func TestThroughputConserves(t *testing.T) {
	recs := synthetic(3000)
	c := collect(t, recs)
	t0, t1 := span(c)
	w := chooseWindows(t0, t1)
	ch := throughput(c, w, t1, 0, false)
	s := ch.Series[0]
	var total, want float64
	for k := 0; k < w.n; k++ {
		length := min(w.d, t1-(w.t0+int64(k)*w.d))
		total += s.Y[k] * float64(length) / 1e9
	}
	for _, r := range recs {
		if r.Err == nil {
			want += float64(r.OutputTokens)
		}
	}
	if math.Abs(total-want) > 1e-6*want {
		t.Errorf("the windows hold %v tokens, the requests %v", total, want)
	}
}

// TestInFlight: two requests overlapping for a while, then one alone.
func TestInFlight(t *testing.T) {
	const s = int64(time.Second)
	base := int64(1e18)
	recs := []result.Record{
		{SentNS: base, EndNS: base + 4*s, ChunkOffsetsNS: []int64{4 * s}},
		{SentNS: base + 1*s, EndNS: base + 2*s, ChunkOffsetsNS: []int64{s}},
		{SentNS: base + 6*s, EndNS: base + 8*s, Err: &result.Error{Type: "TimeoutError"}},
	}
	c := collect(t, recs)
	t0, t1 := span(c)
	ch := inFlight(c, chooseWindows(t0, t1), t1)
	hi, mean := ch.Series[0], ch.Series[1]
	at := func(ser []float64, x float64) float64 {
		// the value of the step at time x (s)
		v := ser[0]
		for i, xi := range hi.X {
			if xi <= x {
				v = ser[i]
			}
		}
		return v
	}
	for _, tc := range []struct{ x, hi float64 }{{0.5, 1}, {1.5, 2}, {3, 1}, {5, 0}, {7, 1}} {
		if got := at(hi.Y, tc.x); got != tc.hi {
			t.Errorf("highest in flight at %v s: %v, want %v", tc.x, got, tc.hi)
		}
		if got := at(mean.Y, tc.x); math.Abs(got-tc.hi) > 1e-9 {
			t.Errorf("mean in flight at %v s: %v, want %v", tc.x, got, tc.hi)
		}
	}
	if ch.Series[0].X[0] != 0 || hi.X[len(hi.X)-1] != 8 {
		t.Errorf("in flight spans %v to %v s, want 0 to 8", hi.X[0], hi.X[len(hi.X)-1])
	}
}
