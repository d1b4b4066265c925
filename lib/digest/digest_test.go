package digest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestFileSizes checks file digests against crypto/sha256 around the
// chunk boundaries of the pipeline, with small chunks so that several are in
// flight.
func TestFileSizes(t *testing.T) {
	dir := t.TempDir()
	const chunk = 4096
	for _, n := range []int{0, 1, 63, 64, 65, chunk - 1, chunk, chunk + 1, 3*chunk + 7, 1 << 20} {
		data := randBytes(n, uint64(n))
		name := writeFile(t, filepath.Join(dir, "f"), data)
		want := Sum(sha256.Sum256(data))
		for _, h := range []*Hasher{{}, {ChunkSize: chunk, Buffers: 2}, {ChunkSize: chunk, Buffers: 3}} {
			d, err := h.Path(context.Background(), name)
			if err != nil {
				t.Fatal(err)
			}
			if d.Kind != File || d.Sum != want {
				t.Errorf("%d bytes, chunk %d: got %v, want file:%v", n, h.ChunkSize, d, want)
			}
			s, err := h.Reader(context.Background(), bytes.NewReader(data))
			if err != nil || s != want {
				t.Errorf("%d bytes, Reader: got %v %v, want %v", n, s, err, want)
			}
		}
	}
}

// TestSha256sum compares whole output lines with sha256sum's for files of
// 0 B, 1 B and 1 MiB and for names it escapes. AIPERF_TEST_BIG=1 adds a
// 2 GiB file (scripts/bench/hash.sh checks that one too).
func TestSha256sum(t *testing.T) {
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("sha256sum not installed")
	}
	dir := t.TempDir()
	files := map[string]int{"empty": 0, "one": 1, "mib": 1 << 20, "back\\slash": 3, "new\nline": 4, "cr\rret": 5, "a\\b\nc\rd": 6, "sp ace": 7, "tab\tx": 8}
	for name, n := range files {
		writeFile(t, filepath.Join(dir, name), randBytes(n, uint64(n)))
	}
	if os.Getenv("AIPERF_TEST_BIG") != "" {
		f, err := os.Create(filepath.Join(dir, "big"))
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(7, 7))
		buf := make([]byte, 1<<20)
		for range 2048 {
			for i := 0; i < len(buf); i += 8 {
				v := r.Uint64()
				for j := range 8 {
					buf[i+j] = byte(v >> (8 * j))
				}
			}
			if _, err := f.Write(buf); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
		files["big"] = 2 << 30
	}
	var h Hasher
	for name := range files {
		d, err := h.Path(context.Background(), filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sha256sum", name)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := FormatLine(d.Sum, name); got != string(out) {
			t.Errorf("%q (%d bytes): got %q, sha256sum printed %q", name, files[name], got, out)
		}
	}
}

// pythonRule is the Python aiperf's hash_dir_contents, written out: every
// file of sorted(root.rglob("*")), as path NUL bytes NUL.
const pythonRule = `
import hashlib, sys
from pathlib import Path
root = Path(sys.argv[1])
h = hashlib.sha256()
for child in sorted(root.rglob("*")):
    if not child.is_file():
        continue
    h.update(child.relative_to(root).as_posix().encode("utf-8"))
    h.update(b"\0")
    h.update(child.read_bytes())
    h.update(b"\0")
print(h.hexdigest())
`

