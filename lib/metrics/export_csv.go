package metrics

import (
	"io"
	"slices"
	"strconv"
	"strings"
)

// csvStats are the columns of the first CSV section: aiperf's STAT_KEYS.
var csvStats = []string{"avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

// WriteCSV writes s as profile_export_aiperf.csv, the Python aiperf's
// two-section layout: "Metric,avg,min,max,sum,p1,...,p99,std" with a row per
// metric with statistics, a blank line, then "Metric,Value" with a row per
// single value; rows sorted by tag, names "Header (unit)" (no unit for
// requests and counts), numbers with two decimals, lines ended by CRLF as
// Python's csv module ends them.
func WriteCSV(w io.Writer, s *Summary) error {
	var dists, singles []*Result
	for i := range s.Metrics {
		r := &s.Metrics[i]
		if r.Single {
			singles = append(singles, r)
		} else {
			dists = append(dists, r)
		}
	}
	byTag := func(a, b *Result) int { return strings.Compare(a.Tag, b.Tag) }
	slices.SortStableFunc(dists, byTag)
	slices.SortStableFunc(singles, byTag)

	var b []byte
	row := func(fields ...string) {
		for i, f := range fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCSVField(b, f)
		}
		b = append(b, '\r', '\n')
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	if len(dists) > 0 {
		row(append([]string{"Metric"}, csvStats...)...)
		for _, r := range dists {
			fields := []string{csvName(r), num(r.Avg), num(r.Min), num(r.Max), num(r.Sum)}
			for _, p := range r.P {
				fields = append(fields, num(p))
			}
			row(append(fields, num(r.Std))...)
		}
		if len(singles) > 0 {
			row()
		}
	}
	if len(singles) > 0 {
		row("Metric", "Value")
		for _, r := range singles {
			row(csvName(r), num(r.Avg))
		}
	}
	_, err := w.Write(b)
	return err
}

func csvName(r *Result) string {
	switch strings.ToLower(r.Unit) {
	case "", "count", "requests":
		return r.Header
	}
	return r.Header + " (" + r.Unit + ")"
}

// appendCSVField quotes as Python's csv.QUOTE_MINIMAL does: fields holding
// the delimiter, a quote or a line break.
func appendCSVField(b []byte, f string) []byte {
	if !strings.ContainsAny(f, ",\"\r\n") {
		return append(b, f...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(f, `"`, `""`)...)
	return append(b, '"')
}
