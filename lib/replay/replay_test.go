package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/mock"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/store"
	"github.com/aiperf/toolkit/lib/tokenizer"
)

// The client's times of a streamed answer are causal: the mock sends token
// k no earlier than TTFT + k×ITL after it got the request, which the client
// sent before, so every content chunk's offset from the send is at least
// that, in order, and the records hold every chunk and the usage count.
// These bounds hold on any machine however loaded (load only delays); how
// close the client comes to the mock's settings is a benchmark's question
// (BenchmarkTimingOverhead, scripts/bench/replay.sh), not a test's.
func TestTimingMatchesMock(t *testing.T) {
	const ttft, itl, tokens = 20 * time.Millisecond, 5 * time.Millisecond, 8
	url, _ := startMock(t, mock.Config{TTFT: ttft, ITL: itl})
	st := singleTurns(t, 16, 0, func(i int) []byte { return chatBody("hello", tokens, true) })
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 1})
	if stats.Errors != 0 || len(recs) != 16 {
		t.Fatalf("%d records, %d errors", len(recs), stats.Errors)
	}
	for _, r := range recs {
		if len(r.ChunkOffsetsNS) != tokens {
			t.Fatalf("record %d: %d content chunks, want %d", r.Record, len(r.ChunkOffsetsNS), tokens)
		}
		if r.OutputTokens != tokens || r.OutputSource != result.SourceUsage {
			t.Fatalf("record %d: %d output tokens from %q, want %d from usage", r.Record, r.OutputTokens, r.OutputSource, tokens)
		}
		if r.FirstTokenNS-r.SentNS != r.ChunkOffsetsNS[0] {
			t.Errorf("record %d: first token %d ns after the send, first chunk at %d", r.Record, r.FirstTokenNS-r.SentNS, r.ChunkOffsetsNS[0])
		}
		for k, off := range r.ChunkOffsetsNS {
			if want := int64(ttft) + int64(k)*int64(itl); off < want {
				t.Errorf("record %d: chunk %d at %v after the send, before the mock sent it (%v)", r.Record, k, time.Duration(off), time.Duration(want))
			}
		}
		if last := r.ChunkOffsetsNS[tokens-1]; r.EndNS-r.SentNS < last {
			t.Errorf("record %d: ends %v after the send, before its last chunk (%v)", r.Record, time.Duration(r.EndNS-r.SentNS), time.Duration(last))
		}
	}
}

// BenchmarkTimingOverhead measures what TestTimingMatchesMock no longer
// asserts: the client's median TTFT and ITL against the mock's settings,
// one request at a time. Reported as ttft-over-µs and itl-off-µs (medians
// over every request of the run); on a quiet machine both stay under
// 1,000 µs.
func BenchmarkTimingOverhead(b *testing.B) {
	const ttft, itl, tokens = 20 * time.Millisecond, 5 * time.Millisecond, 8
	url, _ := startMock(b, mock.Config{TTFT: ttft, ITL: itl})
	st := singleTurns(b, 16, 0, func(i int) []byte { return chatBody("hello", tokens, true) })
	var ttfts, itls []float64
	for b.Loop() {
		var buf bytes.Buffer
		if _, err := Run(context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 1, Results: &buf}); err != nil {
			b.Fatal(err)
		}
		for _, r := range decodeAll(b, &buf) {
			if len(r.ChunkOffsetsNS) != tokens {
				b.Fatalf("record %d: %d chunks", r.Record, len(r.ChunkOffsetsNS))
			}
			ttfts = append(ttfts, float64(r.ChunkOffsetsNS[0]-int64(ttft)))
			itls = append(itls, float64(r.ChunkOffsetsNS[tokens-1]-r.ChunkOffsetsNS[0])/float64(tokens-1)-float64(itl))
		}
	}
	b.ReportMetric(median(ttfts)/1e3, "ttft-over-µs")
	b.ReportMetric(median(itls)/1e3, "itl-off-µs")
}

