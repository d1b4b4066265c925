package metrics

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/aiperf/toolkit/lib/result"
)

// Source yields records; Next returns io.EOF after the last one.
// *result.Decoder is a Source.
type Source interface {
	Next(*result.Record) error
}

// Options select the metrics and thresholds.
type Options struct {
	// Streaming computes the metrics of streamed responses (TTFT, TTST,
	// TTFO, ITL, ICL, throughput per user), which aiperf hides for
	// non-streaming endpoints.
	Streaming bool
	// Goodput, when set, adds good_request_count and goodput.
	Goodput Goodput
	// LateFraction and LateFloor tune the fell-behind rule (see Lateness):
	// a request is late when its lateness exceeds both LateFraction of its
	// own latency and LateFloor; zero takes DefaultLateFraction and
	// DefaultLateFloor.
	LateFraction float64
	LateFloor    time.Duration
	// Budget bounds the values Summarize holds in memory in a pass after
	// the first; zero means 1<<20 (8 MiB). A smaller budget costs passes,
	// never exactness.
	Budget int
}

func (o *Options) evaluator() (evaluator, error) {
	slos, err := o.Goodput.resolve(o.Streaming)
	return evaluator{streaming: o.Streaming, slos: slos}, err
}

// Result is one metric's summary in its display unit. A Single result is
// one value over the run (a count, a throughput, a total) in Avg.
type Result struct {
	Tag, Header, Unit string
	Count             int64
	Single            bool
	Avg, Min, Max     float64
	Sum, Std          float64
	P                 [9]float64 // at Percentiles: p1, p5, p10, p25, p50, p75, p90, p95, p99
}

// Percentile returns the p-th percentile (one of Percentiles).
func (r *Result) Percentile(p float64) (float64, bool) {
	if i := slices.Index(Percentiles[:], p); i >= 0 && !r.Single {
		return r.P[i], true
	}
	return 0, false
}

// ErrorCount is how many failed requests shared one error.
type ErrorCount struct {
	Code    int // 0 = none (a transport failure, or no content)
	Type    string
	Message string
	Count   int64
}

// Summary is a run's metrics, as aiperf's summary holds them.
type Summary struct {
	// Metrics in aiperf's summary order: per-request metrics, aggregates,
	// derived metrics. A metric without a value is absent, as in aiperf
	// (error_request_count appears only when a request failed).
	Metrics []Result
	// Errors groups the failed requests by code, type and message, most
	// frequent first.
	Errors []ErrorCount

	Requests      int64 // successful profiling requests (aiperf request_count)
	ErrorRequests int64 // failed ones, cancelled included (error_request_count)
	Cancelled     int64
	Warmup        int64 // warmup records, excluded from everything else
	Good          int64 // requests meeting every SLO (with Options.Goodput)

	OSLMismatches int64 // osl_mismatch_count
	// OSLLonger counts the mismatches whose output was longer than
	// requested (the others were shorter): a server that ignored the
	// body's cap, not one that stopped early.
	OSLLonger          int64
	UsageDiscrepancies int64 // usage_discrepancy_count
	// ITLNearZero counts the requests with an inter_token_latency below
	// ITLNearZeroNS (itl_near_zero_count); ITLRequests those with one.
	ITLNearZero, ITLRequests int64

	StartNS, EndNS int64 // first send and last end over the profiling requests

	Lateness  Lateness
	Streaming bool
	Goodput   Goodput
	Passes    int // passes Summarize made over the records
}

// Get returns the metric with the given tag, or nil.
func (s *Summary) Get(tag string) *Result {
	for i := range s.Metrics {
		if s.Metrics[i].Tag == tag {
			return &s.Metrics[i]
		}
	}
	return nil
}

// ErrorTypes groups Errors by code and type alone, most frequent first.
func (s *Summary) ErrorTypes() []ErrorCount {
	t := newErrTable()
	for _, e := range s.Errors {
		t.m[ErrorCount{Code: e.Code, Type: e.Type}] += e.Count
	}
	return t.list()
}

// ErrorRate is failed / all profiling requests (0 without requests).
func (s *Summary) ErrorRate() float64 {
	if n := s.Requests + s.ErrorRequests; n > 0 {
		return float64(s.ErrorRequests) / float64(n)
	}
	return 0
}

// ErrRecordsChanged means a later pass read other records than the first.
var ErrRecordsChanged = errors.New("metrics: the records changed between passes")

