package cachedir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "xdg"))
	t.Setenv("HOME", home)
	t.Setenv(Env, "")
	got, err := Resolve("")
	if err != nil || got != filepath.Join(home, "xdg", "aiperf") {
		t.Errorf("default: %q %v, want $XDG_CACHE_HOME/aiperf", got, err)
	}
	t.Setenv(Env, filepath.Join(home, "env"))
	if got, _ := Resolve(""); got != filepath.Join(home, "env") {
		t.Errorf("$%s: %q", Env, got)
	}
	if got, _ := Resolve(filepath.Join(home, "flag")); got != filepath.Join(home, "flag") {
		t.Errorf("--dir: %q", got)
	}
	wd, _ := os.Getwd()
	if got, _ := Resolve("rel"); got != filepath.Join(wd, "rel") {
		t.Errorf("relative --dir: %q, want it made absolute", got)
	}
}

func mode(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode() & (fs.ModePerm | fs.ModeSetgid)
}

func TestCreatePrivateAndShared(t *testing.T) {
	priv := filepath.Join(t.TempDir(), "a", "b", "root")
	shared, err := Create(priv, false)
	if err != nil || shared {
		t.Fatalf("Create private: shared=%v %v", shared, err)
	}
	if m := mode(t, priv); m != 0o700 {
		t.Errorf("private root mode %v, want 0700", m)
	}
	tag, _ := os.ReadFile(filepath.Join(priv, TagName))
	if string(tag) != Tag {
		t.Errorf("CACHEDIR.TAG = %q", tag)
	}
	if _, err := Create(priv, true); err == nil || !strings.Contains(err.Error(), "created private") {
		t.Errorf("--shared on a private root: %v", err)
	}
	team := filepath.Join(t.TempDir(), "team")
	if shared, err := Create(team, true); err != nil || !shared {
		t.Fatalf("Create shared: %v %v", shared, err)
	}
	if m := mode(t, team); m != 0o775|fs.ModeSetgid {
		t.Errorf("shared root mode %v, want 2775", m)
	}
	if shared, err := Create(team, false); err != nil || !shared {
		t.Errorf("reopening a shared root without --shared: %v %v, want it still shared", shared, err)
	}
	if err := Mkdir(filepath.Join(team, "memo"), true); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Join(team, "memo")); m != 0o775|fs.ModeSetgid {
		t.Errorf("memo mode %v", m)
	}
	os.Chmod(team, 0o777)
	if _, err := Create(team, false); err == nil || !strings.Contains(err.Error(), "world-writable") {
		t.Errorf("world-writable root: %v", err)
	}
}

func TestCreateKeepsReadme(t *testing.T) {
	root := filepath.Join(t.TempDir(), "r")
	if _, err := Create(root, false); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, ReadmeName)
	os.Chmod(p, 0o600)
	os.WriteFile(p, []byte("mine"), 0o600)
	if _, err := Create(root, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "mine" {
		t.Errorf("README rewritten: %q", b)
	}
	if !strings.Contains(Readme, Memo+"/") {
		t.Error("README does not describe the memo folder")
	}
}

func TestMkdirRefusesLink(t *testing.T) {
	root := t.TempDir()
	os.Symlink(t.TempDir(), filepath.Join(root, "memo"))
	if err := Mkdir(filepath.Join(root, "memo"), false); err == nil {
		t.Error("Mkdir accepted a symbolic link")
	}
	os.WriteFile(filepath.Join(root, "file"), nil, 0o600)
	if err := Mkdir(filepath.Join(root, "file"), false); err == nil {
		t.Error("Mkdir accepted a file")
	}
}

// TestResolveMissingHome: with neither --dir, $AIPERF_CACHE_DIR nor
// $XDG_CACHE_HOME, a $HOME that does not exist (/nonexistent, the home of
// Debian's system users, which must never exist) is an error naming it,
// not a root to create with all its parents.
func TestResolveMissingHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "nonexistent")
	t.Setenv(Env, "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", home)
	if root, err := Resolve(""); err == nil || !strings.Contains(err.Error(), home) {
		t.Fatalf("Resolve with a missing $HOME: %q, %v; want an error naming %s", root, err, home)
	}
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := Resolve("")
	if err != nil || root != filepath.Join(home, ".cache", "aiperf") {
		t.Fatalf("Resolve with $HOME: %q, %v", root, err)
	}
	// $XDG_CACHE_HOME is taken as it is (made when missing), and so are
	// --dir and $AIPERF_CACHE_DIR.
	xdg := filepath.Join(t.TempDir(), "x", "cache")
	t.Setenv("XDG_CACHE_HOME", xdg)
	if root, err := Resolve(""); err != nil || root != filepath.Join(xdg, "aiperf") {
		t.Fatalf("Resolve with $XDG_CACHE_HOME: %q, %v", root, err)
	}
}

// asRoot skips a test that must chown files to another user.
func asRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
}

// A root that another user made (a /tmp-style --dir made before you) is
// refused, as ssh and git refuse another user's files: its entries would be
// theirs. With --shared a team root of another user is trusted when its
// group is one of yours.
func TestCreateRefusesAnotherUsersRoot(t *testing.T) {
	asRoot(t)
	const other = 65534
	squat := filepath.Join(t.TempDir(), "squat")
	os.Mkdir(squat, 0o755)
	if err := os.Chown(squat, other, other); err != nil {
		t.Fatal(err)
	}
	_, err := Create(squat, false)
	if !errors.Is(err, ErrNotOwner) || !strings.Contains(err.Error(), "uid 65534") {
		t.Fatalf("another user's root: %v, want ErrNotOwner naming uid 65534", err)
	}
	if _, err := os.Stat(filepath.Join(squat, TagName)); err == nil {
		t.Error("wrote into a root it refused")
	}
	// A team root of another user: trusted with --shared when its group is ours.
	team := filepath.Join(t.TempDir(), "team")
	os.Mkdir(team, 0o700)
	os.Chmod(team, SharedDir)
	os.Chown(team, other, os.Getegid())
	if _, err := Create(team, false); !errors.Is(err, ErrNotOwner) || !strings.Contains(err.Error(), "--shared") {
		t.Fatalf("another user's team root without --shared: %v", err)
	}
	if shared, err := Create(team, true); err != nil || !shared {
		t.Fatalf("another user's team root of our group, with --shared: %v %v", shared, err)
	}
	os.Chown(team, other, other)
	if InGroup(other) {
		t.Skip("gid 65534 is one of ours")
	}
	if _, err := Create(team, true); !errors.Is(err, ErrNotOwner) || !strings.Contains(err.Error(), "not one of yours") {
		t.Fatalf("a team root of another group: %v", err)
	}
}
