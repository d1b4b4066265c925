package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestCommitReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out")
	if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	f.WriteString("new")
	if b, _ := os.ReadFile(name); string(b) != "old" {
		t.Fatalf("destination changed before Commit: %q", b)
	}
	if !strings.HasPrefix(filepath.Base(f.TempName()), ".out.tmp-") || filepath.Dir(f.TempName()) != dir {
		t.Errorf("temp file %s is not a hidden file beside the destination", f.TempName())
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "new" {
		t.Fatalf("got %q after Commit, want new", b)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Fatalf("directory holds %v, want only out", got)
	}
	if err := f.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("partial")
	f.Abort()
	f.Abort() // idempotent
	if got := entries(t, dir); len(got) != 0 {
		t.Fatalf("directory holds %v after Abort, want nothing", got)
	}
}

func TestWriteFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "w")
	if err := WriteFile(name, strings.NewReader("body")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "body" {
		t.Fatalf("got %q", b)
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir"), strings.NewReader("x")); err == nil {
		t.Fatal("WriteFile into a missing directory succeeded")
	}
}

func TestRefusesNonRegularDestination(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	toFifo := filepath.Join(dir, "tofifo")
	if err := os.Symlink(fifo, toFifo); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/dev/null", fifo, sub, toFifo} {
		f, err := Create(name)
		if err == nil {
			f.Abort()
			t.Errorf("Create(%s) succeeded", name)
			continue
		}
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("Create(%s): %v does not wrap ErrNotRegular", name, err)
		}
	}
	if f, err := Create(dangling); err == nil {
		f.Abort()
		t.Errorf("Create of a dangling symlink succeeded")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
	if got := entries(t, dir); len(got) != 4 {
		t.Errorf("directory holds %v, want only the four nodes made here", got)
	}
}

func TestCommitRechecksDestination(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out")
	f, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Commit over a FIFO made meanwhile: got %v, want ErrNotRegular", err)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Fatalf("directory holds %v, want only the FIFO", got)
	}
}

func TestSymlinkTargetReplaced(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	os.WriteFile(target, []byte("old"), 0o644)
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, strings.NewReader("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("target holds %q, want new", b)
	}
}

// deadPid returns the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	return cmd.ProcessState.Pid()
}

func TestSweepRemovesOnlyStaleTemps(t *testing.T) {
	dir := t.TempDir()
	dead := deadPid(t)
	stale := fmt.Sprintf(".s.aipk.tmp-%s-%d-123", hostTag(), dead)
	locked := fmt.Sprintf(".t.aipk.tmp-%s-%d-456", hostTag(), dead)
	liveOwner := fmt.Sprintf(".u.aipk.tmp-%s-%d-789", hostTag(), os.Getppid())
	otherHost := fmt.Sprintf(".v.aipk.tmp-%s-%d-1", "0badc0de", dead)
	unrelated := ".w.tmp-notours"
	for _, n := range []string{stale, locked, liveOwner, otherHost, unrelated} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A writer in another pid namespace would still hold its lock.
	lf, err := os.Open(filepath.Join(dir, locked))
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	lock(lf)

	f, err := Create(filepath.Join(dir, "new"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	got := map[string]bool{}
	for _, n := range entries(t, dir) {
		got[n] = true
	}
	if got[stale] {
		t.Errorf("stale temp %s of a dead pid was not removed", stale)
	}
	for _, n := range []string{locked, liveOwner, otherHost, unrelated, filepath.Base(f.TempName())} {
		if !got[n] {
			t.Errorf("%s was removed", n)
		}
	}
	if host, pid, ok := parseTemp(filepath.Base(f.TempName())); !ok || host != hostTag() || pid != os.Getpid() {
		t.Errorf("temp name %s does not carry this host and pid", f.TempName())
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	RemoveTemps()
	if got := entries(t, dir); len(got) != 0 {
		t.Fatalf("directory holds %v after RemoveTemps", got)
	}
	if err := f.Commit(); err == nil {
		t.Fatal("Commit after RemoveTemps succeeded")
	}
	if got := entries(t, dir); len(got) != 0 {
		t.Fatalf("directory holds %v", got)
	}
}

// Write commits what fn wrote; when fn fails nothing is left (no file, no
// temp), and the error names the file.
func TestWriteFunc(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.json")
	if err := Write(name, func(w io.Writer) error { _, err := io.WriteString(w, "ok"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(name); err != nil || string(b) != "ok" {
		t.Fatalf("read %q, %v", b, err)
	}
	bad := filepath.Join(dir, "bad.json")
	err := Write(bad, func(w io.Writer) error { io.WriteString(w, "half"); return errors.New("boom") })
	if err == nil || !strings.Contains(err.Error(), bad+": boom") {
		t.Fatalf("error %v, want it to name %s", err, bad)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d entries left in the folder, want only out.json", len(ents))
	}
}
