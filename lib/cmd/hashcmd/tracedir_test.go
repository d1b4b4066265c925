package hashcmd

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aiperf/toolkit/lib/trace"
)

// TestTraceFilesAsTokenize holds traceFiles to lib/trace's rule: on a tree
// with every kind of entry, the files it lists are exactly the sources of
// the rows lib/trace reads from the directory (one row per file).
func TestTraceFilesAsTokenize(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "trace")
	row := `{"captureData": {"endpointInput": {"data": "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "encoding": "JSON"}}, "eventMetadata": {"eventId": "e1", "inferenceTime": "2026-01-01T00:00:00Z"}}` + "\n"
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(row), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "a.jsonl"))
	write(filepath.Join(dir, "sub", "deep", "b.jsonl"))
	write(filepath.Join(dir, "notes.txt"))
	write(filepath.Join(dir, "x.jsonl.bak"))
	write(filepath.Join(root, "elsewhere", "c.jsonl"))
	write(filepath.Join(root, "elsewhere", "d.jsonl"))
	link("../elsewhere/c.jsonl", filepath.Join(dir, "out.jsonl"))               // out of the tree: read
	link("a.jsonl", filepath.Join(dir, "sub", "alias.jsonl"))                   // dangling (relative to sub): skipped
	link("../elsewhere", filepath.Join(dir, "linkdir"))                         // a linked folder: not entered
	link("sub", filepath.Join(dir, "dir.jsonl"))                                // a link to a folder: skipped
	link("loop.jsonl", filepath.Join(dir, "loop.jsonl"))                        // a loop: skipped
	link(filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "sub", "abs.jsonl")) // absolute, inside: read

	got, err := traceFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(dir, trace.Options{Type: trace.TypeSageMaker})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var want []string
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(dir, row.Source)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, filepath.ToSlash(rel))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("traceFiles = %q\nlib/trace reads %q", got, want)
	}
	if len(want) != 4 {
		t.Fatalf("lib/trace read %q; the tree was meant to give 4 files", want)
	}
}
