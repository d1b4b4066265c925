package hashcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiperf/toolkit/lib/cachedir"
)

// TestDeps: aiperf-hash, the cachekey library it keys with and the stage
// settings it shares with aiperf-tokenize and aiperf-pack (lib/cmd/stagekey)
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
		"github.com/aiperf/toolkit/lib/ingest",
		"github.com/aiperf/toolkit/lib/store",
		"github.com/aiperf/toolkit/lib/pack",
		"github.com/aiperf/toolkit/lib/synth",
		"github.com/aiperf/toolkit/lib/cmd/tokenizecmd",
		"github.com/aiperf/toolkit/lib/cmd/packcmd",
	}
	var shapeFound bool
	for _, pkg := range []string{"github.com/aiperf/toolkit/cmd/aiperf-hash", "github.com/aiperf/toolkit/lib/cachekey", "github.com/aiperf/toolkit/lib/cmd/stagekey", "github.com/aiperf/toolkit/lib/cmd/stagekey/tokenizekey"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, d := range deps {
			shapeFound = shapeFound || d == "github.com/aiperf/toolkit/lib/cmd/stagekey" && strings.HasSuffix(pkg, "aiperf-hash")
			for _, f := range forbidden {
				if d == f {
					t.Errorf("%s links %s", pkg, d)
				}
			}
		}
	}
	if !shapeFound {
		t.Error("aiperf-hash does not link lib/cmd/stagekey: the guard is not looking at the key's flags")
	}
	// The stages do link what the guard forbids (else it proves nothing).
	for _, pkg := range []string{"github.com/aiperf/toolkit/cmd/aiperf-tokenize", "github.com/aiperf/toolkit/cmd/aiperf-pack"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		if !strings.Contains(string(out), "github.com/aiperf/toolkit/lib/cmd/stagekey\n") {
			t.Errorf("%s does not link lib/cmd/stagekey: the stages must define their flags there", pkg)
		}
	}
}

func TestCacheRoot(t *testing.T) {
	// The memo lives in aiperf-cache's root, found by lib/cachedir's rule
	// (its own tests cover --dir, $AIPERF_CACHE_DIR and the user cache dir).
	base := t.TempDir()
	t.Setenv("AIPERF_CACHE_DIR", filepath.Join(base, "env"))
	m, note := openMemo(&memoOptions{})
	if m == nil || m.Dir() != filepath.Join(base, "env", "memo") || note != "" {
		t.Fatalf("AIPERF_CACHE_DIR: %v %q", m, note)
	}
	root := filepath.Join(base, "private")
	m, note = openMemo(&memoOptions{dir: root})
	if m == nil || m.Dir() != filepath.Join(root, "memo") || note != "" {
		t.Fatalf("--dir: %v %q", m, note)
	}
	for _, dir := range []string{root, m.Dir()} {
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, want a private folder (0700) as aiperf-cache makes it", dir, fi.Mode())
		}
	}
	if m.Perm != 0o600 {
		t.Errorf("private root: memo file mode %v, want 0600", m.Perm)
	}
	shared := filepath.Join(base, "shared")
	if _, err := cachedir.Create(shared, true); err != nil {
		t.Fatal(err)
	}
	if m, _ = openMemo(&memoOptions{dir: shared}); m == nil || m.Perm != 0o664 {
		t.Errorf("shared root: memo %v, want its file 0664 so the group can update it", m)
	}
	world := filepath.Join(base, "world")
	if err := os.Mkdir(world, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(world, 0o777); err != nil {
		t.Fatal(err)
	}
	if m, note := openMemo(&memoOptions{dir: world}); m != nil || note == "" {
		t.Errorf("world-writable root: %v %q, want no memo and the reason", m, note)
	}
	if m, note := openMemo(&memoOptions{noMemo: true}); m != nil || note == "" {
		t.Errorf("--no-memo: %v %q", m, note)
	}
}
