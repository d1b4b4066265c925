package servermetrics

import (
	"encoding/json"
	"testing"
)

// FuzzParse feeds arbitrary pages to the parse path: it must never panic,
// must keep the series limit, and what it accepts must export as valid
// JSONL lines.
func FuzzParse(f *testing.F) {
	f.Add([]byte("# TYPE a counter\na_total{x=\"1\"} 3\n"), "text/plain; version=0.0.4")
	f.Add([]byte("# TYPE h histogram\nh_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0.3\nh_count 2\n"), "text/plain")
	f.Add([]byte("# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 4\ns_count 2\n# EOF\n"), "application/openmetrics-text; version=1.0.0")
	lim := Limits{MaxBody: 1 << 20, MaxLine: 4096, MaxSeries: 100}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		p, err := Parse(body, contentType, lim)
		if err != nil {
			return
		}
		if p.Series > lim.MaxSeries {
			t.Fatalf("%d series kept, limit %d", p.Series, lim.MaxSeries)
		}
		line := AppendLine(nil, "http://t/metrics", 1, 2, p, nil)
		if !json.Valid(line) {
			t.Fatalf("invalid JSONL line %q", line)
		}
		s := newSeries()
		s.add(1, 0, p, lim.MaxSeries)
		if len(s.cols) > lim.MaxSeries {
			t.Fatalf("%d columns, limit %d", len(s.cols), lim.MaxSeries)
		}
	})
}
