package rundir

import (
	"os"
	"path/filepath"
	"testing"
)

// A run directory's results are results.jsonl; one written before the
// rename (records.jsonl) is still found, and results.jsonl wins when a
// directory has both (aiperf-tokenize's records.jsonl beside a run's
// results, say).
func TestResultsNames(t *testing.T) {
	dir := t.TempDir()
	if _, ok := Results(dir); ok {
		t.Fatal("an empty directory has results")
	}
	legacy := filepath.Join(dir, LegacyResultsFile)
	if err := os.WriteFile(legacy, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if p, ok := Results(dir); !ok || p != legacy {
		t.Fatalf("Results = %q, %v; want the legacy %q", p, ok, legacy)
	}
	if err := os.WriteFile(ResultsPath(dir), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if p, ok := Results(dir); !ok || p != filepath.Join(dir, "results.jsonl") {
		t.Fatalf("Results = %q, %v; want results.jsonl", p, ok)
	}
}
