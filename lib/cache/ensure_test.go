package cache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/cachekey"
	"github.com/aiperf/toolkit/lib/store"
)

// countingBuild returns a build that writes text at out (a file, or
// out/a.txt for a folder) and counts its runs.
func countingBuild(text string, n *atomic.Int32) BuildFunc {
	return func(out string) error {
		n.Add(1)
		if fi, err := os.Stat(out); err == nil && fi.IsDir() {
			out = filepath.Join(out, "a.txt")
		}
		return os.WriteFile(out, []byte(text), 0o644)
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEnsureMissBuildsPublishesRestores: a miss runs the build once, into
// a file named like DEST; its file becomes the entry and DEST is restored;
// the next call is a hit that builds nothing.
func TestEnsureMissBuildsPublishesRestores(t *testing.T) {
	c, _ := testCache(t)
	k := MustParseKey("notes")
	dest := filepath.Join(t.TempDir(), "notes.txt")
	var builds atomic.Int32
	var outs []string
	build := func(out string) error {
		outs = append(outs, out)
		return countingBuild("built", &builds)(out)
	}
	if err := c.Ensure(context.Background(), k, dest, build, EnsureOptions{}); err != nil {
		t.Fatal(err)
	}
	if builds.Load() != 1 || filepath.Base(outs[0]) != "notes.txt" || strings.HasPrefix(outs[0], filepath.Dir(dest)) {
		t.Errorf("builds %d into %v; want one, into the staging folder, named like DEST", builds.Load(), outs)
	}
	if got := readText(t, dest); got != "built" {
		t.Errorf("DEST holds %q", got)
	}
	e, err := c.Lookup(k)
	if err != nil || e.Manifest.Files[0].Name != "notes.txt" {
		t.Fatalf("entry after the build: %v %+v", err, e)
	}
	if !sameInode(t, dest, e.Path()) {
		t.Errorf("DEST is not the entry's file")
	}
	var notes []string
	dest2 := filepath.Join(t.TempDir(), "again.txt")
	opt := EnsureOptions{Logf: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }}
	if err := c.Ensure(context.Background(), k, dest2, build, opt); err != nil {
		t.Fatal(err)
	}
	if builds.Load() != 1 || readText(t, dest2) != "built" || len(notes) == 0 || notes[0] != "hit "+k.String() {
		t.Errorf("second call: %d builds, notes %q", builds.Load(), notes)
	}
}

// TestEnsureFolderDest: a folder DEST gets a folder to fill, and every file
// of the entry.
func TestEnsureFolderDest(t *testing.T) {
	c, _ := testCache(t)
	dest := filepath.Join(t.TempDir(), "out") + "/"
	build := func(out string) error {
		writeFile(t, filepath.Join(out, "b.txt"), "b")
		writeFile(t, filepath.Join(out, ".tmp"), "hidden")
		writeStore(t, filepath.Join(out, "s.aipk"), 2, 8, 1)
		return nil
	}
	if err := c.Ensure(context.Background(), MustParseKey("dir"), dest, build, EnsureOptions{}); err != nil {
		t.Fatal(err)
	}
	e, err := c.Lookup(MustParseKey("dir"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range e.Manifest.Files {
		names = append(names, f.Name)
	}
	if strings.Join(names, " ") != "s.aipk b.txt" {
		t.Errorf("entry files %v, want the store first and no hidden file", names)
	}
	if readText(t, filepath.Join(dest, "b.txt")) != "b" {
		t.Error("b.txt not restored into DEST")
	}
}

// TestEnsureBuildFailureCachesNothing: the build's error comes back as it
// is; no entry and no staging folder remain, and DEST is not made.
func TestEnsureBuildFailureCachesNothing(t *testing.T) {
	c, _ := testCache(t)
	k := MustParseKey("fails")
	dest := filepath.Join(t.TempDir(), "x.txt")
	boom := errors.New("boom")
	err := c.Ensure(context.Background(), k, dest, func(out string) error {
		writeFile(t, out, "half")
		return boom
	}, EnsureOptions{})
	if !errors.Is(err, boom) {
		t.Fatalf("Ensure = %v, want the build's error", err)
	}
	if _, err := c.Lookup(k); !errors.Is(err, ErrMiss) {
		t.Errorf("lookup after a failed build: %v", err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("DEST after a failed build: %v", err)
	}
	if names := tmpNames(t, c); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
	// A build that writes nothing, or a *.aipk that is no store, fails too.
	if err := c.Ensure(context.Background(), k, dest, func(string) error { return nil }, EnsureOptions{}); err == nil || !strings.Contains(err.Error(), "did not write $"+OutEnv) {
		t.Errorf("a build writing nothing: %v", err)
	}
	bad := filepath.Join(filepath.Dir(dest), "s.aipk")
	if err := c.Ensure(context.Background(), k, bad, func(out string) error { writeFile(t, out, "oops"); return nil }, EnsureOptions{}); err == nil || !strings.Contains(err.Error(), "which is not a store (4 bytes)") {
		t.Errorf("a store that is none: %v", err)
	}
	if _, err := c.Lookup(k); !errors.Is(err, ErrMiss) {
		t.Errorf("lookup after refused builds: %v", err)
	}
}

// TestEnsureSettingsMismatch: with a key description as Explain, a store
// built with other settings is refused naming the field, and nothing is
// cached.
func TestEnsureSettingsMismatch(t *testing.T) {
	c, _ := testCache(t)
	explain := cachekey.Domain + "\ninput=[\"file:sha256:00\"]\npack.model=\"m\"\nsalt.store=1\n"
	k := digestKey(explain)
	dest := filepath.Join(t.TempDir(), "s.aipk")
	build := func(model string) BuildFunc {
		return func(out string) error {
			spec := &store.Spec{Meta: map[string]string{store.MetaSettings: cachekey.Domain + "\npack.model=\"" + model + "\"\nsalt.store=1\n"}, Sessions: []string{"s"}, Records: []store.Record{{Payload: []byte(`{}`)}}}
			return store.WriteSpec(out, spec)
		}
	}
	err := c.Ensure(context.Background(), k, dest, build("WRONG"), EnsureOptions{Explain: explain})
	var se *SettingsError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `pack.model: "m" in the key, "WRONG" in the store`) {
		t.Fatalf("other settings: %v", err)
	}
	if _, err := c.Lookup(k); !errors.Is(err, ErrMiss) {
		t.Errorf("lookup after a refusal: %v", err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("DEST after a refusal: %v", err)
	}
	if err := c.Ensure(context.Background(), k, dest, build("m"), EnsureOptions{Explain: explain}); err != nil {
		t.Errorf("the same settings: %v", err)
	}
}

// TestEnsureConcurrentCallersBuildOnce: a second caller that finds the key
// locked waits, and restores what the first one built.
func TestEnsureConcurrentCallersBuildOnce(t *testing.T) {
	c, _ := testCache(t)
	k := MustParseKey("shared")
	dir := t.TempDir()
	var builds atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	first := func(out string) error {
		close(started)
		<-release
		return countingBuild("first", &builds)(out)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = c.Ensure(context.Background(), k, filepath.Join(dir, "a"), first, EnsureOptions{}) })
	<-started
	var once sync.Once
	opt := EnsureOptions{Lock: LockOptions{Report: time.Millisecond, OnWait: func(Holder, time.Duration) {
		once.Do(func() { close(release) }) // the second caller waits: let the first finish
	}}}
	errs[1] = c.Ensure(context.Background(), k, filepath.Join(dir, "b"), countingBuild("second", &builds), opt)
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if builds.Load() != 1 || readText(t, filepath.Join(dir, "a")) != "first" || readText(t, filepath.Join(dir, "b")) != "first" {
		t.Errorf("%d builds; a %q, b %q", builds.Load(), readText(t, filepath.Join(dir, "a")), readText(t, filepath.Join(dir, "b")))
	}
}

// TestEnsureVanishedEntryRebuilt: an entry that another builder published
// while Ensure waited, and that is removed before Ensure restores it, is
// looked up again and built.
func TestEnsureVanishedEntryRebuilt(t *testing.T) {
	c, _ := testCache(t)
	k := MustParseKey("vanishing")
	dir := t.TempDir()
	lk, err := c.Lock(context.Background(), k, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.txt")
	writeFile(t, other, "other")
	var builds atomic.Int32
	var notes []string
	opt := EnsureOptions{
		Lock: LockOptions{Report: time.Millisecond, OnWait: func(Holder, time.Duration) {
			if _, err := c.Lookup(k); errors.Is(err, ErrMiss) {
				mustPopulate(t, c, k, other) // the holder publishes
			}
		}},
		Logf: func(f string, a ...any) {
			n := fmt.Sprintf(f, a...)
			notes = append(notes, n)
			if strings.HasSuffix(n, "while we waited") && len(notes) == 1 {
				// Removed before Ensure restores it; its builder is done.
				if err := c.Remove(k); err != nil {
					t.Error(err)
				}
				lk.Release()
			}
		},
	}
	dest := filepath.Join(dir, "dest.txt")
	if err := c.Ensure(context.Background(), k, dest, countingBuild("rebuilt", &builds), opt); err != nil {
		t.Fatal(err)
	}
	if builds.Load() != 1 || readText(t, dest) != "rebuilt" {
		t.Errorf("%d builds, DEST %q; notes %q", builds.Load(), readText(t, dest), notes)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "removed before it was restored; looking again") {
		t.Errorf("notes %q", notes)
	}
}

// TestEnsureUncached: a cache whose staging folder cannot be made still
// builds DEST, beside it, and says why; BuildUncached alone does the same.
func TestEnsureUncached(t *testing.T) {
	dir := t.TempDir()
	var builds atomic.Int32
	dest := filepath.Join(dir, "f.txt")
	if err := BuildUncached(dest, countingBuild("plain", &builds)); err != nil {
		t.Fatal(err)
	}
	if readText(t, dest) != "plain" {
		t.Error("file DEST not built")
	}
	fdest := filepath.Join(dir, "sub", "deeper") + "/"
	if err := BuildUncached(fdest, countingBuild("in a folder", &builds)); err != nil {
		t.Fatal(err)
	}
	if readText(t, filepath.Join(fdest, "a.txt")) != "in a folder" {
		t.Error("folder DEST not built")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if err := BuildUncached(filepath.Join(dir, "none"), func(string) error { return nil }); err == nil || !strings.Contains(err.Error(), "as a regular file") {
		t.Errorf("a build writing nothing: %v", err)
	}
}