// A fixed schedule's intended send times are the trace's timestamps divided
// by the speedup, relative to the first, exactly; no send goes before its
// intended time (how soon after it goes is the benchmark's question:
// scripts/bench/replay.sh measures send lateness against a bare sleep loop).
func TestFixedScheduleIntendedTimes(t *testing.T) {
	url, _ := startMock(t, mock.Config{Fast: true})
	ts := []int64{0, 40e6, 41e6, 100e6, 230e6, 230e6, 300e6} // ns; start at a non-zero first timestamp below
	spec := &store.Spec{}
	for i, x := range ts {
		spec.Sessions = append(spec.Sessions, fmt.Sprintf("s%d", i))
		spec.Records = append(spec.Records, store.Record{
			Entry:   store.Entry{Session: uint32(i), Flags: store.FlagTimestamp, TimeNS: 5e9 + x},
			Payload: chatBody("x", 2, false)})
	}
	st := openSpec(t, spec)
	const speedup = 2.5
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Speedup: speedup})
	if stats.Schedule != ScheduleFixed {
		t.Fatalf("auto chose %q for a store with timestamps", stats.Schedule)
	}
	if len(recs) != len(ts) {
		t.Fatalf("%d records, want %d", len(recs), len(ts))
	}
	byRec := map[int]result.Record{}
	for _, r := range recs {
		byRec[r.Record] = r
	}
	t0 := byRec[0].IntendedNS
	for i, x := range ts {
		r := byRec[i]
		want := int64(float64(x) / speedup)
		if got := r.IntendedNS - t0; got != want {
			t.Errorf("record %d: intended %d ns after the first, want %d (trace %d ns ÷ %v)", i, got, want, x, speedup)
		}
		if r.LatenessNS() < 0 {
			t.Errorf("record %d: sent %v before its intended time", i, time.Duration(-r.LatenessNS()))
		}
	}
}

// Later turns go after the previous turn completes plus their delay: the
// intended time is exactly the previous end plus the delay, and no turn
// goes before it.
func TestTurnDelays(t *testing.T) {
	url, _ := startMock(t, mock.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond})
	delays := []time.Duration{0, 30 * time.Millisecond, 10 * time.Millisecond}
	spec := &store.Spec{}
	for s := range 3 {
		spec.Sessions = append(spec.Sessions, fmt.Sprintf("conv%d", s))
		for turn, d := range delays {
			e := store.Entry{Session: uint32(s), Turn: uint32(turn)}
			if turn > 0 {
				e.Flags, e.TimeNS = store.FlagDelay, int64(d)
			}
			spec.Records = append(spec.Records, store.Record{Entry: e, Payload: chatBody("turn "+strconv.Itoa(turn), 3, true)})
		}
	}
	st := openSpec(t, spec)
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 3, History: HistoryOff})
	if stats.Errors != 0 || len(recs) != 9 {
		t.Fatalf("%d records, %d errors", len(recs), stats.Errors)
	}
	bySess := map[string][]result.Record{}
	for _, r := range recs {
		bySess[r.CorrelationID] = append(bySess[r.CorrelationID], r)
	}
	if len(bySess) != 3 {
		t.Fatalf("%d correlation ids, want 3", len(bySess))
	}
	for id, rs := range bySess {
		for k := 1; k < len(rs); k++ {
			prev, cur := rs[k-1], rs[k]
			if cur.Turn != k || prev.Turn != k-1 {
				t.Fatalf("%s: turns out of order: %d then %d", id, prev.Turn, cur.Turn)
			}
			if want := prev.EndNS + int64(delays[k]); cur.IntendedNS != want {
				t.Fatalf("%s turn %d: intended %d, want previous end + %v = %d", id, k, cur.IntendedNS, delays[k], want)
			}
			if gap := time.Duration(cur.SentNS - prev.EndNS); gap < delays[k] {
				t.Fatalf("%s turn %d: sent %v after the previous turn ended, before its delay %v", id, k, gap, delays[k])
			}
		}
	}
}

