package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTake: a held folder is refused to a second writer and free again
// once released, its lock file gone; a run refuses an earlier run's
// results unless forced, a report does not judge them, a sweep refuses
// them and resumes its own state, and a nested folder that is a link is
// refused.
func TestTake(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	a, err := Take(dir, ClaimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Take(dir, ClaimOptions{Kind: KindReport}); err == nil || !strings.Contains(err.Error(), "another run (or report) is writing into this folder now") {
		t.Errorf("a second writer: %v", err)
	}
	a.Release()
	a.Release()
	if _, err := os.Lstat(filepath.Join(dir, LockFile)); !os.IsNotExist(err) {
		t.Errorf("the lock file after release: %v", err)
	}
	os.WriteFile(ResultsPath(dir), []byte("{}\n"), 0o644)
	for _, c := range []struct {
		o    ClaimOptions
		want string // "" for taken
	}{
		{ClaimOptions{}, "holds an earlier run's results (results.jsonl): a run never replaces"},
		{ClaimOptions{Force: true}, ""},
		{ClaimOptions{Kind: KindReport}, ""},
		{ClaimOptions{Kind: KindSweep}, "not a sweep's"},
		{ClaimOptions{Nested: true}, "not this run's: remove it"},
	} {
		c2, err := Take(dir, c.o)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.o, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: got %v, want %q", c.o, err, c.want)
		}
		c2.Release()
	}
	sw := filepath.Join(t.TempDir(), "sw")
	os.MkdirAll(sw, 0o777)
	os.WriteFile(filepath.Join(sw, sweepFile), []byte("{}"), 0o644)
	if c, err := Take(sw, ClaimOptions{Kind: KindSweep}); err != nil {
		t.Errorf("a sweep's own folder: %v", err)
	} else {
		c.Release()
	}
	if _, err := Take(sw, ClaimOptions{}); err == nil || !strings.Contains(err.Error(), "holds a sweep (sweep.json)") {
		t.Errorf("a run into a sweep's folder: %v", err)
	}
	link := filepath.Join(sw, "step-01")
	os.Symlink(dir, link)
	if _, err := Take(link, ClaimOptions{Nested: true}); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("a nested link: %v", err)
	}
}
