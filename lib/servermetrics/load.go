package servermetrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/internal/jsonl"
)

// LineError is a line of a JSONL stream LoadJSONL cannot read: the
// module's error for bad input at a line ("FILE:LINE: FIELD: what"), as
// every JSONL decoder's.
type LineError = jsonl.Error

// jsonLine is one line of server_metrics_export.jsonl (AppendLine).
type jsonLine struct {
	URL       string                  `json:"endpoint_url"`
	TS        *int64                  `json:"timestamp_ns"`
	Latency   int64                   `json:"endpoint_latency_ns"`
	Error     *string                 `json:"error"`
	Types     map[string]string       `json:"types"`
	Help      map[string]string       `json:"help"`
	Dropped   int                     `json:"dropped"`
	Skipped   int                     `json:"skipped_ticks"`
	Throttled int                     `json:"throttled_ticks"`
	Metrics   map[string][]lineSeries `json:"metrics"`
}

type lineSeries struct {
	Labels    map[string]string  `json:"labels"`
	Value     *jsonNum           `json:"value"`
	Buckets   map[string]jsonNum `json:"buckets"`   // aiperf's MetricSample
	Histogram map[string]jsonNum `json:"histogram"` // files written before 2026-12`
	Sum       jsonNum            `json:"sum"`
	Count     jsonNum            `json:"count"`
}

// jsonNum is a number, or a string for what JSON has no number for ("NaN",
// "+Inf", "-Inf").
type jsonNum float64

func (n *jsonNum) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		*n = jsonNum(f)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = jsonNum(f)
	return nil
}

// LoadJSONL rebuilds a collector's state from a server_metrics_export.jsonl
// stream (name is for messages): its Report is then the report of the run
// that wrote it, but for the parse time of the last page, which only the
// scraping process saw (SetAgentStats). Lines without "types" (another
// writer's) leave a family's type unknown unless it is a histogram. A last
// line cut short (a scraper killed mid-write) is left out and counted in
// truncated; any other bad line is a *LineError.
func LoadJSONL(r io.Reader, name string, lim Limits) (c *Collector, truncated int, err error) {
	o := Options{Limits: lim}
	o.defaults()
	c = &Collector{o: o}
	byURL := map[string]*target{}
	lr := jsonl.NewReader(r, maxLineOf(c.o.Limits))
	for {
		b, n, err := lr.Record()
		switch {
		case err == io.EOF:
			return c, 0, nil
		case errors.Is(err, jsonl.ErrLineTooLong):
			return nil, 0, &LineError{File: name, Line: n, Err: errLongLine}
		case err != nil:
			return nil, 0, err
		}
		var l jsonLine
		if err := json.Unmarshal(b, &l); err != nil {
			if lr.Unterminated() { // no newline: cut short
				return c, 1, nil
			}
			return nil, 0, &LineError{File: name, Line: n, Err: jsonErr(err)}
		}
		if err := c.loadLine(byURL, &l); err != nil {
			err.File, err.Line = name, n
			return nil, 0, err
		}
	}
}

// errLongLine is a JSONL line longer than any page within the limits
// writes.
var errLongLine = errors.New("line longer than any scrape within the limits")

// maxLineOf bounds a JSONL line: a page of MaxBody bytes written as JSON
// (labels and names repeated per series) stays well within 4 times it.
func maxLineOf(lim Limits) int { return int(min(4*lim.MaxBody, 1<<30)) }

func jsonErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%s: want %v, got %s", te.Field, te.Type, te.Value)
	}
	return err
}

func (c *Collector) loadLine(byURL map[string]*target, l *jsonLine) *LineError {
	if l.URL == "" {
		return &LineError{Field: "endpoint_url", Err: errors.New("missing")}
	}
	if l.TS == nil {
		return &LineError{Field: "timestamp_ns", Err: errors.New("missing")}
	}
	t := byURL[l.URL]
	if t == nil {
		t = newTarget(l.URL)
		byURL[l.URL] = t
		c.targets = append(c.targets, t)
	}
	ts := *l.TS
	t.fetches++
	t.skipped += l.Skipped
	t.throttled += l.Throttled
	if t.firstNS == 0 {
		t.firstNS = ts
	}
	t.lastNS = ts
	if l.Error != nil || l.Metrics == nil {
		msg := "no page"
		if l.Error != nil {
			msg = *l.Error
		}
		t.failures++
		if t.firstErr == "" {
			t.firstErr = msg
		}
		if len(t.errs) < 20 {
			t.errs[msg]++
		}
		return nil
	}
	for f, typ := range l.Types {
		k := t.known[f]
		k.typ = typ
		t.known[f] = k
	}
	for f, h := range l.Help {
		k := t.known[f]
		k.help = h
		t.known[f] = k
	}
	p, err := pageOf(l, t.known)
	if err != nil {
		return err
	}
	t.latencyNS += l.Latency
	t.dropped += l.Dropped + t.s.add(ts, l.Latency, p, c.o.Limits.MaxSeries)
	return nil
}

