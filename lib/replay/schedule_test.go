package replay

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/mock"
)

// The arrival processes have the mean gap 1/rate; Poisson's gaps have a
// coefficient of variation of 1, gamma's 1/sqrt(shape), constant's 0.
func TestArrivals(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		shape  float64
		wantCV float64
	}{{ArrivalPoisson, 1, 1}, {ArrivalConstant, 1, 0}, {ArrivalGamma, 4, 0.5}, {ArrivalGamma, 0.25, 2}} {
		a := newArrivals(tc.kind, 200, tc.shape, 9)
		const n = 200000
		var sum, sq float64
		for range n {
			g := float64(a.gap())
			sum += g
			sq += g * g
		}
		mean := sum / n
		cv := math.Sqrt(sq/n-mean*mean) / mean
		if math.Abs(mean-5e6)/5e6 > 0.02 {
			t.Errorf("%s(%v): mean gap %.0f ns, want 5e6", tc.kind, tc.shape, mean)
		}
		if math.Abs(cv-tc.wantCV) > 0.05*math.Max(tc.wantCV, 1) {
			t.Errorf("%s(%v): CV %.3f, want %.3f", tc.kind, tc.shape, cv, tc.wantCV)
		}
	}
}

// A concurrency ceiling on a fixed schedule delays starts when it binds,
// and says so.
func TestCeilingBinds(t *testing.T) {
	url, _ := startMock(t, mock.Config{TTFT: 300 * time.Millisecond, ITL: time.Millisecond})
	st := singleTurns(t, 6, time.Microsecond, func(i int) []byte { return chatBody("q", 2, true) })
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleFixed, Concurrency: 2})
	if len(recs) != 6 || stats.CeilingWaits != 4 || stats.CeilingMaxWait < 590*time.Millisecond {
		t.Fatalf("%d records, ceiling bound %d times (longest %v); want 6, 4, ~600 ms", len(recs), stats.CeilingWaits, stats.CeilingMaxWait)
	}
	late := 0
	for _, r := range recs {
		if r.LatenessNS() > int64(290*time.Millisecond) {
			late++
		}
	}
	if late != 4 {
		t.Errorf("%d records sent late by the ceiling, want 4", late)
	}
}

// Duration stops sending; requests in flight finish within the grace.
func TestDuration(t *testing.T) {
	url, srv := startMock(t, mock.Config{TTFT: 10 * time.Millisecond, ITL: time.Millisecond})
	st := singleTurns(t, 5, 0, func(i int) []byte { return chatBody("q", 3, true) })
	begin := time.Now()
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 4,
		Duration: 300 * time.Millisecond, Grace: time.Second})
	if took := time.Since(begin); took < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("ran %v", took)
	}
	if stats.Interrupted || stats.Errors != 0 || int64(len(recs)) != stats.Sent || stats.Sent != srv.Stats().Requests {
		t.Fatalf("stats %+v, %d records, server saw %d", stats, len(recs), srv.Stats().Requests)
	}
	// ~12 ms a request, 4 at a time, going round the 5-record store.
	if stats.Sent < 40 {
		t.Errorf("only %d requests in 300 ms", stats.Sent)
	}
	for _, r := range recs {
		if r.SentNS-recs[0].SentNS > int64(400*time.Millisecond) {
			t.Errorf("record sent %v after the first", time.Duration(r.SentNS-recs[0].SentNS))
		}
	}
}
