package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/mock"
	"github.com/aiperf/toolkit/lib/result"
	"github.com/aiperf/toolkit/lib/store"
)

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"+30s", now.Add(30 * time.Second)},
		{"+1m30s", now.Add(90 * time.Second)},
		{"2026-12-02T10:00:05.250Z", now.Add(5250 * time.Millisecond)},
		{"2026-12-02T11:00:05+01:00", now.Add(5 * time.Second)},
		{"2026-12-02T10:00:05.123456789Z", now.Add(5*time.Second + 123456789)},
	} {
		got, err := ParseStartAt(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseStartAt(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "+", "+-3s", "tomorrow", "2026-12-02 10:00:00", "1733133600"} {
		if _, err := ParseStartAt(bad, now); err == nil {
			t.Errorf("ParseStartAt(%q): no error", bad)
		}
	}
}

// TestShare: the parts of a count over the shards add up to it and differ
// by at most one.
func TestShare(t *testing.T) {
	for n := int64(0); n < 40; n++ {
		for shards := 1; shards < 9; shards++ {
			var sum, lo, hi int64 = 0, n, 0
			for k := range shards {
				s := share(n, k, shards)
				sum += s
				lo, hi = min(lo, s), max(hi, s)
			}
			if sum != n || hi-lo > 1 {
				t.Fatalf("share(%d, ·, %d): sum %d, spread %d", n, shards, sum, hi-lo)
			}
		}
	}
}

// TestPlanShards: shard k replays sessions k, k+N, ... (every session in
// exactly one shard), with its share of the whole replay's figures; a
// fixed shard keeps the whole trace's zero.
func TestPlanShards(t *testing.T) {
	st := planStore(t, 10, true, nil, nil)
	seen := map[uint32]int{}
	var requests int64
	for k := range 3 {
		p, err := NewPlan(st, Options{URL: planURL, Shard: k, Shards: 3, Schedule: ScheduleFixed})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range p.order {
			seen[s]++
			if int(s)%3 != k {
				t.Errorf("shard %d/3 holds session %d", k, s)
			}
			// the trace's zero: session s (at s ms) is due s ms after the start
			if want := int64(s) * int64(time.Millisecond); p.times[i] != want {
				t.Errorf("shard %d/3: session %d due at %d ns, want %d (the whole trace's zero)", k, s, p.times[i], want)
			}
		}
		requests += p.Requests()
	}
	if len(seen) != 10 || requests != 10 {
		t.Errorf("the shards hold %d sessions and %d requests; want every one of the 10 once", len(seen), requests)
	}
	for s, n := range seen {
		if n != 1 {
			t.Errorf("session %d in %d shards", s, n)
		}
	}

	plain := planStore(t, 10, false, nil, nil)
	p, err := NewPlan(plain, Options{URL: planURL, Shard: 1, Shards: 4, Rate: 10, Concurrency: 6, RequestCount: 9, Warmup: 2})
	if err != nil {
		t.Fatal(err)
	}
	o := p.Options
	if o.Rate != 2.5 || o.Concurrency != 2 || o.RequestCount != 2 || o.Warmup != 1 {
		t.Errorf("shard 1/4 of rate 10, concurrency 6, 9 requests, warmup 2: got rate %g, concurrency %d, %d requests, warmup %d; want 2.5, 2, 2, 1",
			o.Rate, o.Concurrency, o.RequestCount, o.Warmup)
	}
	if !slices.Equal(p.sessions, []uint32{1, 5, 9}) || !strings.Contains(p.Offered, "rate 2.5 of 10") {
		t.Errorf("sessions %v, offered %q", p.sessions, p.Offered)
	}
	p, err = NewPlan(plain, Options{URL: planURL, Shard: 1, Shards: 4, Rate: 10, PerShard: true})
	if err != nil || p.Options.Rate != 10 {
		t.Errorf("--per-shard: rate %v, %v; want 10 as given", p.Options.Rate, err)
	}
	// Every record of the shard once by default: its own records, not the store's.
	p, err = NewPlan(plain, Options{URL: planURL, Shard: 0, Shards: 4})
	if err != nil || p.Requests() != 3 {
		t.Errorf("shard 0/4 of 10 sessions: %d requests, %v; want 3", p.Requests(), err)
	}
}

func TestPlanShardRefusals(t *testing.T) {
	plain := planStore(t, 3, false, nil, nil)
	for _, tc := range []struct {
		name   string
		o      Options
		option string
		want   string
	}{
		{"index past N", Options{Shard: 3, Shards: 3}, "shard", "shard 3/3: want i/N"},
		{"more shards than sessions", Options{Shard: 3, Shards: 4}, "shard", "the store has 3 sessions, so shard 3 has none (use at most 3 shards)"},
		// every shard refuses what leaves another shard nothing, so that
		// none sends its part of a replay whose merge would be refused
		{"more shards than sessions, shard 0", Options{Shard: 0, Shards: 5}, "shard", "the store has 3 sessions, so shards 3 to 4 have none"},
		{"per-shard unsharded", Options{PerShard: true}, "per-shard", "only a sharded run"},
		{"concurrency below shards", Options{Shard: 2, Shards: 3, Concurrency: 2}, "concurrency", "concurrency 2 over 3 shards: shard 2 has none"},
		{"concurrency below shards, shard 0", Options{Shard: 0, Shards: 3, Concurrency: 2}, "concurrency", "concurrency 2 over 3 shards: shard 2 has none"},
		{"request count below shards, shard 1", Options{Shard: 1, Shards: 3, Schedule: ScheduleConcurrency, Concurrency: 3, RequestCount: 1}, "request-count", "request-count 1 over 3 shards: shards 1 to 2 have none"},
		{"start in the past", Options{StartAt: time.Now().Add(-90 * time.Second)}, "start-at", "was 1.5 minutes ago"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.URL = planURL
			_, err := NewPlan(plain, o)
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Option != tc.option || !strings.Contains(oe.Msg, tc.want) {
				t.Fatalf("got %v, want an OptionError of %s saying %q", err, tc.option, tc.want)
			}
		})
	}
	// A start less than MaxStartLag ago is taken (and shows as lateness).
	if _, err := NewPlan(plain, Options{URL: planURL, StartAt: time.Now().Add(-MaxStartLag / 2)}); err != nil {
		t.Errorf("a start %s ago: %v", MaxStartLag/2, err)
	}
}