// Every fault the mock injects becomes an error record, and the run still
// accounts for every request.
func TestFaultsGiveErrorRecords(t *testing.T) {
	for _, tc := range []struct {
		fault, typ string
		code       int
	}{
		{mock.FaultReset, "ConnectionError", 0},
		{mock.FaultStall, "TimeoutError", 0},
		{mock.FaultMalformed, "ResponseParseError", 200},
		{mock.FaultSlowHeaders, "TimeoutError", 0},
		{mock.Fault429, "Too Many Requests", 429},
		{mock.Fault503, "Service Unavailable", 503},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			t.Parallel()
			url, srv := startMock(t, mock.Config{Fast: true, Fault: tc.fault, FaultRate: 0.5, Seed: 7, FaultDelay: 3 * time.Second})
			const n = 24
			st := singleTurns(t, n, 0, func(i int) []byte { return chatBody("q", 6, true) })
			recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 4, Timeout: 300 * time.Millisecond})
			if len(recs) != n || stats.Sent != n || stats.Results != n {
				t.Fatalf("%d records, %d sent, %d written; want %d each", len(recs), stats.Sent, stats.Results, n)
			}
			faults := srv.Stats().Faults
			if faults == 0 || faults == n {
				t.Fatalf("the mock faulted %d of %d requests; the seed should give some of each", faults, n)
			}
			var bad int64
			for _, r := range recs {
				if r.Err == nil {
					if r.OutputTokens != 6 {
						t.Errorf("record %d: ok with %d tokens, want 6", r.Record, r.OutputTokens)
					}
					continue
				}
				bad++
				if r.Err.Type != tc.typ || r.Err.Code != tc.code {
					t.Errorf("record %d: error %+v, want type %s code %d", r.Record, *r.Err, tc.typ, tc.code)
				}
				if r.EndNS < r.SentNS {
					t.Errorf("record %d: end before send", r.Record)
				}
			}
			if bad != faults || stats.Errors != faults {
				t.Errorf("%d error records (stats %d), the mock faulted %d", bad, stats.Errors, faults)
			}
		})
	}
}

// Records written = requests sent = requests the server saw, across passes
// of the store, at a rate.
func TestRecordsEqualRequests(t *testing.T) {
	url, srv := startMock(t, mock.Config{Fast: true})
	st := singleTurns(t, 7, 0, func(i int) []byte { return chatBody("q"+strconv.Itoa(i), 3, true) })
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleRate, Rate: 2000, Arrival: ArrivalConstant, RequestCount: 150, Warmup: 10})
	if len(recs) != 160 || stats.Sent != 160 || srv.Stats().Requests != 160 {
		t.Fatalf("%d records, %d sent, the server saw %d; want 160", len(recs), stats.Sent, srv.Stats().Requests)
	}
	warm := 0
	ids := map[string]bool{}
	for _, r := range recs {
		if r.Warmup() {
			warm++
		}
		if ids[r.RequestID] {
			t.Fatalf("request id %s twice", r.RequestID)
		}
		ids[r.RequestID] = true
	}
	if warm != 10 {
		t.Errorf("%d warmup records, want 10", warm)
	}
	// Constant arrivals: intended times 0.5 ms apart, exactly.
	var first int64 = -1
	for _, r := range recs {
		if r.SessionNum == 0 {
			first = r.IntendedNS
		}
	}
	for _, r := range recs {
		if got, want := r.IntendedNS-first, int64(r.SessionNum)*500_000; got != want {
			t.Fatalf("session run %d: intended at %d, want %d", r.SessionNum, got, want)
		}
	}
}

