package servermetrics

import (
	"math"
	"strings"
)

// Part of a series a column holds.
const (
	partValue = iota
	partBucket
	partSum
	partCount
)

// column is one scalar series of a target: a family's value, or one bucket,
// the _sum or the _count of a histogram.
type column struct {
	family string
	labels []Label
	part   int
	le     float64 // partBucket
}

// scrape is one successful fetch: its time and a value per column known
// then (NaN where the page did not hold the column).
type scrape struct {
	t, latency int64
	vals       []float64
}

// famInfo is what a target said of a family (the last page wins).
type famInfo struct{ typ, help string }

// series is a target's stored time series, in dense columns: memory is 8
// bytes per column per kept scrape, bounded by Limits.MaxSeries columns and
// maxPoints values.
type series struct {
	fams    map[string]famInfo
	idx     map[string]int
	cols    []column
	scrapes []scrape
	points  int
	thinned int // times every other scrape was dropped to stay within maxPoints
}

// maxPoints bounds the values kept per target (8 bytes each: 64 MiB). Past
// it every other scrape is dropped (the first and the last kept), so a long
// run keeps its span at a coarser step.
const maxPoints = 8 << 20

func newSeries() *series {
	return &series{fams: map[string]famInfo{}, idx: map[string]int{}}
}

func seriesKey(family string, ls []Label, part int, le float64) string {
	var b strings.Builder
	b.WriteString(family)
	for _, l := range ls {
		b.WriteByte(0xff)
		b.WriteString(l.Name)
		b.WriteByte(0xfe)
		b.WriteString(l.Value)
	}
	b.WriteByte(0xfd)
	b.WriteByte(byte('0' + part))
	if part == partBucket {
		b.WriteString(formatFloat(le))
	}
	return b.String()
}

// col returns the column of a series, adding it when the budget allows.
func (s *series) col(family string, ls []Label, part int, le float64, maxCols int) (int, bool) {
	k := seriesKey(family, ls, part, le)
	if i, ok := s.idx[k]; ok {
		return i, true
	}
	if maxCols > 0 && len(s.cols) >= maxCols {
		return 0, false
	}
	s.idx[k] = len(s.cols)
	s.cols = append(s.cols, column{family: family, labels: ls, part: part, le: le})
	return len(s.cols) - 1, true
}

// add stores one page; it returns how many series found no column (the
// target has served more distinct series than maxCols over the run).
func (s *series) add(t, latency int64, p *Page, maxCols int) (dropped int) {
	type kv struct {
		i int
		v float64
	}
	var got []kv
	put := func(fam string, ls []Label, part int, le, v float64) {
		if i, ok := s.col(fam, ls, part, le, maxCols); ok {
			got = append(got, kv{i, v})
		} else {
			dropped++
		}
	}
	for _, f := range p.Families {
		s.fams[f.Name] = famInfo{f.Type, f.Help}
		for _, sr := range f.Series {
			if h := sr.Hist; h != nil {
				for j, b := range h.Bounds {
					put(f.Name, sr.Labels, partBucket, b, h.Counts[j])
				}
				put(f.Name, sr.Labels, partSum, 0, h.Sum)
				put(f.Name, sr.Labels, partCount, 0, h.Count)
				continue
			}
			put(f.Name, sr.Labels, partValue, 0, sr.Value)
		}
	}
	vals := make([]float64, len(s.cols))
	for i := range vals {
		vals[i] = math.NaN()
	}
	for _, x := range got {
		vals[x.i] = x.v
	}
	s.scrapes = append(s.scrapes, scrape{t: t, latency: latency, vals: vals})
	s.points += len(vals)
	for s.points > maxPoints && len(s.scrapes) > 2 {
		s.thin()
	}
	return dropped
}

// thin drops every other scrape but the first and the last.
func (s *series) thin() {
	n := len(s.scrapes)
	kept := s.scrapes[:1]
	s.points = len(s.scrapes[0].vals)
	for i := 2; i < n-1; i += 2 {
		kept = append(kept, s.scrapes[i])
		s.points += len(s.scrapes[i].vals)
	}
	kept = append(kept, s.scrapes[n-1])
	s.points += len(s.scrapes[n-1].vals)
	clear(s.scrapes[len(kept):])
	s.scrapes = kept
	s.thinned++
}

// value returns column c of scrape k (NaN when absent).
func (s *series) value(k, c int) float64 {
	v := s.scrapes[k].vals
	if c >= len(v) {
		return math.NaN()
	}
	return v[c]
}
