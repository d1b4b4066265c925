package metrics

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/aiperf/toolkit/lib/result"
)

// Time slices: a run cut into windows of one duration, each window
// summarized like a whole run (every metric, exact statistics).
//
// The window rule is the Python aiperf's, as its MetricsAccumulator
// (src/aiperf/metrics/accumulator.py, _compute_timeslices, and its unit
// tests of time slices) draws them:
//
//   - the grid starts at the earliest request start and its windows are
//     [start + k*D, start + (k+1)*D); it has floor((end - start) / D) + 1
//     windows, where end is the latest request start or end;
//   - a request belongs to the window holding its start (sent_unix_ns; a
//     request never sent, its end), whatever its end;
//   - windows without requests are left out, and "timeslice_index" numbers
//     the others 0, 1, 2, ... in time order (aiperf enumerates the
//     non-empty ones, so an index is not a position on the grid);
//   - the last window's end is clipped to the run's end, and it is then not
//     Complete (aiperf's is_complete=False).
//
// Differences: window bounds are integer nanoseconds (aiperf computes the
// edges in float64, which rounds epoch nanoseconds to 256 ns); a window's
// throughputs and benchmark_duration are over its requests' own span (its
// first start to its last response), as aiperf's per-timeslice results
// processor derived them, not over the window's bounds as the newer
// accumulator's sweep does. Warmup requests are in no window.
//
// Cost: one pass over the records to find the grid, then the passes of
// Summarize, shared by every window. Each window's metrics keep their own
// statistics (see stats.go): a metric with at most 256 values in a window
// holds them (2 KiB), one with more a histogram (32 KiB and 6 KiB per
// binary octave its values span), so memory grows with the windows that
// hold requests; MaxSlices bounds them. Measured: 20,000 streamed requests
// in 1,000 windows, 3 passes, 127 MB allocated in all, 2.5 s.

// Slice is one window of a run and the summary of the requests that
// started in it.
type Slice struct {
	// Index is the Python aiperf's "timeslice_index": the window's number
	// among the windows that hold requests, from 0.
	Index int
	// Window is the window's number on the grid, from 0 at the first
	// request's start; it skips the numbers of empty windows.
	Window int
	// StartNS and EndNS bound the window, [StartNS, EndNS) in Unix
	// nanoseconds; EndNS is the run's end in the last window.
	StartNS, EndNS int64
	// Complete is false for a last window cut short by the run's end.
	Complete bool
	Summary  *Summary
}

// Slices is a run summarized per time window.
type Slices struct {
	Duration time.Duration // the windows' length
	// StartNS is the grid's origin (the first request's start), EndNS the
	// run's end (the latest request start or end); both 0 without requests.
	StartNS, EndNS int64
	Slices         []Slice // the windows holding requests, in time order
	Passes         int     // passes made over the records
}

// ErrSliceDuration is returned for a window length that is not above zero.
var ErrSliceDuration = errors.New("metrics: the slice duration must be above zero")

// MaxSlices bounds the windows of a grid: each window that holds requests
// keeps its own statistics in memory (see above).
const MaxSlices = 10_000

// ErrTooManySlices is returned when the run spans more than MaxSlices
// windows of the duration asked.
var ErrTooManySlices = errors.New("metrics: too many time slices")

// sliceStart is the instant that places a record in a window: its send, or
// for a request never sent, its end.
func sliceStart(r *result.Record) int64 {
	if r.SentNS > 0 {
		return r.SentNS
	}
	return r.EndNS
}

