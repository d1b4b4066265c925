package metrics

import (
	"io"
	"slices"
	"strconv"
	"strings"
)

// The time-slice files, in the Python aiperf's shapes:
//
//   - profile_export_aiperf_timeslices.json is its TimesliceCollectionExportData
//     (src/aiperf/common/models/export_models.py) as
//     src/aiperf/exporters/timeslice_metrics_json_exporter.py writes it
//     (pydantic, indent=2, unset fields left out): {"timeslices": [{
//     "timeslice_index": i, <tag>: {metric}, ...}, ...], "input_config":
//     {...}}, each metric in the shape of profile_export_aiperf.json's.
//   - profile_export_aiperf_timeslices.csv is the tidy table of
//     src/aiperf/exporters/timeslice_metrics_csv_exporter.py:
//     "Timeslice,Metric,Unit,Stat,Value", a row per window, metric (by tag)
//     and statistic present (STAT_KEYS order: avg, min, max, sum, p1..p99,
//     std; a single value has avg alone), Metric the header, Unit the
//     display unit, Value with two decimals, CRLF line ends.
//
// aiperf writes neither file when no window holds a request; these
// writers then write the shapes empty, so a run directory never keeps a
// previous run's slices beside a new summary.

// WriteTimeslicesJSON writes s as profile_export_aiperf_timeslices.json,
// with run's input config.
func WriteTimeslicesJSON(w io.Writer, s *Slices, run Run) error {
	cfg, err := indentConfig(run.InputConfig)
	if err != nil {
		return err
	}
	b := make([]byte, 0, 16<<10)
	b = append(b, "{\n  \"timeslices\": ["...)
	for i := range s.Slices {
		sl := &s.Slices[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\n      \"timeslice_index\": "...)
		b = appendInt(b, int64(sl.Index))
		for j := range sl.Summary.Metrics {
			r := &sl.Summary.Metrics[j]
			b = append(b, ",\n      "...)
			b = appendString(b, r.Tag)
			b = append(b, ": "...)
			b = appendMetricJSONAt(b, r, "\n      ")
		}
		b = append(b, "\n    }"...)
	}
	if len(s.Slices) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, ']')
	if cfg != nil {
		b = append(b, ",\n  \"input_config\": "...)
		b = append(b, cfg...)
	}
	b = append(b, "\n}"...)
	_, err = w.Write(b)
	return err
}

// WriteTimeslicesCSV writes s as profile_export_aiperf_timeslices.csv.
func WriteTimeslicesCSV(w io.Writer, s *Slices) error {
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
	row("Timeslice", "Metric", "Unit", "Stat", "Value")
	for i := range s.Slices {
		sl := &s.Slices[i]
		idx := strconv.Itoa(sl.Index)
		ms := make([]*Result, len(sl.Summary.Metrics))
		for j := range sl.Summary.Metrics {
			ms[j] = &sl.Summary.Metrics[j]
		}
		slices.SortStableFunc(ms, func(a, b *Result) int { return strings.Compare(a.Tag, b.Tag) })
		for _, r := range ms {
			name := r.Header
			if name == "" {
				name = r.Tag
			}
			if r.Single {
				row(idx, name, r.Unit, "avg", num(r.Avg))
				continue
			}
			for _, st := range csvStats {
				row(idx, name, r.Unit, st, num(statValue(r, st)))
			}
		}
	}
	_, err := w.Write(b)
	return err
}

// statValue is r's statistic named as in csvStats.
func statValue(r *Result, stat string) float64 {
	switch stat {
	case "avg":
		return r.Avg
	case "min":
		return r.Min
	case "max":
		return r.Max
	case "sum":
		return r.Sum
	case "std":
		return r.Std
	}
	p, _ := strconv.ParseFloat(strings.TrimPrefix(stat, "p"), 64)
	v, _ := r.Percentile(p)
	return v
}
