package trace

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// capture builds one SageMaker Data Capture JSONL line.
func capture(id, when, input, inputEnc, output, outputEnc string) string {
	enc := func(s, e string) string {
		if e == "BASE64" {
			s = base64.StdEncoding.EncodeToString([]byte(s))
		}
		q, _ := json.Marshal(s)
		return fmt.Sprintf(`{"data": %s, "encoding": %q, "mode": "INPUT"}`, q, e)
	}
	out := ""
	if output != "" {
		out = `, "endpointOutput": ` + enc(output, outputEnc)
	}
	return fmt.Sprintf(`{"captureData": {"endpointInput": %s%s}, "eventMetadata": {"eventId": %q, "inferenceTime": %q}, "eventVersion": "0"}`,
		enc(input, inputEnc), out, id, when)
}

func TestSageMakerRows(t *testing.T) {
	t.Parallel()
	const f = "capture.jsonl"
	input := capture("b", "2026-04-29T00:03:20.5Z",
		`{"messages":[{"role":"user","content":"Second"}],"max_completion_tokens":7,"tools":[{"type":"function"}]}`, "BASE64",
		`{"usage":{"prompt_tokens":30,"completion_tokens":8}}`, "BASE64") + "\n" +
		capture("a", "2026-04-29T00:03:18Z",
			`{"messages": [{"role":"user","content":"Hello"}], "max_tokens": 50}`, "JSON",
			`{"usage":{"prompt_tokens":12}}`, "JSON") + "\n\n" +
		capture("c", "2026-04-29T02:03:18.000000001+02:00", // the same instant as "a", plus 1 ns
			`{"messages":[{"role":"system","content":"x"}]}`, "JSON", `a,b`, "CSV") + "\n"
	got := mustRead(t, f, input, Options{Type: TypeSageMaker})
	want := []Row{
		{Source: f, Line: 2, Seq: 1, HasTimestamp: true, TimestampNS: 0, InputLength: 12, HasOutputLength: true, OutputLength: 50,
			Messages: json.RawMessage(`[{"role":"user","content":"Hello"}]`)},
		{Source: f, Line: 4, Seq: 2, HasTimestamp: true, TimestampNS: 1,
			Messages: json.RawMessage(`[{"role":"system","content":"x"}]`)},
		{Source: f, Line: 1, Seq: 0, HasTimestamp: true, TimestampNS: 2500000000, InputLength: 30, HasOutputLength: true, OutputLength: 7,
			Messages: json.RawMessage(`[{"role":"user","content":"Second"}]`), Tools: json.RawMessage(`[{"type":"function"}]`)},
	}
	compareRows(t, "sagemaker", got, want)

	// Offsets apply to the zero-aligned times.
	got = mustRead(t, f, input, Options{Type: TypeSageMaker, StartOffsetNS: i64(1), EndOffsetNS: i64(2e9)})
	compareRows(t, "sagemaker offsets", got, want[1:2])
}

func TestSageMakerErrors(t *testing.T) {
	t.Parallel()
	const f = "c.jsonl"
	ok := capture("ok", "2026-01-01T00:00:00Z", `{"messages":[{"role":"user"}]}`, "JSON", "", "") + "\n"
	tests := []struct {
		input string
		line  int64
		field string
		msg   []string
	}{
		{ok + capture("ev-7", "2026-01-01T00:00:00Z", `{"prompt":"hi"}`, "JSON", "", ""), 2, "captureData.endpointInput",
			[]string{"capture record ev-7", "only OpenAI-compatible chat endpoints are supported"}},
		{capture("ev-8", "2026-01-01T00:00:00Z", `{"inputs":"hi"}`, "BASE64", "", ""), 1, "captureData.endpointInput", []string{"ev-8", "OpenAI-compatible"}},
		{capture("ev-9", "2026-01-01T00:00:00Z", `a,b,c`, "CSV", "", ""), 1, "captureData.endpointInput", []string{"ev-9", "OpenAI-compatible"}},
		{capture("ev-1", "yesterday", `{"messages":[{"role":"user"}]}`, "JSON", "", ""), 1, "eventMetadata.inferenceTime", []string{"ev-1", "ISO 8601"}},
		{`{"captureData": {}, "eventMetadata": {"eventId": "ev-2"}}`, 1, "eventMetadata.inferenceTime", []string{"ev-2", "missing"}},
		{`{"captureData": {}, "eventMetadata": {"eventId": "ev-3", "inferenceTime": "2026-01-01T00:00:00Z"}}`, 1, "captureData.endpointInput", []string{"ev-3", "missing"}},
		{`{"captureData": {"endpointInput": {"data": "%%%", "encoding": "BASE64"}}, "eventMetadata": {"eventId": "ev-4", "inferenceTime": "2026-01-01T00:00:00Z"}}`, 1, "captureData.endpointInput.data", []string{"ev-4", "base64"}},
		{capture("ev-5", "2026-01-01T00:00:00Z", `{"messages":[]}`, "JSON", "", ""), 1, "captureData.endpointInput.data.messages", []string{"ev-5", "non-empty"}},
		{capture("ev-6", "2026-01-01T00:00:00Z", `{"messages":[{"role":"user"}],"max_tokens":-1}`, "JSON", "", ""), 1, "captureData.endpointInput.data.max_tokens", []string{"ev-6", "negative"}},
		{capture("ev-10", "2026-01-01T00:00:00Z", `{"messages":[{"role":"user"}]}`, "JSON", `{"usage":{"prompt_tokens":"x"}}`, "JSON"), 1, "captureData.endpointOutput.data.usage.prompt_tokens", []string{"ev-10"}},
		{capture("ev-11", "2026-01-01T00:00:00Z", `{"messages":`, "JSON", "", ""), 1, "captureData.endpointInput.data", []string{"ev-11", "invalid JSON"}},
	}
	for _, tt := range tests {
		_, _, err := readString(f, tt.input, Options{Type: TypeSageMaker})
		checkError(t, tt.input, err, f, tt.line, tt.field, tt.msg...)
	}
}

func TestSageMakerDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	msg := func(s string) string { return fmt.Sprintf(`{"messages":[{"role":"user","content":%q}]}`, s) }
	// Files are read in sorted order, component by component: "a/…" before
	// "a-b.jsonl"; equal times keep that order.
	pa := write("a/2026/x.jsonl", capture("1", "2026-01-01T00:00:01Z", msg("one"), "JSON", "", "")+"\n"+
		capture("2", "2026-01-01T00:00:00Z", msg("two"), "JSON", "", "")+"\n")
	pb := write("a-b.jsonl", capture("3", "2026-01-01T00:00:01Z", msg("three"), "JSON", "", "")+"\n")
	write("a/notes.txt", "not a capture")

	for _, typ := range []string{TypeSageMaker, ""} {
		r, err := Open(dir, Options{Type: typ})
		if err != nil {
			t.Fatalf("Open(%q): %v", typ, err)
		}
		if r.Type() != TypeSageMaker {
			t.Errorf("Type() = %q, want %q", r.Type(), TypeSageMaker)
		}
		got, err := readRows(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := []Row{
			{Source: pa, Line: 2, Seq: 1, HasTimestamp: true, TimestampNS: 0, Messages: json.RawMessage(`[{"role":"user","content":"two"}]`)},
			{Source: pa, Line: 1, Seq: 0, HasTimestamp: true, TimestampNS: 1e9, Messages: json.RawMessage(`[{"role":"user","content":"one"}]`)},
			{Source: pb, Line: 1, Seq: 2, HasTimestamp: true, TimestampNS: 1e9, Messages: json.RawMessage(`[{"role":"user","content":"three"}]`)},
		}
		compareRows(t, "dir type="+typ, got, want)
	}

	empty := t.TempDir()
	if _, err := Open(empty, Options{Type: TypeSageMaker}); err == nil {
		t.Errorf("Open(empty dir): got no error")
	}
}

// TestSageMakerBodyOnOneLine: a captured body that was pretty-printed gives
// messages and tools on one line (records are JSONL), bytes otherwise kept.
func TestSageMakerBodyOnOneLine(t *testing.T) {
	t.Parallel()
	body := "{\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"a \\n b\"}\n  ],\n  \"tools\": [ {\"type\": \"function\"} ]\n}"
	for _, enc := range []string{"BASE64", "JSON"} {
		rows := mustRead(t, "c.jsonl", capture("e", "2026-01-01T00:00:00Z", body, enc, "", "")+"\n", Options{Type: TypeSageMaker})
		if got, want := string(rows[0].Messages), `[{"role":"user","content":"a \n b"}]`; got != want {
			t.Errorf("%s: messages %s, want %s", enc, got, want)
		}
		if got, want := string(rows[0].Tools), `[{"type":"function"}]`; got != want {
			t.Errorf("%s: tools %s, want %s", enc, got, want)
		}
	}
}

// TestSageMakerTimeRange: inferenceTime outside the int64 nanosecond range
// (years ~1678 to 2262), or captures too far apart to zero-align, are an
// error at file:line, not wrapped and reordered timestamps.
func TestSageMakerTimeRange(t *testing.T) {
	t.Parallel()
	body := `{"messages":[{"role":"user","content":"x"}]}`
	for _, tt := range []struct {
		name  string
		times []string
		line  int64
		msg   string
	}{
		{"before 1678", []string{"2026-01-01T00:00:00Z", "1600-01-01T00:00:00Z"}, 2, `"1600-01-01T00:00:00Z" is out of range (nanosecond times span 1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z)`},
		{"after 2262", []string{"2262-04-12T00:00:00Z"}, 1, "out of range"},
		{"zone pushes it out", []string{"2262-04-11T23:00:00-02:00"}, 1, "out of range"},
		{"too far apart", []string{"1900-01-01T00:00:00Z", "1700-01-01T00:00:00Z", "2200-01-01T00:00:00Z"}, 3, "more than 292 years after the earliest capture (c.jsonl:2)"},
	} {
		var in strings.Builder
		for i, when := range tt.times {
			in.WriteString(capture(fmt.Sprint("e", i), when, body, "JSON", "", "") + "\n")
		}
		_, _, err := readString("c.jsonl", in.String(), Options{Type: TypeSageMaker})
		checkError(t, tt.name, err, "c.jsonl", tt.line, "eventMetadata.inferenceTime", tt.msg)
	}
	// The edges themselves are fine.
	in := capture("a", "1677-09-21T00:12:43.145224192Z", body, "JSON", "", "") + "\n" + capture("b", "1677-09-21T00:12:44Z", body, "JSON", "", "") + "\n"
	rows := mustRead(t, "c.jsonl", in, Options{Type: TypeSageMaker})
	if rows[1].TimestampNS != 854775808 {
		t.Errorf("timestamp %d, want 854775808", rows[1].TimestampNS)
	}
}
