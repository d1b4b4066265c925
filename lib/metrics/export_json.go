package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"
)

// SchemaVersion is profile_export_aiperf.json's "schema_version", the
// Python aiperf's JsonExportData.SCHEMA_VERSION this file follows: 1.1
// added each record metric's "count" and "sum" (ai-dynamo/aiperf
// src/aiperf/common/models/export_models.py at 896729cf, and
// MetricResult.to_json_result: both left out for aggregate and derived
// metrics).
const SchemaVersion = "1.1"

// Run is what the summary file says about a run beyond its metrics.
type Run struct {
	BenchmarkID string // "benchmark_id"; "" omits it
	Version     string // "aiperf_version": the writing tool and its version; "" omits it
	// InputConfig is the run's configuration, a JSON object written as
	// "input_config" (re-indented, otherwise as given); empty omits it.
	InputConfig json.RawMessage
	// RunInfo is a JSON object written as "run_info" after input_config
	// (aiperf's newer per-run block); empty omits it.
	RunInfo      json.RawMessage
	WasCancelled bool // "was_cancelled": the run was interrupted
	// StartNS and EndNS are the profiling phase's start and end
	// ("start_time", "end_time"); zero takes the summary's first send and
	// last end.
	StartNS, EndNS int64
	// Location is the zone of the times, which aiperf writes as naive local
	// datetimes; nil means time.Local.
	Location *time.Location
	// Sections are further top-level members (what the Python aiperf does
	// not write: "prefix_cache", ...), each a JSON object written
	// re-indented after end_time, in order.
	Sections []Section
}

// Section is one extra top-level member of the summary file.
type Section struct {
	Name  string
	Value json.RawMessage
}

// jsonDeclared are the metrics JsonExportData declares, in its order; the
// others follow after end_time in summary order, as pydantic writes extra
// fields.
var jsonDeclared = []id{
	mRequestThroughput, mLatency, mRequestCount, mTTFT, mTTST, mITL, mOutputTPS, mOutputTPSUser, mOSL, mISL,
	mGoodput, mGoodCount, mOutputTokens, mReasoningTokens, mMinRequestTS, mMaxResponseTS, mICL,
	mTotalOutputTokens, mTotalReasoningTokens, mBenchDuration, mTotalISL, mTotalOSL, mErrorCount, mErrorISL, mTotalErrorISL,
}

