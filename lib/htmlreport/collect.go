package htmlreport

import (
	"strconv"

	"github.com/aiperf/toolkit/lib/metrics"
	"github.com/aiperf/toolkit/lib/result"
)

// maxErrorKinds bounds the distinct error kinds kept apart; later ones count
// as "other".
const maxErrorKinds = 64

// column is one metric's values with the send time of each request.
type column struct {
	t []int64   // sent_unix_ns
	v []float64 // the value, in the metric's display unit
}

func (c *column) add(t int64, v float64) {
	c.t = append(c.t, t)
	c.v = append(c.v, v)
}

// Collector gathers from records what the charts need: per request its send
// time and metrics, its span and output tokens, and for a failed one its
// error's kind. It holds about 60 bytes per request (60 MB for a million).
// Warmup records are skipped, as the summary skips them. Not safe for
// concurrent use.
type Collector struct {
	m *metrics.RequestMetrics

	ttft, itl, latency, lateness column

	// every profiling request's send and end, for requests in flight
	sent, end []int64
	// successful requests' output tokens and the span they arrived in
	// (first content to end)
	tokFrom, tokTo []int64
	tokens         []float64

	errT     []int64
	errKind  []uint16
	kinds    []string
	kindOf   map[string]uint16
	errCount []int64

	n int64
}

// NewCollector collects under o (o.Streaming decides whether TTFT and ITL
// have values, as for the summary).
func NewCollector(o metrics.Options) (*Collector, error) {
	m, err := metrics.NewRequestMetrics(o)
	if err != nil {
		return nil, err
	}
	return &Collector{m: m, kindOf: map[string]uint16{}}, nil
}

// Add takes one record.
func (c *Collector) Add(r *result.Record) {
	if r.Warmup() {
		return
	}
	c.n++
	ok := c.m.Eval(r)
	t := r.SentNS
	c.sent = append(c.sent, t)
	c.end = append(c.end, max(r.EndNS, t))
	if v, has := c.m.Value("send_lateness"); has {
		c.lateness.add(t, v)
	}
	if !ok {
		c.errT = append(c.errT, t)
		c.errKind = append(c.errKind, c.kind(c.m.Error()))
		return
	}
	for _, x := range [...]struct {
		tag string
		col *column
	}{{"time_to_first_token", &c.ttft}, {"inter_token_latency", &c.itl}, {"request_latency", &c.latency}} {
		if v, has := c.m.Value(x.tag); has {
			x.col.add(t, v)
		}
	}
	if osl, has := c.m.Value("output_sequence_length"); has && osl > 0 {
		from := t
		if len(r.ChunkOffsetsNS) > 0 {
			from = t + r.ChunkOffsetsNS[0]
		}
		c.tokFrom = append(c.tokFrom, from)
		c.tokTo = append(c.tokTo, max(r.EndNS, from))
		c.tokens = append(c.tokens, osl)
	}
}

// kind names an error for the chart: its type and code ("HTTPError 500").
func (c *Collector) kind(e *result.Error) uint16 {
	name := e.Type
	if name == "" {
		name = "error"
	}
	if e.Code != 0 {
		name += " " + strconv.Itoa(e.Code)
	}
	k, ok := c.kindOf[name]
	if !ok {
		if len(c.kinds) >= maxErrorKinds {
			name = "other"
			if k, ok = c.kindOf[name]; ok {
				c.errCount[k]++
				return k
			}
		}
		k = uint16(len(c.kinds))
		c.kinds = append(c.kinds, name)
		c.errCount = append(c.errCount, 0)
		c.kindOf[name] = k
	}
	c.errCount[k]++
	return k
}