// trickyTree writes names whose order differs between component-wise and
// plain byte order ("a/b" < "a-c" < "a.d/e"), non-ASCII and empty files, an
// empty directory and deep nesting.
func trickyTree(t *testing.T, root string) {
	for i, name := range []string{"a/b", "a-c", "a.d/e", "a.d/e.f", "a0", "sp ace/x y", "ü/ñ", "Z", "zero", "deep/1/2/3/4/5/f", "a/b.c/d", "a/b-c"} {
		writeFile(t, filepath.Join(root, filepath.FromSlash(name)), randBytes(i*37%5*100, uint64(i)))
	}
	writeFile(t, filepath.Join(root, "zero"), nil)
	if err := os.MkdirAll(filepath.Join(root, "empty", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// independent computes the directory rule with filepath.WalkDir, sorting
// the relative paths as lists of names.
func independent(t *testing.T, root string) Sum {
	var rels [][]string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			r, _ := filepath.Rel(root, p)
			rels = append(rels, strings.Split(filepath.ToSlash(r), "/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rels, slices.Compare)
	h := sha256.New()
	for _, r := range rels {
		rel := strings.Join(r, "/")
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(rel + "\x00"))
		h.Write(data)
		h.Write([]byte{0})
	}
	return Sum(h.Sum(nil))
}

func TestDirIndependent(t *testing.T) {
	root := t.TempDir()
	trickyTree(t, root)
	want := independent(t, root)
	for _, h := range []*Hasher{{}, {ChunkSize: 64, Buffers: 2}} {
		d, err := h.Path(context.Background(), root)
		if err != nil {
			t.Fatal(err)
		}
		if d.Kind != Dir || d.Sum != want {
			t.Errorf("chunk %d: got %v, want dir:sha256:%v", h.ChunkSize, d, want)
		}
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Log("python3 not installed: skipping the comparison with the Python rule")
		return
	}
	out, err := exec.Command("python3", "-c", pythonRule, root).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != want.String() {
		t.Errorf("the Python rule gives %s, this package %s", got, want)
	}
}

func TestPathLess(t *testing.T) {
	want := []string{"a", "a/b", "a/b/c", "a/b-c", "a-c", "a.d/e", "a0", "b"}
	got := slices.Clone(want)
	rand.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
	slices.SortFunc(got, func(a, b string) int {
		if pathLess(a, b) {
			return -1
		}
		if pathLess(b, a) {
			return 1
		}
		return 0
	})
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestDirSymlinks: a link inside the tree counts as what it points to,
// under the link's path, so a tree with links digests like one with copies.
func TestDirSymlinks(t *testing.T) {
	linked, copied := t.TempDir(), t.TempDir()
	for _, root := range []string{linked, copied} {
		writeFile(t, filepath.Join(root, "data", "x"), []byte("x bytes"))
		writeFile(t, filepath.Join(root, "data", "sub", "y"), []byte("y bytes"))
	}
	must(t, os.Symlink("data/x", filepath.Join(linked, "lx")))
	must(t, os.Symlink("data/sub", filepath.Join(linked, "lsub")))
	must(t, os.Symlink("../x", filepath.Join(linked, "data", "sub", "up")))
	writeFile(t, filepath.Join(copied, "lx"), []byte("x bytes"))
	writeFile(t, filepath.Join(copied, "lsub", "y"), []byte("y bytes"))
	writeFile(t, filepath.Join(copied, "lsub", "up"), []byte("x bytes"))
	writeFile(t, filepath.Join(copied, "data", "sub", "up"), []byte("x bytes"))
	var h Hasher
	a, err := h.Path(context.Background(), linked)
	must(t, err)
	b, err := h.Path(context.Background(), copied)
	must(t, err)
	if a != b {
		t.Errorf("tree with links %v, tree with copies %v", a, b)
	}
	// The root itself may be a symlink.
	top := filepath.Join(t.TempDir(), "top")
	must(t, os.Symlink(linked, top))
	if c, err := h.Path(context.Background(), top); err != nil || c != a {
		t.Errorf("through a symlinked root: got %v %v, want %v", c, err, a)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestBadTrees: every refused tree fails with an error that names the
// offending path and matches its sentinel.
func TestBadTrees(t *testing.T) {
	outside := writeFile(t, filepath.Join(t.TempDir(), "secret"), []byte("s"))
	cases := []struct {
		name  string
		build func(root string) string // returns the path the error must name
		want  error
	}{
		{"outside", func(r string) string { must(t, os.Symlink(outside, filepath.Join(r, "d", "out"))); return "d/out" }, ErrOutside},
		{"outside-relative", func(r string) string {
			writeFile(t, filepath.Join(filepath.Dir(r), "sibling"), []byte("s"))
			must(t, os.Symlink("../../sibling", filepath.Join(r, "d", "up")))
			return "d/up"
		}, ErrOutside},
		{"dangling", func(r string) string { must(t, os.Symlink("nowhere", filepath.Join(r, "d", "dead"))); return "d/dead" }, ErrDangling},
		{"loop-self", func(r string) string { must(t, os.Symlink("me", filepath.Join(r, "d", "me"))); return "d/me" }, ErrLoop},
		{"loop-pair", func(r string) string {
			must(t, os.Symlink("b", filepath.Join(r, "d", "a")))
			must(t, os.Symlink("a", filepath.Join(r, "d", "b")))
			return "d/a"
		}, ErrLoop},
		{"loop-ancestor", func(r string) string { must(t, os.Symlink("..", filepath.Join(r, "d", "up"))); return "d/up" }, ErrLoop},
		{"loop-root", func(r string) string { must(t, os.Symlink(r, filepath.Join(r, "d", "root"))); return "d/root" }, ErrLoop},
		{"fifo", func(r string) string { must(t, syscall.Mkfifo(filepath.Join(r, "d", "fifo"), 0o644)); return "d/fifo" }, ErrSpecial},
		{"fifo-via-link", func(r string) string {
			must(t, syscall.Mkfifo(filepath.Join(r, "fifo"), 0o644))
			must(t, os.Symlink("../fifo", filepath.Join(r, "d", "lf")))
			return "d/lf"
		}, ErrSpecial},
		{"socket", func(r string) string {
			// Socket paths are short: bind in the tree's directory by a relative name.
			p := filepath.Join(r, "d", "s")
			l, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
			if err != nil {
				t.Skip("no unix socket:", err)
			}
			l.SetUnlinkOnClose(false)
			l.Close()
			return "d/s"
		}, ErrSpecial},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if runtime.GOOS != "linux" && strings.HasPrefix(tc.name, "fifo") {
				t.Skip("linux only")
			}
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "d", "ok"), []byte("ok"))
			rel := tc.build(root)
			var h Hasher
			_, err := h.Path(context.Background(), root)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if p := filepath.Join(root, filepath.FromSlash(rel)); !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name %s", err, p)
			}
		})
	}
}

func TestSpecialPath(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	must(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan error, 1)
	go func() {
		var h Hasher
		_, err := h.Path(context.Background(), fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrSpecial) || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("got %v, want an ErrSpecial naming %s as a named pipe", err, fifo)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("digest of a FIFO blocked")
	}
	var h Hasher
	if _, err := h.Path(context.Background(), "/dev/null"); !errors.Is(err, ErrSpecial) {
		t.Errorf("/dev/null: got %v, want ErrSpecial", err)
	}
	if _, err := h.Path(context.Background(), filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: got %v, want ErrNotExist", err)
	}
}

// TestUnreadable needs a user that permissions apply to; as root it runs
// itself again as nobody.
func TestUnreadable(t *testing.T) {
	if os.Getenv("AIPERF_DIGEST_AS_NOBODY") == "" && os.Geteuid() == 0 {
		rerunAsNobody(t)
		return
	}
	base, err := os.MkdirTemp("", "digest-unreadable-")
	must(t, err)
	defer os.RemoveAll(base)
	secret := writeFile(t, filepath.Join(base, "tree", "sub", "secret"), []byte("s"))
	writeFile(t, filepath.Join(base, "tree", "ok"), []byte("ok"))
	must(t, os.Chmod(secret, 0))
	var h Hasher
	if _, err := h.Path(context.Background(), secret); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), secret) {
		t.Errorf("file: got %v, want a permission error naming %s", err, secret)
	}
	if _, err := h.Path(context.Background(), filepath.Join(base, "tree")); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), secret) {
		t.Errorf("tree with an unreadable file: got %v, want a permission error naming %s", err, secret)
	}
	must(t, os.Chmod(secret, 0o644))
	sub := filepath.Dir(secret)
	must(t, os.Chmod(sub, 0))
	defer os.Chmod(sub, 0o755)
	if _, err := h.Path(context.Background(), filepath.Join(base, "tree")); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), sub) {
		t.Errorf("tree with an unreadable folder: got %v, want a permission error naming %s", err, sub)
	}
}

