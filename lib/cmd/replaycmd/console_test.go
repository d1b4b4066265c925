package replaycmd

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestWarnTap: everything passes through; the warnings are kept whole
// however the writes cut them, after a cleared live line too, and a line
// too long to keep is passed on and dropped.
func TestWarnTap(t *testing.T) {
	var out strings.Builder
	tap := &warnTap{w: &out}
	writes := []string{
		"aiperf-replay: scraping\n",
		"aiperf-replay: warn", "ing: one cut ", "in three\n",
		"\r\033[Ksent 3  done 2", "\r\033[K", "aiperf-replay: warning: after the live line\n",
		"aiperf-replay: note: not a warning\naiperf-replay: warning: two in\naiperf-replay: warning: one write\n",
		"aiperf-replay: stopping: the server is saturated: x\n",
		"aiperf-replay: sent 3\n",
		"aiperf-replay: warning: " + strings.Repeat("x", maxTapLine) + "\n",
		"aiperf-replay: warning: unfinished",
	}
	for _, w := range writes {
		if n, err := tap.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if got, want := out.String(), strings.Join(writes, ""); got != want {
		t.Errorf("passed through %q, want %q", got, want)
	}
	want := []string{"one cut in three", "after the live line", "two in", "one write", "stopping: the server is saturated: x"}
	if !reflect.DeepEqual(tap.warnings, want) {
		t.Errorf("kept %q, want %q", tap.warnings, want)
	}
	if !reflect.DeepEqual(tap.notes, []string{"not a warning"}) {
		t.Errorf("notes %q", tap.notes)
	}
}

// TestStoreName: the records name the store by its absolute path with
// links resolved: from a linked folder, ../s.aipk is the link target's
// sibling, which Abs alone (cleaning by text) would miss.
func TestStoreName(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.MkdirAll(filepath.Join(real, "a"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "s.aipk"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "a"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(dir, "link"))
	want, _ := filepath.EvalSymlinks(filepath.Join(real, "s.aipk"))
	if got := storeName("../s.aipk"); got != want {
		t.Errorf("storeName(../s.aipk) = %q, want %q", got, want)
	}
}
