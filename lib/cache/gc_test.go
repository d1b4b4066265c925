package cache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fill populates n entries of size bytes each, one hour of use apart: entry
// i was last used i hours after the first.
func fill(t *testing.T, c *Cache, clk *clock, n, size int) []Key {
	t.Helper()
	dir := t.TempDir()
	var keys []Key
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("f%d", i))
		writeFile(t, p, strings.Repeat(string(rune('a'+i%26)), size))
		k := MustParseKey(fmt.Sprintf("e%02d", i))
		mustPopulate(t, c, k, p)
		keys = append(keys, k)
		clk.Advance(time.Hour)
	}
	return keys
}

func present(t *testing.T, c *Cache) []string {
	t.Helper()
	all, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range all {
		out = append(out, in.Key.String())
	}
	return out
}

func TestTrimLRUToEightyPercent(t *testing.T) {
	c, clk := testCache(t)
	fill(t, c, clk, 10, 1000) // 10,000 bytes
	// Use e00 again: it becomes the most recent.
	clk.Advance(2 * time.Hour)
	if _, err := c.Lookup(MustParseKey("e00")); err != nil {
		t.Fatal(err)
	}
	dry, err := c.Trim(TrimOptions{MaxSize: 9000, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Removed) != 3 || len(present(t, c)) != 10 {
		t.Fatalf("dry run: would remove %d, %d left; want 3 would go and nothing removed", len(dry.Removed), len(present(t, c)))
	}
	res, err := c.Trim(TrimOptions{MaxSize: 9000})
	if err != nil {
		t.Fatal(err)
	}
	// Over the cap (10,000 > 9,000): remove least recently used down to 7,200.
	want := []string{"e00", "e04", "e05", "e06", "e07", "e08", "e09"}
	if got := present(t, c); !slices.Equal(got, want) {
		t.Fatalf("after trim: %v, want %v", got, want)
	}
	if res.Freed != 3000 || res.KeptSize != 7000 || res.Kept != 7 {
		t.Errorf("result %+v", res)
	}
	// Under the cap: nothing to do.
	res, _ = c.Trim(TrimOptions{MaxSize: 9000})
	if len(res.Removed) != 0 {
		t.Errorf("trim under the cap removed %d", len(res.Removed))
	}
}

func TestTrimByAge(t *testing.T) {
	c, clk := testCache(t)
	fill(t, c, clk, 5, 10) // used at hours 0..4; now is hour 5
	res, err := c.Trim(TrimOptions{MaxAge: 150 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := present(t, c), []string{"e03", "e04"}; !slices.Equal(got, want) {
		t.Fatalf("after an age trim: %v, want %v (removed %d)", got, want, len(res.Removed))
	}
}

func TestAutoTrimFromConfig(t *testing.T) {
	c, clk := testCache(t)
	writeFile(t, filepath.Join(c.Root(), "config"), "max-size = 3000\n")
	c = reopen(t, c)
	fill(t, c, clk, 4, 1000)
	// The fourth populate takes the total to 4,000 > 3,000: least recently
	// used entries go until at most 2,400 (80%) is left, not just 3,000.
	if got, want := present(t, c), []string{"e02", "e03"}; !slices.Equal(got, want) {
		t.Fatalf("after 4 populates of 1000 bytes with a 3000-byte cap: %v, want %v", got, want)
	}
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, strings.Repeat("z", 1000))
	mustPopulate(t, c, MustParseKey("e04"), p)
	got := present(t, c)
	if !slices.Contains(got, "e04") {
		t.Fatalf("the entry just populated was trimmed: %v", got)
	}
	all, _ := c.List()
	var total int64
	for _, in := range all {
		total += in.Size
	}
	if total > 3000 {
		t.Fatalf("%d bytes after populates with a 3000-byte cap: %v", total, got)
	}
}

func TestTrimKeepsBuildsAndMemo(t *testing.T) {
	c, clk := testCache(t)
	fill(t, c, clk, 3, 100)
	// A build in progress.
	s, err := c.Stage()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(s.Dir(), "partial.aipk"), "half")
	// aiperf-hash's memo.
	memo := filepath.Join(c.Root(), "memo")
	os.Mkdir(memo, 0o700)
	writeFile(t, filepath.Join(memo, "digests"), "memo data")
	// An abandoned build (its builder died: the lock is free).
	dead, err := reopen(t, c).Stage()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dead.Dir(), "junk"), "abandoned")
	unlockFile(dead.lk) // as if its process had been killed
	// A leftover of a removal that was cut short.
	os.Mkdir(filepath.Join(c.Root(), "tmp", "rm-0123"), 0o700)

	res, err := c.Trim(TrimOptions{MaxSize: 1, MaxAge: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(present(t, c)) != 0 || len(res.Removed) != 3 {
		t.Fatalf("entries left: %v", present(t, c))
	}
	if res.Garbage != 2 {
		t.Errorf("garbage removed: %d, want 2 (the abandoned build and the rm- leftover)", res.Garbage)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "partial.aipk")); err != nil {
		t.Errorf("gc removed a build in progress: %v", err)
	}
	if _, err := os.Stat(dead.Dir()); !os.IsNotExist(err) {
		t.Errorf("abandoned build still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(memo, "digests")); err != nil || string(b) != "memo data" {
		t.Errorf("memo/ touched: %q %v", b, err)
	}
	// The build in progress still publishes.
	if err := s.Adopt("partial.aipk"); err != nil {
		t.Fatal(err)
	}
	if _, stored, err := s.Publish(MustParseKey("late"), ""); err != nil || !stored {
		t.Fatalf("publish after gc: %v", err)
	}
	if n := tmpNames(t, c); len(n) != 0 {
		t.Errorf("tmp/ holds %v", n)
	}
}

func TestTrimRemovesIdleLockFiles(t *testing.T) {
	c, _ := testCache(t)
	held, err := c.Lock(t.Context(), MustParseKey("busy"), LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	idle, err := c.Lock(t.Context(), MustParseKey("idle"), LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	idle.Release()
	if _, err := reopen(t, c).Trim(TrimOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c.Root(), "locks", "62", "n-busy")); err != nil {
		t.Errorf("held lock file removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.Root(), "locks", "69", "n-idle")); !os.IsNotExist(err) {
		t.Errorf("idle lock file kept: %v", err)
	}
}

func TestListReportsStrays(t *testing.T) {
	c, _ := testCache(t)
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, "x")
	mustPopulate(t, c, MustParseKey("good"), p)
	os.MkdirAll(filepath.Join(c.Root(), "entries", "67", "not-a-key"), 0o700)
	os.MkdirAll(filepath.Join(c.Root(), "entries", "zz", "whatever"), 0o700)
	all, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Err != nil || all[1].Err == nil || !strings.Contains(all[1].Err.Error(), "not an entry") {
		t.Fatalf("list: %+v", all)
	}
}

// TestRemovalNeverFollowsLinks: removing a staging folder, an entry or
// garbage deletes links planted in it, never what they point to, and
// nested folders go too.
func TestRemovalNeverFollowsLinks(t *testing.T) {
	c, _ := testCache(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "keep"), "precious")
	plant := func(d string) {
		t.Helper()
		if err := os.Symlink(outside, filepath.Join(d, "link")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(d, "sub", "deeper"), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(d, "sub", "deeper", "f"), "x")
		os.Symlink(filepath.Join(outside, "keep"), filepath.Join(d, "sub", "keep"))
	}
	kept := func(what string) {
		t.Helper()
		if b, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(b) != "precious" {
			t.Fatalf("%s followed a planted link: %q %v", what, b, err)
		}
	}
	// An aborted staging folder.
	s, err := c.Stage()
	if err != nil {
		t.Fatal(err)
	}
	plant(s.Dir())
	s.Abort()
	kept("abort")
	if _, err := os.Lstat(s.Dir()); !os.IsNotExist(err) {
		t.Fatalf("staging folder after abort: %v", err)
	}
	// An entry (rm) with links planted in it.
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, "data")
	e := mustPopulate(t, c, MustParseKey("planted"), p)
	makeWritable(t, e.Dir)
	plant(e.Dir)
	if err := c.Remove(MustParseKey("planted")); err != nil {
		t.Fatal(err)
	}
	kept("rm")
	// Garbage in tmp/ (a staging folder whose builder died).
	dead, err := c.Stage()
	if err != nil {
		t.Fatal(err)
	}
	plant(dead.Dir())
	unlockFile(dead.lk)
	if res, err := c.Trim(TrimOptions{}); err != nil || res.Garbage != 1 {
		t.Fatalf("gc: garbage %d, %v", res.Garbage, err)
	}
	kept("gc")
	if n := tmpNames(t, c); len(n) != 0 {
		t.Errorf("tmp/ holds %v", n)
	}

	// tmp/ itself swapped for a link to a folder holding a same-named
	// staging folder: the removal stays in the folder the cache opened.
	s, err = c.Stage()
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(c.Root(), "tmp")
	decoy := filepath.Join(outside, filepath.Base(s.Dir()))
	os.Mkdir(decoy, 0o700)
	writeFile(t, filepath.Join(decoy, "keep"), "precious")
	if err := os.Rename(tmp, tmp+"-real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, tmp); err != nil {
		t.Fatal(err)
	}
	s.Abort()
	if b, err := os.ReadFile(filepath.Join(decoy, "keep")); err != nil || string(b) != "precious" {
		t.Fatalf("abort went through a swapped tmp/ link: %q %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(tmp+"-real", filepath.Base(s.Dir()))); !os.IsNotExist(err) {
		t.Fatalf("the real staging folder is still there: %v", err)
	}
}

// An entry whose key lock is held (ensure holds it from the build until
// DEST is restored) is not removed by a trim: otherwise another process's
// gc or size-capped populate can delete an entry between its publication
// and its restore, and ensure fails after the whole build.
func TestTrimSkipsLockedKeys(t *testing.T) {
	for _, lockFile := range []bool{false, true} {
		t.Run(fmt.Sprintf("lockfile=%v", lockFile), func(t *testing.T) {
			c, clk := testCache(t, func(o *Options) { o.LockFile = lockFile })
			keys := fill(t, c, clk, 3, 1000)
			l, err := c.Lock(t.Context(), keys[0], LockOptions{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Trim(TrimOptions{MaxSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := present(t, c); !slices.Equal(got, []string{"e00"}) || len(res.Removed) != 2 {
				t.Fatalf("with e00 locked, trim left %v (removed %d); want e00 only", got, len(res.Removed))
			}
			if err := l.Release(); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Trim(TrimOptions{MaxSize: 1}); err != nil {
				t.Fatal(err)
			}
			if got := present(t, c); len(got) != 0 {
				t.Fatalf("after the release, trim left %v; want nothing", got)
			}
			// A key without any lock file is trimmed as before (above), and
			// a trim leaves the lock usable.
			l, err = c.Lock(t.Context(), keys[1], LockOptions{})
			if err != nil {
				t.Fatal(err)
			}
			l.Release()
		})
	}
}

// gc on a root it cannot change (a read-only mount, a folder without write
// permission) says so: a *TrimError naming each failure, the entries
// counted as kept. It used to report "freed 0 entries" as a success.
func TestTrimReportsWhatItCouldNotRemove(t *testing.T) {
	c, clk := testCache(t)
	fill(t, c, clk, 3, 100)
	saved := renameat
	renameat = func(int, string, int, string) error { return unix.EROFS }
	defer func() { renameat = saved }()
	res, err := c.Trim(TrimOptions{MaxAge: time.Nanosecond})
	var te *TrimError
	if !errors.As(err, &te) || len(te.Errs) != 3 || !errors.Is(err, unix.EROFS) {
		t.Fatalf("trim of a read-only root: %v, want a TrimError with 3 EROFS failures", err)
	}
	if len(res.Removed) != 0 || res.Kept != 3 || res.KeptSize != 300 {
		t.Fatalf("result %+v, want nothing removed and 3 entries (300 B) kept", res)
	}
	if got := present(t, c); len(got) != 3 {
		t.Fatalf("entries left: %v", got)
	}
	renameat = saved
	if _, err := c.Trim(TrimOptions{MaxAge: time.Nanosecond}); err != nil {
		t.Fatal(err)
	}
	if got := present(t, c); len(got) != 0 {
		t.Fatalf("entries left after a writable trim: %v", got)
	}
}
