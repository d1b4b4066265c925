package mock

import (
	"testing"
	"time"
)

// TestJitterRanges: the intended schedule keeps the documented ranges. The
// first token is due at TTFT ± the TTFT jitter alone (exactly TTFT with no
// TTFT jitter, whatever the ITL jitter), and every later gap is ITL ± the
// ITL jitter, never negative, spread over the whole range. (Deterministic:
// the times are the clock's intended ones, not measured sleeps.)
func TestJitterRanges(t *testing.T) {
	arrived := time.Unix(1000, 0)
	for _, tc := range []struct {
		name                     string
		ttft, ttftJ, itl, itlJ   time.Duration
		ttftLo, ttftHi, gLo, gHi time.Duration
	}{
		{"the issue's case", 20 * time.Millisecond, 0, 10 * time.Millisecond, 5 * time.Millisecond,
			20 * time.Millisecond, 20 * time.Millisecond, 5 * time.Millisecond, 15 * time.Millisecond},
		{"both jittered", 20 * time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond, 2 * time.Millisecond,
			17 * time.Millisecond, 23 * time.Millisecond, 8 * time.Millisecond, 12 * time.Millisecond},
		{"jitter above the ITL: gaps stop at 0", 20 * time.Millisecond, 0, 2 * time.Millisecond, 5 * time.Millisecond,
			20 * time.Millisecond, 20 * time.Millisecond, 0, 7 * time.Millisecond},
	} {
		s, err := New(Config{TTFT: tc.ttft, TTFTJitter: tc.ttftJ, ITL: tc.itl, ITLJitter: tc.itlJ, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		minT, maxT := time.Duration(1<<62), time.Duration(-1)
		minG, maxG := time.Duration(1<<62), time.Duration(-1<<62)
		for n := range uint64(300) {
			rg := newRNG(7, n)
			c := s.schedule(arrived, &rg)
			prev := c.due(0)
			ttft := prev.Sub(arrived)
			minT, maxT = min(minT, ttft), max(maxT, ttft)
			for i := 1; i < 50; i++ {
				d := c.due(i)
				g := d.Sub(prev)
				minG, maxG = min(minG, g), max(maxG, g)
				prev = d
			}
			// A non-streamed reply waits for its last token's due time,
			// asked for at once: the same schedule.
			rg = newRNG(7, n)
			if last := s.schedule(arrived, &rg).due(49); !last.Equal(prev) {
				t.Fatalf("%s: due(49) asked first is %v, asked in order %v", tc.name, last.Sub(arrived), prev.Sub(arrived))
			}
		}
		if minT < tc.ttftLo || maxT > tc.ttftHi {
			t.Errorf("%s: TTFT in [%v, %v], want within [%v, %v]", tc.name, minT, maxT, tc.ttftLo, tc.ttftHi)
		}
		if minG < tc.gLo || maxG > tc.gHi {
			t.Errorf("%s: gaps in [%v, %v], want within [%v, %v]", tc.name, minG, maxG, tc.gLo, tc.gHi)
		}
		// 14,700 uniform gaps reach within 5% of both ends of their range.
		slack := (tc.gHi - tc.gLo) / 20
		if tc.gLo == 0 {
			slack = tc.itlJ / 20 // the clamp piles gaps up at 0
		}
		if minG > tc.gLo+slack || maxG < tc.gHi-slack {
			t.Errorf("%s: gaps in [%v, %v] do not span [%v, %v]", tc.name, minG, maxG, tc.gLo, tc.gHi)
		}
	}
}
