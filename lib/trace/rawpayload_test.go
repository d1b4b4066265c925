package trace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRawPayloadFile(t *testing.T) {
	t.Parallel()
	const f = "bodies.jsonl"
	input := "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"a<b\"}],  \"max_tokens\": 5}\r\n" +
		"\n" +
		"  {\"prompt\":\"x\"}  \n" +
		"{}"
	got := mustRead(t, f, input, Options{Type: TypeRawPayload})
	want := []Row{
		{Source: f, Line: 1, Seq: 0, Payload: json.RawMessage(`{"model": "m", "messages": [{"role": "user", "content": "a<b"}],  "max_tokens": 5}`)},
		{Source: f, Line: 3, Seq: 1, Payload: json.RawMessage(`{"prompt":"x"}`)},
		{Source: f, Line: 4, Seq: 2, Payload: json.RawMessage(`{}`)},
	}
	compareRows(t, "raw_payload", got, want)

	for _, tt := range []struct {
		input string
		line  int64
		msg   string
	}{
		{`{"a":1}` + "\n" + `[{"a":1}]`, 2, "must be a JSON object, got array"},
		{`"body"`, 1, "must be a JSON object, got string"},
		{`{"a":1}` + "\n\n" + `{"a":`, 3, "invalid JSON"},
	} {
		_, _, err := readString(f, tt.input, Options{Type: TypeRawPayload})
		checkError(t, tt.input, err, f, tt.line, "", tt.msg)
	}
}

func TestRawPayloadDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"b.jsonl":        `{"messages":[{"role":"user","content":"b1"}]}` + "\n" + `{"messages":[{"role":"user","content":"b2"}]}` + "\n",
		"a.jsonl":        "\n" + `{"messages":[{"role":"user","content":"a1"}]}`,
		"empty.jsonl":    "\n\n",
		"skip.txt":       "not read",
		"sub/deep.jsonl": `{"messages":[{"role":"user","content":"not read: not top level"}]}`,
		"0/first.jsonl":  `{"input_length": 1}`, // sorted first, nested: ignored by detection too
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	want := []Row{
		{Source: a, Line: 2, Seq: 0, SessionID: "a", SessionGenerated: true, Turn: 0, Payload: json.RawMessage(`{"messages":[{"role":"user","content":"a1"}]}`)},
		{Source: b, Line: 1, Seq: 1, SessionID: "b", SessionGenerated: true, Turn: 0, Payload: json.RawMessage(`{"messages":[{"role":"user","content":"b1"}]}`)},
		{Source: b, Line: 2, Seq: 2, SessionID: "b", SessionGenerated: true, Turn: 1, Payload: json.RawMessage(`{"messages":[{"role":"user","content":"b2"}]}`)},
	}
	for _, typ := range []string{TypeRawPayload, ""} {
		r, err := Open(dir, Options{Type: typ})
		if err != nil {
			t.Fatalf("Open(%q): %v", typ, err)
		}
		if r.Type() != TypeRawPayload {
			t.Errorf("Type() = %q, want %q", r.Type(), TypeRawPayload)
		}
		got, err := readRows(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		compareRows(t, "dir type="+typ, got, want)
	}

	// An error names the file and line inside the directory.
	bad := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(bad, []byte(`{"a":1}`+"\n"+`42`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, Options{Type: TypeRawPayload})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = readRows(r)
	checkError(t, "dir with c.jsonl", err, bad, 2, "", "must be a JSON object")
}

func TestDirectoryRejectedForStreamFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte(`{"input_length": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir, Options{Type: TypeMooncake})
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Open(dir, mooncake) = %v, want an \"is a directory\" error", err)
	}
	_, err = Open(dir, Options{})
	checkError(t, "auto-detect mooncake dir", err, filepath.Join(dir, "x.jsonl"), 1, "", "looks like mooncake_trace")
}

// A trace directory named by a symlink is read like the folder it names
// (WalkDir alone does not follow a link at its root, so it read nothing),
// and the top-level rule still holds for the non-recursive listing.
func TestDirectoryThroughSymlink(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.jsonl", "sub/deep.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(`{"messages":[{"role":"user","content":"x"}]}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		recursive bool
		want      []string
	}{
		{false, []string{filepath.Join(link, "a.jsonl")}},
		{true, []string{filepath.Join(link, "a.jsonl"), filepath.Join(link, "sub", "deep.jsonl")}},
	} {
		got, err := jsonlFiles(link, tc.recursive)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("jsonlFiles(link, %v) = %q, %v; want %q", tc.recursive, got, err, tc.want)
		}
	}
	r, err := Open(link, Options{Type: TypeRawPayload})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readRows(r)
	if err != nil || len(rows) != 1 {
		t.Errorf("raw_payload through a link: %d rows, %v; want the 1 top-level row", len(rows), err)
	}
}
