package metrics

import (
	"math"
	"math/bits"
	"sync"

	"github.com/aiperf/toolkit/lib/result"
)

// loghist is a log-linear histogram of non-negative integers (HdrHistogram's
// layout): values below 2^(subBits+1) have a bucket each; above, every
// binary octave [2^e, 2^(e+1)) is split into 2^subBits equal buckets. A
// bucket's width is at most 2^-subBits of its lower bound, so reporting its
// midpoint errs by at most 2^-(subBits+1) of the value: with subBits = 8,
// 1/512 (0.2 %) relative, exact below 512. It covers all of int64
// in 14,336 buckets (112 KiB) and never allocates after creation.
type loghist struct {
	n      [histBuckets]uint64
	count  uint64
	minV   int64
	maxV   int64
	sum    float64
	signed bool // keeps negatives in neg
	neg    *loghist
}

const (
	subBits     = 8
	histBuckets = (64 - subBits) << subBits
)

// RelativeError bounds the relative error of a Live percentile: the
// reported value v' of a true value v >= 512 (in the metric's base unit, ns
// for times) satisfies |v' - v| <= v * RelativeError; smaller values are
// exact. Fractional values (inter_token_latency) are first rounded to the
// nearest integer, which adds at most 0.5 to the error.
const RelativeError = 1.0 / (2 << subBits)

func bucketOf(v uint64) int {
	m := bits.Len64(v)
	if m <= subBits+1 {
		return int(v)
	}
	shift := m - subBits - 1
	return shift<<subBits + int(v>>shift)
}

// mid is a bucket's midpoint: lo + (width-1)/2.
func mid(b int) float64 {
	if b < 2<<subBits {
		return float64(b)
	}
	shift := b>>subBits - 1
	top := b - shift<<subBits
	lo := uint64(top) << shift
	return float64(lo) + float64(uint64(1)<<shift-1)/2
}

func (h *loghist) add(v int64) {
	if v < 0 && h.signed {
		h.neg.add(-v)
	} else {
		if v < 0 {
			v = 0
		}
		h.n[bucketOf(uint64(v))]++
	}
	if h.count == 0 || v < h.minV {
		h.minV = v
	}
	if h.count == 0 || v > h.maxV {
		h.maxV = v
	}
	h.count++
	h.sum += float64(v)
}

// rank returns an approximation of the value of the given rank (0-based).
func (h *loghist) rank(r uint64) float64 {
	if h.signed && h.neg.count > 0 {
		if r < h.neg.count {
			// negatives in descending magnitude: rank r from the bottom
			return -h.neg.rankPos(h.neg.count - 1 - r)
		}
		r -= h.neg.count
	}
	return h.rankPos(r)
}

func (h *loghist) rankPos(r uint64) float64 {
	var cum uint64
	for b := range h.n {
		cum += h.n[b]
		if cum > r {
			return mid(b)
		}
	}
	return float64(h.maxV)
}

// quantile estimates numpy.percentile(values, p) from the histogram, with
// the same ranks and interpolation, clamped to the exact min and max.
func (h *loghist) quantile(p float64) float64 {
	if h.count == 0 {
		return 0
	}
	lo, hi, g := numpyRanks(int64(h.count), p)
	a := clamp(h.rank(uint64(lo)), float64(h.minV), float64(h.maxV))
	b := clamp(h.rank(uint64(hi)), float64(h.minV), float64(h.maxV))
	return lerp(a, b, g)
}

func clamp(v, lo, hi float64) float64 { return math.Min(math.Max(v, lo), hi) }

// Approx summarizes one metric of a Live snapshot in its base unit (ns for
// times). Count, Min, Max and Avg are exact; the percentiles are within
// RelativeError.
type Approx struct {
	Count         int64
	Min, Max, Avg float64
	P50, P90, P99 float64
}

func (h *loghist) approx() Approx {
	if h.count == 0 {
		return Approx{}
	}
	return Approx{Count: int64(h.count), Min: float64(h.minV), Max: float64(h.maxV), Avg: h.sum / float64(h.count),
		P50: h.quantile(50), P90: h.quantile(90), P99: h.quantile(99)}
}