// TestStartAtAndShardRecords: a sharded run with a start instant ahead
// sends nothing before it, takes it as the schedule's zero (the first
// sessions are intended at it exactly), and every record names its shard.
func TestStartAtAndShardRecords(t *testing.T) {
	url, _ := startMock(t, mock.Config{Fast: true})
	st := singleTurns(t, 9, 0, func(int) []byte { return chatBody("q", 2, true) })
	at := time.Now().Add(700 * time.Millisecond).Truncate(time.Microsecond)
	var buf bytes.Buffer
	_, err := Run(context.Background(), st, Options{URL: url, Schedule: ScheduleConcurrency, Concurrency: 6,
		Shard: 2, Shards: 3, StartAt: at, Results: &buf})
	if err != nil {
		t.Fatal(err)
	}
	recs := decodeAll(t, &buf)
	if len(recs) != 3 {
		t.Fatalf("%d records, want shard 2/3's 3 (sessions 2, 5, 8)", len(recs))
	}
	firstIntended := int64(math.MaxInt64)
	for _, r := range recs {
		if r.Record%3 != 2 || r.Shard != 2 || r.Shards != 3 {
			t.Errorf("record %d of shard %d/%d in shard 2/3's run", r.Record, r.Shard, r.Shards)
		}
		if r.SentNS < at.UnixNano() || r.IntendedNS < at.UnixNano() {
			t.Errorf("record %d sent at %d, intended %d: before the start %d", r.Record, r.SentNS, r.IntendedNS, at.UnixNano())
		}
		firstIntended = min(firstIntended, r.IntendedNS)
	}
	if firstIntended != at.UnixNano() {
		t.Errorf("first intended %d, want the start instant %d", firstIntended, at.UnixNano())
	}
	if ri := recs[0].Run; ri == nil || ri.Shard != 2 || ri.Shards != 3 || !strings.Contains(ri.Offered, "concurrency 2 of 6") {
		t.Errorf("run info %+v", ri)
	}
	// the machine and its clock, which a merge of shards from several
	// machines judges (rundir.shardClocks)
	host, _ := os.Hostname()
	if ri := recs[0].Run; ri == nil || ri.Host != host || runtime.GOOS == "linux" && (ri.Clock == nil || ri.BootID == "") {
		t.Errorf("run info host %q (want %q), clock %+v", ri.Host, host, ri.Clock)
	}
}

