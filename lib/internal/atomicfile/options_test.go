package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestPerm(t *testing.T) {
	name := filepath.Join(t.TempDir(), "ro")
	f, err := CreateWith(name, Options{Perm: 0o444})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	f.WriteString("x")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o444 {
		t.Fatalf("committed file: %v %v, want mode 0444", fi, err)
	}
}

// TestNoFollow: a symbolic link at the destination is replaced, and the
// file it points to is left alone; a named pipe there is replaced too.
func TestNoFollow(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "out")
	if err := os.Symlink(victim, name); err != nil {
		t.Skip(err)
	}
	f, err := CreateWith(name, Options{NoFollow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	f.WriteString("new")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target became %q", b)
	}
	if fi, err := os.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("destination is %v %v, want a regular file in place of the link", fi, err)
	}
	if b, _ := os.ReadFile(name); string(b) != "new" {
		t.Errorf("destination holds %q", b)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	g, err := CreateWith(fifo, Options{NoFollow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Abort()
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(fifo); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the named pipe is still there: %v %v", fi, err)
	}
}

// TestNoReplace: of two writers of one new name, the first to commit wins
// and the second gets fs.ErrExist; neither leaves a temporary file.
func TestNoReplace(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "once")
	a, err := CreateWith(name, Options{NoReplace: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abort()
	b, err := CreateWith(name, Options{NoReplace: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	a.WriteString("a")
	b.WriteString("b")
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second Commit: got %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(name); string(got) != "a" {
		t.Errorf("destination holds %q, want the first writer's", got)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v, want only once", got)
	}
}

// TestTempName: a name in the sweepable pattern, beside the destination,
// recorded for RemoveTemps until released.
func TestTempName(t *testing.T) {
	dir := t.TempDir()
	tmp := TempName(filepath.Join(dir, "dest"))
	defer Release(tmp)
	if filepath.Dir(tmp) != dir || !strings.HasPrefix(filepath.Base(tmp), ".dest.tmp-") {
		t.Fatalf("TempName = %s, want .dest.tmp-* in %s", tmp, dir)
	}
	if _, pid, ok := parseTemp(filepath.Base(tmp)); !ok || pid != os.Getpid() {
		t.Fatalf("parseTemp(%s) = %d %v, want this pid", tmp, pid, ok)
	}
	if tmp2 := TempName(filepath.Join(dir, "dest")); tmp2 == tmp {
		t.Error("two TempNames are equal")
	} else {
		Release(tmp2)
	}
	if err := os.WriteFile(tmp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	RemoveTemps()
	if _, err := os.Lstat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("RemoveTemps left %s: %v", tmp, err)
	}
}

// TestOwn: in a folder taken with Own, a link at an output's name is
// replaced and its target left alone, a directory there is still refused,
// and a name Own follows keeps the rule of named outputs; after release
// links are followed again.
func TestOwn(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o777); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	for _, n := range []string{"results.jsonl", "page.html"} {
		if err := os.Symlink(victim, filepath.Join(run, n)); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(run, "a-dir"), 0o777)
	release := Own(run, filepath.Join(run, "page.html"))
	if err := WriteFile(filepath.Join(run, "results.jsonl"), strings.NewReader("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(run, "results.jsonl")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("results.jsonl: %v, %v: want a regular file", fi, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("the link was followed: victim holds %q", b)
	}
	if _, err := Destination(filepath.Join(run, "a-dir")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a directory: %v", err)
	}
	if err := WriteFile(filepath.Join(run, "page.html"), strings.NewReader("page")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "page" {
		t.Errorf("a followed name: victim holds %q, want the page", b)
	}
	release()
	release()
	os.Remove(filepath.Join(run, "results.jsonl"))
	os.Symlink(victim, filepath.Join(run, "results.jsonl"))
	if err := WriteFile(filepath.Join(run, "results.jsonl"), strings.NewReader("after")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "after" {
		t.Errorf("after release: victim holds %q, want the link followed", b)
	}
}
