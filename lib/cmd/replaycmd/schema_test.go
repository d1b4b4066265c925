package replaycmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The schemas of testdata/aiperf are derived from the Python aiperf's
// export models (the commits are in their $comment): a drift of our
// exports from what aiperf's readers accept fails here.
const (
	exportSchemaID     = "https://github.com/aiperf/toolkit/aiperf-export.schema.json"
	timeslicesSchemaID = "https://github.com/aiperf/toolkit/aiperf-timeslices.schema.json"
)

func compileSchemas(t *testing.T) (export, timeslices *jsonschema.Schema) {
	t.Helper()
	c := jsonschema.NewCompiler()
	for id, name := range map[string]string{exportSchemaID: "profile_export_aiperf.schema.json", timeslicesSchemaID: "profile_export_aiperf_timeslices.schema.json"} {
		f, err := os.Open(filepath.Join("testdata", "aiperf", name))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var err error
	if export, err = c.Compile(exportSchemaID); err != nil {
		t.Fatal(err)
	}
	if timeslices, err = c.Compile(timeslicesSchemaID); err != nil {
		t.Fatal(err)
	}
	return export, timeslices
}

func validateFile(t *testing.T, sch *jsonschema.Schema, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := validateBytes(sch, b); err != nil {
		t.Errorf("%s does not validate against the aiperf schema: %v\n%s", path, err, b)
	}
}

func validateBytes(sch *jsonschema.Schema, b []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// inputConfigOf returns the input_config member of an export, as written.
func inputConfigOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(m["input_config"])
}

// Real runs against the mock, in each schedule and with the settings that
// reach input_config, write exports aiperf's models accept, and report
// over their records writes the same input_config.
func TestExportsMatchAiperfSchema(t *testing.T) {
	export, timeslices := compileSchemas(t)
	url := mockURL(t)
	st := storeOf(t, true, true, false)
	for _, tc := range []struct {
		name string
		args []string
		want []string // in input_config
		// wantError is in the export's error_summary (aiperf's indent)
		wantError string
	}{
		{"rate", []string{"--rate", "200", "--arrival", "gamma", "--smoothness", "2", "--request-count", "6", "--warmup", "1",
			"--duration", "20s", "--grace", "1s", "--cancel-rate", "50", "--cancel-after", "0", "--timeout", "10s", "--seed", "7",
			"--goodput", "time_to_first_token:100 request_latency:300", "--slice-duration", "1s"},
			[]string{`"request_rate":200`, `"arrival_pattern":"gamma"`, `"arrival_smoothness":2`, `"request_count":6`, `"warmup_request_count":1`,
				`"benchmark_duration":20`, `"benchmark_grace_period":1`, `"request_cancellation_rate":50`, `"request_cancellation_delay":0`,
				`"timeout_seconds":10`, `"random_seed":7`, `"goodput":"time_to_first_token:100 request_latency:300"`, `"slice_duration":1`}, ""},
		{"concurrency", []string{"--concurrency", "2", "--request-count", "4", "--slice-duration", "500ms", "--steady-state", "--connection-reuse", "sticky", "--session-header", "X-S"},
			[]string{`"concurrency":2`, `"arrival_pattern":"concurrency_burst"`, `"request_count":4`, `"slice_duration":0.5`, `"connection_reuse_strategy":"sticky-user-sessions"`}, ""},
		{"errors", []string{"-H", "X-Mock-Fault: 503", "--slice-duration", "1s", "--max-error-rate", "100"},
			[]string{`"concurrency":1`, `"request_count":2`}, `"code": 503,` + "\n" + `        "type": "Service Unavailable",`},
		{"custom path", []string{"--path", "/custom/chat", "--slice-duration", "1s", "--max-error-rate", "100"},
			[]string{`"custom_endpoint":"/custom/chat"`}, `"code": 404,` + "\n" + `        "type": "Not Found",`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"-q", "--url", url, "-o", out}, tc.args...)
			if stderr, code := run(t, append(args, st)...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			validateFile(t, export, filepath.Join(out, exportJSONFile))
			validateFile(t, timeslices, filepath.Join(out, timeslicesJSONFile))
			var compact bytes.Buffer
			cfg := inputConfigOf(t, filepath.Join(out, exportJSONFile))
			if err := json.Compact(&compact, []byte(cfg)); err != nil {
				t.Fatal(err)
			}
			for _, w := range append(tc.want, `"model_names":["m"]`, `"type":"chat"`, `"streaming":true`, `"urls":["`+url+`"]`,
				`"artifact_directory":"`+out+`"`) {
				if !strings.Contains(compact.String(), w) {
					t.Errorf("input_config lacks %s:\n%s", w, compact.String())
				}
			}
			var top map[string]json.RawMessage
			b, _ := os.ReadFile(filepath.Join(out, exportJSONFile))
			json.Unmarshal(b, &top)
			var info struct {
				BenchmarkID string `json:"benchmark_id"`
				RandomSeed  *int64 `json:"random_seed"`
			}
			if err := json.Unmarshal(top["run_info"], &info); err != nil || info.BenchmarkID == "" || string(top["benchmark_id"]) != `"`+info.BenchmarkID+`"` || info.RandomSeed == nil {
				t.Errorf("run_info %s (%v), want the benchmark_id %s and the seed", top["run_info"], err, top["benchmark_id"])
			}
			if tc.wantError != "" {
				b, _ := os.ReadFile(filepath.Join(out, exportJSONFile))
				if !bytes.Contains(b, []byte(tc.wantError)) {
					t.Errorf("error_summary lacks %s:\n%s", tc.wantError, b)
				}
			}

			rep := filepath.Join(t.TempDir(), "report")
			slice := "1s"
			if tc.name == "concurrency" {
				slice = "500ms"
			}
			if stderr, code := run(t, "report", "-o", rep, "--slice-duration", slice, out); code != 0 {
				t.Fatalf("report: exit %d: %s", code, stderr)
			}
			validateFile(t, export, filepath.Join(rep, exportJSONFile))
			validateFile(t, timeslices, filepath.Join(rep, timeslicesJSONFile))
			if got := inputConfigOf(t, filepath.Join(rep, exportJSONFile)); got != cfg {
				t.Errorf("report's input_config differs from the run's:\n%s\nrun's:\n%s", got, cfg)
			}
		})
	}
}

