package hashcmd

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeps: aiperf-hash, the cachekey library it keys with and the stage
// settings it shares with aiperf-tokenize and aiperf-pack (lib/cmd/shape)
// link neither the tokenizer and its regexp engine, nor the synthesis, nor
// the stages or their commands, nor the store writer, nor net/http:
// digesting and keying must stay a small, fast binary.
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
		"github.com/aiperf/toolkit/lib/synth",
		"github.com/aiperf/toolkit/lib/cmd/tokenizecmd",
		"github.com/aiperf/toolkit/lib/cmd/packcmd",
	}
	var shapeFound bool
	for _, pkg := range []string{"github.com/aiperf/toolkit/cmd/aiperf-hash", "github.com/aiperf/toolkit/lib/cachekey", "github.com/aiperf/toolkit/lib/cmd/shape"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, d := range deps {
			shapeFound = shapeFound || d == "github.com/aiperf/toolkit/lib/cmd/shape" && strings.HasSuffix(pkg, "aiperf-hash")
			for _, f := range forbidden {
				if d == f {
					t.Errorf("%s links %s", pkg, d)
				}
			}
		}
	}
	if !shapeFound {
		t.Error("aiperf-hash does not link lib/cmd/shape: the guard is not looking at the key's flags")
	}
	// The stages do link what the guard forbids (else it proves nothing).
	for _, pkg := range []string{"github.com/aiperf/toolkit/cmd/aiperf-tokenize", "github.com/aiperf/toolkit/cmd/aiperf-pack"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		if !strings.Contains(string(out), "github.com/aiperf/toolkit/lib/cmd/shape\n") {
			t.Errorf("%s does not link lib/cmd/shape: the stages must define their flags there", pkg)
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
	t.Chdir(t.TempDir())
	if got, _ := cacheRoot("rel"); !filepath.IsAbs(got) || filepath.Base(got) != "rel" {
		t.Errorf("a relative --dir: got %s, want it made absolute", got)
	}
	m, note := openMemo(&memoOptions{dir: "/r"})
	if m == nil || m.Dir() != filepath.Join("/r", "memo") || note != "" {
		t.Errorf("memo dir: %v %q", m, note)
	}
	if m, note := openMemo(&memoOptions{noMemo: true}); m != nil || note == "" {
		t.Errorf("--no-memo: %v %q", m, note)
	}
}