// Hundreds of requests in flight at once, every body read from the one
// mapping by its own goroutine: each arrives byte for byte as stored (run
// with -race).
func TestConcurrentBodiesFromOneMapping(t *testing.T) {
	const n = 400
	bodies := make([][]byte, n)
	want := map[[32]byte]int{}
	for i := range n {
		bodies[i] = chatBody(fmt.Sprintf("request %d %s", i, strings.Repeat("abcdefgh", 100+i)), 2, true)
		want[sha256.Sum256(bodies[i])] = i
	}
	st := singleTurns(t, n, 0, func(i int) []byte { return bodies[i] })
	srv, err := mock.New(mock.Config{TTFT: 10 * time.Millisecond, ITL: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[int]int{}
	var inFlight, peak atomic.Int64
	// Every request waits until half of them are in flight (or 30 s have
	// passed): a client that sends them together gets there however
	// slowly a loaded machine lets it dial; one that does not fails.
	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	defer time.AfterFunc(30*time.Second, open).Stop()
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		i, ok := want[sha256.Sum256(b)]
		mu.Lock()
		if ok {
			seen[i]++
		} else {
			seen[-1]++
		}
		mu.Unlock()
		cur := inFlight.Add(1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		if cur >= n/2 {
			open()
		}
		<-gate
		r.Body = io.NopCloser(bytes.NewReader(b))
		srv.ServeHTTP(w, r)
		inFlight.Add(-1)
	}))
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: n})
	if stats.Errors != 0 || len(recs) != n {
		t.Fatalf("%d records, %d errors", len(recs), stats.Errors)
	}
	if seen[-1] != 0 {
		t.Fatalf("%d bodies arrived that the store does not hold", seen[-1])
	}
	for i := range n {
		if seen[i] != 1 {
			t.Fatalf("body %d arrived %d times", i, seen[i])
		}
	}
	if peak.Load() < n/2 {
		t.Errorf("at most %d requests were in flight at once, want hundreds", peak.Load())
	}
}

// Cancelling the context stops sending; requests in flight finish within
// the grace period or are cut as cancelled; every request sent is recorded.
func TestInterrupt(t *testing.T) {
	url, srv := startMock(t, mock.Config{TTFT: 5 * time.Millisecond, ITL: 20 * time.Millisecond})
	st := singleTurns(t, 1000, 0, func(i int) []byte { return chatBody("q", 50, true) })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	recs, stats := replayAll(t, ctx, st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 8, Grace: 200 * time.Millisecond})
	took := time.Since(start)
	if !stats.Interrupted {
		t.Fatal("not marked interrupted")
	}
	// Without the interrupt the run takes 125 s (1,000 replies of ~1 s, 8 at
	// a time); with it, 0.5 s. The bound only tells the two apart (a loaded
	// machine cannot stretch 0.5 s to 30).
	if took > 30*time.Second {
		t.Errorf("took %v after the interrupt", took)
	}
	if int64(len(recs)) != stats.Sent || stats.Sent != srv.Stats().Requests || stats.Sent == 0 || stats.Sent >= 1000 {
		t.Fatalf("%d records, %d sent, server saw %d", len(recs), stats.Sent, srv.Stats().Requests)
	}
	var cut int
	for _, r := range recs {
		if r.Cancelled {
			cut++
			if r.Err == nil || r.Err.Code != 499 || r.Err.Type != "RequestCancellationError" {
				t.Errorf("cut record %d: %+v", r.Record, r.Err)
			}
		}
	}
	// Each reply takes ~1 s, the grace 0.2 s: the 8 in flight are cut.
	if cut != 8 || stats.Cancelled != 8 {
		t.Errorf("%d records cut (stats %d), want the 8 in flight", cut, stats.Cancelled)
	}
}