// The fixed schedule's warmup is the whole trace's first requests in time
// order, as unsharded: trace times 0, 300, 100, 400 ms and --warmup 2 warm
// up sessions 0 and 2 (both shard 0 of 2), not one first request a shard.
func TestFixedShardsWarmupIsTheTracesFirst(t *testing.T) {
	st := timedSessions(t, 0, 300, 100, 400)
	unsharded, err := NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, Warmup: 2})
	if err != nil || unsharded.Options.Warmup != 2 || !slices.Equal(unsharded.order[:2], []uint32{0, 2}) {
		t.Fatalf("unsharded: %v, warmup %d of %v", err, unsharded.Options.Warmup, unsharded.order)
	}
	for k, want := range []int64{2, 0} {
		p, err := NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, Warmup: 2, Shard: k, Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		if p.Options.Warmup != want || !strings.Contains(p.Offered, fmt.Sprintf("warmup %d of 2 (the trace's first 2 requests", want)) {
			t.Errorf("shard %d/2: warmup %d (%q), want %d", k, p.Options.Warmup, p.Offered, want)
		}
	}
	// --warmup 3: shard 0's two requests are both warmup, which it says
	p, err := NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, Warmup: 3, Shard: 0, Shards: 2})
	if err != nil || p.Options.Warmup != 2 || !strings.Contains(p.Offered, "every request of this shard is warmup") {
		t.Errorf("warmup 3: %v, warmup %d, %q", err, p.Options.Warmup, p.Offered)
	}
	// other schedules keep the even division
	p, err = NewPlan(st, Options{URL: planURL, Schedule: ScheduleConcurrency, Concurrency: 2, Warmup: 2, Shard: 1, Shards: 2})
	if err != nil || p.Options.Warmup != 1 {
		t.Errorf("concurrency: warmup %d, %v; want 1", p.Options.Warmup, err)
	}
}

// The fixed schedule's --request-count is the whole trace's next requests
// after the warmup, as unsharded: trace times 0, 300, 100, 400 ms and
// --request-count 2 measure sessions 0 and 2 (both shard 0 of 2), where an
// even split sent sessions 0 and 1; shard 1, holding none, is refused, by
// every shard (none sends its part of a replay that cannot merge).
func TestFixedShardsRequestCountIsTheTraces(t *testing.T) {
	st := timedSessions(t, 0, 300, 100, 400)
	for k := range 2 {
		_, err := NewPlan(st, Options{URL: planURL, RequestCount: 2, Shard: k, Shards: 2})
		var oe *OptionError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), "request-count 2: the trace's requests 1 to 2 (after a warmup of 0) hold none of shard 1/2's sessions") {
			t.Errorf("shard %d/2: %v, want a request-count refusal naming shard 1/2", k, err)
		}
	}
	p, err := NewPlan(st, Options{URL: planURL, RequestCount: 3, Shard: 0, Shards: 2})
	if err != nil || p.Schedule != ScheduleFixed || p.Options.RequestCount != 2 || !strings.Contains(p.Offered, "request count 2 of 3 (the trace's requests 1 to 3") {
		t.Errorf("shard 0/2 of 3: %v, %s, count %d, %q; want the fixed schedule, 2", err, p.Schedule, p.Options.RequestCount, p.Offered)
	}
	// warmup 1, count 2: session 0 warms up, sessions 2 and 1 are measured
	for k, want := range [][2]int64{{1, 1}, {0, 1}} {
		p, err := NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, Warmup: 1, RequestCount: 2, Shard: k, Shards: 2})
		if err != nil || p.Options.Warmup != want[0] || p.Options.RequestCount != want[1] || p.Requests() != want[0]+want[1] {
			t.Errorf("shard %d/2: %v, warmup %d count %d requests %d; want %v", k, err, p.Options.Warmup, p.Options.RequestCount, p.Requests(), want)
		}
	}
	// a count past the trace takes what is left
	p, err = NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, RequestCount: 9, Shard: 1, Shards: 2})
	if err != nil || p.Options.RequestCount != 2 || !strings.Contains(p.Offered, "request count 2 of 9 (the trace's requests 1 to 4") {
		t.Errorf("count 9: %v, %d, %q", err, p.Options.RequestCount, p.Offered)
	}
	// the other schedules keep the even division
	p, err = NewPlan(st, Options{URL: planURL, Schedule: ScheduleConcurrency, Concurrency: 2, RequestCount: 2, Shard: 1, Shards: 2})
	if err != nil || p.Options.RequestCount != 1 {
		t.Errorf("concurrency: %v, count %d; want 1", err, p.Options.RequestCount)
	}
}

