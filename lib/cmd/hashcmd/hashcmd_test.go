package hashcmd

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeps: aiperf-hash, and the cachekey library it will key with, link
// neither the tokenizer and its regexp engine, nor the stages, nor the store
// writer, nor net/http: digesting and keying must stay a small, fast binary.
func TestDeps(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	forbidden := []string{
		"net/http",
		"github.com/dlclark/regexp2",
		"github.com/klauspost/compress/zstd",
		"github.com/aiperf/toolkit/lib/tokenizer",
		"github.com/aiperf/toolkit/lib/tokenize",
		"github.com/aiperf/toolkit/lib/store",
		"github.com/aiperf/toolkit/lib/pack",
	}
	for _, pkg := range []string{"github.com/aiperf/toolkit/cmd/aiperf-hash", "github.com/aiperf/toolkit/lib/cachekey"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, d := range deps {
			for _, f := range forbidden {
				if d == f {
					t.Errorf("%s links %s", pkg, d)
				}
			}
		}
	}
}

func TestCacheRoot(t *testing.T) {
	t.Setenv("AIPERF_CACHE_DIR", "/env/root")
	if got, _ := cacheRoot("/flag/root"); got != "/flag/root" {
		t.Errorf("--dir: got %s", got)
	}
	if got, _ := cacheRoot(""); got != "/env/root" {
		t.Errorf("AIPERF_CACHE_DIR: got %s", got)
	}
	t.Setenv("AIPERF_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if got, _ := cacheRoot(""); got != filepath.Join("/xdg", "aiperf") {
		t.Errorf("user cache dir: got %s", got)
	}
	m, note := openMemo(&memoOptions{dir: "/r"})
	if m == nil || m.Dir() != filepath.Join("/r", "memo") || note != "" {
		t.Errorf("memo dir: %v %q", m, note)
	}
	if m, note := openMemo(&memoOptions{noMemo: true}); m != nil || note == "" {
		t.Errorf("--no-memo: %v %q", m, note)
	}
}
