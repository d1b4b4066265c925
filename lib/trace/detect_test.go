package trace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		first string
		want  string
	}{
		{`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1]}`, TypeMooncake},
		{`{"text_input": "hi"}`, TypeMooncake},
		{`{"payload": {"prompt": "x"}}`, TypeMooncake},
		{`{"messages": [{"role": "user"}], "timestamp": 5}`, TypeMooncake},
		{`{"session_id": "s", "messages": [{"role": "user"}]}`, TypeMooncake},
		{`{"chat_id": 159, "parent_chat_id": -1, "timestamp": 61.114, "input_length": 521, "output_length": 132, "turn": 1}`, TypeBailian},
		{`{"captureData": {"endpointInput": {}}, "eventMetadata": {}}`, TypeSageMaker},
		{`{"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 5}`, TypeRawPayload},
		{`{"data": [{"session_id": "a", "payloads": [{}]}]}`, TypeInputsJSON},
		{`{"text": "hello"}`, TypeSingleTurn},
		{`{"images": ["https://x.test/a.png"], "delay": 5}`, TypeSingleTurn},
		{`{"session_id": "s", "turns": [{"text": "hi"}]}`, TypeMultiTurn},
		{"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type", TypeBurstGPT},
		{"\"Timestamp\",\"Request tokens\",\"Response tokens\"\r\n", TypeBurstGPT},
		{"\xef\xbb\xbf" + `{"input_length": 1}`, TypeMooncake},
		{"  \t" + `{"text": "x"}` + "\r\n", TypeSingleTurn},
	}
	for _, tt := range tests {
		got, err := Detect([]byte(tt.first))
		if err != nil || got != tt.want {
			t.Errorf("Detect(%q) = %q, %v; want %q", tt.first, got, err, tt.want)
		}
	}
}

func TestDetectErrors(t *testing.T) {
	t.Parallel()
	for _, first := range []string{
		``,
		`   `,
		`{"foo": 1, "bar": 2}`,
		`{"messages": "x"}`,
		`{"messages": [], "conversation_id": "c"}`,
		`{"data": [1, 2]}`,
		`[{"input_length": 1}]`,
		`{"input_length": 1`,
		`Timestamp,Request tokens`,
		`42`,
	} {
		if got, err := Detect([]byte(first)); err == nil {
			t.Errorf("Detect(%q) = %q, want an error", first, got)
		}
	}
}

// TestAutoDetectStream checks that every format is detected on a stream and
// then decoded from its first byte.
func TestAutoDetectStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		input string
		want  string
		rows  int
	}{
		{"\n" + `{"input_length": 1}` + "\n" + `{"input_length": 2}`, TypeMooncake, 2},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 5, "output_length": 9}`, TypeBailian, 1},
		{"Timestamp,Request tokens,Response tokens\n1,2,3\n", TypeBurstGPT, 1},
		{capture("e", "2026-01-01T00:00:00Z", `{"messages":[{"role":"user"}]}`, "JSON", "", ""), TypeSageMaker, 1},
		{`{"messages": [{"role": "user"}]}` + "\n" + `{"prompt": "no messages, still a body"}`, TypeRawPayload, 2},
		{inputsDoc, TypeInputsJSON, 3},
		{`{"text": "a"}` + "\n" + `{"text": "b"}`, TypeSingleTurn, 2},
		{`{"turns": [{"text": "a"}, {"text": "b"}]}`, TypeMultiTurn, 2},
	}
	for _, tt := range tests {
		rows, r, err := readString("in", tt.input, Options{})
		if err != nil {
			t.Errorf("input %q: %v", tt.input, err)
			continue
		}
		if r.Type() != tt.want || len(rows) != tt.rows {
			t.Errorf("input %q: type %q with %d rows, want %q with %d", tt.input, r.Type(), len(rows), tt.want, tt.rows)
		}
	}
}

func TestAutoDetectErrors(t *testing.T) {
	t.Parallel()
	_, _, err := readString("odd.jsonl", "\n\n"+`{"foo": 1}`+"\n", Options{})
	checkError(t, "unknown record", err, "odd.jsonl", 3, "", "cannot detect the trace type", "foo")

	_, _, err = readString("bad.jsonl", `{"input_length": 1`+"\n"+`{"input_length": 2}`, Options{})
	checkError(t, "malformed first line", err, "bad.jsonl", 1, "", "invalid JSON")

	_, _, err = readString("empty.jsonl", "\n \n", Options{})
	checkError(t, "empty", err, "empty.jsonl", 0, "", "empty input")

	_, _, err = readString("x", `{"input_length": 1}`, Options{Type: "mooncake"})
	if !errors.Is(err, ErrUnknownType) || !strings.Contains(err.Error(), `"mooncake"`) {
		t.Errorf("unknown type: got %v, want ErrUnknownType naming it", err)
	}
	if _, err := Open("-", Options{}); err == nil {
		t.Errorf("Open(\"-\"): got no error")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.jsonl"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing): got %v, want os.ErrNotExist", err)
	}
}

func TestOpenFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, []byte("\xef\xbb\xbf{\"input_length\": 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readRows(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	compareRows(t, p, rows, []Row{{Source: p, Line: 1, InputLength: 3}})
}