// An interrupt after the last send still starts the grace period (the run
// used to wait for every reply in flight), and Cut (a second interrupt)
// ends a long grace period at once; either way every request is recorded.
func TestInterruptAfterLastSendAndCut(t *testing.T) {
	url, _ := startMock(t, mock.Config{TTFT: 5 * time.Millisecond, ITL: 20 * time.Millisecond})
	for _, tc := range []struct {
		name  string
		grace time.Duration
		cut   bool
	}{{"grace after the last send", 200 * time.Millisecond, false}, {"second interrupt cuts a long grace", time.Hour, true}} {
		t.Run(tc.name, func(t *testing.T) {
			// 8 requests of ~60 s each, all sent at once: sending is over
			// long before the interrupt at 300 ms.
			st := singleTurns(t, 8, 0, func(i int) []byte { return chatBody("q", 3000, true) })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cutC := make(chan struct{})
			time.AfterFunc(300*time.Millisecond, cancel)
			if tc.cut {
				time.AfterFunc(500*time.Millisecond, func() { close(cutC) })
			}
			start := time.Now()
			recs, stats := replayAll(t, ctx, st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 8,
				RequestCount: 8, Grace: tc.grace, Cut: cutC})
			// 0.5 s when cut, 60 s when not: the bound tells them apart on
			// any machine.
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("took %v, want the interrupt to cut the ~60 s replies short", took)
			}
			if !stats.Interrupted || len(recs) != 8 || stats.Cancelled != 8 {
				t.Errorf("interrupted %v, %d records, %d cut; want 8 records, all cut", stats.Interrupted, len(recs), stats.Cancelled)
			}
		})
	}
}

// --cancel-rate cancels that share of requests, after --cancel-after: a
// cancelled request ends no sooner than that after its send, and before the
// mock's first token (2 s: a cancel 200 times late would still be in time).
func TestCancelRate(t *testing.T) {
	url, _ := startMock(t, mock.Config{TTFT: 2 * time.Second, ITL: time.Millisecond})
	st := singleTurns(t, 40, 0, func(i int) []byte { return chatBody("q", 4, true) })
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 40,
		CancelRate: 0.5, CancelAfter: 10 * time.Millisecond, Seed: 3})
	if len(recs) != 40 {
		t.Fatalf("%d records", len(recs))
	}
	if stats.Cancelled < 10 || stats.Cancelled > 30 {
		t.Errorf("%d of 40 cancelled at rate 0.5", stats.Cancelled)
	}
	for _, r := range recs {
		if r.Cancelled {
			if d := time.Duration(r.EndNS - r.SentNS); d < 10*time.Millisecond || len(r.ChunkOffsetsNS) != 0 {
				t.Errorf("record %d cancelled %v after the send with %d chunks, want after 10 ms and before the first token", r.Record, d, len(r.ChunkOffsetsNS))
			}
		} else if r.Err != nil {
			t.Errorf("record %d: %v", r.Record, r.Err)
		}
	}
}

// The API key goes in the Authorization header and nowhere else.
func TestAPIKey(t *testing.T) {
	const key = "sk-test-0123456789"
	srv, _ := mock.New(mock.Config{Fast: true})
	var got atomic.Value
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("X-Extra") + "|" + r.Header.Get("X-Request-ID") + "|" + r.Header.Get("X-Correlation-ID"))
		srv.ServeHTTP(w, r)
	}))
	st := singleTurns(t, 2, 0, func(i int) []byte { return chatBody("q", 2, true) })
	var buf bytes.Buffer
	stats, err := Run(context.Background(), st, Options{URL: url, APIKey: key, Headers: []Header{{"X-Extra", "yes"}}, Results: &buf})
	if err != nil || stats.Errors != 0 {
		t.Fatal(err, stats)
	}
	parts := strings.Split(got.Load().(string), "|")
	if parts[0] != "Bearer "+key || parts[1] != "yes" || parts[2] == "" || parts[3] == "" {
		t.Errorf("server saw %q", parts)
	}
	if bytes.Contains(buf.Bytes(), []byte(key)) {
		t.Error("the key is in the records")
	}
}