// The recount follows the order the schedule sends in, a session's later
// turns at their own times: s0 has turns at 0 and 300 ms, s1 one at 100
// ms, so --request-count 2 measures s0's first turn and s1's (one a
// shard), not s0's two turns. A shard whose part is all warmup sends its
// warmup only; with delay-based turns the order is the trace's times
// without the answers' latency, which the shard's note says.
func TestFixedShardsCountInSendOrder(t *testing.T) {
	spec := &store.Spec{Meta: map[string]string{store.MetaEndpoint: "chat", store.MetaPath: "/v1/chat/completions", store.MetaStreaming: "true"}}
	add := func(sess, turn uint32, flags uint32, ms int64) {
		if int(sess) == len(spec.Sessions) {
			spec.Sessions = append(spec.Sessions, "s"+strconv.Itoa(int(sess)))
		}
		e := store.Entry{Line: uint64(len(spec.Records) + 1), Session: sess, Turn: turn, InputTokens: 5, Flags: flags, TimeNS: ms * int64(time.Millisecond)}
		spec.Records = append(spec.Records, store.Record{Entry: e, Payload: chatBody("q", 2, true)})
	}
	add(0, 0, store.FlagTimestamp, 0)
	add(0, 1, store.FlagTimestamp, 300)
	add(1, 0, store.FlagTimestamp, 100)
	st := openSpec(t, spec)
	for k := range 2 {
		p, err := NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, RequestCount: 2, Shard: k, Shards: 2})
		if err != nil || p.Options.RequestCount != 1 || p.Requests() != 1 || strings.Contains(p.Offered, "latency") {
			t.Errorf("shard %d/2: %v, count %d, %q; want 1", k, err, p.Options.RequestCount, p.Offered)
		}
	}
	// --warmup 2 --request-count 1: the warmup is s0's first turn and s1's;
	// shard 1 holds only warmup, and shard 0 measures s0's second turn
	p, err := NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, Warmup: 2, RequestCount: 1, Shard: 1, Shards: 2})
	if err != nil || p.Options.Warmup != 1 || p.Requests() != 1 || !strings.Contains(p.Offered, "it sends its warmup only") {
		t.Errorf("warmup-only shard: %v, warmup %d, requests %d, %q", err, p.Options.Warmup, p.Requests(), p.Offered)
	}
	p, err = NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, Warmup: 2, RequestCount: 1, Shard: 0, Shards: 2})
	if err != nil || p.Options.Warmup != 1 || p.Options.RequestCount != 1 || p.Requests() != 2 {
		t.Errorf("shard 0: %v, warmup %d, count %d, requests %d", err, p.Options.Warmup, p.Options.RequestCount, p.Requests())
	}
	// and runs so: one warmup request, no measured one
	url, _ := startMock(t, mock.Config{Fast: true})
	recs, _ := replayAll(t, context.Background(), st, Options{URL: url, Schedule: ScheduleFixed, Speedup: 100, Warmup: 2, RequestCount: 1, Shard: 1, Shards: 2})
	if len(recs) != 1 || recs[0].Phase != result.PhaseWarmup || recs[0].Err != nil {
		t.Errorf("warmup-only shard sent %+v; want its one warmup request", recs)
	}
	// a delay-based later turn: the order is an estimate, and said to be
	spec.Records[1].Entry.Flags, spec.Records[1].Entry.TimeNS = store.FlagDelay, int64(50*time.Millisecond)
	st = openSpec(t, spec)
	p, err = NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, RequestCount: 3, Shard: 0, Shards: 2})
	if err != nil || p.Options.RequestCount != 2 || !strings.Contains(p.Offered, "the order is the trace's times without their latency") {
		t.Errorf("delays: %v, count %d, %q; want s0's two turns (0 and 0+50 ms) before s1's (100 ms)", err, p.Options.RequestCount, p.Offered)
	}
	// --request-count 2 is then s0's two turns: shard 1 holds none, and both shards refuse it
	for k := range 2 {
		if _, err := NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, RequestCount: 2, Shard: k, Shards: 2}); err == nil || !strings.Contains(err.Error(), "hold none of shard 1/2's sessions") {
			t.Errorf("delays, --request-count 2, shard %d/2: %v; want a refusal naming shard 1/2", k, err)
		}
	}
}

