package metrics

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/result"
)

// synth makes n plausible records: streamed, with usage, a few errors and
// cancellations, a warmup phase, intended times on a 10 ms grid.
func synth(n int, seed uint64) []result.Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	t0 := int64(1_750_000_000_000_000_000)
	recs := make([]result.Record, 0, n)
	for i := 0; i < n; i++ {
		r := synthOne(rng, i, t0)
		recs = append(recs, r)
	}
	return recs
}

func synthOne(rng *rand.Rand, i int, t0 int64) result.Record {
	intended := t0 + int64(i)*10*ms
	sent := intended + rng.Int64N(200_000)
	r := result.Record{Record: i, Session: "s", Turn: 0, Phase: result.PhaseProfiling,
		IntendedNS: intended, SentNS: sent, InputTokens: 100 + rng.Int64N(900), MaxTokens: 64}
	if i < 3 {
		r.Phase = result.PhaseWarmup
	}
	switch k := rng.IntN(100); {
	case k < 3:
		r.EndNS = sent + 1*ms
		r.Status = 503
		r.Err = &result.Error{Code: 503, Type: "HTTPError", Message: "Service Unavailable"}
		return r
	case k < 4:
		r.EndNS = sent + 2*ms
		r.Cancelled = true
		r.Err = &result.Error{Code: 499, Type: "RequestCancellationError", Message: "cancelled after 2 ms"}
		return r
	}
	osl := 48 + rng.Int64N(17)
	ttft := int64(math.Exp(rng.NormFloat64()*0.3+17)) + 1
	chunks := make([]int64, osl)
	at := ttft
	for j := range chunks {
		if j > 0 {
			at += 1*ms + rng.Int64N(4*ms)
		}
		chunks[j] = at
	}
	r.ChunkOffsetsNS = chunks
	r.FirstByteNS = sent + ttft/2
	r.FirstTokenNS, r.FirstOutputNS = sent+ttft, sent+ttft
	r.EndNS = sent + at + 100_000
	r.Status = 200
	r.OutputTokens, r.OutputSource = osl, result.SourceUsage
	r.Usage = &result.Usage{PromptTokens: r.InputTokens + rng.Int64N(3), CompletionTokens: osl, TotalTokens: r.InputTokens + osl}
	return r
}

