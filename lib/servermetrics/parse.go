package servermetrics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Metric types as the exports name them (aiperf's PrometheusMetricType
// values). A summary's quantiles are read as gauges and its _sum and _count
// as counters; a gauge histogram as a histogram; an untyped family as
// "unknown", which is summarized like a gauge.
const (
	TypeCounter   = "counter"
	TypeGauge     = "gauge"
	TypeHistogram = "histogram"
	TypeUnknown   = "unknown"
)

// Limits bound what one scrape may hold in memory.
type Limits struct {
	// MaxBody is the largest /metrics body read; a longer one fails the
	// scrape (it is a gap, not a truncated page).
	MaxBody int64
	// MaxLine is the longest line accepted. It also bounds the parsers'
	// work per line (the OpenMetrics 2.0 parser is superlinear in a line's
	// length).
	MaxLine int
	// MaxSeries is the most series kept from one page of one target, a
	// histogram's buckets, _sum and _count each counting as one; the rest
	// is dropped (sorted by family name, then labels), with a warning.
	MaxSeries int
	// MaxSamples is the most sample lines (lines that are not blank and not
	// comments) a page may have; a page with more fails the scrape before
	// it is parsed. The parser holds every sample of a page at once (about
	// 300 bytes each), before MaxSeries picks the ones kept.
	MaxSamples int
}

// Default limits: a vLLM page with a few models is ~100 KB and ~1,000 series;
// these leave two orders of magnitude. 200,000 samples (a 10 MB vLLM-like
// page has ~115,000) cost the parser ~60 MB.
var DefaultLimits = Limits{MaxBody: 16 << 20, MaxLine: 256 << 10, MaxSeries: 20000, MaxSamples: 200000}

// Label is one label of a series.
type Label struct{ Name, Value string }

// Family is one metric family of a page.
type Family struct {
	Name, Help, Type string
	Series           []Series // sorted by labels
}

// Series is one labelled series: a value, or a classic histogram.
type Series struct {
	Labels []Label // sorted by name; le and quantile excluded
	Value  float64
	Hist   *Hist // histograms only
}

// Hist is a classic histogram: cumulative bucket counts by upper bound,
// the last bound +Inf.
type Hist struct {
	Bounds, Counts []float64
	Sum, Count     float64
}

// Page is one parsed scrape.
type Page struct {
	Families []Family // sorted by name
	Series   int      // series counted against Limits.MaxSeries
	Dropped  int      // series dropped past Limits.MaxSeries
}

// Parse reads a /metrics body in the format its Content-Type names
// (Prometheus text 0.0.4 or 1.0.0, OpenMetrics 0.0.1, 1.0 or 2.0; text when
// the type names none of them) with github.com/prometheus/common/expfmt.
// It never panics; a page it cannot read is an error naming the problem.
func Parse(body []byte, contentType string, lim Limits) (*Page, error) {
	if lim.MaxLine > 0 || lim.MaxSamples > 0 {
		n, at, samples := scanLines(body)
		if lim.MaxLine > 0 && n > lim.MaxLine {
			return nil, fmt.Errorf("line %d is %d bytes, over the limit of %d", at, n, lim.MaxLine)
		}
		if lim.MaxSamples > 0 && samples > lim.MaxSamples {
			return nil, fmt.Errorf("%d samples, over the limit of %d a page may have", samples, lim.MaxSamples)
		}
	}
	h := http.Header{}
	h.Set("Content-Type", contentType)
	format := expfmt.ResponseFormat(h)
	switch format.FormatType() {
	case expfmt.TypeOpenMetrics, expfmt.TypeTextPlain:
	default:
		// A server that names no type (or a wrong one) usually sends the
		// text format; garbage fails in the parser.
		format = expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), format)
	var fams []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parse: %w", err)
		}
		fams = append(fams, mf)
	}
	slices.SortFunc(fams, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	p := &Page{}
	for _, mf := range fams {
		p.add(mf, lim.MaxSeries)
	}
	return p, nil
}

// scanLines returns the length of the longest line of b, its number, and
// the number of sample lines (neither blank nor comments).
func scanLines(b []byte) (n, line, samples int) {
	for i := 1; len(b) > 0; i++ {
		j := bytes.IndexByte(b, '\n')
		if j < 0 {
			j = len(b)
		}
		if j > n {
			n, line = j, i
		}
		if k := bytes.IndexFunc(b[:j], func(r rune) bool { return r != ' ' && r != '\t' && r != '\r' }); k >= 0 && b[k] != '#' {
			samples++
		}
		if j == len(b) {
			break
		}
		b = b[j+1:]
	}
	return n, line, samples
}

