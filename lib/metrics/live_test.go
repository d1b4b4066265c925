package metrics

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/aiperf/toolkit/lib/result"
)

func TestBucketLayout(t *testing.T) {
	// Every value maps into range, buckets are monotone in the value, and a
	// bucket's midpoint is within the stated bound of every value in it.
	prev := -1
	check := func(v uint64) {
		b := bucketOf(v)
		if b < 0 || b >= histBuckets {
			t.Fatalf("bucketOf(%d) = %d out of range", v, b)
		}
		if b < prev {
			t.Fatalf("bucketOf(%d) = %d < previous %d", v, b, prev)
		}
		prev = b
		m := mid(b)
		if v < 2<<subBits {
			if m != float64(v) {
				t.Fatalf("small value %d: mid %v", v, m)
			}
		} else if err := math.Abs(m-float64(v)) / float64(v); err > RelativeError {
			t.Fatalf("value %d: mid %v, relative error %v > %v", v, m, err, RelativeError)
		}
	}
	for v := uint64(0); v < 1<<16; v++ {
		check(v)
	}
	for e := 16; e < 63; e++ {
		base := uint64(1) << e
		for _, d := range []uint64{0, 1, base / 3, base / 2, base - 1} {
			check(base + d)
		}
	}
	check(math.MaxInt64)
}

// TestLiveErrorBound: Live's percentiles are within RelativeError of the
// exact numpy percentiles of the same values.
func TestLiveErrorBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name string
		gen  func() int64
	}{
		{"lognormal latency", func() int64 { return int64(math.Exp(rng.NormFloat64()*0.8 + 17)) }},
		{"bimodal", func() int64 {
			if rng.IntN(10) == 0 {
				return 2_000_000_000 + rng.Int64N(1e8)
			}
			return 20_000_000 + rng.Int64N(1e6)
		}},
		{"small exact", func() int64 { return rng.Int64N(511) }},
		{"signed lateness", func() int64 { return int64(rng.NormFloat64() * 3e5) }},
	} {
		h := &loghist{signed: true, neg: new(loghist)}
		var vals []float64
		for i := 0; i < 50_000; i++ {
			v := tc.gen()
			h.add(v)
			vals = append(vals, float64(v))
		}
		for _, p := range []float64{1, 50, 90, 99} {
			got, want := h.quantile(p), refPercentile(vals, p)
			if math.Abs(got-want) > math.Abs(want)*RelativeError+1e-9 {
				t.Errorf("%s p%g: %v, exact %v, error %.3g > bound %.3g", tc.name, p, got, want, math.Abs(got-want)/math.Abs(want), RelativeError)
			}
		}
	}
}

func liveRecord(i int, lateNS, ttft int64, fail bool) result.Record {
	t0 := int64(1_700_000_000_000_000_000) + int64(i)*ms
	r := result.Record{IntendedNS: t0, SentNS: t0 + lateNS, InputTokens: 10}
	if fail {
		r.EndNS = r.SentNS + ms
		r.Err = &result.Error{Code: 500, Type: "HTTPError", Message: "x"}
		return r
	}
	r.ChunkOffsetsNS = []int64{ttft, ttft + 5*ms, ttft + 10*ms}
	r.EndNS = r.SentNS + ttft + 10*ms
	r.OutputTokens, r.OutputSource = 3, result.SourceUsage
	return r
}

func TestLiveSnapshot(t *testing.T) {
	l, err := NewLive(Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	warm := liveRecord(0, 0, 1, false)
	warm.Phase = result.PhaseWarmup
	l.Add(&warm)
	for i := 0; i < 1000; i++ {
		r := liveRecord(i, int64(i)*1000, 20*ms, i%10 == 0)
		l.Add(&r)
	}
	s := l.Snapshot()
	if s.Warmup != 1 || s.Requests != 900 || s.ErrorRequests != 100 || s.Done() != 1000 {
		t.Fatalf("counts: %+v", s)
	}
	if s.ErrorRate() != 0.1 {
		t.Errorf("error rate %v", s.ErrorRate())
	}
	if s.OutputTokens != 2700 || s.InputTokens != 9000 {
		t.Errorf("tokens in %d out %d", s.InputTokens, s.OutputTokens)
	}
	if s.TTFT.Count != 900 || s.TTFT.P50 != 20*ms || s.TTFT.Min != 20*ms {
		t.Errorf("ttft %+v", s.TTFT)
	}
	// ITL = 10 ms / 2 = 5 ms for every request.
	if math.Abs(s.ITL.P99-5*ms) > 5*ms*RelativeError {
		t.Errorf("itl %+v", s.ITL)
	}
	// Lateness 0..999 µs: exact max, p50 within the bound, and a slope of
	// 1 µs per ms of schedule (0.001), below the 1 ms floor: not behind.
	if s.SendLateness.Max != 999_000 || math.Abs(s.SendLateness.P50-499_500) > 499_500*RelativeError {
		t.Errorf("lateness %+v", s.SendLateness)
	}
	if s.Lateness.Behind || math.Abs(s.Lateness.Slope-0.001) > 1e-9 {
		t.Errorf("lateness judged %+v", s.Lateness)
	}
	if s.ElapsedNS <= 0 || s.RequestThroughput <= 0 {
		t.Errorf("elapsed %d rate %v", s.ElapsedNS, s.RequestThroughput)
	}
}

func TestLiveFellBehind(t *testing.T) {
	// A client losing 2 ms per request sent 1 ms apart, on 30 ms requests:
	// late by more than 10 % of the latency from the third request on.
	l, _ := NewLive(Options{Streaming: true})
	for i := 0; i < 500; i++ {
		r := liveRecord(i, int64(i)*2*ms, 20*ms, false)
		l.Add(&r)
	}
	s := l.Snapshot()
	if !s.Lateness.Behind || s.Lateness.Reason == "" || s.Lateness.Late != 498 {
		t.Fatalf("not judged behind: %+v", s.Lateness)
	}
	// Jitter of up to 2 ms on the same requests: never late.
	rng := rand.New(rand.NewPCG(9, 9))
	l4, _ := NewLive(Options{Streaming: true})
	for i := 0; i < 1500; i++ {
		r := liveRecord(i, rng.Int64N(2*ms), 20*ms, false)
		l4.Add(&r)
	}
	if s := l4.Snapshot(); s.Lateness.Behind || s.Lateness.Late != 0 {
		t.Fatalf("jitter judged behind: %+v", s.Lateness)
	}
}

func TestLiveAddAllocs(t *testing.T) {
	l, _ := NewLive(Options{Streaming: true})
	r := liveRecord(1, 1000, 20*ms, false)
	if n := testing.AllocsPerRun(1000, func() { l.Add(&r) }); n != 0 {
		t.Fatalf("Add allocates %v times", n)
	}
}

func TestLiveConcurrent(t *testing.T) {
	l, _ := NewLive(Options{Streaming: true})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				r := liveRecord(i, 0, 20*ms, i%5 == 0)
				l.Add(&r)
				if i%100 == 0 {
					_ = l.Snapshot()
				}
			}
		}()
	}
	wg.Wait()
	if s := l.Snapshot(); s.Done() != 4000 || s.ErrorRequests != 800 {
		t.Fatalf("%+v", s)
	}
}

func BenchmarkLiveAdd(b *testing.B) {
	l, _ := NewLive(Options{Streaming: true})
	recs := make([]result.Record, 1024)
	for i := range recs {
		recs[i] = liveRecord(i, int64(i%50)*1000, int64(15+i%10)*ms, i%50 == 0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Add(&recs[i&1023])
	}
}