// Summarize computes the exact summary of the records open yields. open is
// called once per pass (at least two when there are values: the first for
// counts and histograms, the second for the standard deviations and the
// order statistics) and must yield the same records every time, so input
// read once from a pipe must be spooled to a file first. Warmup records are
// skipped.
func Summarize(open func() (Source, io.Closer, error), o Options) (*Summary, error) {
	s, err := newSummarizer(o)
	if err != nil {
		return nil, err
	}
	route := func(*result.Record, int) (*summarizer, error) { return s, nil }
	all := func() []*summarizer { return []*summarizer{s} }
	passes, err := runPasses(open, o.Budget, route, all)
	if err != nil {
		return nil, err
	}
	s.passes = passes
	return s.summary(), nil
}

func newSummarizer(o Options) (*summarizer, error) {
	ev, err := o.evaluator()
	if err != nil {
		return nil, err
	}
	return &summarizer{o: o, ev: ev, errs: newErrTable(), late: newLateness(&o)}, nil
}

// runPasses reads the records open yields as many times as the exact
// statistics of the summarizers need (see stats.go), handing each record to
// the summarizer route picks (nil skips it). all lists the summarizers route
// has made so far; the value budget (zero: 1<<20) is shared among them. It
// returns the number of passes made.
func runPasses(open func() (Source, io.Closer, error), budget int, route func(r *result.Record, pass int) (*summarizer, error), all func() []*summarizer) (int, error) {
	b := int64(budget)
	if b <= 0 {
		b = 1 << 20
	}
	var records int64 // every record of pass 1, warmup included
	for pass := 1; ; pass++ {
		src, c, err := open()
		if err != nil {
			return 0, err
		}
		n, err := readPass(src, pass, route)
		if cerr := c.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return 0, err
		}
		if pass == 1 {
			records = n
			for _, s := range all() {
				s.afterPass1()
			}
		} else {
			if n != records {
				return 0, fmt.Errorf("%w: pass %d read %d records, pass 1 read %d", ErrRecordsChanged, pass, n, records)
			}
			for _, s := range all() {
				for _, d := range s.d {
					if d != nil && !d.afterPass() {
						return 0, fmt.Errorf("%w: a value count differs in pass %d", ErrRecordsChanged, pass)
					}
				}
			}
		}
		var ds []*dist
		values := false
		for _, s := range all() {
			ds = append(ds, s.dists()...)
			values = values || s.haveValues()
		}
		if !plan(ds, b) && (pass >= 2 || !values) {
			return pass, nil
		}
	}
}

// readPass hands every record of src to its summarizer and returns how many
// records it read.
func readPass(src Source, pass int, route func(r *result.Record, pass int) (*summarizer, error)) (int64, error) {
	var r result.Record
	var x values
	var n int64
	for {
		err := src.Next(&r)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
		s, err := route(&r, pass)
		if err != nil {
			return n, err
		}
		if s == nil {
			continue
		}
		if err := s.add(&r, &x, pass); err != nil {
			return n, err
		}
	}
}

type summarizer struct {
	o      Options
	ev     evaluator
	d      [numRecord]*dist
	passes int

	warmup int64
	valid  int64
	failed int64
	cancel int64

	good, oslMismatch, usageDisc    int64
	oslLonger                       int64
	itlZero, itlN                   int64
	haveOSLMismatch, haveUsageDisc  bool
	minReq, maxResp, startNS, endNS int64
	haveValid, haveStart            bool
	errs                            *errTable
	late                            lateness
}

func (s *summarizer) dist(i id) *dist {
	if s.d[i] == nil {
		s.d[i] = &dist{}
	}
	return s.d[i]
}

