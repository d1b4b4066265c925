package trace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

const inputsDoc = `{
  "data": [
    {
      "session_id": "s-1",
      "payloads": [
        {"messages": [{"role": "user", "content": "hi"}], "model": "m"},
        {
          "messages": [{"role": "user", "content": "again,  \n { \u0041 }"}]
        }
      ]
    },
    {"session_id": "s-2", "payloads": [{"prompt": "x"}], "extra": 1}
  ],
  "other": true
}
`

func TestInputsJSON(t *testing.T) {
	t.Parallel()
	const f = "inputs.json"
	// Payloads are re-emitted on one line (records are JSONL): the white
	// space between tokens goes, every other byte stays.
	want := []Row{
		{Source: f, Line: 1, Seq: 0, SessionID: "s-1", Turn: 0, Payload: json.RawMessage(`{"messages":[{"role":"user","content":"hi"}],"model":"m"}`)},
		{Source: f, Line: 2, Seq: 1, SessionID: "s-1", Turn: 1, Payload: json.RawMessage(`{"messages":[{"role":"user","content":"again,  \n { \u0041 }"}]}`)},
		{Source: f, Line: 3, Seq: 2, SessionID: "s-2", Turn: 0, Payload: json.RawMessage(`{"prompt":"x"}`)},
	}
	// Explicit, and detected from the whole (pretty-printed) document.
	for _, typ := range []string{TypeInputsJSON, ""} {
		rows, r, err := readString(f, inputsDoc, Options{Type: typ})
		if err != nil {
			t.Fatalf("type %q: %v", typ, err)
		}
		if r.Type() != TypeInputsJSON {
			t.Errorf("Type() = %q, want %q", r.Type(), TypeInputsJSON)
		}
		compareRows(t, "inputs_json type="+typ, rows, want)
	}
	// Open on a file, detected.
	p := filepath.Join(t.TempDir(), f)
	if err := os.WriteFile(p, []byte(inputsDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows, err := readRows(r)
	if err != nil || len(rows) != 3 || r.Type() != TypeInputsJSON {
		t.Errorf("Open(%s): %d rows, type %q, err %v; want 3 rows of inputs_json", p, len(rows), r.Type(), err)
	}
}

func TestInputsJSONErrors(t *testing.T) {
	t.Parallel()
	const f = "in.json"
	tests := []struct {
		input string
		line  int64
		field string
		msg   string
	}{
		{"{\n  \"data\": [\n    {\"session_id\": \"a\", \"payloads\": []}\n  ]\n}", 3, "data[0].payloads", "at least one payload"},
		{"{\n  \"data\": [\n    {\"session_id\": \"a\",\n     \"payloads\": [{}, 5]}\n  ]\n}", 4, "data[0].payloads[1]", "must be an object, got number"},
		{"{\"data\": [\n{\"payloads\": [{}]}]}", 2, "data[0].session_id", "required"},
		{"{\"data\": [\n{\"session_id\": 1, \"payloads\": [{}]}]}", 2, "data[0].session_id", "must be a string"},
		{"{\"data\": [{\"session_id\": \"a\"}]}", 1, "data[0].payloads", "required"},
		{"{\"data\": [{\"session_id\": \"a\", \"payloads\": {}}]}", 1, "data[0].payloads", "must be an array"},
		{"{\"data\": [\n{\"session_id\": \"a\", \"payloads\": [{}]},\n{\"session_id\": \"a\", \"payloads\": [{}]}]}", 3, "data[1].session_id", "duplicate session \"a\" (first at line 2)"},
		{"{\"data\": [1]}", 1, "data[0]", "must be an object"},
		{"{\"data\": {}}", 1, "data", "must be an array"},
		{"{\"rows\": []}", 1, "data", "required"},
		{"[1]", 1, "", "must be a JSON object"},
		{"{\n\"data\": [\n,]}", 3, "", "invalid JSON"},
		{"   ", 0, "", "empty document"},
	}
	for _, tt := range tests {
		_, _, err := readString(f, tt.input, Options{Type: TypeInputsJSON})
		checkError(t, tt.input, err, f, tt.line, tt.field, tt.msg)
	}
}