func writeRecords(t testing.TB, path string, recs []result.Record) {
	t.Helper()
	var buf bytes.Buffer
	e := result.NewEncoder(&buf)
	for i := range recs {
		if err := e.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSummaryAgainstReference recomputes every distribution of a summary
// from the per-request values by sorting (the independent reference) and
// compares.
func TestSummaryAgainstReference(t *testing.T) {
	recs := synth(3000, 1)
	o := Options{Streaming: true}
	s, err := Summarize(FromRecords(recs), o)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := o.evaluator()
	vals := map[id][]float64{}
	var x values
	for i := range recs {
		if recs[i].Warmup() {
			continue
		}
		ev.eval(&recs[i], &x)
		for m := id(0); m < numRecord; m++ {
			if x.ok(m) {
				vals[m] = append(vals[m], x.v[m])
			}
		}
		for j := 1; j < len(x.icl); j++ {
			vals[mICL] = append(vals[mICL], float64(x.icl[j]-x.icl[j-1]))
		}
	}
	if len(vals) < 15 {
		t.Fatalf("only %d metrics have values", len(vals))
	}
	for m, v := range vals {
		d := &defs[m]
		r := s.Get(d.tag)
		if d.has(flagInternal) {
			if r != nil {
				t.Errorf("internal metric %s exported", d.tag)
			}
			continue
		}
		if r == nil {
			t.Fatalf("%s missing from the summary", d.tag)
		}
		f := convFactor(d.unit, d.disp)
		if r.Count != int64(len(v)) || r.Unit != d.disp.tag {
			t.Errorf("%s: count %d unit %s, want %d %s", d.tag, r.Count, r.Unit, len(v), d.disp.tag)
		}
		for i, p := range Percentiles {
			if want := refPercentile(v, p) * f; r.P[i] != want {
				t.Errorf("%s p%g = %v, want %v", d.tag, p, r.P[i], want)
			}
		}
		mean, std := refMeanStd(v)
		if !closeRel(r.Avg, mean*f, 1e-12) || !closeRel(r.Std, std*f, 1e-9) {
			t.Errorf("%s avg/std %v/%v, want %v/%v", d.tag, r.Avg, r.Std, mean*f, std*f)
		}
		if r.Min != sorted(v)[0]*f || r.Max != sorted(v)[len(v)-1]*f {
			t.Errorf("%s min/max %v/%v", d.tag, r.Min, r.Max)
		}
	}
	if s.Warmup != 3 || s.Requests+s.ErrorRequests != 2997 {
		t.Errorf("warmup %d, requests %d + errors %d", s.Warmup, s.Requests, s.ErrorRequests)
	}
	if s.Passes != 2 {
		t.Errorf("%d passes, want 2", s.Passes)
	}
}

// TestShardsEqualConcatenation: one run's records split over files give the
// summary of the single file.
func TestShardsEqualConcatenation(t *testing.T) {
	dir := t.TempDir()
	recs := synth(2500, 2)
	whole := filepath.Join(dir, "records.jsonl")
	writeRecords(t, whole, recs)
	var shards []string
	for i, cut := range [][2]int{{0, 700}, {700, 701}, {701, 701}, {701, 2500}} {
		p := filepath.Join(dir, "shard"+string(rune('a'+i))+".jsonl")
		writeRecords(t, p, recs[cut[0]:cut[1]])
		shards = append(shards, p)
	}
	g, _ := ParseGoodput("time_to_first_token:30 request_latency:200")
	o := Options{Streaming: true, Goodput: g}
	a, err := Summarize(OpenFiles(whole), o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Summarize(OpenFiles(shards...), o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("shards differ from the whole:\n%+v\n%+v", a, b)
	}
	c, err := Summarize(FromRecords(recs), o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, c) {
		t.Fatalf("records file differs from the records in memory")
	}
}

func TestErrorSummary(t *testing.T) {
	mk := func(code int, typ, msg string) result.Record {
		return result.Record{SentNS: 1, EndNS: 2, Err: &result.Error{Code: code, Type: typ, Message: msg}}
	}
	recs := []result.Record{mk(503, "HTTPError", "a"), mk(503, "HTTPError", "b"), mk(503, "HTTPError", "a"),
		mk(0, "ConnectionError", "reset"), {SentNS: 1, EndNS: 2, Status: 200}}
	s, err := Summarize(FromRecords(recs), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []ErrorCount{{503, "HTTPError", "a", 2}, {0, "ConnectionError", "reset", 1},
		{0, "InvalidInferenceResultError", invalidError.Message, 1}, {503, "HTTPError", "b", 1}}
	if !reflect.DeepEqual(s.Errors, want) {
		t.Errorf("errors:\n%v\nwant\n%v", s.Errors, want)
	}
	types := []ErrorCount{{503, "HTTPError", "", 3}, {0, "ConnectionError", "", 1}, {0, "InvalidInferenceResultError", "", 1}}
	if got := s.ErrorTypes(); !reflect.DeepEqual(got, types) {
		t.Errorf("types %v, want %v", got, types)
	}
	// Distinct messages beyond the cap fold into their code and type.
	tbl := newErrTable()
	for i := 0; i < maxErrorKinds+50; i++ {
		tbl.add(&result.Error{Code: 500, Type: "HTTPError", Message: "request " + itoa(i)})
	}
	l := tbl.list()
	if len(l) != maxErrorKinds+1 || l[0].Count != 50 || l[0].Message != "(further distinct messages not kept)" {
		t.Errorf("capped table: %d entries, first %+v", len(l), l[0])
	}
	long := strings.Repeat("é", maxErrorMessage)
	if m := clipMessage(long); len(m) > maxErrorMessage+len("…") || !utf8.ValidString(m) {
		t.Errorf("clipped message: %d bytes, valid %v", len(m), utf8.ValidString(m))
	}
}

// Waits for a --concurrency slot are not the client falling behind: the
// rule judges the lateness left after them, while send_lateness keeps
// them.
func TestCeilingWaitIsNotFallingBehind(t *testing.T) {
	mk := func(extra int64) []result.Record {
		var recs []result.Record
		for i := range 200 {
			r := liveRecord(i, 0, 20*ms, false)
			if i > 0 { // every start but the first held 500 ms by the ceiling
				r.CeilingWaitNS = 500 * ms
				r.SentNS += 500*ms + extra
				r.EndNS += 500*ms + extra
			}
			recs = append(recs, r)
		}
		return recs
	}
	s, err := Summarize(FromRecords(mk(0)), Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lateness.Behind {
		t.Errorf("ceiling waits judged as falling behind: %+v", s.Lateness)
	}
	var send *Result
	for i := range s.Metrics {
		if s.Metrics[i].Tag == "send_lateness" {
			send = &s.Metrics[i]
		}
		if s.Metrics[i].Tag == "client_lateness" {
			t.Errorf("the internal client_lateness is in the summary")
		}
	}
	if send == nil || send.Max != 500 {
		t.Fatalf("send_lateness %+v, want a max of 500 ms", send)
	}
	// The client itself 20 ms late (on 30 ms requests) after each slot
	// freed: behind, and the reason says the ceiling's part was left out.
	s, err = Summarize(FromRecords(mk(20*ms)), Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Lateness.Behind || s.Lateness.Late != 199 || !strings.Contains(s.Lateness.Reason, "--concurrency slot") {
		t.Errorf("lateness %+v", s.Lateness)
	}
}

// Requests whose tokens after the first arrived together with it (ITL below
// 10 µs) are counted, and the console says what that means; the metrics
// keep aiperf's definitions.
func TestITLNearZeroCount(t *testing.T) {
	mk := func(i int, gap int64) result.Record {
		t0 := int64(1_700_000_000_000_000_000) + int64(i)*100*ms
		r := result.Record{Record: i, Phase: result.PhaseProfiling, IntendedNS: t0, SentNS: t0, InputTokens: 10}
		for j := range int64(8) {
			r.ChunkOffsetsNS = append(r.ChunkOffsetsNS, 20*ms+j*gap)
		}
		r.EndNS = r.SentNS + r.ChunkOffsetsNS[7]
		r.OutputTokens, r.OutputSource = 8, result.SourceUsage
		return r
	}
	var recs []result.Record
	for i := range 10 {
		recs = append(recs, mk(i, ms/2)) // 0.5 ms apart: 2,000 tokens/s
	}
	recs = append(recs, mk(10, 304), mk(11, 0)) // 8 tokens in one read: ITL 0.3 µs (3.3M tokens/s), and 0
	recs = append(recs, mk(12, ITLNearZeroNS), mk(13, ITLNearZeroNS-1))
	s, err := Summarize(FromRecords(recs), Options{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.ITLNearZero != 3 || s.ITLRequests != 14 {
		t.Errorf("ITL near zero %d of %d, want 3 of 14", s.ITLNearZero, s.ITLRequests)
	}
	if r := s.Get("itl_near_zero_count"); r == nil || r.Avg != 3 || !r.Single {
		t.Errorf("itl_near_zero_count %+v, want 3", r)
	}
	if r := s.Get("output_token_throughput_per_user"); r == nil || r.Avg < 100*r.P[4] {
		t.Errorf("throughput per user %+v: the case should lift the average far above p50", r)
	}
	var b strings.Builder
	WriteConsole(&b, s, "")
	for _, want := range []string{"Tokens Arrived Together (ITL ≈ 0)", "3 of 14 requests (21.4%) have an inter token latency below 10 µs",
		"above 100,000 tokens/sec/user", "itl_near_zero_count"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, b.String())
		}
	}
	// Spread-out tokens only: the count is 0 and there is no panel.
	s, _ = Summarize(FromRecords(recs[:10]), Options{Streaming: true})
	b.Reset()
	WriteConsole(&b, s, "")
	if r := s.Get("itl_near_zero_count"); r == nil || r.Avg != 0 || strings.Contains(b.String(), "Arrived Together") {
		t.Errorf("count %+v, panel shown %v", r, strings.Contains(b.String(), "Arrived Together"))
	}
	// Not streamed: no ITL, no count.
	s, _ = Summarize(FromRecords(recs), Options{})
	if s.Get("itl_near_zero_count") != nil || s.ITLRequests != 0 {
		t.Errorf("non-streaming summary has a count")
	}
}

// The output length mismatch box words its cause by the mismatch's
// direction: outputs longer than requested name aiperf-pack
// --legacy-max-tokens (a server that ignored max_completion_tokens, as
// ollama does), shorter ones ignore_eos and min_tokens.
func TestOSLMismatchDirection(t *testing.T) {
	mk := func(i int, out int64) result.Record {
		t0 := int64(1_700_000_000_000_000_000) + int64(i)*100*ms
		return result.Record{Record: i, Phase: result.PhaseProfiling, IntendedNS: t0, SentNS: t0, EndNS: t0 + 50*ms,
			InputTokens: 10, MaxTokens: 32, OutputTokens: out, OutputSource: result.SourceUsage, ChunkOffsetsNS: []int64{50 * ms}}
	}
	for _, c := range []struct {
		name      string
		outs      []int64
		want, not []string
	}{
		{"longer", []int64{256, 256, 256, 32}, []string{"3 of 4 requests", "Every one is longer than requested.", "aiperf-pack --legacy-max-tokens", "max_completion_tokens"},
			[]string{"end-of-sequence", "ignore_eos"}},
		{"shorter", []int64{3, 4, 32}, []string{"2 of 3 requests", "Every one is shorter than requested.", "end-of-sequence", "ignore_eos", "min_tokens"},
			[]string{"--legacy-max-tokens"}},
		{"both", []int64{256, 3, 4}, []string{"1 are longer than requested, 2 shorter.", "--legacy-max-tokens", "ignore_eos"}, nil},
	} {
		var recs []result.Record
		for i, o := range c.outs {
			recs = append(recs, mk(i, o))
		}
		s, err := Summarize(FromRecords(recs), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		WriteConsole(&b, s, "")
		text := strings.Join(strings.Fields(b.String()), " ")
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: console lacks %q:\n%s", c.name, w, b.String())
			}
		}
		for _, w := range c.not {
			if strings.Contains(text, w) {
				t.Errorf("%s: console has %q:\n%s", c.name, w, b.String())
			}
		}
	}
}
