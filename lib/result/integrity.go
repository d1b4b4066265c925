package result

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxTokens bounds every token count of a record (input, output,
// reasoning, the client's counts and usage's): 2^40, a thousand times the
// longest context any server holds, and small enough that the sums a
// summary makes of them (a record's output plus reasoning, usage against
// the client's, totals over 2^23 records) cannot overflow an int64 and
// stay exact in a float64. A larger count is a damaged or forged line.
const MaxTokens = 1 << 40

// MinTimeNS is the earliest time a results file may hold
// (2000-01-01T00:00:00Z): aiperf-replay did not exist before, so an
// earlier send is a zeroed or forged field (a send "in 1970").
var MinTimeNS = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

// ClockSlack is how far past the reader's clock a results file's times may
// be: a run on another machine whose clock runs ahead, not a day ahead.
const ClockSlack = 24 * time.Hour

// CheckWindow refuses a record whose times are not in [lo, hi] (every
// *_unix_ns member that is set): a send before 2000 or an end at
// MaxInt64 would make a summary's span, and every rate over it, nonsense.
// Readers of a run's files give [MinTimeNS, now+ClockSlack]; the decoder
// itself checks only what needs no clock (Parse).
func (r *Record) CheckWindow(lo, hi int64) error {
	for _, t := range r.times() {
		switch {
		case t.ns == 0:
		case t.ns < lo:
			return fieldErr(t.field, "%d is before %s: not a time a run sent at", t.ns, stamp(lo))
		case t.ns > hi:
			return fieldErr(t.field, "%d is after %s: later than this machine's clock allows", t.ns, stamp(hi))
		}
	}
	return nil
}

type namedTime struct {
	field string
	ns    int64
}

// times lists the record's times, the send first.
func (r *Record) times() [6]namedTime {
	return [6]namedTime{{"sent_unix_ns", r.SentNS}, {"intended_unix_ns", r.IntendedNS},
		{"first_byte_unix_ns", r.FirstByteNS}, {"first_token_unix_ns", r.FirstTokenNS},
		{"first_output_unix_ns", r.FirstOutputNS}, {"end_unix_ns", r.EndNS}}
}

func stamp(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339) }

// runCheck holds what a Decoder knows of the run it reads, to refuse a
// file that contradicts itself (a line duplicated, another run's lines
// spliced in, an end line that does not close what came before it): a
// summary of such a file would count what no run measured.
type runCheck struct {
	run     string           // the run's id (its first record's run info); "" when unknown
	runLine int64            // the line that carried it
	count   int64            // the run's records so far
	endLine int64            // the line of the run's end line; 0 before it
	runs    map[string]int64 // every run's id → the line that started it
	// ids maps each request id read to its line: nums those the run made
	// (<run id>-<n>, keyed by n), others every other id.
	nums   map[int64]int64
	others map[string]int64
}

// record checks a record at line n and counts it.
func (c *runCheck) record(r *Record, n int64) error {
	if r.Run != nil {
		if prev, ok := c.runs[r.Run.ID]; ok && r.Run.ID != "" {
			return &DecodeError{Line: n, Field: "run.id", Err: fmt.Errorf("run %s again (it started at line %d): the run's lines would count twice", r.Run.ID, prev)}
		}
		if c.runs == nil {
			c.runs = map[string]int64{}
		}
		c.runs[r.Run.ID] = n
		*c = runCheck{run: r.Run.ID, runLine: n, runs: c.runs}
	} else if c.endLine != 0 {
		return &DecodeError{Line: n, Field: "end", Err: fmt.Errorf("a record after the run's end line (line %d)", c.endLine)}
	}
	if id := r.RequestID; id != "" {
		if err := c.requestID(id, n); err != nil {
			return &DecodeError{Line: n, Field: "x_request_id", Err: err}
		}
	}
	c.count++
	return nil
}

// requestID checks that id is of the run and not seen before.
func (c *runCheck) requestID(id string, n int64) error {
	rest, ours := strings.CutPrefix(id, c.run+"-")
	if c.run != "" && !ours {
		return fmt.Errorf("%q is not a request of run %s (line %d's): another run's line", id, c.run, c.runLine)
	}
	var prev int64
	var seen bool
	if k, err := strconv.ParseInt(rest, 10, 64); ours && err == nil && k >= 0 && strconv.FormatInt(k, 10) == rest {
		if c.nums == nil {
			c.nums = map[int64]int64{}
		}
		if prev, seen = c.nums[k]; !seen {
			c.nums[k] = n
		}
	} else {
		if c.others == nil {
			c.others = map[string]int64{}
		}
		if prev, seen = c.others[id]; !seen {
			c.others[id] = n
		}
	}
	if seen {
		return fmt.Errorf("%q again (line %d has it): a request's line given twice", id, prev)
	}
	return nil
}

// end checks the run's end line, at line n.
func (c *runCheck) end(e *End, n int64) error {
	switch {
	case c.endLine != 0:
		return &DecodeError{Line: n, Field: "end", Err: fmt.Errorf("a second end line (the run's is line %d)", c.endLine)}
	case e.RunID != "" && c.run != "" && e.RunID != c.run:
		return &DecodeError{Line: n, Field: "run_id", Err: fmt.Errorf("%q is not the run of the lines before it (%s, line %d): another run's end line", e.RunID, c.run, c.runLine)}
	case e.Results != c.count:
		return &DecodeError{Line: n, Field: "results", Err: fmt.Errorf("the end line counts %d results, and %d lines of its run come before it: lines were removed or added", e.Results, c.count)}
	}
	c.endLine = n
	return nil
}
