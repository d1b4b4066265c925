package metrics

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

// lateRec is a successful streamed record intended at t0+at, held wait by a
// --concurrency ceiling, sent late by late after that, and lasting own.
func lateRec(i int, at, late, wait, own int64) result.Record {
	t0 := int64(1_700_000_000_500_000_000) // half-way through a second: windows do not start at the first send
	r := result.Record{Record: i, Session: "s", Phase: result.PhaseProfiling, IntendedNS: t0 + at, InputTokens: 10}
	r.SentNS = r.IntendedNS + wait + late
	r.CeilingWaitNS = wait
	r.ChunkOffsetsNS = []int64{own / 10, own}
	r.EndNS = r.SentNS + own
	r.OutputTokens, r.OutputSource = 2, result.SourceUsage
	return r
}

// lateRun is n requests gap apart; f gives each one's lateness, ceiling wait
// and own latency from its index and intended offset.
func lateRun(n int, gap int64, f func(i int, at int64) (late, wait, own int64)) []result.Record {
	recs := make([]result.Record, n)
	for i := range recs {
		at := int64(i) * gap
		late, wait, own := f(i, at)
		recs[i] = lateRec(i, at, late, wait, own)
	}
	return recs
}

func TestFellBehindRule(t *testing.T) {
	const s = 1000 * ms
	rng := rand.New(rand.NewPCG(3, 14))
	jitter := func(max int64) int64 { return rng.Int64N(max) }
	cases := []struct {
		name   string
		recs   []result.Record
		behind bool
		reason string // a part of the reason when behind
		check  func(t *testing.T, s *Summary)
	}{
		{
			// make demo's first run: 1,000 requests over 16.5 s, latencies of
			// 20 ms + 100..600 tokens × 0.5 ms, a few wake-ups ~10 ms late on a
			// shared machine: p99 above 10 ms, which the old fixed threshold
			// called falling behind.
			name: "demo-like p99 10 ms against latencies of 100s of ms",
			recs: lateRun(1000, 16500*ms/1000, func(i int, at int64) (int64, int64, int64) {
				late := 20_000 + jitter(80_000)
				if i%50 == 7 {
					late = 10*ms + jitter(2*ms)
				}
				return late, 0, 20*ms + (100+jitter(500))*ms/2
			}),
			check: func(t *testing.T, s *Summary) {
				if s.Lateness.P99NS <= 10*ms {
					t.Errorf("p99 %.2f ms: the case should have a p99 above 10 ms", s.Lateness.P99NS/1e6)
				}
				if r := s.Get("send_lateness"); r == nil || r.P[8] != s.Lateness.P99NS/1e6 {
					t.Errorf("the raw p99 is not in the table: %+v", r)
				}
			},
		},
		{
			// one 300 ms stall at 4.2 s of a 10 s run at 100 requests/s:
			// the requests due in it go 0..300 ms late, 6x their latency.
			name: "one spike",
			recs: lateRun(1000, 10*ms, func(i int, at int64) (int64, int64, int64) {
				if at >= 4200*ms && at < 4500*ms {
					return 4500*ms - at, 0, 50 * ms
				}
				return jitter(200_000), 0, 50 * ms
			}),
			check: func(t *testing.T, s *Summary) {
				if s.Lateness.MaxNS < 290*ms || s.Lateness.Late < 25 {
					t.Errorf("the spike is not in the figures: %+v", s.Lateness)
				}
			},
		},
		{
			// the client 30 ms late on 50 ms requests from 3 s to 6 s
			name: "sustained over a window",
			recs: lateRun(1000, 10*ms, func(i int, at int64) (int64, int64, int64) {
				if at >= 3*s && at < 6*s {
					return 30*ms + jitter(ms), 0, 50 * ms
				}
				return jitter(200_000), 0, 50 * ms
			}),
			behind: true, reason: "sent late by more than 10% of their own latency",
		},
		{
			// a client that manages 80 % of the rate: lateness grows 0.25 s a second
			name: "rate beyond the client",
			recs: lateRun(1000, 10*ms, func(i int, at int64) (int64, int64, int64) {
				return at / 4, 0, 100 * ms
			}),
			behind: true, reason: "mean latency 100.00 ms",
		},
		{
			// 2 ms more lateness every second over 20 s (40 ms in all) on
			// 500 ms requests: never 10 % of a latency, but a backlog building
			name: "trend",
			recs: lateRun(1000, 20*ms, func(i int, at int64) (int64, int64, int64) {
				return at/500 + jitter(ms), 0, 500*ms + jitter(20*ms)
			}),
			behind: true, reason: "grew steadily, 2.0",
		},
		{
			// 0.5 ms a second over 20 s (10 ms, 2 % of the latency): too small to matter
			name: "small drift",
			recs: lateRun(1000, 20*ms, func(i int, at int64) (int64, int64, int64) {
				return at/2000 + jitter(ms), 0, 500 * ms
			}),
		},
		{
			name: "noise without growth",
			recs: lateRun(2000, 10*ms, func(i int, at int64) (int64, int64, int64) {
				return jitter(5 * ms), 0, 100 * ms
			}),
			check: func(t *testing.T, s *Summary) {
				if s.Lateness.Windows != 21 || s.Lateness.Tau > 0.5 || s.Lateness.Tau < -0.5 {
					t.Errorf("windows %d, tau %.2f: want 21 (20 s starting mid-second), tau near 0", s.Lateness.Windows, s.Lateness.Tau)
				}
			},
		},
		{
			// every start but the first held 400 ms by the user's ceiling
			name: "ceiling waits",
			recs: lateRun(500, 2*ms, func(i int, at int64) (int64, int64, int64) {
				return jitter(100_000), min(int64(i), 1) * 400 * ms, 50 * ms
			}),
			check: func(t *testing.T, s *Summary) {
				if r := s.Get("send_lateness"); r == nil || r.P[8] < 400 {
					t.Errorf("send_lateness p99 %+v, want the 400 ms waits in it", r)
				}
			},
		},
		{
			name: "ceiling waits and the client late after them",
			recs: lateRun(500, 2*ms, func(i int, at int64) (int64, int64, int64) {
				return 20 * ms, min(int64(i), 1) * 400 * ms, 30 * ms
			}),
			behind: true, reason: "(waits for a --concurrency slot left out)",
		},
		{
			// 1 request a second for 2 minutes, 2 s each, 4 % of them 80 ms late:
			// windows of 20 s
			name: "low rate",
			recs: lateRun(120, s, func(i int, at int64) (int64, int64, int64) {
				if i%25 == 3 {
					return 80 * ms, 0, 2 * s
				}
				return jitter(ms), 0, 2 * s
			}),
			check: func(t *testing.T, s *Summary) {
				if s.Lateness.WindowNS != 20*1000*ms || s.Lateness.Windows != 6 {
					t.Errorf("window %d ns, %d windows; want 20 s and 6", s.Lateness.WindowNS, s.Lateness.Windows)
				}
			},
		},
		{
			// a 3 h 20 min run (bins merged to 4 s) that falls behind for its
			// last 200 s
			name: "long run, late at the end",
			recs: lateRun(24000, 500*ms, func(i int, at int64) (int64, int64, int64) {
				if at >= 11800*s {
					return 30 * ms, 0, 50 * ms
				}
				return jitter(ms), 0, 50 * ms
			}),
			behind: true, reason: "from 118",
		},
		{
			name: "short requests, 1.5 ms late",
			recs: lateRun(1000, 5*ms, func(i int, at int64) (int64, int64, int64) {
				return 1500_000, 0, 200_000
			}),
			behind: true, reason: "mean latency 0.20 ms",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sum, err := Summarize(FromRecords(c.recs), Options{Streaming: true})
			if err != nil {
				t.Fatal(err)
			}
			l := sum.Lateness
			if l.Behind != c.behind {
				t.Fatalf("behind %v, want %v: %+v", l.Behind, c.behind, l)
			}
			if c.behind && !strings.Contains(l.Reason, c.reason) {
				t.Errorf("reason %q, want it to contain %q", l.Reason, c.reason)
			}
			if c.check != nil {
				c.check(t, sum)
			}
			// Live judges the same records the same way, and the order in
			// which they complete does not matter.
			shuffled := append([]result.Record(nil), c.recs...)
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			lv, _ := NewLive(Options{Streaming: true})
			for i := range shuffled {
				lv.Add(&shuffled[i])
			}
			ll := lv.Snapshot().Lateness
			if ll.Behind != l.Behind || ll.Late != l.Late || ll.Windows != l.Windows || ll.WindowNS != l.WindowNS || ll.Tau != l.Tau {
				t.Errorf("live (shuffled) judged otherwise:\n live    %+v\n summary %+v", ll, l)
			}
		})
	}
}

