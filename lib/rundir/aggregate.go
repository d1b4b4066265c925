package rundir

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf/toolkit/lib/internal/atomicfile"
	"github.com/aiperf/toolkit/lib/stats"
)

// The aggregate across trials in the Python aiperf's shape: what its
// --num-profile-runs writes into ARTIFACTS/aggregate/
// (src/aiperf/orchestrator/aggregation/confidence.py and
// src/aiperf/exporters/aggregate/ at ai-dynamo/aiperf 1cdae727, aiperf
// 0.6.0), from every trial's profile_export_aiperf.json as aiperf reads
// its runs' (every member that is an object with a "unit", every
// statistic of it among avg, min, max, sum, p1 ... p99, std): per
// "METRIC_STAT", the mean, sample std, min, max, cv (std/mean), standard
// error, the t-based interval and its critical value. A trial counts when
// it completed a request (aiperf's successful run); the aggregate needs
// two. The trials keep this toolkit's trial-K folders: run_labels names
// them.
const (
	AggregateDir  = "aggregate"
	AggregateJSON = "profile_export_aiperf_aggregate.json"
	AggregateCSV  = "profile_export_aiperf_aggregate.csv"
)

// aggregateStats are aiperf's STAT_KEYS, in its order.
var aggregateStats = []string{"avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

// AggregateMetric is one METRIC_STAT across the trials.
type AggregateMetric struct {
	Name                  string
	Mean, Std, Min, Max   float64
	CV, SE, CILow, CIHigh float64
	TCritical             float64
	Unit                  string
}

// Aggregate is the aggregate of a trials run.
type Aggregate struct {
	Version         string // aiperf_version: the tool's
	Runs            int
	Labels          []string // the trials that counted
	Failed          []FailedTrial
	ConfidenceLevel float64
	CooldownSeconds float64
	Metrics         []AggregateMetric // sorted by name
}

// FailedTrial is a trial that did not count, and why.
type FailedTrial struct {
	Label string `json:"label"`
	Error string `json:"error"`
}

// trialMetrics reads a trial's profile_export_aiperf.json as aiperf reads
// its runs': the members with a unit, their numeric statistics.
func trialMetrics(dir string) (map[string]map[string]float64, map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
	if err != nil {
		return nil, nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, nil, err
	}
	vals, units := map[string]map[string]float64{}, map[string]string{}
	for name, raw := range top {
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		unit, ok := m["unit"].(string)
		if !ok {
			continue
		}
		units[name], vals[name] = unit, map[string]float64{}
		for _, st := range aggregateStats {
			if v, ok := m[st].(float64); ok {
				vals[name][st] = v
			}
		}
	}
	return vals, units, nil
}

// SummarizeAggregate aggregates the trials in dirs (labels: their names)
// at the confidence level; nil, with no error, when fewer than two
// trials completed a request.
func SummarizeAggregate(dirs []string, level, cooldown float64, version string) (*Aggregate, error) {
	a := &Aggregate{Version: version, Runs: len(dirs), ConfidenceLevel: level, CooldownSeconds: cooldown}
	values := map[string][]float64{}
	units := map[string]string{}
	for _, d := range dirs {
		label := filepath.Base(d)
		vals, us, err := trialMetrics(d)
		if err != nil {
			return nil, err
		}
		if rc, ok := vals["request_count"]["avg"]; !ok || rc == 0 {
			msg := "No requests completed"
			if ec := vals["error_request_count"]["avg"]; ec > 0 {
				msg = fmt.Sprintf("All %d requests failed", int64(ec))
			}
			a.Failed = append(a.Failed, FailedTrial{label, msg})
			continue
		}
		a.Labels = append(a.Labels, label)
		for name, st := range vals {
			for k, v := range st {
				key := name + "_" + k
				values[key] = append(values[key], v)
				if units[key] == "" {
					units[key] = us[name]
				}
			}
		}
	}
	if len(a.Labels) < 2 {
		return nil, nil
	}
	for key, xs := range values {
		a.Metrics = append(a.Metrics, confidenceOf(key, units[key], xs, level))
	}
	slices.SortFunc(a.Metrics, func(x, y AggregateMetric) int { return strings.Compare(x.Name, y.Name) })
	return a, nil
}

// confidenceOf is aiperf's ConfidenceMetric of one METRIC_STAT's values:
// cv is +Inf for a zero mean, as aiperf's.
func confidenceOf(name, unit string, xs []float64, level float64) AggregateMetric {
	n := float64(len(xs))
	m := AggregateMetric{Name: name, Unit: unit, Min: xs[0], Max: xs[0]}
	for _, x := range xs {
		m.Mean += x
		m.Min, m.Max = min(m.Min, x), max(m.Max, x)
	}
	m.Mean /= n
	m.Std = math.NaN()
	if len(xs) > 1 {
		m.Std = math.Sqrt(stats.Variance(xs))
	}
	m.CV = math.Inf(1)
	if m.Mean != 0 {
		m.CV = m.Std / m.Mean
	}
	m.SE = m.Std / math.Sqrt(n)
	m.TCritical = stats.TQuantile(1-(1-level)/2, n-1)
	m.CILow, m.CIHigh = m.Mean-m.TCritical*m.SE, m.Mean+m.TCritical*m.SE
	return m
}

// WriteAggregate writes a's JSON and CSV into dir/aggregate/, each
// atomically.
func WriteAggregate(dir string, a *Aggregate) error {
	out := filepath.Join(dir, AggregateDir)
	if err := os.MkdirAll(out, 0o777); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(out, AggregateJSON), bytes.NewReader(a.json())); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(out, AggregateCSV), bytes.NewReader(a.csv()))
}