// Without usage, output tokens are counted with the tokenizer.
func TestClientSideCount(t *testing.T) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	url, _ := startMock(t, mock.Config{Fast: true, Tokenizer: tok})
	st := singleTurns(t, 5, 0, func(i int) []byte { return chatBody("q", 40, false) })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Tokenizer: tokenizer.Builtin})
	for _, r := range recs {
		if r.OutputSource != result.SourceClient || r.Usage != nil {
			t.Fatalf("record %d: source %q usage %v", r.Record, r.OutputSource, r.Usage)
		}
		// The mock's reply tokens re-encode to themselves: exactly 40.
		if r.OutputTokens != 40 {
			t.Errorf("record %d: counted %d tokens of 40", r.Record, r.OutputTokens)
		}
	}
}

// With usage, the counts are the server's and the client also counts the
// answer's text (aiperf's client-side output length, for
// usage_completion_tokens_diff_pct); without a tokenizer it counts nothing.
func TestClientCountBesideUsage(t *testing.T) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	url, _ := startMock(t, mock.Config{Fast: true, Tokenizer: tok})
	for _, streamed := range []bool{true, false} {
		st := singleTurns(t, 3, 0, func(i int) []byte {
			if streamed {
				return chatBody("q", 40, true)
			}
			return []byte(`{"messages":[{"role":"user","content":"q"}],"model":"m","max_tokens":40}`)
		})
		recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Tokenizer: tokenizer.Builtin})
		for _, r := range recs {
			if r.OutputSource != result.SourceUsage || r.Usage == nil || r.OutputTokens != 40 {
				t.Fatalf("streamed %v, record %d: source %q usage %v, %d tokens", streamed, r.Record, r.OutputSource, r.Usage, r.OutputTokens)
			}
			// The mock's reply tokens re-encode to themselves: exactly 40.
			if !r.ClientCounted || r.ClientOutputTokens != 40 || r.ClientReasoningTokens != 0 {
				t.Errorf("streamed %v, record %d: client counted %v, %d + %d tokens, want 40", streamed, r.Record, r.ClientCounted, r.ClientOutputTokens, r.ClientReasoningTokens)
			}
		}
		recs, _ = replayAll(t, context.Background(), st, Options{URL: url})
		for _, r := range recs {
			if r.ClientCounted || r.OutputTokens != 40 {
				t.Errorf("no tokenizer, streamed %v, record %d: client counted %v (%d), %d tokens", streamed, r.Record, r.ClientCounted, r.ClientOutputTokens, r.OutputTokens)
			}
		}
	}
}

// The counting tokenizer is loaded before the first request goes out, not
// at the first answer while others are in flight.
func TestTokenizerLoadedBeforeStart(t *testing.T) {
	var loaded, early atomic.Bool
	srv, _ := mock.New(mock.Config{Fast: true})
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loaded.Load() {
			early.Store(true)
		}
		srv.ServeHTTP(w, r)
	}))
	st := singleTurns(t, 2, 0, func(i int) []byte { return chatBody("q", 4, true) })
	load := func() (*tokenizer.Tokenizer, error) { loaded.Store(true); return tokenizer.Builtin() }
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Tokenizer: load})
	if !loaded.Load() || early.Load() || len(recs) != 2 {
		t.Errorf("loaded %v, a request before the load %v, %d records", loaded.Load(), early.Load(), len(recs))
	}
}

// With --start-at, the run does not wait for the tokenizer past the start
// (a load that made the shard late would have it refused): the first
// request goes out while the load still waits for it.
func TestTokenizerLoadNotPastStartAt(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	srv, _ := mock.New(mock.Config{Fast: true})
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(release) })
		srv.ServeHTTP(w, r)
	}))
	st := singleTurns(t, 2, 0, func(i int) []byte { return chatBody("q", 4, true) })
	load := func() (*tokenizer.Tokenizer, error) {
		select {
		case <-release:
		case <-time.After(10 * time.Second): // the run waited for the load: it fails below
		}
		return tokenizer.Builtin()
	}
	var buf bytes.Buffer
	_, err := Run(context.Background(), st, Options{URL: url, Tokenizer: load, StartAt: time.Now().Add(500 * time.Millisecond), Results: &buf})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range decodeAll(t, &buf) {
		if r.Err != nil || !r.ClientCounted || r.ClientOutputTokens == 0 {
			t.Errorf("record %d: error %v, client counted %v (%d)", r.Record, r.Err, r.ClientCounted, r.ClientOutputTokens)
		}
	}
}

