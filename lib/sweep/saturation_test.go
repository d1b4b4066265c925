package sweep

import (
	"math"
	"strings"
	"testing"
	"time"
)

// fluid samples a run every 250 ms for up to 2 minutes: sessions sent at
// rate lambda, completed at most at capacity, each taking latency, a share
// errRate of them failing; noise wobbles the completions by up to ±3. It
// returns when the detector fired (0: never) and why.
func fluid(s *Saturation, lambda, capacity float64, latency time.Duration, errRate float64) (time.Duration, string) {
	for k := 1; k <= 480; k++ {
		at := time.Duration(k) * 250 * time.Millisecond
		t := at.Seconds()
		sent := lambda * t
		served := max(t-latency.Seconds(), 0)
		done := min(lambda*served, capacity*served)
		done = max(math.Min(done+3*math.Sin(float64(k)*1.7), sent), 0)
		x := Sample{At: at, Sent: int64(sent), Done: int64(done), Errors: int64(errRate * done), MeanLatency: latency}
		if ok, why := s.Add(x); ok {
			return at, why
		}
	}
	return 0, ""
}

func TestSaturation(t *testing.T) {
	win := 10 * time.Second
	for _, tc := range []struct {
		name             string
		lambda, capacity float64
		latency          time.Duration
		errRate          float64
		fire             bool
		within           time.Duration // it fires by then
		reason           string
	}{
		{"keeps up", 50, 100, 200 * time.Millisecond, 0, false, 0, ""},
		{"at the edge", 50, 52, 200 * time.Millisecond, 0, false, 0, ""},
		{"long requests ramping up", 50, 100, 5 * time.Second, 0, false, 0, ""},
		{"overloaded", 50, 30, 200 * time.Millisecond, 0, true, 12 * time.Second, "grew"},
		{"overloaded, long requests", 50, 30, 5 * time.Second, 0, true, 25 * time.Second, "grew"},
		{"failing", 50, 100, 200 * time.Millisecond, 0.2, true, 12 * time.Second, "failed"},
		{"a few failures", 50, 100, 200 * time.Millisecond, 0.05, false, 0, ""},
	} {
		at, why := fluid(&Saturation{Window: win}, tc.lambda, tc.capacity, tc.latency, tc.errRate)
		switch {
		case tc.fire && at == 0:
			t.Errorf("%s: never judged saturated", tc.name)
		case !tc.fire && at != 0:
			t.Errorf("%s: judged saturated at %v: %s", tc.name, at, why)
		case tc.fire && at > tc.within:
			t.Errorf("%s: judged saturated at %v, want by %v", tc.name, at, tc.within)
		case tc.fire && at < win:
			t.Errorf("%s: judged at %v, before the minimum duration %v", tc.name, at, win)
		case tc.fire && !strings.Contains(why, tc.reason):
			t.Errorf("%s: reason %q, want it to say %q", tc.name, why, tc.reason)
		}
	}
}

// TestSaturationClosedLoop: a closed loop sends as it completes: however
// slow the server, only errors can stop it.
func TestSaturationClosedLoop(t *testing.T) {
	s := &Saturation{Window: 5 * time.Second}
	for k := 1; k <= 200; k++ {
		done := int64(k * 3)
		if ok, why := s.Add(Sample{At: time.Duration(k) * 250 * time.Millisecond, Sent: done + 64, Done: done, MeanLatency: time.Second}); ok {
			t.Fatalf("closed loop judged saturated at sample %d: %s", k, why)
		}
	}
}
