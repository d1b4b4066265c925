package replay

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/store"
)

// A store for plans: n single-turn sessions, timestamped when timed, of
// chat bodies, with metadata meta.
func planStore(t *testing.T, n int, timed bool, meta map[string]string, body []byte) *store.Reader {
	t.Helper()
	spec := &store.Spec{Meta: meta}
	for i := range n {
		spec.Sessions = append(spec.Sessions, "s"+string(rune('a'+i)))
		e := store.Entry{Line: uint64(i + 1), Session: uint32(i), InputTokens: 5}
		if timed {
			e.Flags |= store.FlagTimestamp
			e.TimeNS = int64(i) * int64(time.Millisecond)
		}
		if meta == nil && body != nil {
			e.Flags |= store.FlagVerbatim
		}
		b := body
		if b == nil {
			b = chatBody("q", 2, true)
		}
		spec.Records = append(spec.Records, store.Record{Entry: e, Payload: b})
	}
	if meta == nil {
		spec.Meta = map[string]string{store.MetaEndpoint: "chat", store.MetaPath: "/v1/chat/completions", store.MetaStreaming: "true"}
	}
	return openSpec(t, spec)
}

const planURL = "http://127.0.0.1:9"

func dur(d time.Duration) *time.Duration { return &d }

// TestPlanRefusals: every refusal comes from the plan, once, naming the
// option (OptionError.Option) at the start of its message.
func TestPlanRefusals(t *testing.T) {
	plain := planStore(t, 3, false, nil, nil)
	timed := planStore(t, 3, true, nil, nil)
	for _, tc := range []struct {
		name   string
		st     *store.Reader
		o      Options
		option string
		want   string
	}{
		{"unknown schedule", plain, Options{Schedule: "sometimes"}, "schedule", `schedule "sometimes": unknown schedule`},
		{"fixed without timestamps", plain, Options{Schedule: ScheduleFixed}, "schedule", "schedule fixed: the store has no timestamps"},
		{"rate without a rate", plain, Options{Schedule: ScheduleRate}, "schedule", "schedule rate: needs a rate"},
		{"rate too low", plain, Options{Rate: 1e-10}, "rate", "rate 1e-10: fewer than one session start a day (a mean gap of 317 years)"},
		{"rate NaN", plain, Options{Rate: math.NaN()}, "rate", "rate: must be a positive number"},
		{"rate on a fixed schedule", timed, Options{Schedule: ScheduleFixed, Rate: 2}, "rate", "rate: only the rate schedule has a rate (this run's schedule is fixed)"},
		{"rate on concurrency", plain, Options{Schedule: ScheduleConcurrency, Rate: 2}, "rate", "rate: only the rate schedule has a rate"},
		{"negative concurrency", plain, Options{Concurrency: -1}, "concurrency", "concurrency: must not be negative"},
		{"start offset, concurrency", plain, Options{StartOffset: dur(0)}, "start-offset", "start-offset: only the fixed schedule plays trace times (this run's schedule is concurrency)"},
		{"end offset, rate", timed, Options{Rate: 5, EndOffset: dur(0)}, "end-offset", "end-offset: only the fixed schedule plays trace times (this run's schedule is rate)"},
		{"arrival, fixed", timed, Options{Arrival: ArrivalConstant}, "arrival", "arrival: only the rate schedule has arrivals (this run's schedule is fixed)"},
		{"smoothness, concurrency", plain, Options{Smoothness: 2}, "smoothness", "smoothness: only the rate schedule has arrivals"},
		{"offsets cross", timed, Options{StartOffset: dur(2), EndOffset: dur(1)}, "end-offset", "end-offset: is before the start offset"},
		{"no session in the offsets", timed, Options{StartOffset: dur(time.Hour)}, "start-offset", "start-offset: no session starts within the offsets"},
		{"warmup takes the trace", timed, Options{Warmup: 3}, "warmup", "warmup 3 takes all 3 requests of the fixed schedule"},
		{"unknown endpoint", plain, Options{Endpoint: "rerank"}, "endpoint", `endpoint "rerank": want one of chat, completions, embeddings, responses, messages, raw, template`},
		{"store of chat bodies", plain, Options{Endpoint: "embeddings"}, "endpoint", "endpoint embeddings: the store holds chat bodies (for /v1/chat/completions)"},
		{"other endpoint", plain, Options{Endpoint: "completions"}, "endpoint", "endpoint completions: the store holds chat bodies (for /v1/chat/completions)"},
		{"client header", plain, Options{Headers: []Header{{"X-Request-ID", "x"}}}, "", "header X-Request-ID: set by the client"},
		{"bad URL", plain, Options{URL: "ftp://x"}, "", "want an http://, https:// or unix:// URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			if o.URL == "" {
				o.URL = planURL
			}
			_, err := NewPlan(tc.st, o)
			var oe *OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("got %v, want an OptionError", err)
			}
			if oe.Option != tc.option || !strings.Contains(oe.Msg, tc.want) || !strings.HasPrefix(oe.Msg, tc.option) {
				t.Errorf("got option %q: %q; want option %q: %q", oe.Option, oe.Msg, tc.option, tc.want)
			}
		})
	}
}