// pageOf turns a line's metrics back into the page that was written.
func pageOf(l *jsonLine, known map[string]famInfo) (*Page, *LineError) {
	p := &Page{Dropped: l.Dropped}
	for name, ss := range l.Metrics {
		k := known[name]
		f := Family{Name: name, Help: k.help, Type: k.typ}
		for _, js := range ss {
			s := Series{}
			for n, v := range js.Labels {
				s.Labels = append(s.Labels, Label{n, v})
			}
			slices.SortFunc(s.Labels, cmpLabel)
			buckets, key := js.Buckets, "buckets"
			if buckets == nil {
				buckets, key = js.Histogram, "histogram"
			}
			switch {
			case buckets != nil:
				h := &Hist{Sum: float64(js.Sum), Count: float64(js.Count)}
				for b, v := range buckets {
					le, err := strconv.ParseFloat(b, 64)
					if err != nil {
						return nil, &LineError{Field: "metrics." + name + "." + key, Err: fmt.Errorf("bound %q is not a number", b)}
					}
					h.Bounds = append(h.Bounds, le)
					h.Counts = append(h.Counts, float64(v))
				}
				sortBuckets(h)
				s.Hist = h
				if f.Type == "" {
					f.Type = TypeHistogram
				}
			case js.Value != nil:
				s.Value = float64(*js.Value)
			default:
				return nil, &LineError{Field: "metrics." + name, Err: errors.New("a series with neither value nor buckets")}
			}
			f.Series = append(f.Series, s)
		}
		if f.Type == "" {
			f.Type = TypeUnknown
		}
		sortSeries(f.Series)
		p.Series += len(f.Series)
		p.Families = append(p.Families, f)
	}
	slices.SortFunc(p.Families, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	return p, nil
}

func sortBuckets(h *Hist) {
	idx := make([]int, len(h.Bounds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		x, y := h.Bounds[a], h.Bounds[b]
		switch {
		case x < y || (math.IsNaN(x) && !math.IsNaN(y)):
			return -1
		case x > y || (math.IsNaN(y) && !math.IsNaN(x)):
			return 1
		}
		return 0
	})
	bs, cs := make([]float64, len(idx)), make([]float64, len(idx))
	for i, j := range idx {
		bs[i], cs[i] = h.Bounds[j], h.Counts[j]
	}
	h.Bounds, h.Counts = bs, cs
}

// AgentStats are what only the scraping process saw of one target.
type AgentStats struct {
	URL       string `json:"url"`
	Skipped   int    `json:"skipped"`
	Throttled int    `json:"throttled"`
	WorkNS    int64  `json:"work_ns"`
}

// AgentStats returns the collector's per-target counts of skipped and
// throttled scrapes.
func (c *Collector) AgentStats() []AgentStats {
	out := make([]AgentStats, 0, len(c.targets))
	for _, t := range c.targets {
		t.mu.Lock()
		out = append(out, AgentStats{URL: t.url, Skipped: t.skipped, Throttled: t.throttled, WorkNS: t.workNS})
		t.mu.Unlock()
	}
	return out
}

// SetAgentStats gives a loaded collector the counts the scraping process
// saw.
func (c *Collector) SetAgentStats(st []AgentStats) {
	for _, s := range st {
		for _, t := range c.targets {
			if t.url == s.URL {
				t.skipped, t.throttled, t.workNS = s.Skipped, s.Throttled, s.WorkNS
			}
		}
	}
}

// MergeLoaded joins loaded collectors (the shards of one replay, in the
// order given) into one. A target several shards scraped (every shard
// probes the one engine) is taken from the shard whose scrapes cover
// window w best, and a note says which: one scrape at or before its start
// and one at or after its end, else the longest overlap with it, else the
// first given. Taking the first given alone made the figures depend on the
// order of the arguments, and a shard that ended early missed the others'
// traffic.
func MergeLoaded(names []string, cs []*Collector, w Window) (*Collector, []string) {
	out := &Collector{}
	from := map[string]int{} // target URL -> index in out.targets
	who := map[string]int{}  // target URL -> the collector it came from
	var dup []string
	for i, c := range cs {
		if i == 0 {
			out.o = c.o
		}
		for _, t := range c.targets {
			k, ok := from[t.url]
			if !ok {
				from[t.url], who[t.url] = len(out.targets), i
				out.targets = append(out.targets, t)
				continue
			}
			if !slices.Contains(dup, t.url) {
				dup = append(dup, t.url)
			}
			if coverage(t, w).better(coverage(out.targets[k], w)) {
				out.targets[k], who[t.url] = t, i
			}
		}
	}
	var notes []string
	for _, u := range dup {
		notes = append(notes, fmt.Sprintf("server metrics %s: scraped by several shards; the exports use %s's scrapes alone (they cover the run's window best)", u, names[who[u]]))
	}
	return out, notes
}

// cover is how a target's scrapes cover a window.
type cover struct {
	both    int   // 2: a scrape at or before its start and one at or after its end; 1: one of them
	overlap int64 // ns of the window between the first and the last scrape
	// slack is how far the bracketing scrapes lie outside the window (ns;
	// less is a tighter bracket, with less traffic outside the window)
	slack int64
}

func coverage(t *target, w Window) cover {
	var c cover
	sc := t.s.scrapes
	if len(sc) == 0 {
		return c
	}
	first, last := sc[0].t, sc[len(sc)-1].t
	if first <= w.Start {
		c.both++
	}
	if last >= w.End {
		c.both++
	}
	c.overlap = max(0, min(last, w.End)-max(first, w.Start))
	from, to := first, last
	for _, s := range sc {
		if s.t <= w.Start {
			from = s.t
		}
	}
	for k := len(sc) - 1; k >= 0; k-- {
		if sc[k].t >= w.End {
			to = sc[k].t
		}
	}
	c.slack = max(0, w.Start-from) + max(0, to-w.End)
	return c
}

// better reports whether c covers the window better than o: both ends
// bracketed, then the longer overlap, then the tighter bracket (shards
// that ran side by side all bracket the window: the one whose scrapes lie
// nearest its ends counts the least traffic outside it). A tie keeps the
// earlier shard.
func (c cover) better(o cover) bool {
	switch {
	case c.both != o.both:
		return c.both > o.both
	case c.overlap != o.overlap:
		return c.overlap > o.overlap
	}
	return c.slack < o.slack
}