// WriteJSON writes s as profile_export_aiperf.json: the Python aiperf's
// JsonExportData dumped by pydantic with indent=2, unset and None fields
// left out. Each metric is {"unit", "avg", "p1".."p99", "min", "max",
// "std", "count", "sum"} in display units (a single value, an aggregate or
// derived metric, has "unit" and "avg" only).
func WriteJSON(w io.Writer, s *Summary, run Run) error {
	cfg, err := indentConfig(run.InputConfig)
	if err != nil {
		return err
	}
	info, err := indentConfig(run.RunInfo)
	if err != nil {
		return err
	}
	loc := run.Location
	if loc == nil {
		loc = time.Local
	}
	start, end := run.StartNS, run.EndNS
	if start == 0 {
		start = s.StartNS
	}
	if end == 0 {
		end = s.EndNS
	}

	b := make([]byte, 0, 16<<10)
	first := true
	field := func(name string) {
		if first {
			b = append(b, "{\n  "...)
			first = false
		} else {
			b = append(b, ",\n  "...)
		}
		b = appendString(b, name)
		b = append(b, ": "...)
	}
	field("schema_version")
	b = appendString(b, SchemaVersion)
	if run.Version != "" {
		field("aiperf_version")
		b = appendString(b, run.Version)
	}
	if run.BenchmarkID != "" {
		field("benchmark_id")
		b = appendString(b, run.BenchmarkID)
	}
	declared := make(map[string]bool, len(jsonDeclared))
	for _, i := range jsonDeclared {
		declared[defs[i].tag] = true
		if r := s.Get(defs[i].tag); r != nil {
			field(r.Tag)
			b = appendMetricJSON(b, r)
		}
	}
	if cfg != nil {
		field("input_config")
		b = append(b, cfg...)
	}
	if info != nil {
		field("run_info")
		b = append(b, info...)
	}
	field("was_cancelled")
	b = appendBool(b, run.WasCancelled)
	field("error_summary")
	if len(s.Errors) == 0 {
		b = append(b, "[]"...)
	} else {
		b = append(b, '[')
		for i, e := range s.Errors {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n    {\n      \"error_details\": {"...)
			sep := "\n        "
			if e.Code != 0 {
				b = append(b, sep+`"code": `...)
				b = appendInt(b, int64(e.Code))
				sep = ",\n        "
			}
			if e.Type != "" {
				b = append(b, sep+`"type": `...)
				b = appendString(b, e.Type)
				sep = ",\n        "
			}
			b = append(b, sep+`"message": `...)
			b = appendString(b, e.Message)
			b = append(b, "\n      },\n      \"count\": "...)
			b = appendInt(b, e.Count)
			b = append(b, "\n    }"...)
		}
		b = append(b, "\n  ]"...)
	}
	if start != 0 {
		field("start_time")
		b = appendDatetime(b, start, loc)
	}
	if end != 0 {
		field("end_time")
		b = appendDatetime(b, end, loc)
	}
	for _, sec := range run.Sections {
		var buf bytes.Buffer
		if err := json.Indent(&buf, sec.Value, "  ", "  "); err != nil {
			return errors.New("metrics: section " + sec.Name + " is not valid JSON: " + err.Error())
		}
		field(sec.Name)
		b = append(b, bytes.TrimSpace(buf.Bytes())...)
	}
	for i := range s.Metrics {
		if r := &s.Metrics[i]; !declared[r.Tag] {
			field(r.Tag)
			b = appendMetricJSON(b, r)
		}
	}
	b = append(b, "\n}"...)
	_, err = w.Write(b)
	return err
}

// indentConfig re-indents a JSON object (a run's input config or run
// info) for a field of the top-level object; nil for none.
func indentConfig(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "  ", "  "); err != nil {
		return nil, errors.New("metrics: input config is not valid JSON: " + err.Error())
	}
	cfg := bytes.TrimSpace(buf.Bytes())
	if len(cfg) == 0 || cfg[0] != '{' {
		return nil, errors.New("metrics: input config is not a JSON object")
	}
	return cfg, nil
}

// appendMetricJSON appends r as a field's value of the top-level object.
func appendMetricJSON(b []byte, r *Result) []byte { return appendMetricJSONAt(b, r, "\n  ") }

// appendMetricJSONAt appends r as an object whose closing brace starts the
// line nl ("\n" and the indent of the field that holds it).
func appendMetricJSONAt(b []byte, r *Result, nl string) []byte {
	in := nl + "  "
	b = append(b, '{')
	b = append(b, in...)
	b = append(b, "\"unit\": "...)
	b = appendString(b, r.Unit)
	field := func(name string) {
		b = append(b, ',')
		b = append(b, in...)
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, "\": "...)
	}
	field("avg")
	b = appendFloat(b, r.Avg, true)
	if !r.Single {
		for i, p := range Percentiles {
			field("p" + strconv.Itoa(int(p)))
			b = appendFloat(b, r.P[i], true)
		}
		field("min")
		b = appendFloat(b, r.Min, true)
		field("max")
		b = appendFloat(b, r.Max, true)
		field("std")
		b = appendFloat(b, r.Std, true)
		field("count")
		b = appendInt(b, r.Count)
		if r.Count > 0 {
			field("sum")
			b = appendFloat(b, r.Sum, true)
		}
	}
	b = append(b, nl...)
	return append(b, '}')
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

func appendInt(b []byte, v int64) []byte {
	var tmp [20]byte
	i := len(tmp)
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	for {
		i--
		tmp[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		b = append(b, '-')
	}
	return append(b, tmp[i:]...)
}
