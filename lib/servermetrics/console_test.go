package servermetrics

import (
	"math"
	"testing"
)

var posInf = math.Inf(1)

// TestBucketNote: every percentile the console prints from a histogram is
// marked an estimate, with the bounds of the bucket it was interpolated in
// (fresh-user finding: a server TTFT p50 of 30.88 ms read as a measurement
// beside the client's 27.55 ms).
func TestBucketNote(t *testing.T) {
	// 10 in (0, 10 ms], 80 in (10, 50 ms], 10 in (50 ms, +Inf)
	h := &HistStats{Bounds: []float64{0.01, 0.05, posInf}, Cumulative: []float64{10, 90, 100}}
	want := "(~: estimated from the histogram's buckets: p50 in 10.00-50.00, p90 in 10.00-50.00, p99 in 50.00-+Inf ms)"
	if got := bucketNote(h); got != want {
		t.Errorf("bucketNote = %q, want %q", got, want)
	}
	one := &HistStats{Bounds: []float64{0.01, posInf}, Cumulative: []float64{100, 100}}
	want = "(~: estimated from the histogram's buckets: p50 to p99 all in the 0.00-10.00 ms bucket, which says only that they lie in it)"
	if got := bucketNote(one); got != want {
		t.Errorf("bucketNote = %q, want %q", got, want)
	}
}
