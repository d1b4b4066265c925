package replay

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync/atomic"
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
// and says so: six starts due at once, two slots, answers of 300 ms. Four
// starts wait, each record says how long, never more than it was late, and
// no more than two requests are ever in flight.
func TestCeilingBinds(t *testing.T) {
	url, _ := startMock(t, mock.Config{TTFT: 300 * time.Millisecond, ITL: time.Millisecond})
	st := singleTurns(t, 6, time.Microsecond, func(i int) []byte { return chatBody("q", 2, true) })
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleFixed, Concurrency: 2})
	if len(recs) != 6 || stats.CeilingWaits != 4 || stats.CeilingMaxWait <= 0 {
		t.Fatalf("%d records, ceiling bound %d times (longest %v); want 6, 4", len(recs), stats.CeilingWaits, stats.CeilingMaxWait)
	}
	waited := 0
	for _, r := range recs {
		if r.CeilingWaitNS > 0 {
			waited++
		}
		if own := r.LatenessNS() - r.CeilingWaitNS; r.CeilingWaitNS < 0 || own < 0 {
			t.Errorf("record %d: %v late, %v of it waiting for a slot", r.Record, time.Duration(r.LatenessNS()), time.Duration(r.CeilingWaitNS))
		}
		inFlight := 0
		for _, o := range recs {
			if o.SentNS <= r.SentNS && r.SentNS < o.EndNS {
				inFlight++
			}
		}
		if inFlight > 2 {
			t.Errorf("record %d went out with %d requests in flight (its own included), past the ceiling of 2", r.Record, inFlight)
		}
	}
	if waited != 4 {
		t.Errorf("%d records waited for a slot, want 4", waited)
	}
}

// Duration stops sending; requests in flight finish within the grace.
func TestDuration(t *testing.T) {
	url, srv := startMock(t, mock.Config{TTFT: 10 * time.Millisecond, ITL: time.Millisecond})
	st := singleTurns(t, 5, 0, func(i int) []byte { return chatBody("q", 3, true) })
	begin := time.Now()
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 4,
		Duration: time.Second, Grace: time.Second})
	// The store cycles without end: only the duration ends the run, after
	// 1 s and within the grace (the upper bound only tells "ended" from
	// "ran on"; a loaded machine cannot stretch 2 s to 30).
	if took := time.Since(begin); took < time.Second || took > 30*time.Second {
		t.Errorf("ran %v", took)
	}
	if stats.Interrupted || stats.Errors != 0 || int64(len(recs)) != stats.Sent || stats.Sent != srv.Stats().Requests {
		t.Fatalf("stats %+v, %d records, server saw %d", stats, len(recs), srv.Stats().Requests)
	}
	// ~12 ms a request, 4 at a time: round the 5-record store at least once
	// (twice needs 24 ms of a second).
	if stats.Sent <= 5 {
		t.Errorf("only %d requests in 1 s: the store was not cycled", stats.Sent)
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
	if d := time.Duration(got[1] - before); d < 25*time.Millisecond {
		t.Errorf("first kept session intended %v after Run was called, want 25 ms (zero at the start offset)", d)
	}
	// The schedule itself, before any clock: 25 ms after the start, then
	// 50 ms apart (not 0, zero at the first kept session, nor 50 ms, zero at
	// the trace's start).
	p, err := NewPlan(st, Options{URL: url, Schedule: ScheduleFixed, Speedup: 2, StartOffset: &start, EndOffset: &end})
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(p)
	if want := []int64{25e6, 75e6, 125e6}; !slices.Equal(r.gen.times, want) {
		t.Errorf("schedule times %v ns after the start, want %v", r.gen.times, want)
	}
}

// Open loop: a fixed schedule sends every request on time while the
// earlier ones are still waiting for their answers. The server holds every
// answer until all 20 requests have arrived (or 60 s have passed): a client
// that waited on answers would never send them all.
func TestOpenLoop(t *testing.T) {
	srv, err := mock.New(mock.Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	var arrived atomic.Int64
	all := make(chan struct{})
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if arrived.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
		case <-time.After(60 * time.Second):
		}
		srv.ServeHTTP(w, req)
	}))
	st := singleTurns(t, n, 10*time.Millisecond, func(i int) []byte { return chatBody("q", 2, true) })
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url})
	if stats.Schedule != ScheduleFixed || stats.Errors != 0 || len(recs) != n {
		t.Fatalf("schedule %s, %d records, %d errors", stats.Schedule, len(recs), stats.Errors)
	}
	select {
	case <-all:
	default:
		t.Fatalf("only %d of %d requests arrived while the earlier answers were held", arrived.Load(), n)
	}
	lastSent, firstEnd := int64(0), int64(math.MaxInt64)
	for _, r := range recs {
		lastSent = max(lastSent, r.SentNS)
		firstEnd = min(firstEnd, r.EndNS)
		if r.LatenessNS() < 0 {
			t.Errorf("record %d sent before its time", r.Record)
		}
	}
	if lastSent >= firstEnd {
		t.Errorf("the last request went %v after the first answer ended: the schedule waited on answers",
			time.Duration(lastSent-firstEnd))
	}
}