// TestPlanResolves: auto resolves once, and the defaults are filled in
// where the engine reads them.
func TestPlanResolves(t *testing.T) {
	plain := planStore(t, 3, false, nil, nil)
	timed := planStore(t, 3, true, nil, nil)
	for _, tc := range []struct {
		name            string
		st              *store.Reader
		o               Options
		schedule, why   string
		concurrency     int
		arrival         string
		limit, requests int64
		trace           int64
	}{
		{"auto plain", plain, Options{}, ScheduleConcurrency, "the store has no timestamps", 1, "", 3, 3, 0},
		{"auto timed, a ceiling", timed, Options{Concurrency: 2}, ScheduleFixed, "the store has timestamps", 2, "", 3, 3, 3},
		{"auto with a rate", timed, Options{Rate: 5}, ScheduleRate, "a rate is given", 0, ArrivalPoisson, 3, 3, 0},
		{"smoothness alone is gamma", plain, Options{Rate: 5, Smoothness: 4}, ScheduleRate, "a rate is given", 0, ArrivalGamma, 3, 3, 0},
		{"fixed count past the trace", timed, Options{RequestCount: 10}, ScheduleFixed, "the store has timestamps", 0, "", 10, 3, 3},
		{"duration only", plain, Options{Schedule: ScheduleConcurrency, Concurrency: 4, Duration: time.Second}, ScheduleConcurrency, "", 4, "", math.MaxInt64, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.URL = planURL
			p, err := NewPlan(tc.st, o)
			if err != nil {
				t.Fatal(err)
			}
			if p.Schedule != tc.schedule || p.Why != tc.why || p.Auto != (tc.why != "") || p.Options.Schedule != tc.schedule {
				t.Errorf("schedule %q (auto %v, %q), want %q (%q)", p.Schedule, p.Auto, p.Why, tc.schedule, tc.why)
			}
			if p.Options.Concurrency != tc.concurrency || p.Options.Arrival != tc.arrival {
				t.Errorf("concurrency %d, arrival %q; want %d, %q", p.Options.Concurrency, p.Options.Arrival, tc.concurrency, tc.arrival)
			}
			if p.Limit != tc.limit || p.Requests() != tc.requests || p.TraceRequests != tc.trace {
				t.Errorf("limit %d, requests %d, trace %d; want %d, %d, %d", p.Limit, p.Requests(), p.TraceRequests, tc.limit, tc.requests, tc.trace)
			}
			if p.Options.Speedup != 1 || p.Options.History != HistoryAuto {
				t.Errorf("defaults: speedup %v, history %q", p.Options.Speedup, p.Options.History)
			}
		})
	}
}

// TestPlanStoreEndpoint: the store's endpoint, path and streaming come from
// its metadata, or for verbatim bodies from the first body (a store packed
// before aiperf-pack read the bodies says chat and not streaming for any).
func TestPlanStoreEndpoint(t *testing.T) {
	old := map[string]string{store.MetaEndpoint: "chat", store.MetaPath: "/v1/chat/completions", store.MetaStreaming: "false"}
	verbatim := func(body string) *store.Reader {
		spec := &store.Spec{Meta: old, Sessions: []string{"a"}, Records: []store.Record{{
			Entry: store.Entry{Line: 1, Flags: store.FlagVerbatim}, Payload: []byte(body)}}}
		return openSpec(t, spec)
	}
	for _, tc := range []struct {
		name      string
		st        *store.Reader
		o         Options
		endpoint  string
		path      string
		streaming bool
		model     string
	}{
		{"formatted", planStore(t, 1, false, nil, nil), Options{}, "chat", "/v1/chat/completions", true, ""},
		{"early store naming the path", planStore(t, 1, false, map[string]string{store.MetaEndpoint: "/v1/completions"}, nil), Options{}, "completions", "/v1/completions", false, ""},
		{"verbatim completions", verbatim(`{"model":"x","prompt":"p","stream":true}`), Options{}, "completions", "/v1/completions", true, "x"},
		{"verbatim, nothing said", verbatim(`{}`), Options{Endpoint: "completions"}, "", "/v1/completions", false, ""},
		{"path wins", verbatim(`{"prompt":"p"}`), Options{Path: "/v2/x"}, "completions", "/v2/x", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.URL = planURL
			p, err := NewPlan(tc.st, o)
			if err != nil {
				t.Fatal(err)
			}
			if p.Endpoint != tc.endpoint || p.Path != tc.path || p.Streaming != tc.streaming || p.Model != tc.model {
				t.Errorf("endpoint %q, path %q, streaming %v, model %q; want %q, %q, %v, %q",
					p.Endpoint, p.Path, p.Streaming, p.Model, tc.endpoint, tc.path, tc.streaming, tc.model)
			}
		})
	}
}

// TestArrivalGapsSaturate: a gap far past the clock's range saturates
// instead of wrapping to a negative time (which started every session at
// once, or never).
func TestArrivalGapsSaturate(t *testing.T) {
	a := newArrivals(ArrivalConstant, 1e-12, 1, 1)
	g := a.gap()
	if g <= 0 {
		t.Fatalf("gap %d, want a positive saturated gap", g)
	}
	if next := satAdd(math.MaxInt64-5, g); next != math.MaxInt64 {
		t.Errorf("satAdd = %d, want MaxInt64", next)
	}
}
