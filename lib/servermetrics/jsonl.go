package servermetrics

import (
	"math"
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// AppendLine appends one line of server_metrics_export.jsonl: one scrape of
// one target, in the shape of aiperf's slim record
// (src/aiperf/server_metrics/jsonl_writer.py, ServerMetricsSlimRecord in
// src/aiperf/common/models/server_metrics_models.py), with "v":1 as every
// JSONL line of this toolkit carries:
//
//	{"v":1,"endpoint_url":"http://h:8000/metrics","timestamp_ns":…,"endpoint_latency_ns":…,
//	 "metrics":{"vllm:num_requests_running":[{"labels":{"model_name":"m"},"value":3}],
//	            "vllm:time_to_first_token_seconds":[{"labels":{…},"buckets":{"0.1":2,"+Inf":5},"sum":0.9,"count":5}]}}
//
// A histogram's buckets are "buckets", as aiperf's released MetricSample
// names them (files written before 2026-12 said "histogram", which
// LoadJSONL still reads). A failed scrape is a line with "error" and an
// empty "metrics" (a gap; SlimRecord requires the member).
// The collector's lines also say what a target's families are, the first
// time and whenever it changes, so that the file alone rebuilds the
// exports (LoadJSONL): "types" (family → counter, gauge, histogram or
// unknown) and "help" (family → its HELP text, when it has one);
// "dropped" counts the page's series past Limits.MaxSeries, and
// "skipped_ticks" and "throttled_ticks" the ticks of the target skipped
// since its previous line (a slow scrape in flight; parsing kept within a
// fifth of a core).
// Families are sorted by name and series by labels. A value that JSON
// cannot hold (NaN, ±Inf) is written as a string ("NaN", "+Inf", "-Inf"),
// as Prometheus' HTTP API does.
func AppendLine(dst []byte, target string, ts, latency int64, p *Page, err error) []byte {
	return appendLine(dst, target, ts, latency, p, err, nil, ticks{})
}

// ticks are the ticks of a target skipped since its previous line.
type ticks struct{ skipped, throttled int }

// appendLine is AppendLine; known, when not nil, is what the earlier lines
// of the target said of its families: the families the page says
// otherwise go in "types" and "help", and into known.
func appendLine(dst []byte, target string, ts, latency int64, p *Page, err error, known map[string]famInfo, tk ticks) []byte {
	dst = append(dst, `{"v":1,"endpoint_url":`...)
	dst = appendString(dst, target)
	dst = append(dst, `,"timestamp_ns":`...)
	dst = strconv.AppendInt(dst, ts, 10)
	dst = append(dst, `,"endpoint_latency_ns":`...)
	dst = strconv.AppendInt(dst, latency, 10)
	for _, x := range []struct {
		name string
		n    int
	}{{`,"skipped_ticks":`, tk.skipped}, {`,"throttled_ticks":`, tk.throttled}} {
		if x.n > 0 {
			dst = append(dst, x.name...)
			dst = strconv.AppendInt(dst, int64(x.n), 10)
		}
	}
	if err != nil || p == nil {
		msg := "no page"
		if err != nil {
			msg = err.Error()
		}
		dst = append(dst, `,"error":`...)
		dst = appendString(dst, msg)
		return append(dst, `,"metrics":{}}`+"\n"...)
	}
	if known != nil {
		dst = appendFamInfo(dst, p, known)
	}
	if p.Dropped > 0 {
		dst = append(dst, `,"dropped":`...)
		dst = strconv.AppendInt(dst, int64(p.Dropped), 10)
	}
	dst = append(dst, `,"metrics":{`...)
	for i, f := range p.Families {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, f.Name)
		dst = append(dst, ":["...)
		for j, s := range f.Series {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			if len(s.Labels) > 0 {
				dst = append(dst, `"labels":`...)
				dst = appendLabels(dst, s.Labels)
				dst = append(dst, ',')
			}
			if h := s.Hist; h != nil {
				dst = append(dst, `"buckets":{`...)
				for k, b := range h.Bounds {
					if k > 0 {
						dst = append(dst, ',')
					}
					dst = appendString(dst, formatFloat(b))
					dst = append(dst, ':')
					dst = appendNumber(dst, h.Counts[k])
				}
				dst = append(dst, `},"sum":`...)
				dst = appendNumber(dst, h.Sum)
				dst = append(dst, `,"count":`...)
				dst = appendNumber(dst, h.Count)
			} else {
				dst = append(dst, `"value":`...)
				dst = appendNumber(dst, s.Value)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, "}}\n"...)
}

// appendFamInfo writes the "types" and "help" members of the families
// whose type or help differs from known, and records them there.
func appendFamInfo(dst []byte, p *Page, known map[string]famInfo) []byte {
	var types, help []int
	for i, f := range p.Families {
		k, ok := known[f.Name]
		if !ok || k.typ != f.Type {
			types = append(types, i)
		}
		if f.Help != "" && (!ok || k.help != f.Help) {
			help = append(help, i)
		}
		known[f.Name] = famInfo{f.Type, f.Help}
	}
	for _, m := range []struct {
		name string
		idx  []int
		val  func(Family) string
	}{{"types", types, func(f Family) string { return f.Type }}, {"help", help, func(f Family) string { return f.Help }}} {
		if len(m.idx) == 0 {
			continue
		}
		dst = append(dst, `,"`...)
		dst = append(dst, m.name...)
		dst = append(dst, `":{`...)
		for j, i := range m.idx {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, p.Families[i].Name)
			dst = append(dst, ':')
			dst = appendString(dst, m.val(p.Families[i]))
		}
		dst = append(dst, '}')
	}
	return dst
}

func appendLabels(dst []byte, ls []Label) []byte {
	dst = append(dst, '{')
	for i, l := range ls {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, l.Name)
		dst = append(dst, ':')
		dst = appendString(dst, l.Value)
	}
	return append(dst, '}')
}

func appendString(dst []byte, s string) []byte { return jsonx.AppendString(dst, s) }

// appendNumber writes f as a JSON number, or as a string when JSON has no
// number for it.
func appendNumber(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendString(dst, formatFloat(f))
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}