// The console shows the warning panel with the reason when behind, and
// nothing about it otherwise.
func TestFellBehindPanel(t *testing.T) {
	for _, behind := range []bool{false, true} {
		recs := lateRun(500, 10*ms, func(i int, at int64) (int64, int64, int64) {
			if behind {
				return 30 * ms, 0, 50 * ms
			}
			return 12 * ms, 0, 500 * ms
		})
		s, err := Summarize(FromRecords(recs), Options{Streaming: true})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteConsole(&b, s, ""); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "Client Fell Behind the Schedule"); got != behind {
			t.Errorf("behind %v: panel shown %v:\n%s", behind, got, b.String())
		}
		if behind && !strings.Contains(b.String(), s.Lateness.Reason[:40]) {
			t.Errorf("the panel lacks the reason %q:\n%s", s.Lateness.Reason, b.String())
		}
	}
}

func TestKendallTau(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 1},
		{[]float64{4, 3, 2, 1}, -1},
		{[]float64{1, 1, 1}, 0},
		{[]float64{1, 3, 2}, 1.0 / 3},
		{[]float64{5}, 0},
	} {
		if got := kendallTau(c.xs); got != c.want {
			t.Errorf("kendallTau(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}

// Bins merge pairwise when a run outgrows them, negative bin numbers and
// records before the first included.
func TestLatenessCoarsen(t *testing.T) {
	o := Options{}
	g := newLateness(&o)
	for _, at := range []int64{5e9, -3e9, 4100e9, -3.5e9} {
		g.add(at, 0, 1)
	}
	if len(g.bins) > lateMaxBins || g.width != 2*lateBinNS {
		t.Fatalf("%d bins of %d ns", len(g.bins), g.width)
	}
	var n int64
	for _, b := range g.bins {
		n += b.n
	}
	if n != 4 || g.first != -2 || g.bins[0].n != 2 {
		t.Errorf("first bin %d holds %d; %d requests in all, want -2, 2, 4", g.first, g.bins[0].n, n)
	}
}
