package ucd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTablesGenerated checks that tables.go is what go generate makes of the
// committed UCD files in data/, so neither can change without the other.
func TestTablesGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs gen.go")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	// Read gen.go and data/ here too: go test caches a result by the files
	// the test itself opens, not those the go run below reads.
	inputs, err := filepath.Glob(filepath.Join("data", "*", "*.zst"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no UCD files in data/: %v", err)
	}
	for _, f := range append(inputs, "gen.go") {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "tables.go")
	cmd := exec.Command(gobin, "run", "gen.go", "-o", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run gen.go: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("tables.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("tables.go differs from what gen.go makes of data/; run go generate ./lib/tokenizer/internal/ucd")
	}
}
