package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestCommitReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out")
	if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	f.WriteString("new")
	if b, _ := os.ReadFile(name); string(b) != "old" {
		t.Fatalf("destination changed before Commit: %q", b)
	}
	if !strings.HasPrefix(filepath.Base(f.TempName()), ".out.tmp-") || filepath.Dir(f.TempName()) != dir {
		t.Errorf("temp file %s is not a hidden file beside the destination", f.TempName())
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "new" {
		t.Fatalf("got %q after Commit, want new", b)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Fatalf("directory holds %v, want only out", got)
	}
	if err := f.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("partial")
	f.Abort()
	f.Abort() // idempotent
	if got := entries(t, dir); len(got) != 0 {
		t.Fatalf("directory holds %v after Abort, want nothing", got)
	}
}

func TestWriteFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "w")
	if err := WriteFile(name, strings.NewReader("body")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "body" {
		t.Fatalf("got %q", b)
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir"), strings.NewReader("x")); err == nil {
		t.Fatal("WriteFile into a missing directory succeeded")
	}
}
