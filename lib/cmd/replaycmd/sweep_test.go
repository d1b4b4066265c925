package replaycmd

import (
	"math"
	"testing"
)

// TestSteadyRate: a saturated server with n slots completes n replies
// together every service time; the steady rate is n/S exactly, whatever
// the ramp-up and the drain around it.
func TestSteadyRate(t *testing.T) {
	const s = int64(30e6) // 30 ms
	for _, slots := range []int{1, 2, 3, 8} {
		var ends []int64
		for round := int64(1); round <= 20; round++ {
			for range slots {
				ends = append(ends, round*s)
			}
		}
		// a slow start and a late straggler do not move it
		ends = append(ends, s/10, 40*s)
		got := steadyRate(ends)
		want := float64(slots) / (float64(s) / 1e9)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("%d slots: steady rate %v, want %v", slots, got, want)
		}
	}
	if r := steadyRate([]int64{1, 2, 3}); r != 0 {
		t.Errorf("3 completions: %v, want 0 (too few)", r)
	}
}