// The schema refuses what aiperf's models refuse, so the test above can
// fail: each mutation of a valid export is rejected.
func TestAiperfSchemaRejects(t *testing.T) {
	export, _ := compileSchemas(t)
	valid := `{"schema_version":"1.1","request_latency":{"unit":"ms","avg":1,"p50":1,"count":3,"sum":3},"input_config":{"endpoint":{"model_names":["m"],"type":"chat"},"loadgen":{"concurrency":1}},"error_summary":[{"error_details":{"code":500,"type":"Internal Server Error","message":"x"},"count":1}],"start_time":"2026-12-03T21:50:59.123456"}`
	if err := validateBytes(export, []byte(valid)); err != nil {
		t.Fatalf("the valid export is refused: %v", err)
	}
	for name, bad := range map[string]string{
		"flat config (the old shape)":  `{"input_config":{"tool":"aiperf-replay","endpoint":"","concurrency":0}}`,
		"no model_names":               `{"input_config":{"endpoint":{"type":"chat"}}}`,
		"concurrency 0":                `{"input_config":{"endpoint":{"model_names":[]},"loadgen":{"concurrency":0}}}`,
		"grace without duration":       `{"input_config":{"endpoint":{"model_names":[]},"loadgen":{"benchmark_grace_period":30}}}`,
		"smoothness without gamma":     `{"input_config":{"endpoint":{"model_names":[]},"loadgen":{"arrival_pattern":"poisson","arrival_smoothness":2}}}`,
		"unknown arrival":              `{"input_config":{"endpoint":{"model_names":[]},"loadgen":{"arrival_pattern":"burst"}}}`,
		"our reuse name, not aiperf's": `{"input_config":{"endpoint":{"model_names":[],"connection_reuse_strategy":"sticky"}}}`,
		"fixed schedule without file":  `{"input_config":{"endpoint":{"model_names":[]},"input":{"fixed_schedule":true}}}`,
		"unknown statistic":            `{"request_latency":{"unit":"ms","p999":1}}`,
		"metric without unit":          `{"request_latency":{"avg":1}}`,
		"error without message":        `{"error_summary":[{"error_details":{"code":500},"count":1}]}`,
		"datetime":                     `{"start_time":"03/12/2026"}`,
		"run_info member unknown":      `{"run_info":{"seed":1}}`,
		"run_info seed negative":       `{"run_info":{"random_seed":-1}}`,
		"goodput as a dict":            `{"input_config":{"endpoint":{"model_names":[]},"input":{"goodput":{"request_latency":300}}}}`,
		"endpoint type aiperf lacks":   `{"input_config":{"endpoint":{"model_names":[],"type":"responses"}}}`,
	} {
		if err := validateBytes(export, []byte(bad)); err == nil {
			t.Errorf("%s: accepted %s", name, bad)
		}
	}
}
