package replaycmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/result"
)

// The records' config is outside bytes (a records file can be edited):
// whatever it holds, input_config and run_info are JSON objects or absent,
// never a panic.
func FuzzAiperfInputConfig(f *testing.F) {
	f.Add([]byte(`{"rate":50,"arrival":"gamma","smoothness":2,"seed":3,"goodput":"time_to_first_token:100","duration":"10s","grace":"1s"}`), "rate")
	f.Add([]byte(`{"concurrency":-4,"request_count":-1,"cancel_rate":250,"cancel_after":"x","timeout":"-1s"}`), "concurrency")
	f.Add([]byte(`{"goodput":"a:NaN b:inf","seed":-1,"slice_duration":"1e400ms"}`), "fixed")
	f.Add([]byte(`{"rate":"fast","concurrency":1e300}`), "rate")
	f.Fuzz(func(t *testing.T, cfg []byte, schedule string) {
		if !json.Valid(cfg) {
			return
		}
		ri := &result.RunInfo{ID: "id", URL: "http://h", Endpoint: "chat", Model: "m", Schedule: schedule, Config: cfg}
		for _, b := range []json.RawMessage{aiperfInputConfig(ri, &reportMade{slice: time.Second}, "id", 3), aiperfRunInfo(ri, "id")} {
			if b == nil {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("not a JSON object: %v: %s", err, b)
			}
		}
	})
}

// A run's settings map onto aiperf's names; what aiperf would refuse is
// left out.
func TestAiperfInputConfig(t *testing.T) {
	for _, tc := range []struct {
		name, schedule, cfg, want string
	}{
		{"rate", "rate", `{"rate":2.5,"arrival":"constant","concurrency":0,"seed":0,"output":"out"}`,
			`{"endpoint":{"model_names":["m"],"type":"chat","streaming":false,"url":"http://h","urls":["http://h"]},"input":{"random_seed":0},"output":{"artifact_directory":"out"},"loadgen":{"request_rate":2.5,"arrival_pattern":"constant"},"benchmark_id":"id","aiperf_replay":{"store":{"path":"","records":0,"sessions":0},"schedule":"rate","settings":{"rate":2.5,"arrival":"constant","concurrency":0,"seed":0,"output":"out"}}}`},
		{"grace without duration, smoothness without gamma, bad goodput", "rate", `{"rate":1,"arrival":"poisson","smoothness":3,"grace":"30s","goodput":"x:NaN"}`,
			`{"endpoint":{"model_names":["m"],"type":"chat","streaming":false,"url":"http://h","urls":["http://h"]},"loadgen":{"request_rate":1,"arrival_pattern":"poisson"},"benchmark_id":"id","aiperf_replay":{"store":{"path":"","records":0,"sessions":0},"schedule":"rate","settings":{"rate":1,"arrival":"poisson","smoothness":3,"grace":"30s","goodput":"x:NaN"}}}`},
		{"fixed: offsets stay ours", "fixed", `{"start_offset":"100","concurrency":3}`,
			`{"endpoint":{"model_names":["m"],"type":"chat","streaming":false,"url":"http://h","urls":["http://h"]},"loadgen":{"concurrency":3},"benchmark_id":"id","aiperf_replay":{"store":{"path":"","records":0,"sessions":0},"schedule":"fixed","settings":{"start_offset":"100","concurrency":3}}}`},
		{"connection reuse: aiperf's strategy; the session header has no place", "concurrency", `{"connection_reuse":"sticky","session_header":"X-S"}`,
			`{"endpoint":{"model_names":["m"],"type":"chat","streaming":false,"url":"http://h","urls":["http://h"],"connection_reuse_strategy":"sticky-user-sessions"},"loadgen":{"concurrency":1,"arrival_pattern":"concurrency_burst"},"benchmark_id":"id","aiperf_replay":{"store":{"path":"","records":0,"sessions":0},"schedule":"concurrency","settings":{"connection_reuse":"sticky","session_header":"X-S"}}}`},
		{"pooled is the default", "concurrency", `{"connection_reuse":"pooled"}`,
			`{"endpoint":{"model_names":["m"],"type":"chat","streaming":false,"url":"http://h","urls":["http://h"]},"loadgen":{"concurrency":1,"arrival_pattern":"concurrency_burst"},"benchmark_id":"id","aiperf_replay":{"store":{"path":"","records":0,"sessions":0},"schedule":"concurrency","settings":{"connection_reuse":"pooled"}}}`},
	} {
		ri := &result.RunInfo{ID: "id", URL: "http://h", Path: "/v1/chat/completions", Endpoint: "chat", Model: "m", Schedule: tc.schedule, Config: []byte(tc.cfg)}
		if got := string(aiperfInputConfig(ri, nil, "id", 0)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// What aiperf's own UserConfig refused or misread (issue 30 items 16, 17):
// --goodput is the string its parser reads, a fixed schedule says so with
// its file, a run without a count of its own writes the requests it
// counted, and an endpoint aiperf 0.6.0's enum lacks is its template
// endpoint at the path sent to.
func TestAiperfInputConfigAiperfReads(t *testing.T) {
	for _, tc := range []struct {
		name, schedule, endpoint, path, cfg string
		profiled                            int64
		want                                []string
	}{
		{"goodput", "concurrency", "chat", "/v1/chat/completions", `{"goodput":" time_to_first_token:100   request_latency:300 "}`, 4,
			[]string{`"input":{"goodput":"time_to_first_token:100 request_latency:300"}`}},
		{"fixed", "fixed", "chat", "/v1/chat/completions", `{"concurrency":3}`, 40,
			[]string{`"input":{"file":"/data/s.aipk","fixed_schedule":true}`, `"loadgen":{"concurrency":3,"request_count":40}`}},
		{"rate without a count", "rate", "chat", "/v1/chat/completions", `{"rate":5}`, 12,
			[]string{`"loadgen":{"request_rate":5,"request_count":12}`}},
		{"a count given stays", "rate", "chat", "/v1/chat/completions", `{"rate":5,"request_count":6}`, 5,
			[]string{`"request_count":6`}},
		{"a duration: no count", "concurrency", "chat", "/v1/chat/completions", `{"concurrency":2,"duration":"10s"}`, 70,
			[]string{`"loadgen":{"benchmark_duration":10,"concurrency":2,"arrival_pattern":"concurrency_burst"}`}},
		{"responses", "concurrency", "responses", "/v1/responses", `{}`, 1,
			[]string{`"custom_endpoint":"/v1/responses","type":"template"`, `"schedule":"concurrency","endpoint":"responses"`}},
		{"messages", "concurrency", "messages", "/v1/messages", `{}`, 1,
			[]string{`"custom_endpoint":"/v1/messages","type":"template"`, `"endpoint":"messages"`}},
		{"raw", "concurrency", "raw", "/gen", `{}`, 1,
			[]string{`"custom_endpoint":"/gen","type":"template"`, `"endpoint":"raw"`}},
	} {
		ri := &result.RunInfo{ID: "id", URL: "http://h", Path: tc.path, Endpoint: tc.endpoint, Model: "m", Schedule: tc.schedule,
			Store: result.StoreInfo{Path: "/data/s.aipk"}, Config: []byte(tc.cfg)}
		got := string(aiperfInputConfig(ri, nil, "id", tc.profiled))
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: lacks %s:\n%s", tc.name, w, got)
			}
		}
	}
}