// Live aggregates records as they complete, for the progress line and
// gates during a run: counters, throughputs and histograms of TTFT, ITL,
// request latency and send lateness, in constant memory (about 600 KiB) and
// without per-request state. Add does not allocate. It is safe for
// concurrent use.
type Live struct {
	mu sync.Mutex
	o  Options
	ev evaluator

	warmup, valid, failed, cancelled int64
	good, oslMismatch                int64
	firstSent, lastEnd               int64
	inputTokens, outputTokens        int64
	ttft, itl, latency, lateness     *loghist
	late                             lateness
}

// NewLive returns a Live aggregator computing metrics under o.
func NewLive(o Options) (*Live, error) {
	ev, err := o.evaluator()
	if err != nil {
		return nil, err
	}
	return &Live{o: o, ev: ev, ttft: new(loghist), itl: new(loghist), latency: new(loghist),
		lateness: &loghist{signed: true, neg: new(loghist)}, late: newLateness(&o)}, nil
}

// Add counts one finished record; warmup records are only counted as such.
func (l *Live) Add(r *result.Record) {
	if r.Warmup() {
		l.mu.Lock()
		l.warmup++
		l.mu.Unlock()
		return
	}
	var x values
	l.ev.eval(r, &x)
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.SentNS > 0 && (l.firstSent == 0 || r.SentNS < l.firstSent) {
		l.firstSent = r.SentNS
	}
	l.lastEnd = max(l.lastEnd, r.EndNS)
	if r.Cancelled {
		l.cancelled++
	}
	if x.ok(mSendLateness) {
		late := int64(x.v[mSendLateness])
		l.lateness.add(late)
		l.late.add(r.IntendedNS, x.v[mClientLateness], float64(r.EndNS-r.SentNS))
	}
	if !x.valid {
		l.failed++
		return
	}
	l.valid++
	if x.good > 0 {
		l.good++
	}
	if x.oslMismatch > 0 {
		l.oslMismatch++
	}
	if x.ok(mISL) {
		l.inputTokens += int64(x.v[mISL])
	}
	if x.ok(mOSL) {
		l.outputTokens += int64(x.v[mOSL])
	}
	l.latency.add(int64(x.v[mLatency]))
	if x.ok(mTTFT) {
		l.ttft.add(int64(x.v[mTTFT]))
	}
	if x.ok(mITL) {
		l.itl.add(int64(math.Round(x.v[mITL])))
	}
}

// LiveSnapshot is the state of a Live aggregator at one moment.
type LiveSnapshot struct {
	Requests      int64 // successful profiling requests
	ErrorRequests int64 // failed ones, cancelled included
	Cancelled     int64
	Warmup        int64
	Good          int64 // meeting every SLO (with Options.Goodput)
	OSLMismatches int64

	// ElapsedNS runs from the first send to the last end seen.
	ElapsedNS             int64
	RequestThroughput     float64 // successful requests per second of ElapsedNS
	InputTokens           int64
	OutputTokens          int64
	OutputTokenThroughput float64 // output tokens per second of ElapsedNS

	TTFT, ITL, RequestLatency, SendLateness Approx // ns
	Lateness                                Lateness
}

// Done is the number of profiling requests finished.
func (s *LiveSnapshot) Done() int64 { return s.Requests + s.ErrorRequests }

// ErrorRate is failed / finished profiling requests (0 before any).
func (s *LiveSnapshot) ErrorRate() float64 {
	if n := s.Done(); n > 0 {
		return float64(s.ErrorRequests) / float64(n)
	}
	return 0
}

// Snapshot returns the current state; it walks the histograms, so call it
// at display rate (a few times a second), not per request.
func (l *Live) Snapshot() LiveSnapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := LiveSnapshot{
		Requests: l.valid, ErrorRequests: l.failed, Cancelled: l.cancelled, Warmup: l.warmup,
		Good: l.good, OSLMismatches: l.oslMismatch,
		InputTokens: l.inputTokens, OutputTokens: l.outputTokens,
		TTFT: l.ttft.approx(), ITL: l.itl.approx(), RequestLatency: l.latency.approx(), SendLateness: l.lateness.approx(),
	}
	if l.firstSent > 0 && l.lastEnd > l.firstSent {
		s.ElapsedNS = l.lastEnd - l.firstSent
		sec := float64(s.ElapsedNS) / 1e9
		s.RequestThroughput = float64(l.valid) / sec
		s.OutputTokenThroughput = float64(l.outputTokens) / sec
	}
	late := s.SendLateness
	s.Lateness = Lateness{Count: late.Count, P50NS: late.P50, P99NS: late.P99, MaxNS: late.Max}
	s.Lateness.judge(&l.late)
	return s
}
