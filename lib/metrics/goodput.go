package metrics

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SLO is one service level objective of a goodput definition: a per-request
// metric and a threshold in the metric's display unit (ms for times,
// tokens/sec/user for throughput per user).
type SLO struct {
	Tag   string
	Value float64
}

// Goodput is a set of SLOs; a request is good when it meets all of them.
type Goodput []SLO

// ParseGoodput parses aiperf's --goodput syntax: space-separated KEY:VALUE
// pairs, KEY a per-request metric tag and VALUE a number in its display unit,
// e.g. "time_to_first_token:100 inter_token_latency:3.4". A key given twice
// is refused: aiperf's dict would keep the last value without a word, and a
// user who wrote two thresholds meant one of them.
func ParseGoodput(s string) (Goodput, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("goodput: expected space-separated 'key:value' pairs (e.g. 'time_to_first_token:100 inter_token_latency:3.4'), got an empty string")
	}
	var g Goodput
	for _, item := range strings.Fields(s) {
		key, val, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("goodput: %q is not in 'key:value' format", item)
		}
		if key == "" {
			return nil, fmt.Errorf("goodput: %q has an empty key", item)
		}
		if val == "" {
			return nil, fmt.Errorf("goodput: %q has an empty value", item)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(v) {
			return nil, fmt.Errorf("goodput: value for %q must be numeric, got %q", key, val)
		}
		i, known := byTag[key]
		if !known || defs[i].has(flagInternal) {
			return nil, fmt.Errorf("goodput: unknown metric tag %q", key)
		}
		if !i.info().PerRequest {
			return nil, fmt.Errorf("goodput: metric %q is not a per-request metric; use one such as time_to_first_token, inter_token_latency or request_latency", key)
		}
		for _, prev := range g {
			if prev.Tag == key {
				return nil, fmt.Errorf("goodput: %q is given twice (%s:%s and %s); give one threshold per metric",
					key, key, strconv.FormatFloat(prev.Value, 'g', -1, 64), item)
			}
		}
		g = append(g, SLO{Tag: key, Value: v})
	}
	return g, nil
}

// String formats g in the syntax ParseGoodput reads.
func (g Goodput) String() string {
	var b strings.Builder
	for i, s := range g {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.Tag)
		b.WriteByte(':')
		b.WriteString(strconv.FormatFloat(s.Value, 'g', -1, 64))
	}
	return b.String()
}

// slo is an SLO resolved against the registry, its threshold in the base
// unit (aiperf converts display to base: 100 ms -> 1e8 ns).
type slo struct {
	id        id
	threshold float64
	floor     bool // larger is better: pass when value >= threshold
}

func (s slo) pass(v float64) bool {
	if s.floor {
		return v >= s.threshold
	}
	return v <= s.threshold
}

// resolve checks g against the options and converts its thresholds.
func (g Goodput) resolve(streaming bool) ([]slo, error) {
	var out []slo
	var notApplicable []string
	for _, s := range g {
		i, ok := byTag[s.Tag]
		if !ok || !i.info().PerRequest {
			return nil, fmt.Errorf("goodput: %q is not a per-request metric", s.Tag)
		}
		d := &defs[i]
		if d.has(flagStreaming) && !streaming {
			notApplicable = append(notApplicable, s.Tag)
			continue
		}
		out = append(out, slo{id: i, threshold: s.Value * convFactor(d.disp, d.unit), floor: d.has(flagLargerIsBetter)})
	}
	if len(notApplicable) > 0 {
		return nil, fmt.Errorf("goodput: metric(s) %s are not applicable to non-streaming requests", strings.Join(notApplicable, ", "))
	}
	return out, nil
}
