package htmlreport

import (
	"iter"
	"math"
	"strconv"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

// maxErrorKinds bounds the distinct error kinds kept apart; later ones count
// as "other".
const maxErrorKinds = 64

// chunkLen is the length of a chunk of requests.
const chunkLen = 1 << 16

// request is what the charts need of one profiling request, 48 bytes (48 MB
// for a million requests).
type request struct {
	sent, end int64 // sent_unix_ns, end_unix_ns
	// first content, for the output tokens' span (0: none)
	first int64
	// metrics in ms; NaN where the request has no value
	ttft, itl, latency, lateness float32
	tokens                       float32 // output_sequence_length of a successful request; 0: none
	kind                         int16   // error kind of a failed request; -1: it succeeded
}

// Collector gathers from records what the charts need: per request its send
// time, end, metrics and output tokens, and for a failed one its error's
// kind. Warmup records are skipped, as the summary skips them. Not safe for
// concurrent use.
type Collector struct {
	m *metrics.RequestMetrics
	// the requests, in chunks of chunkLen: appending never copies what is
	// held (a million requests are 48 MB)
	chunks [][]request
	n      int

	kinds    []string
	kindOf   map[string]int16
	errCount []int64
}

// NewCollector collects under o (o.Streaming decides whether TTFT and ITL
// have values, as for the summary).
func NewCollector(o metrics.Options) (*Collector, error) {
	m, err := metrics.NewRequestMetrics(o)
	if err != nil {
		return nil, err
	}
	return &Collector{m: m, kindOf: map[string]int16{}}, nil
}

// Add takes one record.
func (c *Collector) Add(r *result.Record) {
	if r.Warmup() {
		return
	}
	ok := c.m.Eval(r)
	q := request{sent: r.SentNS, end: max(r.EndNS, r.SentNS), kind: -1}
	get := func(tag string) float32 {
		if v, has := c.m.Value(tag); has {
			return float32(v)
		}
		return float32(math.NaN())
	}
	q.lateness = get("send_lateness")
	if !ok {
		q.ttft, q.itl, q.latency = float32(math.NaN()), float32(math.NaN()), float32(math.NaN())
		q.kind = c.kind(c.m.Error())
		c.add(q)
		return
	}
	q.ttft, q.itl, q.latency = get("time_to_first_token"), get("inter_token_latency"), get("request_latency")
	if osl, has := c.m.Value("output_sequence_length"); has && osl > 0 {
		q.tokens = float32(osl)
		q.first = q.sent
		if len(r.ChunkOffsetsNS) > 0 {
			q.first = min(q.sent+r.ChunkOffsetsNS[0], q.end)
		}
	}
	c.add(q)
}

func (c *Collector) add(q request) {
	if c.n%chunkLen == 0 {
		c.chunks = append(c.chunks, make([]request, 0, chunkLen))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, q)
	c.n++
}

// all yields every request, in the order added.
func (c *Collector) all() iter.Seq[*request] {
	return func(yield func(*request) bool) {
		for _, ch := range c.chunks {
			for i := range ch {
				if !yield(&ch[i]) {
					return
				}
			}
		}
	}
}

// column returns the requests' send times and values of one metric, for
// the requests that have one, in float64 for lib/metrics' percentiles.
func (c *Collector) column(get func(*request) float32) *column {
	n := 0
	for q := range c.all() {
		if v := get(q); v == v {
			n++
		}
	}
	col := &column{t: make([]int64, 0, n), v: make([]float64, 0, n)}
	for q := range c.all() {
		if v := get(q); v == v {
			col.t = append(col.t, q.sent)
			col.v = append(col.v, float64(v))
		}
	}
	return col
}

// column is one metric's values with the send time of each request.
type column struct {
	t []int64   // sent_unix_ns
	v []float64 // the value, in the metric's display unit
}

// kind names an error for the chart: its type and code ("HTTPError 500").
func (c *Collector) kind(e *result.Error) int16 {
	name := e.Type
	if name == "" {
		name = "error"
	}
	if e.Code != 0 {
		name += " " + strconv.Itoa(e.Code)
	}
	k, ok := c.kindOf[name]
	if !ok && len(c.kinds) >= maxErrorKinds {
		name = "other"
		k, ok = c.kindOf[name]
	}
	if !ok {
		k = int16(len(c.kinds))
		c.kinds = append(c.kinds, name)
		c.errCount = append(c.errCount, 0)
		c.kindOf[name] = k
	}
	c.errCount[k]++
	return k
}