// add converts one decoded family, within the series budget.
func (p *Page) add(mf *dto.MetricFamily, maxSeries int) {
	name := mf.GetName()
	budget := func(n int) bool {
		if maxSeries > 0 && p.Series+n > maxSeries {
			p.Dropped += n
			return false
		}
		p.Series += n
		return true
	}
	switch mf.GetType() {
	case dto.MetricType_SUMMARY:
		q := Family{Name: name, Help: mf.GetHelp(), Type: TypeGauge}
		sum := Family{Name: name + "_sum", Help: mf.GetHelp(), Type: TypeCounter}
		cnt := Family{Name: name + "_count", Help: mf.GetHelp(), Type: TypeCounter}
		for _, m := range mf.GetMetric() {
			s := m.GetSummary()
			ls := labels(m, "quantile")
			if !budget(len(s.GetQuantile()) + 2) {
				continue
			}
			for _, qv := range s.GetQuantile() {
				ql := append(slices.Clone(ls), Label{"quantile", formatFloat(qv.GetQuantile())})
				slices.SortFunc(ql, cmpLabel)
				q.Series = append(q.Series, Series{Labels: ql, Value: qv.GetValue()})
			}
			sum.Series = append(sum.Series, Series{Labels: ls, Value: s.GetSampleSum()})
			cnt.Series = append(cnt.Series, Series{Labels: ls, Value: float64(s.GetSampleCount())})
		}
		for _, f := range []Family{q, sum, cnt} {
			if len(f.Series) > 0 {
				sortSeries(f.Series)
				p.Families = append(p.Families, f)
			}
		}
		return
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		f := Family{Name: name, Help: mf.GetHelp(), Type: TypeHistogram}
		for _, m := range mf.GetMetric() {
			h := histOf(m.GetHistogram())
			if !budget(len(h.Bounds) + 2) {
				continue
			}
			f.Series = append(f.Series, Series{Labels: labels(m, "le"), Hist: h})
		}
		if len(f.Series) > 0 {
			sortSeries(f.Series)
			p.Families = append(p.Families, f)
		}
		return
	}
	f := Family{Name: name, Help: mf.GetHelp()}
	for _, m := range mf.GetMetric() {
		if !budget(1) {
			continue
		}
		s := Series{Labels: labels(m, "")}
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			f.Type, s.Value = TypeCounter, m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			f.Type, s.Value = TypeGauge, m.GetGauge().GetValue()
		default:
			f.Type, s.Value = TypeUnknown, m.GetUntyped().GetValue()
		}
		f.Series = append(f.Series, s)
	}
	if len(f.Series) > 0 {
		sortSeries(f.Series)
		p.Families = append(p.Families, f)
	}
}

// histOf reads a classic histogram; a native one (no buckets) keeps only
// its count, as the +Inf bucket.
func histOf(h *dto.Histogram) *Hist {
	count := float64(h.GetSampleCount())
	if h.SampleCountFloat != nil {
		count = h.GetSampleCountFloat()
	}
	out := &Hist{Sum: h.GetSampleSum(), Count: count}
	for _, b := range h.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		out.Bounds = append(out.Bounds, b.GetUpperBound())
		out.Counts = append(out.Counts, c)
	}
	if n := len(out.Bounds); n == 0 || !math.IsInf(out.Bounds[n-1], 1) {
		out.Bounds = append(out.Bounds, math.Inf(1))
		out.Counts = append(out.Counts, count)
	}
	return out
}

func labels(m *dto.Metric, skip string) []Label {
	var ls []Label
	for _, lp := range m.GetLabel() {
		if lp.GetName() == skip {
			continue
		}
		ls = append(ls, Label{lp.GetName(), lp.GetValue()})
	}
	slices.SortFunc(ls, cmpLabel)
	return ls
}

func cmpLabel(a, b Label) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.Value, b.Value)
}

func sortSeries(s []Series) {
	slices.SortStableFunc(s, func(a, b Series) int { return slices.CompareFunc(a.Labels, b.Labels, cmpLabel) })
}

// formatFloat writes a bound or quantile as Prometheus does ("0.5",
// "+Inf").
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
