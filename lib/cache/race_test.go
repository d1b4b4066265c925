package cache

import (
	"bytes"
	"errors"
	"fmt"
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
