package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aiperf/toolkit/lib/store"
)

// clock is a settable clock: Sleep advances it instead of waiting, so no
// test ever sleeps.
type clock struct {
	mu     sync.Mutex
	t      time.Time
	slept  time.Duration
	onTick func(now time.Time) // called after each Sleep, with the lock released
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.slept += d
	now, f := c.t, c.onTick
	c.mu.Unlock()
	if f != nil {
		f(now)
	}
	return nil
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testCache opens a cache in a fresh folder with a settable clock.
func testCache(t *testing.T, opts ...func(*Options)) (*Cache, *clock) {
	t.Helper()
	clk := newClock()
	opt := Options{Now: clk.Now, Sleep: clk.Sleep, Tool: "cache-test"}
	for _, f := range opts {
		f(&opt)
	}
	c, err := Open(filepath.Join(t.TempDir(), "cache"), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, clk
}

// reopen opens c's root again with c's options.
func reopen(t *testing.T, c *Cache) *Cache {
	t.Helper()
	c2, err := Open(c.Root(), c.opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c2.Close() })
	return c2
}

// writeStore writes a valid store of n records with payloads of size bytes.
func writeStore(t testing.TB, path string, n, size int, seed uint64) {
	t.Helper()
	w, err := store.Create(path, store.WriterOptions{Meta: map[string]string{"model": "test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	rng := rand.New(rand.NewPCG(seed, 1))
	buf := make([]byte, size)
	for i := range n {
		s := w.AddSession(fmt.Sprintf("s%d", i))
		for j := range buf {
			buf[j] = 'a' + byte(rng.IntN(26))
		}
		if err := w.Add(store.Entry{Line: uint64(i + 1), Session: s, Flags: store.FlagTimestamp, TimeNS: int64(i)}, buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// digestKey returns a digest key made from s.
func digestKey(s string) Key {
	sum := sha256.Sum256([]byte(s))
	return MustParseKey("sha256:" + hex.EncodeToString(sum[:]))
}

// entries lists the names under the cache's tmp/ (which should be empty
// after every operation finishes).
func tmpNames(t *testing.T, c *Cache) []string {
	t.Helper()
	n, err := c.tmp.names()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustPopulate(t *testing.T, c *Cache, k Key, files ...string) *Entry {
	t.Helper()
	e, stored, err := c.Populate(k, files, PopulateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !stored {
		t.Fatalf("populate %s: not stored", k)
	}
	return e
}

func sameInode(t *testing.T, a, b string) bool {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(fa, fb)
}

// marshalRaw encodes m as JSON without validating it.
func marshalRaw(t *testing.T, m *Manifest) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func hexString(b []byte) string { return hex.EncodeToString(b) }

func sameBytes(t *testing.T, a, b string) bool {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

// replace overwrites a read-only file of an entry.
func replace(t *testing.T, path, text string) {
	t.Helper()
	os.Chmod(path, 0o644)
	writeFile(t, path, text)
}

// makeWritable lets a test damage an entry folder.
func makeWritable(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

// editManifest rewrites an entry's manifest without validation.
func editManifest(t *testing.T, dir string, edit func(*Manifest)) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	replace(t, filepath.Join(dir, "manifest"), marshalRaw(t, m))
}

func devOf(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(fi.Sys().(*syscall.Stat_t).Dev)
}