func rerunAsNobody(t *testing.T) {
	// The test binary's own folder is private to root: run a copy.
	bin, err := os.ReadFile(os.Args[0])
	must(t, err)
	dir, err := os.MkdirTemp("", "digest-test-")
	must(t, err)
	defer os.RemoveAll(dir)
	must(t, os.Chmod(dir, 0o755))
	exe := filepath.Join(dir, "digest.test")
	must(t, os.WriteFile(exe, bin, 0o755))
	cmd := exec.Command(exe, "-test.run=^TestUnreadable$", "-test.v")
	cmd.Env = append(os.Environ(), "AIPERF_DIGEST_AS_NOBODY=1", "TMPDIR=/tmp")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil && bytes.Contains(out, []byte("--- FAIL")) {
		t.Fatalf("as nobody:\n%s", out)
	}
	if err != nil {
		t.Skipf("cannot run as nobody (%v): %s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: TestUnreadable")) {
		t.Fatalf("as nobody, the test did not run:\n%s", out)
	}
}

// TestReadError: a file whose read fails (not its open) is an error naming it.
func TestReadError(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses /proc/self/mem")
	}
	var h Hasher
	_, err := h.Path(context.Background(), "/proc/self/mem")
	if err == nil || !strings.Contains(err.Error(), "/proc/self/mem") {
		t.Errorf("got %v, want an error naming /proc/self/mem", err)
	}
}

