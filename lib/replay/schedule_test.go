package replay

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/mock"
	"github.com/aiperf/toolkit/lib/store"
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
			// The record says how much of it was the wait for a slot.
			if own := r.LatenessNS() - r.CeilingWaitNS; r.CeilingWaitNS < int64(290*time.Millisecond) || own < 0 || own > int64(tolerance(20*time.Millisecond)) {
				t.Errorf("record %d: %v late, %v of it waiting for a slot", r.Record, time.Duration(r.LatenessNS()), time.Duration(r.CeilingWaitNS))
			}
		} else if r.CeilingWaitNS != 0 {
			t.Errorf("record %d: on time with a ceiling wait of %v", r.Record, time.Duration(r.CeilingWaitNS))
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

// Fixed schedule offsets keep the sessions whose first timestamp lies in
// [start, end]; the start offset, not the first kept timestamp, is the
// schedule's zero.
func TestFixedOffsets(t *testing.T) {
	url, _ := startMock(t, mock.Config{Fast: true})
	ts := []int64{0, 100e6, 200e6, 300e6, 400e6}
	spec := &store.Spec{}
	for i, x := range ts {
		spec.Sessions = append(spec.Sessions, fmt.Sprintf("s%d", i))
		spec.Records = append(spec.Records, store.Record{
			Entry:   store.Entry{Session: uint32(i), Flags: store.FlagTimestamp, TimeNS: x},
			Payload: chatBody("x", 2, true)})
	}
	st := openSpec(t, spec)
	start, end := 50*time.Millisecond, 300*time.Millisecond
	before := time.Now().UnixNano()
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleFixed, Speedup: 2,
		StartOffset: &start, EndOffset: &end})
	if stats.Errors != 0 || len(recs) != 3 {
		t.Fatalf("%d records (%d errors), want the 3 sessions in [50 ms, 300 ms]", len(recs), stats.Errors)
	}
	got := map[int]int64{}
	for _, r := range recs {
		got[r.Record] = r.IntendedNS
	}
	for _, i := range []int{1, 2, 3} {
		if _, ok := got[i]; !ok {
			t.Fatalf("record %d (trace %d ms) not sent; sent %v", i, ts[i]/1e6, got)
		}
	}
	// (100 - 50) / 2 = 25 ms after the start, then 50 ms apart.
	if d := got[2] - got[1]; d != 50e6 {
		t.Errorf("records 1 and 2 intended %d ns apart, want 50 ms", d)
	}
	if d := got[3] - got[1]; d != 100e6 {
		t.Errorf("records 1 and 3 intended %d ns apart, want 100 ms", d)
	}
	if d := time.Duration(got[1] - before); d < 25*time.Millisecond || d > 25*time.Millisecond+tolerance(100*time.Millisecond) {
		t.Errorf("first kept session intended %v after Run was called, want 25 ms (zero at the start offset)", d)
	}
}

// Open loop: a fixed schedule sends on time while every earlier request is
// still waiting for its answer.
func TestOpenLoop(t *testing.T) {
	url, _ := startMock(t, mock.Config{TTFT: 400 * time.Millisecond, ITL: time.Millisecond})
	st := singleTurns(t, 20, 10*time.Millisecond, func(i int) []byte { return chatBody("q", 2, true) })
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url})
	if stats.Schedule != ScheduleFixed || stats.Errors != 0 || len(recs) != 20 {
		t.Fatalf("schedule %s, %d records, %d errors", stats.Schedule, len(recs), stats.Errors)
	}
	lastSent, firstEnd := int64(0), int64(math.MaxInt64)
	var late []float64
	for _, r := range recs {
		lastSent = max(lastSent, r.SentNS)
		firstEnd = min(firstEnd, r.EndNS)
		late = append(late, float64(r.LatenessNS()))
	}
	if lastSent >= firstEnd {
		t.Errorf("the last request went %v after the first answer ended: the schedule waited on answers",
			time.Duration(lastSent-firstEnd))
	}
	// Loose (a shared machine): the answers' 400 ms would show as 400 ms.
	if p := percentile(late, 0.9); p > float64(tolerance(50*time.Millisecond)) {
		t.Errorf("p90 send lateness %.3f ms with 20 answers outstanding", p/1e6)
	}
}
