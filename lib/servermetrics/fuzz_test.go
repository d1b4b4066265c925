package servermetrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
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

// FuzzLoadJSONL feeds arbitrary server_metrics_export.jsonl streams to
// LoadJSONL (report reads them from run directories): it must never panic;
// what it accepts must report, and a line it refuses must name its line.
func FuzzLoadJSONL(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "golden", JSONLFile)); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"v":1,"endpoint_url":"http://t/metrics","timestamp_ns":1,"endpoint_latency_ns":2,"skipped_ticks":1,"types":{"h":"histogram"},"metrics":{"h":[{"histogram":{"1":1,"+Inf":"NaN"},"sum":1,"count":2}]}}` + "\n"))
	f.Add([]byte(`{"v":1,"endpoint_url":"http://t/metrics","timestamp_ns":1,"endpoint_latency_ns":0,"error":"HTTP 500"}` + "\n" + `{"v":1,"endpoint_url":"http://t/me`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, _, err := LoadJSONL(bytes.NewReader(b), "f.jsonl", Limits{MaxSeries: 100})
		if err != nil {
			var le *LineError
			if errors.As(err, &le) && le.Line < 1 {
				t.Fatalf("line %d in %v", le.Line, err)
			}
			return
		}
		r := c.Report(Window{Start: 0, End: 1 << 62})
		if err := WriteJSON(io.Discard, r, Meta{}); err != nil {
			t.Fatal(err)
		}
		if err := WriteCSV(io.Discard, r, Meta{}); err != nil {
			t.Fatal(err)
		}
	})
}
