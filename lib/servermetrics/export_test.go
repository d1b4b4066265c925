package servermetrics

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden (then review the diff)")

// handlerTransport serves requests from a handler, without a network: the
// target's URL stays the same in the golden files.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// TestExportsGolden writes the three exports of a fixed run of the fake
// exporter (6 scrapes 1 s apart, the window between the second and the
// fifth) and compares them with testdata/golden.
func TestExportsGolden(t *testing.T) {
	at := func(k int) time.Time { return time.Unix(1_700_000_000, 5e8).Add(time.Duration(k) * time.Second) }
	clk := &setClock{t: at(0)}
	var jsonl bytes.Buffer
	c := manual(t, Options{Targets: []string{"http://engine:8000/metrics"}, Now: clk.now, JSONL: &jsonl,
		Client: &http.Client{Transport: handlerTransport{&fakeVLLM{}}}})
	for k := 1; k <= 4; k++ {
		clk.set(at(k))
		c.scrapeAll(context.Background(), true)
	}
	clk.set(at(5))
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := c.Report(Window{Start: at(1).UnixNano() - 3e8, End: at(4).UnixNano() + 2e8})
	m := Meta{Version: "aiperf-replay test", BenchmarkID: "00000000-0000-0000-0000-000000000000"}
	var js, csv bytes.Buffer
	if err := WriteJSON(&js, r, m); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&csv, r, m); err != nil {
		t.Fatal(err)
	}
	var any map[string]any
	if err := json.Unmarshal(js.Bytes(), &any); err != nil {
		t.Fatalf("%s is not JSON: %v", JSONFile, err)
	}
	for _, line := range bytes.Split(bytes.TrimSuffix(jsonl.Bytes(), []byte("\n")), []byte("\n")) {
		if !json.Valid(line) {
			t.Fatalf("invalid JSONL line %s", line)
		}
	}
	// The JSONL stream alone rebuilds the same exports (the scrape agent's
	// way: LoadJSONL).
	lc, cut, err := LoadJSONL(bytes.NewReader(jsonl.Bytes()), JSONLFile, DefaultLimits)
	if err != nil || cut != 0 {
		t.Fatalf("LoadJSONL: %v (%d cut)", err, cut)
	}
	lc.SetAgentStats(c.AgentStats())
	lr := lc.Report(Window{Start: at(1).UnixNano() - 3e8, End: at(4).UnixNano() + 2e8})
	var ljs, lcsv bytes.Buffer
	if err := WriteJSON(&ljs, lr, m); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&lcsv, lr, m); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ljs.Bytes(), js.Bytes()) || !bytes.Equal(lcsv.Bytes(), csv.Bytes()) {
		t.Errorf("the exports rebuilt from the JSONL differ from the collector's:\n%s\n%s", ljs.Bytes(), lcsv.Bytes())
	}
	if got, want := fmt.Sprint(Warnings(lr)), fmt.Sprint(Warnings(r)); got != want {
		t.Errorf("warnings rebuilt from the JSONL: %s, want %s", got, want)
	}
	for _, g := range []struct {
		name string
		got  []byte
	}{{JSONFile, js.Bytes()}, {CSVFile, csv.Bytes()}, {JSONLFile, jsonl.Bytes()}} {
		path := filepath.Join("testdata", "golden", g.name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, g.got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(g.got, want) {
			t.Errorf("%s differs from %s (run with -update, then review the diff):\n%s", g.name, path, g.got)
		}
	}
}

// Units as aiperf's infer_unit names them: a range the HELP states wins
// over the suffix (vLLM's KV-cache usage is a ratio, not a percent), then a
// unit it names, then the longest suffix.
func TestInferUnit(t *testing.T) {
	for _, tc := range []struct{ name, help, want string }{
		{"vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", "ratio"},
		{"vllm:gpu_cache_usage_perc", "GPU KV-cache usage.", "percent"},
		{"hit_percent", "Hit rate (0.0-1.0)", "ratio"},
		{"util", "Utilization (0-100)", "percent"},
		{"latency", "Request latency in milliseconds", "milliseconds"},
		{"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", "megabytes"},
		{"vllm:prompt_tokens_total", "Number of prefill tokens processed.", "tokens"},
		{"vllm:request_success_total", "Count of successfully processed requests.", "count"},
		{"vllm:num_requests_running", "Number of requests in model execution batches.", "requests"},
		{"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", "seconds"},
		{"tput", "Throughput (tokens/s)", "tokens/s"},
		{"x_10-100", "", ""},
	} {
		if got := inferUnit(tc.name, tc.help); got != tc.want {
			t.Errorf("inferUnit(%q, %q) = %q, want %q", tc.name, tc.help, got, tc.want)
		}
	}
}
