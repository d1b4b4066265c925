package rundir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// withRun gives the results file of writeResults run info of id (its
// first line carries it) and writes its end line.
func withRun(t *testing.T, path, id string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), `{"v":1,`, `{"v":1,"run":{"id":"`+id+`"},`, 1)
	s += `{"v":1,"end":true,"run_id":"` + id + `","results":` + strconv.Itoa(strings.Count(string(b), "\n")) + `,"interrupted":false}` + "\n"
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTrialNumber: trial-K as TrialDir writes it, nothing else.
func TestTrialNumber(t *testing.T) {
	for name, want := range map[string]int{"trial-1": 1, "trial-12": 12, "trial-01": 0, "trial-0": 0, "trial-+1": 0, "trial-": 0, "trial-1x": 0, "run-1": 0} {
		if k, ok := TrialNumber(name); k != want && ok || ok != (want > 0) {
			t.Errorf("TrialNumber(%q) = %d, %v; want %d", name, k, ok, want)
		}
	}
}

// TestSides: a run twice on a side is refused; a side holding a run of the
// other is refused unless the sides are the same runs; a side with no
// request is refused.
func TestSides(t *testing.T) {
	dir := t.TempDir()
	a := withRun(t, writeResults(t, dir, "a", 10, 20), "aa")
	b := withRun(t, writeResults(t, dir, "b", 30, 40), "bb")
	copyA := filepath.Join(dir, "copy.jsonl")
	data, _ := os.ReadFile(a)
	os.WriteFile(copyA, data, 0o644)
	if _, err := LoadSide("old", []string{a, copyA}); err == nil || !strings.Contains(err.Error(), "hold the same run (id aa): its requests would count twice") {
		t.Errorf("a run twice on a side: got %v", err)
	}
	load := func(args ...string) *Side {
		s, err := LoadSide("x", args)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := CheckSides(load(b, copyA), load(a)); err == nil || !strings.Contains(err.Error(), "a side holds a run of the other") {
		t.Errorf("a trial that is the other side's run: got %v", err)
	}
	if err := CheckSides(load(a), load(copyA)); err != nil {
		t.Errorf("the same run on both sides, whole: %v", err)
	}
	if err := CheckSides(load(a), load(b)); err != nil {
		t.Errorf("two runs: %v", err)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	if _, err := LoadSide("new", []string{empty}); err == nil || !strings.Contains(err.Error(), "holds no request") {
		t.Errorf("an empty side: got %v", err)
	}
}
