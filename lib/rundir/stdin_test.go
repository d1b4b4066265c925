package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSplitRuns: a file of several runs (concatenated results) becomes one
// part a run, each starting at the line that carries its run info, lines
// longer than the reader's buffer and a last line without a newline kept
// whole; a file of one run stays as it is.
func TestSplitRuns(t *testing.T) {
	dir := t.TempDir()
	long := `{"v":1,"record":1,"session":"` + strings.Repeat("x", 200<<10) + `"}` + "\n"
	runA := `{"v":1,"run":{"id":"a"},"record":0}` + "\n" + long
	runB := `{"v":1,"run":{"id":"b"},"record":0}` + "\n" + `{"v":1,"record":1}`
	cat := filepath.Join(dir, "cat.jsonl")
	one := filepath.Join(dir, "one.jsonl")
	if err := os.WriteFile(cat, []byte(runA+runB), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(one, []byte(runA), 0o644); err != nil {
		t.Fatal(err)
	}
	files, cleanup, err := SplitRuns([]string{one, cat})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || files[0] != one {
		t.Fatalf("files %q: want one.jsonl and two parts", files)
	}
	for i, want := range []string{runA, runB} {
		got, err := os.ReadFile(files[i+1])
		if err != nil || string(got) != want {
			t.Errorf("part %d: %d bytes, %v; want %d bytes", i, len(got), err, len(want))
		}
	}
	if n := DisplayNames(files[1:]); n[0] != cat+" lines 1-2" || n[1] != cat+" lines 3-" {
		t.Errorf("names %q", n)
	}
	cleanup()
	if _, err := os.Stat(files[1]); !os.IsNotExist(err) {
		t.Errorf("part left after cleanup: %v", err)
	}
}
