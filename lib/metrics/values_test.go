package metrics

import (
	"math"
	"slices"
	"testing"
)

// TestValuesMatchSummary: the values Values returns are those the summary's
// statistics come from (its p50 and p99 by the same interpolation, to the
// rounding of the unit conversion, and its count), and a tag that is not a
// per-request metric is refused.
func TestValuesMatchSummary(t *testing.T) {
	open := genOpen(300, nil)
	o := Options{Streaming: true}
	sum, err := Summarize(open, o)
	if err != nil {
		t.Fatal(err)
	}
	tags := []string{"time_to_first_token", "inter_token_latency", "request_latency"}
	src, _, _ := open()
	vals, err := Values(src, o, tags...)
	if err != nil {
		t.Fatal(err)
	}
	for k, tag := range tags {
		r := sum.Get(tag)
		v := slices.Clone(vals[k])
		slices.Sort(v)
		if int64(len(v)) != r.Count {
			t.Fatalf("%s: %d values, summary counts %d", tag, len(v), r.Count)
		}
		for j, p := range []float64{50, 99} {
			got, want := PercentileSorted(v, p), r.P[4+4*j]
			if math.Abs(got-want) > 1e-12*math.Abs(want) {
				t.Errorf("%s p%v: got %v, want %v", tag, p, got, want)
			}
		}
	}
	src, _, _ = open()
	if _, err := Values(src, o, "request_throughput"); err == nil {
		t.Error("request_throughput: want an error (not per request)")
	}
}