// SummarizeSlices cuts the records open yields into windows of length d
// and summarizes each as Summarize would the requests that started in it.
// open is called once per pass and must yield the same records every time.
func SummarizeSlices(open func() (Source, io.Closer, error), o Options, d time.Duration) (*Slices, error) {
	if d <= 0 {
		return nil, ErrSliceDuration
	}
	if _, err := o.evaluator(); err != nil {
		return nil, err
	}
	out := &Slices{Duration: d}
	lo, hi, n, err := sliceBounds(open)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		out.Passes = 1
		return out, nil
	}
	out.StartNS, out.EndNS = lo, hi
	width := int64(d)
	if nwin := (hi-lo)/width + 1; nwin > MaxSlices {
		return nil, fmt.Errorf("%w: the run spans %v, %d windows of %v (at most %d; choose a longer duration)",
			ErrTooManySlices, time.Duration(hi-lo), nwin, d, MaxSlices)
	}
	windows := make(map[int64]*summarizer)
	var order []int64  // windows in the order their first record came
	var seen evaluator // the run info, which only a run's first record carries, for every window
	route := func(r *result.Record, pass int) (*summarizer, error) {
		seen.note(r)
		if r.Warmup() {
			return nil, nil
		}
		st := sliceStart(r)
		if st < lo || st > hi {
			return nil, fmt.Errorf("%w: a request starts at %d, outside the span %d..%d of the first pass", ErrRecordsChanged, st, lo, hi)
		}
		k := (st - lo) / width
		s := windows[k]
		if s == nil {
			if pass > 1 {
				return nil, fmt.Errorf("%w: window %d has requests only in pass %d", ErrRecordsChanged, k, pass)
			}
			s, _ = newSummarizer(o) // o was checked above
			windows[k] = s
			order = append(order, k)
		}
		s.ev.noTokens = seen.noTokens
		return s, nil
	}
	all := func() []*summarizer {
		ss := make([]*summarizer, len(order))
		for i, k := range order {
			ss[i] = windows[k]
		}
		return ss
	}
	passes, err := runPasses(open, o.Budget, route, all)
	if err != nil {
		return nil, err
	}
	out.Passes = passes + 1
	nwin := (hi-lo)/width + 1
	for k := int64(0); k < nwin; k++ {
		s := windows[k]
		if s == nil {
			continue
		}
		s.passes = out.Passes
		start := lo + k*width
		end := start + width
		if end < start { // past the int64 range
			end = math.MaxInt64
		}
		sl := Slice{Index: len(out.Slices), Window: int(k), StartNS: start, EndNS: end, Complete: end <= hi, Summary: s.summary()}
		if !sl.Complete {
			sl.EndNS = hi
		}
		out.Slices = append(out.Slices, sl)
	}
	return out, nil
}

// sliceBounds reads the records once for the grid: the earliest start, the
// latest start or end, and the number of profiling records.
func sliceBounds(open func() (Source, io.Closer, error)) (lo, hi, n int64, err error) {
	src, c, err := open()
	if err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}()
	var r result.Record
	for {
		err := src.Next(&r)
		if err == io.EOF {
			return lo, hi, n, nil
		}
		if err != nil {
			return 0, 0, 0, err
		}
		if r.Warmup() {
			continue
		}
		st := sliceStart(&r)
		if n == 0 || st < lo {
			lo = st
		}
		hi = max(hi, st, r.EndNS)
		n++
	}
}

// SlicePoint is one window's percentiles of a metric, in the metric's
// display unit (Info.Unit).
type SlicePoint struct {
	StartNS, EndNS int64 // the window, as in Slice
	Count          int64 // values of the metric in the window
	P50, P99       float64
}

// Percentiles returns the p50 and p99 of the metric tag (e.g.
// "time_to_first_token") in every window where it has values, in time
// order: the lines a chart draws over the requests. A metric with one
// value per run (a count, a throughput) has no percentiles and yields
// nothing.
func (s *Slices) Percentiles(tag string) []SlicePoint {
	var out []SlicePoint
	for i := range s.Slices {
		sl := &s.Slices[i]
		r := sl.Summary.Get(tag)
		if r == nil || r.Single {
			continue
		}
		out = append(out, SlicePoint{StartNS: sl.StartNS, EndNS: sl.EndNS, Count: r.Count, P50: r.P[4], P99: r.P[8]})
	}
	return out
}
