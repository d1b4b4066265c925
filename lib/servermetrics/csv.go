package servermetrics

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The CSV follows aiperf's ServerMetricsCsvExporter
// (src/aiperf/server_metrics/csv_exporter.py at ai-dynamo/aiperf
// 1cdae727): comment lines (LF), then one section per type (gauge,
// counter, histogram; untyped families among the gauges), rows ending in
// CRLF as Python's csv module ends them. A section's header is Endpoint
// (host:port and any path but /metrics), Type, Metric, Unit, the type's
// stats, a column per label name, Description, and for histograms
// "buckets" (le=delta;...). Floats have 4 decimals and counts (a
// histogram's count and bucket deltas) none; a statistic not computed is
// an empty cell (the counters' rate_* come from aiperf's time slices,
// which the toolkit does not compute).
var (
	gaugeKeys   = []string{"avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}
	counterKeys = []string{"total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std"}
	histKeys    = []string{"count", "count_rate", "sum", "sum_rate", "avg", "p1_estimate", "p5_estimate", "p10_estimate",
		"p25_estimate", "p50_estimate", "p75_estimate", "p90_estimate", "p95_estimate", "p99_estimate"}
)

// csvRow is one series of the CSV.
type csvRow struct {
	endpoint, typ string
	f             *FamilyReport
	s             *SeriesReport
}

// WriteCSV writes server_metrics_export.csv.
func WriteCSV(w io.Writer, r *Report, m Meta) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# AIPerf Server Metrics Export (CSV)\n# aiperf_version: %s\n# schema_version: 1.0\n# benchmark_id: %s\n"+
		"# Note: Same benchmark_id and version appear in the JSON export\n#\n", m.Version, m.BenchmarkID)
	sections := map[string][]csvRow{}
	for ti := range r.Targets {
		t := &r.Targets[ti]
		for fi := range t.Families {
			f := &t.Families[fi]
			for si := range f.Series {
				s := &f.Series[si]
				typ := TypeGauge
				switch {
				case s.Counter != nil:
					typ = TypeCounter
				case s.Hist != nil:
					typ = TypeHistogram
				}
				sections[typ] = append(sections[typ], csvRow{endpointDisplay(t.URL), f.Type, f, s})
			}
		}
	}
	cw := csv.NewWriter(bw)
	cw.UseCRLF = true
	first := true
	for _, typ := range []string{TypeGauge, TypeCounter, TypeHistogram} {
		if rows := sections[typ]; len(rows) > 0 {
			if !first {
				cw.Write(nil)
			}
			first = false
			writeSection(cw, typ, rows)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// writeSection writes one type's header and rows, ordered as aiperf
// orders them: by which label columns a row fills, then metric, endpoint
// and labels.
func writeSection(cw *csv.Writer, typ string, rows []csvRow) {
	keys := map[string][]string{TypeGauge: gaugeKeys, TypeCounter: counterKeys, TypeHistogram: histKeys}[typ]
	labelCols := labelOrder(rows)
	header := append([]string{"Endpoint", "Type", "Metric", "Unit"}, keys...)
	header = append(append(header, labelCols...), "Description")
	if typ == TypeHistogram {
		header = append(header, "buckets")
	}
	cw.Write(header)
	type sorted struct {
		key [4]string
		row csvRow
	}
	var ss []sorted
	for _, rw := range rows {
		lm := labelMap(rw.s.Labels)
		var pat strings.Builder
		for _, c := range labelCols {
			if _, ok := lm[c]; ok {
				pat.WriteByte('1')
			} else {
				pat.WriteByte('0')
			}
		}
		ss = append(ss, sorted{[4]string{pat.String(), rw.f.Name, rw.endpoint, labelsRepr(rw.s.Labels)}, rw})
	}
	slices.SortStableFunc(ss, func(a, b sorted) int { return slices.Compare(a.key[:], b.key[:]) })
	for _, x := range ss {
		cw.Write(csvRecord(x.row, keys, labelCols))
	}
}

func csvRecord(rw csvRow, keys, labelCols []string) []string {
	var stats map[string]num
	switch {
	case rw.s.Gauge != nil:
		stats = gaugeStatsMap(rw.s.Gauge)
	case rw.s.Counter != nil:
		stats = counterStatsMap(rw.s.Counter)
	default:
		stats = histStatsMap(rw.s.Hist)
	}
	rec := []string{rw.endpoint, rw.typ, rw.f.Name, rw.f.Unit}
	for _, k := range keys {
		v, ok := stats[k]
		switch {
		case !ok || math.IsNaN(float64(v)) || math.IsInf(float64(v), 0):
			rec = append(rec, "")
		case k == "count": // a histogram's count is an integer in aiperf's model
			rec = append(rec, csvInt(float64(v)))
		default:
			rec = append(rec, strconv.FormatFloat(float64(v), 'f', 4, 64))
		}
	}
	lm := labelMap(rw.s.Labels)
	for _, c := range labelCols {
		rec = append(rec, lm[c])
	}
	rec = append(rec, rw.f.Help)
	if h := rw.s.Hist; h != nil {
		var b strings.Builder
		for i, le := range h.Bounds {
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(formatFloat(le))
			b.WriteByte('=')
			b.WriteString(csvInt(h.Cumulative[i]))
		}
		rec = append(rec, b.String())
	}
	return rec
}

func csvInt(f float64) string { return strconv.FormatFloat(math.Round(f), 'f', 0, 64) }

// endpointDisplay is a target's URL as aiperf's exports show it: host:port
// and the path less a trailing /metrics.
func endpointDisplay(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return u
	}
	return p.Host + strings.TrimSuffix(p.Path, "/metrics")
}

// labelOrder orders a section's label columns as aiperf does: label names
// that share a series are grouped (transitively), the groups ordered by
// their first name; within a group, the names only one row has come
// first, then those of several rows, each part sorted.
func labelOrder(rows []csvRow) []string {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok {
			parent[x] = x
			return x
		}
		if p == x {
			return x
		}
		return find(p)
	}
	uses := map[string]int{}
	for _, rw := range rows {
		var names []string
		for _, l := range rw.s.Labels {
			names = append(names, l.Name)
			uses[l.Name]++
			find(l.Name)
		}
		slices.Sort(names)
		for i := 1; i < len(names); i++ {
			parent[find(names[i])] = find(names[i-1])
		}
	}
	groups := map[string][]string{}
	for n := range uses {
		groups[find(n)] = append(groups[find(n)], n)
	}
	var gs [][]string
	for _, g := range groups {
		slices.Sort(g)
		gs = append(gs, g)
	}
	slices.SortFunc(gs, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	var out []string
	for _, g := range gs {
		for _, once := range []bool{true, false} {
			for _, n := range g {
				if (uses[n] == 1) == once {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// labelsRepr is a series' labels as the sort key aiperf uses (the Python
// repr of its labels dict, names in order); "" for none.
func labelsRepr(ls []Label) string {
	if len(ls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "'%s': '%s'", l.Name, l.Value)
	}
	b.WriteByte('}')
	return b.String()
}