// jnum is a float as aiperf's JSON has it: NaN and ±Inf as null.
type jnum float64

func (f jnum) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return pyFloat(float64(f)), nil
}

// pyFloat writes f as Python's repr does (an integral float keeps ".0").
func pyFloat(f float64) []byte {
	b := strconv.AppendFloat(nil, f, 'g', -1, 64)
	if !bytes.ContainsAny(b, ".eEn") {
		b = append(b, ".0"...)
	}
	return b
}

func (a *Aggregate) json() []byte {
	type metric struct {
		Mean      jnum   `json:"mean"`
		Std       jnum   `json:"std"`
		Min       jnum   `json:"min"`
		Max       jnum   `json:"max"`
		CV        jnum   `json:"cv"`
		SE        jnum   `json:"se"`
		CILow     jnum   `json:"ci_low"`
		CIHigh    jnum   `json:"ci_high"`
		TCritical jnum   `json:"t_critical"`
		Unit      string `json:"unit"`
	}
	var b bytes.Buffer
	b.WriteString("{\n  \"schema_version\": \"1.0\",\n  \"aiperf_version\": ")
	v, _ := json.Marshal(a.Version)
	b.Write(v)
	failed := a.Failed
	if failed == nil {
		failed = []FailedTrial{}
	}
	meta, _ := json.MarshalIndent(struct {
		Type       string        `json:"aggregation_type"`
		Runs       int           `json:"num_profile_runs"`
		Successful int           `json:"num_successful_runs"`
		Failed     []FailedTrial `json:"failed_runs"`
		Level      jnum          `json:"confidence_level"`
		Labels     []string      `json:"run_labels"`
		Cooldown   jnum          `json:"cooldown_seconds"`
	}{"confidence", a.Runs, len(a.Labels), failed, jnum(a.ConfidenceLevel), a.Labels, jnum(a.CooldownSeconds)}, "  ", "  ")
	b.WriteString(",\n  \"metadata\": ")
	b.Write(meta)
	b.WriteString(",\n  \"metrics\": {")
	for i, m := range a.Metrics {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Name)
		body, _ := json.MarshalIndent(metric{jnum(m.Mean), jnum(m.Std), jnum(m.Min), jnum(m.Max), jnum(m.CV), jnum(m.SE),
			jnum(m.CILow), jnum(m.CIHigh), jnum(m.TCritical), m.Unit}, "    ", "  ")
		fmt.Fprintf(&b, "\n    %s: %s", k, body)
	}
	b.WriteString("\n  }\n}\n")
	return b.Bytes()
}

// csv is aiperf's aggregate CSV: the metrics table (2 decimals; cv, se and
// t_critical 4), a blank row, then the metadata rows; CRLF rows, as
// Python's csv module writes them.
func (a *Aggregate) csv() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	w.Write([]string{"metric", "mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high", "t_critical", "unit"})
	for _, m := range a.Metrics {
		w.Write([]string{m.Name, pyFixed(m.Mean, 2), pyFixed(m.Std, 2), pyFixed(m.Min, 2), pyFixed(m.Max, 2),
			pyFixed(m.CV, 4), pyFixed(m.SE, 4), pyFixed(m.CILow, 2), pyFixed(m.CIHigh, 2), pyFixed(m.TCritical, 4), m.Unit})
	}
	w.Write(nil)
	labels := make([]string, len(a.Labels))
	for i, l := range a.Labels {
		labels[i] = "'" + l + "'"
	}
	for _, row := range [][]string{
		{"Aggregation Type", "confidence"},
		{"Total Runs", strconv.Itoa(a.Runs)},
		{"Successful Runs", strconv.Itoa(len(a.Labels))},
		{"Confidence Level", string(pyFloat(a.ConfidenceLevel))},
		{"Run Labels", "[" + strings.Join(labels, ", ") + "]"},
		{"Cooldown Seconds", string(pyFloat(a.CooldownSeconds))},
	} {
		w.Write(row)
	}
	w.Flush()
	return b.Bytes()
}

// pyFixed is Python's f"{v:.{d}f}" (inf, -inf, nan as it writes them).
func pyFixed(v float64, d int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}
