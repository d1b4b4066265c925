package metrics

import "github.com/aiperf/toolkit/lib/result"

// RequestMetrics computes one request's metrics at a time, by the
// definitions Summarize and profile_export.jsonl use, for a caller that
// needs them per request (the HTML report's charts over time). Not safe for
// concurrent use.
type RequestMetrics struct {
	ev evaluator
	x  values
}

// NewRequestMetrics computes metrics under o.
func NewRequestMetrics(o Options) (*RequestMetrics, error) {
	ev, err := o.evaluator()
	if err != nil {
		return nil, err
	}
	return &RequestMetrics{ev: ev}, nil
}

// Eval computes r's metrics, replacing the previous request's. It reports
// whether r counts as a successful request (aiperf's valid record); a
// warmup record is evaluated like any other, the caller skips it.
func (m *RequestMetrics) Eval(r *result.Record) bool {
	m.ev.eval(r, &m.x)
	return m.x.valid
}

// Value returns the metric tag of the request last evaluated, in its
// display unit (ms for times), and whether the request has a value of it.
func (m *RequestMetrics) Value(tag string) (float64, bool) {
	i, ok := byTag[tag]
	if !ok || i >= numRecord || !m.x.ok(i) {
		return 0, false
	}
	d := &defs[i]
	return m.x.v[i] * convFactor(d.unit, d.disp), true
}

// Error returns the error of the request last evaluated when it failed
// (InvalidInferenceResultError for an answer without content, as in the
// error summary), else nil.
func (m *RequestMetrics) Error() *result.Error {
	if m.x.valid {
		return nil
	}
	return m.x.err
}