// The client counts reasoning text apart, and a failed answer not at all.
func TestClientCountReasoningAndErrors(t *testing.T) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	url, _ := startMock(t, mock.Config{Fast: true, Tokenizer: tok, ReasoningTokens: 3})
	st := singleTurns(t, 2, 0, func(i int) []byte { return chatBody("q", 10, true) })
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Tokenizer: tokenizer.Builtin})
	for _, r := range recs {
		if r.OutputSource != result.SourceUsage || r.ReasoningTokens != 3 {
			t.Fatalf("record %d: source %q, %d reasoning tokens", r.Record, r.OutputSource, r.ReasoningTokens)
		}
		if !r.ClientCounted || r.ClientReasoningTokens != 3 || r.ClientOutputTokens+r.ClientReasoningTokens != r.Usage.CompletionTokens {
			t.Errorf("record %d: client counted %v, %d + %d tokens; usage %+v", r.Record, r.ClientCounted, r.ClientOutputTokens, r.ClientReasoningTokens, *r.Usage)
		}
	}
	// A server error that carries usage and text: no client count.
	bad := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"some text\"}}]}\n\n")
		io.WriteString(w, "data: {\"error\":{\"message\":\"boom\",\"code\":500}}\n\n")
		io.WriteString(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	recs, _ = replayAll(t, context.Background(), st, Options{URL: bad, Tokenizer: tokenizer.Builtin})
	for _, r := range recs {
		if r.Err == nil || r.ClientCounted {
			t.Errorf("record %d: error %v, client counted %v (%d)", r.Record, r.Err, r.ClientCounted, r.ClientOutputTokens)
		}
	}
}

// The non-streamed answer: one "chunk", usage from the body.
func TestNonStreaming(t *testing.T) {
	url, _ := startMock(t, mock.Config{TTFT: 5 * time.Millisecond, ITL: time.Millisecond})
	st := singleTurns(t, 3, 0, func(i int) []byte {
		return []byte(`{"messages":[{"role":"user","content":"hi"}],"model":"m","max_tokens":7}`)
	})
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url})
	for _, r := range recs {
		if r.Err != nil || r.OutputTokens != 7 || r.OutputSource != result.SourceUsage || len(r.ChunkOffsetsNS) != 1 || r.FirstTokenNS != r.EndNS {
			t.Errorf("record %+v", r)
		}
		if d := time.Duration(r.EndNS - r.SentNS); d < 11*time.Millisecond {
			t.Errorf("answer after %v, the mock takes 5 ms + 6 × 1 ms", d)
		}
	}
}

