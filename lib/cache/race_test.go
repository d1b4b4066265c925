package cache

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// raceRounds is how many operations each side of a race test makes: enough
// for the window the tests guard to be hit many times over (with the old
// reopen-by-path, about one staging lock in 40 failed beside gc loops), and
// few enough for a loaded machine. The outcome asserted is exact: zero
// failures.
func raceRounds(t *testing.T) int {
	if testing.Short() {
		return 100
	}
	return 400
}

// gc removes lock files nobody holds, staging locks whose folder does not
// exist yet among them. A builder that creates its lock file between two
// such sweeps must still get its lock: it locks the descriptor it created,
// never the path again (which gc may have removed: "open tmp/p-X.lock: no
// such file or directory"), and starts over with a new name when gc took
// its file first. Two gc loops run against staging, key locks and import.
func TestLockCreationBesideGC(t *testing.T) {
	t.Run("tmpfile", func(t *testing.T) {
		c, _ := testCache(t)
		f, _, err := c.createLocked(c.tmp, "probe", "")
		if errors.Is(err, errNoTmpfile) {
			t.Skip("no O_TMPFILE here")
		}
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		lockCreationBesideGC(t)
	})
	t.Run("plain", func(t *testing.T) {
		noTmpfile = true
		defer func() { noTmpfile = false }()
		lockCreationBesideGC(t)
	})
}

func lockCreationBesideGC(t *testing.T) {
	c, _ := testCache(t)
	_, _, stream := exported(t)
	src := filepath.Join(t.TempDir(), "f")
	writeFile(t, src, "payload")
	n := raceRounds(t)

	var stop atomic.Bool
	var wg sync.WaitGroup
	var gcRuns atomic.Int64
	for range 2 {
		g := reopen(t, c)
		wg.Go(func() {
			for !stop.Load() {
				if _, err := g.Trim(TrimOptions{}); err != nil {
					t.Errorf("gc: %v", err)
					return
				}
				gcRuns.Add(1)
			}
		})
	}
	var failures []string
	var mu sync.Mutex
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	var work sync.WaitGroup
	b1, b2, b3 := reopen(t, c), reopen(t, c), reopen(t, c)
	work.Go(func() { // staging, as populate and ensure do
		for i := range n {
			s, err := b1.Stage()
			if err != nil {
				fail("stage %d: %v", i, err)
				continue
			}
			s.Abort()
		}
	})
	work.Go(func() { // key locks, as ensure takes them
		for i := range n {
			l, err := b2.Lock(t.Context(), MustParseKey(fmt.Sprintf("k%d", i%7)), LockOptions{})
			if err != nil {
				fail("lock %d: %v", i, err)
				continue
			}
			l.Release()
		}
	})
	work.Go(func() { // import, which stages too
		for i := range n / 4 {
			e, stored, err := b3.Import(t.Context(), bytes.NewReader(stream), ImportOptions{})
			if err != nil {
				fail("import %d: %v", i, err)
				continue
			}
			if err := b3.Remove(digestKey("export")); err != nil {
				fail("rm %d after an import (stored %v, %s): %v", i, stored, e.Dir, err)
			}
		}
	})
	work.Wait()
	stop.Store(true)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d failures beside %d gc runs:\n%s", len(failures), gcRuns.Load(), strings.Join(failures, "\n"))
	}
	t.Logf("%d stagings, %d locks, %d imports beside %d gc runs", n, n, n/4, gcRuns.Load())
}

// A restore whose entry is removed while it runs (gc or rm renamed the
// folder away and deleted its files after the lookup) is a miss, not an
// error: "link …: no such file or directory" made ensure's hit path exit 2.
func TestRestoreOfAVanishedEntryIsAMiss(t *testing.T) {
	for _, cp := range []bool{false, true} {
		t.Run(fmt.Sprintf("copy=%v", cp), func(t *testing.T) {
			c, _ := testCache(t)
			src := filepath.Join(t.TempDir(), "f")
			writeFile(t, src, "data")
			k := MustParseKey("k")
			mustPopulate(t, c, k, src)
			h, err := c.find(k)
			if err != nil {
				t.Fatal(err)
			}
			defer h.close()
			if err := reopen(t, c).Remove(k); err != nil {
				t.Fatal(err)
			}
			dest := filepath.Join(t.TempDir(), "dest")
			_, err = c.prepareRestore(h.ed, h.e.Manifest.Files, dest, RestoreOptions{Copy: cp})
			if !errors.Is(err, errVanished) {
				t.Fatalf("restore from a removed entry: %v, want errVanished", err)
			}
			if _, err := c.Restore(k, dest, RestoreOptions{}); !errors.Is(err, ErrMiss) {
				t.Fatalf("restore after: %v, want a miss", err)
			}
		})
	}
}

// PublishRestore puts DEST in place from the staged files, so an rm right
// after the publication cannot leave it missing; and when another complete
// entry won, DEST is that entry's.
func TestPublishRestore(t *testing.T) {
	c, _ := testCache(t)
	k := MustParseKey("k")
	dest := filepath.Join(t.TempDir(), "dest")
	s, err := c.Stage()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(s.Dir(), "f"), "ours")
	if err := s.Adopt("f"); err != nil {
		t.Fatal(err)
	}
	e, stored, rs, err := s.PublishRestore(k, "", dest, RestoreOptions{})
	if err != nil || !stored || len(rs) != 1 || !rs[0].Linked || !sameInode(t, dest, e.Path()) {
		t.Fatalf("publish and restore: %v stored=%v %+v", err, stored, rs)
	}
	// Another builder's staging loses to the entry there.
	s2, err := reopen(t, c).Stage()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(s2.Dir(), "f"), "theirs")
	if err := s2.Adopt("f"); err != nil {
		t.Fatal(err)
	}
	dest2 := filepath.Join(t.TempDir(), "dest2")
	_, stored, _, err = s2.PublishRestore(k, "", dest2, RestoreOptions{})
	if err != nil || stored {
		t.Fatalf("second publish: %v stored=%v", err, stored)
	}
	if b, _ := os.ReadFile(dest2); string(b) != "ours" {
		t.Fatalf("DEST of the loser holds %q, want the entry's %q", b, "ours")
	}
	if n := tmpNames(t, c); len(n) != 0 {
		t.Errorf("tmp/ holds %v", n)
	}
}