func TestCancel(t *testing.T) {
	name := writeFile(t, filepath.Join(t.TempDir(), "f"), randBytes(1<<20, 1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h := &Hasher{ChunkSize: 4096}
	if _, err := h.Path(ctx, name); !errors.Is(err, context.Canceled) {
		t.Errorf("file: got %v, want context.Canceled", err)
	}
	if _, err := h.Path(ctx, filepath.Dir(name)); !errors.Is(err, context.Canceled) {
		t.Errorf("dir: got %v, want context.Canceled", err)
	}
}

func TestParseSum(t *testing.T) {
	s := Sum(sha256.Sum256(nil))
	for _, in := range []string{s.String(), strings.ToUpper(s.String())} {
		if got, err := ParseSum(in); err != nil || got != s {
			t.Errorf("ParseSum(%q): got %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", s.String()[1:], s.String() + "0", "g" + s.String()[1:]} {
		if _, err := ParseSum(in); err == nil {
			t.Errorf("ParseSum(%q): no error", in)
		}
	}
	if got := (Digest{Dir, s}).String(); got != "dir:sha256:"+s.String() {
		t.Errorf("Digest.String: %q", got)
	}
}

// TestListed: the directory rule over chosen files gives the digest of a
// tree that holds just those files, follows links wherever they lead, and
// refuses names that are not distinct relative paths inside the root.
func TestListed(t *testing.T) {
	ctx := context.Background()
	plain := t.TempDir()
	writeFile(t, filepath.Join(plain, "a.jsonl"), []byte("aa"))
	writeFile(t, filepath.Join(plain, "sub", "b.jsonl"), []byte("bb"))
	want, err := (&Hasher{}).Dir(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	linked := t.TempDir()
	out := writeFile(t, filepath.Join(t.TempDir(), "blob"), []byte("bb"))
	writeFile(t, filepath.Join(linked, "a.jsonl"), []byte("aa"))
	writeFile(t, filepath.Join(linked, "skipped.txt"), []byte("not listed"))
	if err := os.MkdirAll(filepath.Join(linked, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(linked, "sub", "b.jsonl")); err != nil {
		t.Fatal(err)
	}
	memo := OpenMemo(t.TempDir())
	for _, h := range []*Hasher{{}, {Memo: memo}, {Memo: memo}} {
		got, err := h.Listed(ctx, linked, []string{"sub/b.jsonl", "a.jsonl"})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("Listed = %v, want the plain tree's %v", got, want)
		}
	}
	for _, names := range [][]string{{"a.jsonl", "a.jsonl"}, {"../x"}, {""}, {"/etc/passwd"}, {"sub"}} {
		if _, err := (&Hasher{}).Listed(ctx, linked, names); err == nil {
			t.Errorf("Listed(%q) succeeded, want an error", names)
		}
	}
}