func (s *summarizer) dists() []*dist {
	var out []*dist
	for _, d := range s.d {
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

func (s *summarizer) haveValues() bool {
	for _, d := range s.d {
		if d != nil && d.n > 0 {
			return true
		}
	}
	return false
}

// add takes one record in the given pass; x is scratch space.
func (s *summarizer) add(r *result.Record, x *values, pass int) error {
	s.ev.note(r)
	if r.Warmup() {
		if pass == 1 {
			s.warmup++
		}
		return nil
	}
	s.ev.eval(r, x)
	if pass == 1 {
		s.pass1(r, x)
		return nil
	}
	for i := id(0); i < numRecord; i++ {
		if x.ok(i) {
			if s.d[i] == nil {
				return fmt.Errorf("%w: %s has values only in pass %d", ErrRecordsChanged, defs[i].tag, pass)
			}
			s.d[i].addN(x.v[i], pass)
		}
	}
	if x.icl != nil {
		d := s.d[mICL]
		if d == nil {
			return fmt.Errorf("%w: inter_chunk_latency has values only in pass %d", ErrRecordsChanged, pass)
		}
		for j := 1; j < len(x.icl); j++ {
			d.addN(float64(x.icl[j]-x.icl[j-1]), pass)
		}
	}
	return nil
}

func (s *summarizer) pass1(r *result.Record, x *values) {
	for i := id(0); i < numRecord; i++ {
		if x.ok(i) {
			s.dist(i).add1(x.v[i])
		}
	}
	if x.icl != nil {
		d := s.dist(mICL)
		for j := 1; j < len(x.icl); j++ {
			d.add1(float64(x.icl[j] - x.icl[j-1]))
		}
	}
	if x.ok(mClientLateness) {
		s.late.add(r.IntendedNS, x.v[mClientLateness], float64(r.EndNS-r.SentNS))
	}
	if r.SentNS > 0 && (!s.haveStart || r.SentNS < s.startNS) {
		s.startNS, s.haveStart = r.SentNS, true
	}
	s.endNS = max(s.endNS, r.EndNS)
	if r.Cancelled {
		s.cancel++
	}
	if !x.valid {
		s.failed++
		s.errs.add(x.err)
		return
	}
	s.valid++
	if !s.haveValid || x.startNS < s.minReq {
		s.minReq = x.startNS
	}
	if !s.haveValid || x.maxRespNS > s.maxResp {
		s.maxResp = x.maxRespNS
	}
	s.haveValid = true
	if x.good > 0 {
		s.good++
	}
	if x.ok(mITL) {
		s.itlN++
		if x.v[mITL] < ITLNearZeroNS {
			s.itlZero++
		}
	}
	if x.oslMismatch >= 0 {
		s.haveOSLMismatch = true
		s.oslMismatch += int64(x.oslMismatch)
		if x.oslMismatch > 0 && x.v[mOSLDiff] > 0 {
			s.oslLonger++
		}
	}
	if x.usageDisc >= 0 {
		s.haveUsageDisc = true
		s.usageDisc += int64(x.usageDisc)
	}
}

func (s *summarizer) afterPass1() {
	for _, d := range s.d {
		if d != nil {
			d.afterPass1()
		}
	}
}

func (s *summarizer) summary() *Summary {
	sum := &Summary{
		Errors:        s.errs.list(),
		Requests:      s.valid,
		ErrorRequests: s.failed,
		Cancelled:     s.cancel,
		Warmup:        s.warmup,
		Good:          s.good,
		StartNS:       s.startNS,
		EndNS:         s.endNS,
		Streaming:     s.o.Streaming,
		Goodput:       s.o.Goodput,
		Passes:        s.passes,
		ITLNearZero:   s.itlZero,
		ITLRequests:   s.itlN,
	}
	if s.haveOSLMismatch {
		sum.OSLMismatches, sum.OSLLonger = s.oslMismatch, s.oslLonger
	}
	if s.haveUsageDisc {
		sum.UsageDiscrepancies = s.usageDisc
	}
	st := make(map[id]stats)
	for i := id(0); i < numRecord; i++ {
		d := s.d[i]
		if d == nil || d.n == 0 {
			continue
		}
		st[i] = d.finish()
		if !defs[i].has(flagInternal) {
			sum.Metrics = append(sum.Metrics, distResult(i, st[i]))
		}
	}
	single := func(i id, v float64) {
		d := &defs[i]
		sum.Metrics = append(sum.Metrics, Result{Tag: d.tag, Header: d.header, Unit: d.disp.tag, Count: 1, Single: true,
			Avg: v * convFactor(d.unit, d.disp)})
	}
	if s.valid > 0 {
		single(mRequestCount, float64(s.valid))
	}
	if s.failed > 0 {
		single(mErrorCount, float64(s.failed))
	}
	goodput := len(s.ev.slos) > 0
	if goodput && s.valid > 0 {
		single(mGoodCount, float64(s.good))
	}
	if s.haveOSLMismatch {
		single(mOSLMismatchCount, float64(s.oslMismatch))
	}
	if s.haveUsageDisc {
		single(mUsageDiscrepancyCount, float64(s.usageDisc))
	}
	if s.itlN > 0 {
		single(mITLNearZeroCount, float64(s.itlZero))
	}
	total := func(i id) (float64, bool) {
		x, ok := st[i]
		return x.sum, ok
	}
	if s.valid > 0 && s.maxResp > s.minReq {
		durNS := s.maxResp - s.minReq
		sec := float64(durNS) * convFactor(unitNS, unitSec)
		single(mBenchDuration, float64(durNS))
		single(mRequestThroughput, float64(s.valid)/sec)
		osl, haveOSL := total(mOSL)
		isl, haveISL := total(mISL)
		if haveOSL {
			single(mOutputTPS, osl/sec)
		}
		if haveOSL && haveISL {
			single(mTotalTPS, (isl+osl)/sec)
		}
		if goodput {
			single(mGoodput, float64(s.good)/sec)
		}
	}
	for _, t := range [...]struct{ total, of id }{
		{mTotalISL, mISL}, {mTotalOSL, mOSL}, {mTotalOutputTokens, mOutputTokens},
		{mTotalReasoningTokens, mReasoningTokens}, {mTotalErrorISL, mErrorISL},
		{mTotalUsagePrompt, mUsagePrompt}, {mTotalUsageCompletion, mUsageCompletion}, {mTotalUsageTotal, mUsageTotal},
		{mTotalCachedTokens, mCachedTokens},
	} {
		if v, ok := total(t.of); ok {
			single(t.total, v)
		}
	}
	if cached, ok := total(mCachedTokens); ok {
		if prompt, _ := total(mCachedPrompt); prompt > 0 {
			single(mCacheHitRate, 100*cached/prompt)
		}
	}
	if l, ok := st[mClientLateness]; ok {
		sum.Lateness = Lateness{Count: l.n, P50NS: l.p[4], P99NS: l.p[8], MaxNS: l.max}
	}
	if l, ok := st[mSendLateness]; ok {
		sum.Lateness.SendP99NS = l.p[8]
	}
	sum.Lateness.judge(&s.late)
	return sum
}

func distResult(i id, s stats) Result {
	d := &defs[i]
	f := convFactor(d.unit, d.disp)
	r := Result{Tag: d.tag, Header: d.header, Unit: d.disp.tag, Count: s.n,
		Avg: s.avg * f, Min: s.min * f, Max: s.max * f, Sum: s.sum * f, Std: s.std * f}
	for j := range s.p {
		r.P[j] = s.p[j] * f
	}
	return r
}

// errTable counts errors by code, type and message in bounded memory: after
// maxErrorKinds distinct ones, new messages count under their code and type,
// and after as many of those, under one catch-all. Messages are cut to
// maxErrorMessage bytes, as aiperf cuts its error reprs.
type errTable struct {
	m map[ErrorCount]int64
}

const (
	maxErrorKinds   = 1000
	maxErrorMessage = 4096
)

func newErrTable() *errTable { return &errTable{m: make(map[ErrorCount]int64)} }

func (t *errTable) add(e *result.Error) {
	k := ErrorCount{Code: e.Code, Type: e.Type, Message: clipMessage(e.Message)}
	if _, ok := t.m[k]; !ok && len(t.m) >= maxErrorKinds {
		k.Message = "(further distinct messages not kept)"
		if _, ok := t.m[k]; !ok && len(t.m) >= 2*maxErrorKinds {
			k = ErrorCount{Type: "Other", Message: "(further distinct errors not kept)"}
		}
	}
	t.m[k]++
}

func clipMessage(s string) string {
	if len(s) <= maxErrorMessage {
		return s
	}
	cut := maxErrorMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func (t *errTable) list() []ErrorCount {
	out := make([]ErrorCount, 0, len(t.m))
	for k, n := range t.m {
		k.Count = n
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b ErrorCount) int {
		switch {
		case a.Count != b.Count:
			return int(b.Count - a.Count)
		case a.Code != b.Code:
			return a.Code - b.Code
		case a.Type != b.Type:
			if a.Type < b.Type {
				return -1
			}
			return 1
		case a.Message < b.Message:
			return -1
		case a.Message > b.Message:
			return 1
		}
		return 0
	})
	return out
}

// OpenFiles returns an open func for Summarize that reads the records files
// in order, as one stream (shards of one run, or several runs).
func OpenFiles(paths ...string) func() (Source, io.Closer, error) {
	return func() (Source, io.Closer, error) {
		m := &multi{}
		for _, p := range paths {
			f, err := os.Open(p)
			if err != nil {
				m.Close()
				return nil, nil, err
			}
			m.files = append(m.files, f)
			m.decs = append(m.decs, result.NewDecoder(f, p))
		}
		return m, m, nil
	}
}

type multi struct {
	files []*os.File
	decs  []*result.Decoder
	i     int
}

func (m *multi) Next(r *result.Record) error {
	for m.i < len(m.decs) {
		err := m.decs[m.i].Next(r)
		if err != io.EOF {
			return err
		}
		m.i++
	}
	return io.EOF
}

func (m *multi) Close() error {
	var first error
	for _, f := range m.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// FromRecords returns an open func for Summarize over records in memory.
func FromRecords(recs []result.Record) func() (Source, io.Closer, error) {
	return func() (Source, io.Closer, error) {
		s := &sliceSource{recs: recs}
		return s, nopCloser{}, nil
	}
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

type sliceSource struct {
	recs []result.Record
	i    int
}

func (s *sliceSource) Next(r *result.Record) error {
	if s.i >= len(s.recs) {
		return io.EOF
	}
	*r = s.recs[s.i]
	s.i++
	return nil
}