// The headers every request carries: X-Request-ID (the record's), one
// X-Correlation-ID per session run shared by its turns, Content-Type, the
// extras, and the key only in Authorization.
func TestHeadersPerSession(t *testing.T) {
	srv, _ := mock.New(mock.Config{Fast: true})
	type seen struct{ reqID, corr, ctype, extra, auth, ua string }
	var mu sync.Mutex
	got := map[string]seen{}
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header
		mu.Lock()
		got[h.Get("X-Request-ID")] = seen{h.Get("X-Request-ID"), h.Get("X-Correlation-ID"), h.Get("Content-Type"), h.Get("X-Team"), h.Get("Authorization"), h.Get("User-Agent")}
		mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	spec := &store.Spec{}
	for s := range 4 {
		spec.Sessions = append(spec.Sessions, fmt.Sprintf("conv%d", s))
		for turn := range 3 {
			spec.Records = append(spec.Records, store.Record{Entry: store.Entry{Session: uint32(s), Turn: uint32(turn)}, Payload: chatBody("t", 2, true)})
		}
	}
	st := openSpec(t, spec)
	recs, stats := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 2,
		APIKey: "k-123", Headers: []Header{{"X-Team", "bench"}}, UserAgent: "ua-test", History: HistoryOff})
	if stats.Errors != 0 || len(recs) != 12 || len(got) != 12 {
		t.Fatalf("%d records, %d errors, %d distinct request ids at the server", len(recs), stats.Errors, len(got))
	}
	corrOf := map[string]string{} // session -> correlation id
	sessOf := map[string]string{} // correlation id -> session
	for _, r := range recs {
		h, ok := got[r.RequestID]
		if !ok {
			t.Fatalf("record %d: request id %q never reached the server", r.Record, r.RequestID)
		}
		if h.corr != r.CorrelationID || h.ctype != "application/json" || h.extra != "bench" || h.auth != "Bearer k-123" || h.ua != "ua-test" {
			t.Errorf("record %d: server saw %+v, record says correlation %q", r.Record, h, r.CorrelationID)
		}
		if c, ok := corrOf[r.Session]; ok && c != h.corr {
			t.Errorf("session %s: correlation ids %q and %q", r.Session, c, h.corr)
		}
		corrOf[r.Session] = h.corr
		if s, ok := sessOf[h.corr]; ok && s != r.Session {
			t.Errorf("correlation id %q shared by sessions %s and %s", h.corr, s, r.Session)
		}
		sessOf[h.corr] = r.Session
	}
	if len(corrOf) != 4 {
		t.Errorf("%d sessions, want 4", len(corrOf))
	}
}

// Keep-alive: a run reuses its connections; it opens a few (the pre-dialled
// ones and a spare), not one a request.
func TestConnectionReuse(t *testing.T) {
	srv, _ := mock.New(mock.Config{Fast: true})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	hs := &http.Server{Handler: srv, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	st := singleTurns(t, 10, 0, func(i int) []byte { return chatBody("q", 4, true) })
	recs, stats := replayAll(t, context.Background(), st, Options{URL: "http://" + l.Addr().String(), Schedule: ScheduleConcurrency,
		Concurrency: 2, RequestCount: 200})
	if stats.Errors != 0 || len(recs) != 200 {
		t.Fatalf("%d records, %d errors", len(recs), stats.Errors)
	}
	// (The server may not have accepted a spare dialled last.)
	if stats.Dials > 6 || conns.Load() > stats.Dials || conns.Load() < 2 {
		t.Errorf("%d connections dialled (the server accepted %d) for 200 requests, 2 at a time", stats.Dials, conns.Load())
	}
}

// TestStaleIdleConnections: a server that closes keep-alive connections
// idle for a while (uvicorn's timeout_keep_alive, here 50 ms) closes every
// connection of the pool during a lull in the trace. The first request
// after the lull finds only stale connections: it is sent again on a new
// one, not on the next stale one (which failed it with a ConnectionError).
func TestStaleIdleConnections(t *testing.T) {
	srv, _ := mock.New(mock.Config{Fast: true})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv, IdleTimeout: 50 * time.Millisecond, ReadHeaderTimeout: 50 * time.Millisecond}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	st := singleTurns(t, 3, 300*time.Millisecond, func(i int) []byte { return chatBody("q", 2, true) })
	recs, stats := replayAll(t, context.Background(), st, Options{URL: "http://" + l.Addr().String(), Concurrency: 3})
	if stats.Schedule != ScheduleFixed || len(recs) != 3 {
		t.Fatalf("schedule %s, %d records", stats.Schedule, len(recs))
	}
	for _, r := range recs {
		if r.Err != nil {
			t.Errorf("record %d: %v", r.Record, r.Err)
		}
	}
}