// A sharded fixed schedule whose --request-count runs past the trace says
// so, as the unsharded run does: the trace plays once, and the shards
// send what it holds.
func TestFixedShardsCountPastTheTrace(t *testing.T) {
	st := timedSessions(t, 0, 300, 100, 400)
	var sent int64
	for k := range 2 {
		p, err := NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, Warmup: 1, RequestCount: 20, Shard: k, Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		sent += p.Requests()
		if p.WholeShort != "--request-count 20: the fixed schedule plays the trace once, and it holds 4 requests (--warmup 1 included): the shards send 4, not 21" ||
			!strings.Contains(p.Offered, "; the trace holds 3 after the warmup") {
			t.Errorf("shard %d/2: %q, %q", k, p.WholeShort, p.Offered)
		}
	}
	if sent != 4 {
		t.Errorf("the shards send %d requests, want the trace's 4", sent)
	}
	if p, _ := NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, RequestCount: 3, Shard: 0, Shards: 2}); p == nil || p.WholeShort != "" {
		t.Errorf("a count within the trace: %+v", p)
	}
}

// timedSessions is a store of one-turn sessions s0, s1, ... whose turns lie
// at the trace times ms (milliseconds).
func timedSessions(t *testing.T, ms ...int64) *store.Reader {
	t.Helper()
	spec := &store.Spec{Meta: map[string]string{store.MetaEndpoint: "chat", store.MetaPath: "/v1/chat/completions", store.MetaStreaming: "true"}}
	for i, m := range ms {
		spec.Sessions = append(spec.Sessions, "s"+strconv.Itoa(i))
		e := store.Entry{Line: uint64(i + 1), Session: uint32(i), InputTokens: 5, Flags: store.FlagTimestamp, TimeNS: m * int64(time.Millisecond)}
		spec.Records = append(spec.Records, store.Record{Entry: e, Payload: chatBody("q", 2, true)})
	}
	return openSpec(t, spec)
}

// Offsets that leave a shard no session are refused by every shard, not
// only the empty one: none sends its part of a replay that cannot merge.
func TestFixedShardsOffsetsEveryShard(t *testing.T) {
	st := timedSessions(t, 0, 10, 20, 30)
	zero := time.Duration(0)
	for k := range 2 {
		_, err := NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, StartOffset: &zero, EndOffset: &zero, Shard: k, Shards: 2})
		if err == nil || !strings.Contains(err.Error(), "none of shard 1/2's sessions starts within the offsets") {
			t.Errorf("shard %d/2: %v; want a refusal naming shard 1/2", k, err)
		}
	}
}

// A --per-shard warmup that takes all of some shard's requests is refused
// by every shard, not only by that one.
func TestFixedPerShardWarmupEveryShard(t *testing.T) {
	st := timedSessions(t, 0, 10, 20, 30, 40) // shards 0 and 1 of 3: two sessions each; shard 2: one
	for k := range 3 {
		_, err := NewPlan(st, Options{URL: planURL, Schedule: ScheduleFixed, PerShard: true, Warmup: 1, Shard: k, Shards: 3})
		if err == nil || !strings.Contains(err.Error(), "takes all 1 requests of shard 2/3") {
			t.Errorf("shard %d/3: %v; want a warmup refusal naming shard 2/3", k, err)
		}
	}
}
